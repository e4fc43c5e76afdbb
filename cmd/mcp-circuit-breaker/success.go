package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

func successCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:      "success",
		Usage:     "record a successful MCP call: resets the count, closes a half-open trial",
		ArgsUsage: "TOOL",
		Flags:     []cli.Flag{dirFlag(), jsonFlag()},
		Action:    e.success,
	}
}

func (e *Env) success(c *cli.Context) error {
	tool, err := toolArg(c)
	if err != nil {
		return err
	}
	r, err := e.begin(c, true)
	if err != nil {
		return err
	}
	defer r.share(e, tool)()
	now, s := r.now, r.store
	var out states.Outcome
	_, err = s.Update(func(b *states.Board) ([]ledger.Entry, error) {
		out = b.Success(states.Call{Tool: tool, Source: ledger.SourceCLI}, now)
		return out.Entries, nil
	})
	if err != nil {
		return fmt.Errorf("record success of %s: %w", tool, err)
	}
	var msgs []string
	for _, en := range out.Entries {
		if en.ResetMethod != "" {
			msgs = append(msgs, fmt.Sprintf("Circuit CLOSED — %s (reset_method: %s).", en.Tool, en.ResetMethod))
		} else {
			msgs = append(msgs, fmt.Sprintf("%s: failure count reset to 0.", en.Tool))
		}
	}
	if len(msgs) == 0 {
		msgs = append(msgs, fmt.Sprintf("%s: CLOSED, nothing to reset.", tool))
	}
	if c.Bool("json") {
		return e.printJSON(map[string]any{"tool": tool, "changed": keysOf(out.Entries), "messages": msgs})
	}
	for _, m := range msgs {
		fmt.Fprintln(e.Stdout, m)
	}
	return nil
}
