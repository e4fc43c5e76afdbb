package main

import (
	"os"

	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/claude"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
)

func hookCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:  "hook",
		Usage: "Claude Code hook entry point: reads the event JSON on stdin (PreToolUse, PostToolUse, PostToolUseFailure, SessionStart)",
		Description: "Wire it for PreToolUse, PostToolUse and PostToolUseFailure with matcher mcp__.*, and for\n" +
			"SessionStart, in exec form (command + args). Exits 0 and answers with JSON on stdout.\n" +
			"mcp-circuit-breaker-hook is the same gate in a binary that starts about twice as fast;\n" +
			"install wires it when it is installed next to this one.",
		Flags:  []cli.Flag{dirFlag()},
		Action: action(e, parseHook, runHook),
	}
}

// hookOptions are the options of hook.
type hookOptions struct {
	globalOptions
}

// parseHook reads --dir without checking it, as the lean binary does: the gate answers every
// event (docs/hook.md), and one for a tool that is not an MCP tool reads no state at all.
func parseHook(c *cli.Context) (*hookOptions, error) {
	return &hookOptions{globalOptions: globalOptions{Dir: dirFlagValue(c)}}, noArgs(c)
}

func runHook(opts *hookOptions, e *Env) error {
	dir, err := project.ResolveDir(opts.Dir, e.Getenv)
	if err != nil {
		return err
	}
	p := project.New(dir, e.Getenv, e.Stderr)
	notice := ""
	if e.user != nil {
		notice = e.user.Notice() // already on stderr; the gate puts it in systemMessage, once
	}
	claude.Run(claude.Config{Project: p, Getenv: e.Getenv, Stdin: e.Stdin, Stdout: e.Stdout, Stderr: e.Stderr,
		Probe: claude.LazyProber(os.Executable, p.Dir), EnvNotice: notice})
	return nil
}
