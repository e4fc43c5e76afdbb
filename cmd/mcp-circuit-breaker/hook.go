package main

import (
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/agent"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
)

func hookCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:  "hook",
		Usage: "hook entry point for an agent: reads one event on stdin (Claude Code: PreToolUse, PostToolUse, PostToolUseFailure, SessionStart)",
		Description: "Wire it for PreToolUse, PostToolUse and PostToolUseFailure with matcher mcp__.*, and for\n" +
			"SessionStart, in exec form (command + args). Exits 0 and answers with JSON on stdout.\n" +
			"--agent names the agent whose events it reads and whose answer shape it writes (" + strings.Join(agent.Names(), ", ") + ").\n" +
			"mcp-circuit-breaker-hook is the same gate in a binary that starts about twice as fast;\n" +
			"install wires it when it is installed next to this one.",
		Flags: []cli.Flag{dirFlag(),
			&cli.StringFlag{Name: "agent", Value: gate.DefaultAgent, Usage: "the agent that runs the hook: " + strings.Join(agent.Names(), ", ")},
			// The detached process a hook starts to bring the snapshot of a large ledger up to date.
			&cli.BoolFlag{Name: "catch-up-snapshot", Hidden: true}},
		Action: action(e, parseHook, runHook),
	}
}

// hookOptions are the options of hook.
type hookOptions struct {
	globalOptions
	catchUp bool
	// Agent is --agent, checked only when the hook runs: an unknown one allows the call.
	Agent string
}

// parseHook reads --dir without checking it, as the lean binary does: the gate answers every
// event (docs/hook.md), and one for a tool that is not an MCP tool reads no state at all.
func parseHook(c *cli.Context) (*hookOptions, error) {
	return &hookOptions{globalOptions: globalOptions{Dir: dirFlagValue(c)}, Agent: c.String("agent"), catchUp: c.Bool("catch-up-snapshot")}, noArgs(c)
}

func runHook(opts *hookOptions, e *Env) error {
	w, err := agent.Wire(opts.Agent)
	if err != nil {
		// Fail open, loudly: a hook that exits non-zero may block the call in some agents, and a
		// mistyped --agent must not stop every MCP call.
		e.errorf("%v; allowing the call", err)
		e.hintf("fix --agent in the hook's configuration (or run 'mcp-circuit-breaker install --agent NAME' again)")
		return nil
	}
	dir, err := project.ResolveDir(opts.Dir, e.Getenv)
	if err != nil {
		return err
	}
	if opts.catchUp {
		if gate.CatchUpMain(dir, e.Stderr) != 0 {
			return &exitCodeError{code: exitFailure}
		}
		return nil
	}
	p := project.New(dir, e.Getenv, e.Stderr)
	notice := ""
	if e.user != nil {
		notice = e.user.Notice() // already on stderr; the gate puts it in systemMessage, once
	}
	code := gate.Run(gate.Config{Project: p, Wire: w, Getenv: e.Getenv, Stdin: e.Stdin, Stdout: e.Stdout, Stderr: e.Stderr,
		Probe: gate.LazyProber(os.Executable, p.Dir), EnvNotice: notice, CatchUp: gate.DetachedCatchUp, Board: bindHookBoard})
	if code != 0 {
		return &exitCodeError{code: code}
	}
	return nil
}
