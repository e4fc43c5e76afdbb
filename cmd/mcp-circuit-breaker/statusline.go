package main

import (
	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
)

func statuslineCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:  "statusline",
		Usage: "Claude Code's status-line command: one line naming the open MCP circuits, or nothing",
		Description: "Reads Claude Code's status-line JSON on stdin and prints one short line: each circuit that is\n" +
			"not CLOSED with its failure type and when its trial comes (\"⚡ MCP circuit open: fix/* RATE_LIMIT ·\n" +
			"trial in 45s\"), or nothing when every circuit is CLOSED. 'install --statusline' wires it;\n" +
			"mcp-circuit-breaker-hook statusline is the same command in the binary that starts about twice as fast.",
		Flags:  []cli.Flag{dirFlag()},
		Action: action(e, parseStatusline, runStatusline),
	}
}

// statuslineOptions are the options of statusline.
type statuslineOptions struct {
	globalOptions
}

// parseStatusline reads --dir without checking it: a status line run in no project prints nothing.
func parseStatusline(c *cli.Context) (*statuslineOptions, error) {
	return &statuslineOptions{globalOptions: globalOptions{Dir: dirFlagValue(c)}}, noArgs(c)
}

func runStatusline(opts *statuslineOptions, e *Env) error {
	gate.StatusLine(gate.StatusConfig{Dir: opts.Dir, Stdin: e.Stdin, Stdout: e.Stdout, Getenv: e.Getenv,
		Decoder: yamlDecoder(), CatchUp: gate.DetachedCatchUp})
	return nil
}
