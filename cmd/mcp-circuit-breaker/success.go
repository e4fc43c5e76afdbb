package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// successOptions are the options of success.
type successOptions struct {
	globalOptions
	Tool string
}

// successJSON is success's --json output.
type successJSON struct {
	Tool     string   `json:"tool"`
	Changed  []string `json:"changed"`
	Messages []string `json:"messages"`
}

func successCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:      "success",
		Usage:     "record a successful MCP call: resets the count, closes a half-open trial",
		ArgsUsage: "TOOL",
		Flags:     []cli.Flag{dirFlag(), jsonFlag()},
		Action:    action(e, parseSuccess, runSuccess),
	}
}

func parseSuccess(c *cli.Context) (*successOptions, error) {
	g, err := parseGlobal(c)
	if err != nil {
		return nil, err
	}
	opts := &successOptions{globalOptions: g}
	opts.Tool, err = toolArg(c)
	return opts, err
}

func runSuccess(opts *successOptions, e *Env) error {
	tool := opts.Tool
	r, err := e.begin(opts.globalOptions, true)
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
	if opts.JSON {
		return e.printJSON(successJSON{Tool: tool, Changed: keysOf(out.Entries), Messages: msgs})
	}
	for _, m := range msgs {
		e.println(m)
	}
	return nil
}
