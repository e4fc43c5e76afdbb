// Package hookboard is the fleet-shared board (internal/fleet) as the gate meets it
// (gate.BindBoard), in both binaries: the full CLI's, which reads YAML and reaches the Redis
// through go-redis, and the lean hook's (Lean), which links neither and reaches the Redis through
// respconn in its own process. The gate does not import the board, so that a binary that has no
// board links none.
package hookboard

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/boardconn/respconn"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/fleet"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// binding is a fleet.Binding as a gate.Board.
type binding struct {
	*fleet.Binding
	p *project.Project
}

// Bind is the gate's gate.BindBoard through cl.
func Bind(cl fleet.Client) gate.BindBoard {
	return func(ctx context.Context, p *project.Project, tool string, now time.Time, sessionID string) (gate.Board, error) {
		b, err := cl.BindProject(ctx, p, tool, now, sessionID)
		if err != nil || b == nil {
			return nil, err
		}
		return binding{Binding: b, p: p}, nil
	}
}

func (h binding) Redacted() string { return h.Board().Config().Redacted() }

func (h binding) Close() { h.Board().Close() }

func (h binding) Outcome() gate.BoardOutcome {
	l := h.Last
	return gate.BoardOutcome{Shared: l.Shared, Away: l.Away, Refused: l.Refused, RefusedWhy: l.RefusedWhy}
}

func (h binding) List(ctx context.Context, keys []string, now time.Time) ([]*states.Circuit, error) {
	ids := fleet.ProjectIdentities(h.p, h.Board().Config().Keys(), keys)
	shared, err := h.Board().ListFor(ctx, ids, now)
	if err != nil {
		h.Last.Away = err
	} else {
		h.Last.Shared = true
	}
	return shared, err
}

// Lean is the lean hook's gate.LeanBoard: the board the user configured, reached in this process
// through respconn; nil, nil when none is configured. It returns an error, and the hook hands the
// event to the full CLI as before, for what it does not read or speak exactly as the full CLI
// does: a configuration file in another form than the plain block one, TLS, URL options, a host
// name that only DNS resolves. A configuration the full CLI would refuse too (set by a project
// file, not a Redis URL, a wrong timeout) is refused here the same way, by fleet.Load itself.
func Lean(getenv func(string) string, dir string) (gate.BindBoard, error) {
	cfg, err := fleet.Load(getenv, dir, plainUserFile)
	if errors.Is(err, errNotPlain) {
		return nil, err
	}
	if err != nil {
		return func(context.Context, *project.Project, string, time.Time, string) (gate.Board, error) {
			return nil, err
		}, nil
	}
	if cfg == nil {
		return nil, nil
	}
	if err := respconn.Usable(cfg.URL); err != nil {
		return nil, fmt.Errorf("%s: %s: %w", cfg.Redacted(), cfg.Redact(err.Error()), respconn.ErrUnsupported)
	}
	return Bind(fleet.Client{Unmarshal: plainUserFile, Dial: respconn.Dial, Config: cfg}), nil
}
