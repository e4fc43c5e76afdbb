package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/failure"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/fallbacks"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/probe"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

func fallbacksCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:      "fallbacks",
		Usage:     "print at least 3 ranked fallback options for a tool (substitute, lower-permission path, degrade, retry)",
		ArgsUsage: "TOOL",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "type", Usage: "the failure type, when the circuit is not open: " + typeNames()},
			dirFlag(), jsonFlag(),
		},
		Action: e.fallbacks,
	}
}

func (e *Env) fallbacks(c *cli.Context) error {
	tool, err := toolArg(c)
	if err != nil {
		return err
	}
	now, err := e.now()
	if err != nil {
		return err
	}
	s, err := e.openStore(c, false)
	if err != nil {
		return err
	}
	board, err := s.View()
	if err != nil {
		return fmt.Errorf("read circuits: %w", err)
	}
	circ := board.Get(tool)
	if sc := board.Get(states.ServerKey(tool)); (circ == nil || circ.State == ledger.Closed) && sc != nil && sc.State != ledger.Closed {
		circ = sc
	}
	if circ == nil {
		circ = &states.Circuit{Key: tool, State: ledger.Closed, FailureType: failure.Unknown}
	}
	if s := c.String("type"); s != "" {
		t, ok := failure.ParseType(s)
		if !ok {
			return usagef("--type %q is not one of %s", s, typeNames())
		}
		cc := *circ
		cc.FailureType = t
		circ = &cc
	}
	req, err := e.fallbackRequest(c, board, circ, now)
	if err != nil {
		return err
	}
	opts := fallbacks.Propose(req)
	if c.Bool("json") {
		return e.printJSON(map[string]any{"tool": tool, "failure_type": circ.FailureType, "options": opts})
	}
	fmt.Fprint(e.Stdout, fallbacks.Markdown(tool, circ.FailureType, opts))
	return nil
}

// fallbackRequest gathers what fallbacks.Propose needs: the circuit, the user's catalog, the tools
// cache from probes, and which other circuits are open.
func (e *Env) fallbackRequest(c *cli.Context, b *states.Board, circ *states.Circuit, now time.Time) (fallbacks.Request, error) {
	pol, err := e.loadPolicy(c)
	if err != nil {
		return fallbacks.Request{}, err
	}
	req := fallbacks.Request{
		Tool: circ.Key, Server: circ.Server, Type: circ.FailureType, Cause: circ.Cause,
		OpenUntil: openUntil(circ, pol), RetryAfter: circ.RetryAfter, Now: now,
		IsOpen: func(key string) bool {
			o := b.Get(key)
			return o != nil && o.State != ledger.Closed
		},
	}
	sd, err := e.stateDir(c)
	if err != nil {
		return req, err
	}
	name := filepath.Join(sd, "fallbacks.yaml")
	data, err := os.ReadFile(name)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return req, fmt.Errorf("read fallbacks catalog: %w", err)
	default:
		cat, err := fallbacks.ParseCatalog(name, data)
		if err != nil {
			return req, withHint(err, "fix the lines named above in "+name)
		}
		req.Catalog = cat
	}
	req.Tools = e.toolsCache(sd)
	return req, nil
}

// fallbackMarkdown is the full fallback list for a circuit that just opened; a broken catalog is
// reported inside the text rather than hiding the notice.
func (e *Env) fallbackMarkdown(c *cli.Context, b *states.Board, circ *states.Circuit, now time.Time) string {
	req, err := e.fallbackRequest(c, b, circ, now)
	if err != nil {
		fmt.Fprintf(e.Stderr, "mcp-circuit-breaker: warning: fallbacks: %v\n", err)
	}
	return fallbacks.Markdown(circ.Key, circ.FailureType, fallbacks.Propose(req))
}

// toolsCache returns the tools/list cache of earlier probes as fallbacks wants it; an unreadable
// cache only loses the similar-tool suggestions, so it is a warning.
func (e *Env) toolsCache(stateDir string) map[string][]fallbacks.Tool {
	cache, err := probe.LoadTools(stateDir)
	if err != nil {
		fmt.Fprintf(e.Stderr, "mcp-circuit-breaker: warning: %v (similar-tool suggestions skipped; the next probe rewrites it)\n", err)
		return nil
	}
	out := make(map[string][]fallbacks.Tool, len(cache))
	for server, st := range cache {
		for _, t := range st.Tools {
			out[server] = append(out[server], fallbacks.Tool{Name: t.Name, Description: t.Description})
		}
	}
	return out
}
