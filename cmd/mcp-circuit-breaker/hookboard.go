package main

import (
	"context"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/boardconn/goredisconn"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/fleet"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// fullBoard is how the full CLI reaches the board: the user's file read with yaml.v3, the Redis
// through go-redis (TLS, Cluster and every URL option it reads).
func fullBoard() fleet.Client { return fleet.Client{Unmarshal: yaml.Unmarshal, Dial: goredisconn.Dial} }

// hookBoard is internal/fleet's binding as the gate meets it (gate.Board): the gate does not import
// the board, so that the lean binary links no Redis client.
type hookBoard struct {
	*fleet.Binding
	p *project.Project
}

// bindHookBoard is the gate's gate.BindBoard in the full CLI.
func bindHookBoard(ctx context.Context, p *project.Project, tool string, now time.Time, sessionID string) (gate.Board, error) {
	b, err := fullBoard().BindProject(ctx, p, tool, now, sessionID)
	if err != nil || b == nil {
		return nil, err
	}
	return hookBoard{Binding: b, p: p}, nil
}

func (h hookBoard) Redacted() string { return h.Board().Config().Redacted() }

func (h hookBoard) Close() { h.Board().Close() }

func (h hookBoard) Outcome() gate.BoardOutcome {
	l := h.Last
	return gate.BoardOutcome{Shared: l.Shared, Away: l.Away, Refused: l.Refused, RefusedWhy: l.RefusedWhy}
}

func (h hookBoard) List(ctx context.Context, keys []string, now time.Time) ([]*states.Circuit, error) {
	ids := fleet.ProjectIdentities(h.p, h.Board().Config().Keys(), keys)
	shared, err := h.Board().ListFor(ctx, ids, now)
	if err != nil {
		h.Last.Away = err
	} else {
		h.Last.Shared = true
	}
	return shared, err
}
