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
		Action: action(e, parseFallbacks, runFallbacks),
	}
}

// fallbacksOptions are the options of fallbacks.
type fallbacksOptions struct {
	globalOptions
	Tool string
	// Type is the failure type to propose for, when the circuit is not open; "" for its own.
	Type ledger.FailureType
}

// fallbacksJSON is fallbacks' --json output (docs/cli.md). Its keys keep the order the output had
// before it was typed (sorted), which scripts compare byte for byte.
type fallbacksJSON struct {
	FailureType ledger.FailureType `json:"failure_type"`
	Options     []fallbacks.Option `json:"options"`
	Tool        string             `json:"tool"`
}

func parseFallbacks(c *cli.Context) (*fallbacksOptions, error) {
	g, err := parseGlobal(c)
	if err != nil {
		return nil, err
	}
	opts := &fallbacksOptions{globalOptions: g}
	if opts.Tool, err = toolArg(c); err != nil {
		return nil, err
	}
	if s := c.String("type"); s != "" {
		t, ok := ledger.ParseFailureType(s)
		if !ok {
			return nil, usagef("--type %q is not one of %s", s, typeNames())
		}
		opts.Type = t
	}
	return opts, nil
}

func runFallbacks(opts *fallbacksOptions, e *Env) error {
	tool := opts.Tool
	r, err := e.begin(opts.globalOptions, false)
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
	if opts.Type != "" {
		cc := *circ
		cc.FailureType = opts.Type
		circ = &cc
	}
	pol := e.usablePolicy(r.Project)
	req, err := r.FallbackRequest(board, circ, pol, r.now)
	if err != nil {
		return withFallbackHint(err, r.Project)
	}
	proposed := fallbacks.Propose(req)
	if opts.JSON {
		return e.printJSON(fallbacksJSON{Tool: tool, FailureType: circ.FailureType, Options: proposed})
	}
	e.printf("%s", fallbacks.Markdown(tool, circ.FailureType, proposed))
	return nil
}
