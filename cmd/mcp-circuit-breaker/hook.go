package main

import (
	"os"

	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/claude"
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
		Action: e.hook,
	}
}

func (e *Env) hook(c *cli.Context) error {
	p, err := e.project(c)
	if err != nil {
		return err
	}
	cfg := claude.Config{Project: p, Getenv: e.Getenv, Stdin: e.Stdin, Stdout: e.Stdout, Stderr: e.Stderr}
	if bin, err := os.Executable(); err == nil {
		cfg.Probe = claude.ExecProber(bin, p.Dir, os.Environ())
	}
	claude.Run(cfg)
	return nil
}
