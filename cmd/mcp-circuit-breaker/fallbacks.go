package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/fallbacks"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
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
	r, err := e.begin(c, false)
	if err != nil {
		return err
	}
	board, err := r.store.View()
	if err != nil {
		return fmt.Errorf("read circuits: %w", err)
	}
	circ := board.Get(tool)
	if sc := board.Get(string(ledger.Key(tool).ServerKey())); (circ == nil || circ.State == ledger.Closed) && sc != nil && sc.State != ledger.Closed {
		circ = sc
	}
	if circ == nil {
		circ = &states.Circuit{Key: tool, State: ledger.Closed, FailureType: ledger.Unknown}
	}
	if s := c.String("type"); s != "" {
		t, ok := ledger.ParseFailureType(s)
		if !ok {
			return usagef("--type %q is not one of %s", s, typeNames())
		}
		cc := *circ
		cc.FailureType = t
		circ = &cc
	}
	pol, err := r.Policy()
	if err != nil {
		return err
	}
	req, err := r.FallbackRequest(board, circ, pol, r.now)
	if err != nil {
		return withFallbackHint(err, r.Project)
	}
	opts := fallbacks.Propose(req)
	if c.Bool("json") {
		return e.printJSON(map[string]any{"tool": tool, "failure_type": circ.FailureType, "options": opts})
	}
	fmt.Fprint(e.Stdout, fallbacks.Markdown(tool, circ.FailureType, opts))
	return nil
}
