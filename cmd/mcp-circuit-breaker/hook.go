package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/agent"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/hookboard"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
)

func hookCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:  "hook",
		Usage: "hook entry point for an agent: reads one event on stdin (Claude Code: PreToolUse, PostToolUse, PostToolUseFailure, SessionStart)",
		Description: "Wire it for PreToolUse, PostToolUse and PostToolUseFailure with matcher mcp__.*, and for\n" +
			"SessionStart, in exec form (command + args). Exits 0 and answers with JSON on stdout.\n" +
			"--agent names the agent whose events it reads and whose answer shape it writes (" + strings.Join(agent.Names(), ", ") + ").\n" +
			"mcp-circuit-breaker-hook is the same gate in a binary that starts about three times as fast\n" +
			"(docs/performance.md); " +
			"install wires it when it is installed next to this one.",
		Flags: []cli.Flag{dirFlag(),
			&cli.StringFlag{Name: "agent", Value: gate.DefaultAgent, Usage: "the agent that runs the hook: " + strings.Join(agent.Names(), ", ")},
			// The detached process a hook starts to bring the snapshot of a large ledger up to date.
			&cli.BoolFlag{Name: "catch-up-snapshot", Hidden: true},
			// The YAML the lean binary, which links no YAML library, asks this one to read.
			&cli.StringFlag{Name: "decode", Hidden: true}, &cli.StringFlag{Name: "decode-name", Hidden: true},
			&cli.IntFlag{Name: "decode-line", Value: 1, Hidden: true}, &cli.StringFlag{Name: "decode-keep", Hidden: true}},
		Action: action(e, parseHook, runHook),
	}
}

// hookOptions are the options of hook.
type hookOptions struct {
	globalOptions
	catchUp bool
	// decode, decodeName and decodeLine are --decode KIND (project.DecodePolicy, …), the name
	// of the file and the line the text starts at.
	decode, decodeName string
	decodeLine         int
	// decodeKeep is where in the user's decoded-answer cache the lean hook wants the answer kept.
	decodeKeep string
	// Agent is --agent, checked only when the hook runs: an unknown one allows the call.
	Agent string
}

// parseHook reads --dir without checking it, as the lean binary does: the gate answers every
// event (docs/hook.md), and one for a tool that is not an MCP tool reads no state at all.
func parseHook(c *cli.Context) (*hookOptions, error) {
	return &hookOptions{globalOptions: globalOptions{Dir: dirFlagValue(c)}, Agent: c.String("agent"), catchUp: c.Bool("catch-up-snapshot"),
		decode: c.String("decode"), decodeName: c.String("decode-name"), decodeLine: c.Int("decode-line"), decodeKeep: c.String("decode-keep")}, noArgs(c)
}

func runHook(opts *hookOptions, e *Env) error {
	if opts.decode != "" {
		return runDecode(opts, e)
	}
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
		if gate.CatchUpMain(dir, yamlDecoder(), project.New(dir, e.Getenv, e.Stderr, yamlDecoder()).Provenance(), e.Stderr) != 0 {
			return &exitCodeError{code: exitFailure}
		}
		return nil
	}
	p := project.New(dir, e.Getenv, e.Stderr, yamlDecoder())
	notice := ""
	if e.user != nil {
		notice = e.user.Notice() // already on stderr; the gate puts it in systemMessage, once
	}
	code := gate.Run(gate.Config{Project: p, Wire: w, Getenv: e.Getenv, Stdin: e.Stdin, Stdout: e.Stdout, Stderr: e.Stderr,
		Probe: gate.LazyProber(os.Executable, p.Dir), EnvNotice: func() string { return notice }, CatchUp: gate.DetachedCatchUp, Board: hookboard.Bind(fullBoard())})
	if code != 0 {
		return &exitCodeError{code: code}
	}
	return nil
}

// maxDecode bounds what --decode reads: a policy or catalog file, or one ledger item.
const maxDecode = 16 << 20

// runDecode is `hook --decode KIND`: it reads the YAML on stdin with yaml.v3 and prints what it
// holds as JSON (project.Decoded), for a lean hook.
func runDecode(opts *hookOptions, e *Env) error {
	data, err := io.ReadAll(io.LimitReader(e.Stdin, maxDecode+1))
	if err != nil {
		return fmt.Errorf("decode: read stdin: %w", err)
	}
	if len(data) > maxDecode {
		return fmt.Errorf("decode: stdin is over %d bytes", maxDecode)
	}
	var answer any
	if opts.decode == project.DecodeItems {
		// Many items at once: the lean hook's reading of a chunk of a ledger in odd shapes.
		var texts []string
		if err := json.Unmarshal(data, &texts); err != nil {
			return fmt.Errorf("decode %s: %w", opts.decode, err)
		}
		all := make([]project.Decoded, len(texts))
		for i, text := range texts {
			if all[i], err = yamlDecoder().Decode(project.DecodeItem, "", 1, []byte(text)); err != nil {
				return err
			}
		}
		answer = all
	} else {
		d, err := yamlDecoder().Decode(opts.decode, opts.decodeName, opts.decodeLine, data)
		if err != nil {
			return err
		}
		answer = d
	}
	out, err := json.Marshal(answer)
	if err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	if opts.decodeKeep != "" {
		// Kept before it is printed: the lean hook may have run out of its budget and gone.
		gate.KeepDecoded(opts.decodeKeep, append(out, '\n'), e.Getenv)
	}
	_, err = e.Stdout.Write(append(out, '\n'))
	return err
}
