package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/hookboard"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/mcpconfig"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/proxy"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

func proxyCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:      "proxy",
		Usage:     "run an MCP server behind the circuits: a stdio server the proxy starts, or a streamable HTTP server it forwards to",
		ArgsUsage: "--name NAME -- COMMAND [ARGS…]  |  --name NAME --upstream URL [--listen 127.0.0.1:PORT]",
		Description: "Every JSON-RPC message passes as it is, except tools/call: a call whose circuit\n" +
			"(mcp__NAME__TOOL or mcp__NAME__*) is OPEN is answered with the hook's deny text as an\n" +
			"isError result and never reaches the server; every other call is timed and its outcome\n" +
			"recorded in the project's ledger (docs/proxy.md). A server of the repository's own MCP\n" +
			"configuration that Claude Code has not approved is not started, as probe does.\n" +
			"With --upstream the proxy serves streamable HTTP on --listen (loopback only unless\n" +
			"--allow-remote) and forwards every request to URL, headers included.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "name", Usage: "the server's name as the client knows it: its tools' circuits are mcp__NAME__TOOL"},
			&cli.StringFlag{Name: "upstream", Usage: "the streamable HTTP MCP endpoint to forward to (instead of a command)"},
			&cli.StringFlag{Name: "listen", Value: "127.0.0.1:0", Usage: "where the HTTP proxy listens (port 0: any free port, printed on stderr)"},
			&cli.BoolFlag{Name: "allow-remote", Usage: "let --listen name an address other machines reach (the proxy authenticates no one)"},
			&cli.DurationFlag{Name: "deadline", Usage: "answer a call still unanswered after this long with a timeout error, and record a TIMEOUT (default: policy.yaml's deadline for the tool, else none)"},
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
	// Upstream is the HTTP server's URL (HTTP mode); Listen where the proxy listens, Remote
	// whether it may be other than loopback.
	Upstream *url.URL
	Listen   string
	Remote   bool
	Deadline time.Duration
	// Ctx ends with the command (SIGTERM, Ctrl-C): the proxy then stops the server.
	Ctx context.Context
}

func parseProxy(c *cli.Context) (*proxyOptions, error) {
	g, err := parseGlobal(c)
	if err != nil {
		return nil, err
	}
	opts := &proxyOptions{globalOptions: g, Name: c.String("name"), AllowUnapproved: c.Bool(allowUnapprovedFlag), Ctx: c.Context,
		Listen: c.String("listen"), Remote: c.Bool("allow-remote"), Deadline: c.Duration("deadline")}
	if opts.Deadline < 0 {
		return nil, usagef("proxy: --deadline %s is negative", opts.Deadline)
	}
	if up := c.String("upstream"); up != "" {
		if c.NArg() > 0 {
			return nil, usagef("proxy takes either --upstream URL or a command after --, not both")
		}
		u, err := url.Parse(up)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, usagef("proxy: --upstream %q is not an http:// or https:// URL", up)
		}
		opts.Upstream = u
		if err := checkListen(opts.Listen, opts.Remote); err != nil {
			return nil, err
		}
	} else if c.NArg() == 0 {
		return nil, usagef("proxy needs the server's command after --: proxy --name NAME -- COMMAND [ARGS…] (or --upstream URL for an HTTP server)")
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

// checkListen refuses a --listen address other machines could reach unless the user allowed it:
// the proxy answers anyone who reaches it with the server behind it, credentials of the client's
// included, and authenticates no one itself.
func checkListen(addr string, remote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("proxy: --listen %q is not HOST:PORT: %v", addr, err)
	}
	if remote {
		return nil
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	if strings.EqualFold(host, "localhost") || (ip != nil && ip.IsLoopback()) {
		return nil
	}
	return withHint(fmt.Errorf("proxy: --listen %s is not a loopback address: the proxy would take calls from other machines and pass them to the server, and it authenticates no one", addr),
		"listen on 127.0.0.1:PORT, or pass --allow-remote if other machines must reach it")
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
	circuits := proxy.Circuits{
		Name: opts.Name, Stderr: e.Stderr,
		HangAfter: func(key string) time.Duration { return pol.For(key, ledger.Timeout).HangAfter },
		Deadline:  proxyDeadline(opts.Deadline, pol),
		HookDecided: func(toolUseID string) bool {
			s, err := p.Store(false)
			return err == nil && s.Ledger.Recorded(toolUseID, ledger.SourceHook)
		},
		Gate: proxy.HookGate(func() gate.Config {
			p := project.New(dir, e.Getenv, e.Stderr, yamlDecoder())
			return gate.Config{Project: p, Getenv: e.Getenv, Stderr: e.Stderr,
				Probe: gate.LazyProber(os.Executable, p.Dir), CatchUp: gate.DetachedCatchUp, Board: hookboard.Bind(fullBoard())}
		}),
	}
	if opts.Upstream != nil {
		err = serveProxy(opts, e, circuits)
	} else {
		err = proxy.Run(opts.Ctx, proxy.Config{Command: opts.Command, Args: opts.Args, Stdin: e.Stdin, Stdout: e.Stdout, Circuits: circuits})
	}
	if errors.Is(err, context.Canceled) {
		return nil // the client stopped the proxy: the server was stopped with it
	}
	return err
}

// serveProxy is the HTTP mode: it listens on opts.Listen, says where on stderr, and forwards to
// opts.Upstream until the command is stopped.
func serveProxy(opts *proxyOptions, e *Env, circuits proxy.Circuits) error {
	addr := opts.Listen
	if host, port, err := net.SplitHostPort(addr); err == nil && strings.EqualFold(host, "localhost") {
		addr = net.JoinHostPort("127.0.0.1", port)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("proxy: listen on %s: %w", opts.Listen, err)
	}
	e.notef("proxy: %s listening on http://%s/ for %s", opts.Name, l.Addr(), opts.Upstream.Redacted())
	return proxy.Serve(opts.Ctx, l, proxy.HTTPConfig{Circuits: circuits, Upstream: opts.Upstream, Remote: opts.Remote})
}

// proxyDeadline is the per-call deadline of each tool key: --deadline when given (the user's word
// for this one proxy), else policy.yaml's deadline for the key, else none (0).
func proxyDeadline(flag time.Duration, pol *states.Policy) func(key string) time.Duration {
	return func(key string) time.Duration {
		if flag > 0 {
			return flag
		}
		return pol.For(key, ledger.Timeout).Deadline
	}
}
