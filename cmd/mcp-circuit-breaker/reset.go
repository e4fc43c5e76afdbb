package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

func resetCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:      "reset",
		Usage:     "close a circuit by hand (reset_method: user_forced)",
		ArgsUsage: "TOOL | --all",
		Flags:     []cli.Flag{&cli.BoolFlag{Name: "all", Usage: "close every circuit that is not idle"}, dirFlag(), jsonFlag()},
		Action:    e.reset,
	}
}

func (e *Env) reset(c *cli.Context) error {
	all := c.Bool("all")
	var tool string
	switch {
	case all && c.NArg() > 0:
		return usagef("reset takes TOOL or --all, not both")
	case !all:
		t, err := toolArg(c)
		if err != nil {
			return err
		}
		tool = t
	}
	r, err := e.begin(c, true)
	if err != nil {
		return err
	}
	if !all {
		defer r.share(e, tool)()
	}
	now, s := r.now, r.store
	var entries []ledger.Entry
	_, err = s.Update(func(b *states.Board) ([]ledger.Entry, error) {
		keys := []string{tool}
		if all {
			keys = b.Keys()
		}
		entries = nil
		for _, k := range keys {
			entries = append(entries, b.Reset(states.Call{Tool: k, Source: ledger.SourceCLI}, now)...)
		}
		return entries, nil
	})
	if err != nil {
		return fmt.Errorf("reset: %w", err)
	}
	var msgs []string
	for _, en := range entries {
		msgs = append(msgs, fmt.Sprintf("Circuit CLOSED — %s (reset_method: user_forced).", en.Tool))
	}
	if len(msgs) == 0 {
		if all {
			msgs = append(msgs, "All circuits already CLOSED: nothing to reset.")
		} else {
			msgs = append(msgs, fmt.Sprintf("%s is already CLOSED with no failures: nothing to reset.", tool))
		}
	}
	if !all && !ledger.IsServerKey(tool) {
		s, _ := s.View()
		if sc := s.Get(states.ServerKey(tool)); sc != nil && sc.State != ledger.Closed {
			msgs = append(msgs, fmt.Sprintf("Note: the server circuit %s is still %s and still blocks this tool; reset it too if the server is fixed.", sc.Key, sc.State))
		}
	}
	if c.Bool("json") {
		return e.printJSON(map[string]any{"reset": keysOf(entries), "messages": msgs})
	}
	for _, m := range msgs {
		fmt.Fprintln(e.Stdout, m)
	}
	return nil
}
