package main

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/hookboard"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/mcpconfig"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/proxy"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

func proxyCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:      "proxy",
		Usage:     "run a stdio MCP server behind the circuits: the client starts the proxy, the proxy starts the server",
		ArgsUsage: "--name NAME -- COMMAND [ARGS…]",
		Description: "Every JSON-RPC message passes as it is, except tools/call: a call whose circuit\n" +
			"(mcp__NAME__TOOL or mcp__NAME__*) is OPEN is answered with the hook's deny text as an\n" +
			"isError result and never reaches the server; every other call is timed and its outcome\n" +
			"recorded in the project's ledger (docs/proxy.md). A server of the repository's own MCP\n" +
			"configuration that Claude Code has not approved is not started, as probe does.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "name", Usage: "the server's name as the client knows it: its tools' circuits are mcp__NAME__TOOL"},
			&cli.BoolFlag{Name: allowUnapprovedFlag, Usage: "start a repository server Claude Code has not approved for this project (you vouch for its command)"},
			dirFlag(),
		},
		Action: action(e, parseProxy, runProxy),
	}
}

// proxyOptions are the options of proxy.
type proxyOptions struct {
	globalOptions
	Name            string
	Command         string
	Args            []string
	AllowUnapproved bool
	// Ctx ends with the command (SIGTERM, Ctrl-C): the proxy then stops the server.
	Ctx context.Context
}

func parseProxy(c *cli.Context) (*proxyOptions, error) {
	g, err := parseGlobal(c)
	if err != nil {
		return nil, err
	}
	opts := &proxyOptions{globalOptions: g, Name: c.String("name"), AllowUnapproved: c.Bool(allowUnapprovedFlag), Ctx: c.Context}
	if c.NArg() == 0 {
		return nil, usagef("proxy needs the server's command after --: proxy --name NAME -- COMMAND [ARGS…]")
	}
	if opts.Name == "" {
		return nil, usagef("proxy needs --name NAME, the server's name as the client knows it (its tools' circuits are mcp__NAME__TOOL)")
	}
	if ledger.SanitizeServer(opts.Name) == "" || !ledger.ValidToolName(string(ledger.NameKey(opts.Name, "x"))) {
		return nil, usagef("proxy: --name %q is not a server name", opts.Name)
	}
	opts.Command, opts.Args = c.Args().First(), c.Args().Tail()
	return opts, nil
}

func runProxy(opts *proxyOptions, e *Env) error {
	if _, err := e.now(); err != nil {
		return err
	}
	p, err := e.project(opts.Dir)
	if err != nil {
		return err
	}
	// A repository's server is started only as Claude Code would start it: the check is probe's.
	servers, derr := p.DiscoverServers(nil, opts.AllowUnapproved)
	if derr != nil {
		e.warnf("%v", derr)
	}
	if s, ok := mcpconfig.Lookup(servers, opts.Name); ok {
		if err := refuseUnapproved("proxy", "run it through the proxy anyway", s, opts.AllowUnapproved); err != nil {
			return err
		}
	}
	dir := p.Dir
	pol := e.usablePolicy(p)
	err = proxy.Run(opts.Ctx, proxy.Config{
		Name: opts.Name, Command: opts.Command, Args: opts.Args,
		Stdin: e.Stdin, Stdout: e.Stdout, Stderr: e.Stderr,
		HangAfter: func(key string) time.Duration { return pol.For(key, ledger.Timeout).HangAfter },
		HookDecided: func(toolUseID string) bool {
			s, err := p.Store(false)
			return err == nil && s.Ledger.Recorded(toolUseID, ledger.SourceHook)
		},
		Gate: proxy.HookGate(func() gate.Config {
			p := project.New(dir, e.Getenv, e.Stderr, yamlDecoder())
			return gate.Config{Project: p, Getenv: e.Getenv, Stderr: e.Stderr,
				Probe: gate.LazyProber(os.Executable, p.Dir), CatchUp: gate.DetachedCatchUp, Board: hookboard.Bind(fullBoard())}
		}),
	})
	if errors.Is(err, context.Canceled) {
		return nil // the client stopped the proxy: the server was stopped with it
	}
	return err
}
