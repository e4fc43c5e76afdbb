package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/failure"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/mcpconfig"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/message"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/probe"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/redact"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/term"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/toolcache"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

func probeCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:      "probe",
		Usage:     "perform a real MCP handshake (initialize, tools/list) with a server and record the outcome",
		ArgsUsage: "TOOL | --server NAME | --all",
		Description: "A healthy probe closes the OPEN or HALF-OPEN circuits of the server (reset_method:\n" +
			"probe_success); a failed one keeps them OPEN with the grown cooldown. Probing a stdio server\n" +
			"starts the command its configuration names: the command is printed first. --all skips\n" +
			"servers from project-scope files (.mcp.json, .claude/settings.json) unless --include-project.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "server", Usage: "probe the server with this name (real or sanitized)"},
			&cli.BoolFlag{Name: "all", Usage: "probe every server found in trusted scopes"},
			&cli.BoolFlag{Name: "include-project", Usage: "with --all, also probe servers from project-scope files (only those Claude Code approved)"},
			&cli.BoolFlag{Name: allowUnapprovedFlag, Usage: "with TOOL or --server, start or connect to a repository server Claude Code has not approved for this project (you vouch for its command)"},
			&cli.StringSliceFlag{Name: "mcp-config", Usage: "an extra MCP config file (as claude --mcp-config)"},
			&cli.DurationFlag{Name: "timeout", Value: 30 * time.Second, Usage: "bound on each server's whole probe"},
			// The hook's half_open: probe passes its per-phase deadlines (README "half_open: probe").
			&cli.DurationFlag{Name: "connect-timeout", Hidden: true, Usage: "bound on spawning or connecting (default 5s)"},
			&cli.DurationFlag{Name: "initialize-timeout", Hidden: true, Usage: "bound on the initialize handshake (default 15s)"},
			&cli.DurationFlag{Name: "list-timeout", Hidden: true, Usage: "bound on tools/list (default 5s)"},
			dirFlag(), jsonFlag(),
		},
		Action: action(e, parseProbe, runProbe),
	}
}

// probeOptions are the options of probe: exactly one of Tool, Server and All.
type probeOptions struct {
	globalOptions
	Tool           string
	Server         string
	All            bool
	IncludeProject bool
	// AllowUnapproved is the explicit override that probes a repository server Claude Code has
	// not approved (TOOL or --server only).
	AllowUnapproved bool
	// MCPConfig are extra MCP config files (as claude --mcp-config).
	MCPConfig []string
	// Timeout bounds each server's whole probe.
	Timeout time.Duration
	// Connect, Initialize and List bound the probe's phases (zero: the probe's defaults); the
	// hook's half_open: probe passes its own.
	Connect, Initialize, List time.Duration
	// Ctx ends with the command (SIGTERM, Ctrl-C): the probe then stops its server's process group.
	Ctx context.Context
}

// probeJSON is probe's --json output (docs/cli.md).
type probeJSON struct {
	Results []probeResultJSON `json:"results"`
}

// probeResultJSON is one server's probe in --json output.
type probeResultJSON struct {
	Server     string              `json:"server"`
	Healthy    bool                `json:"healthy"`
	Type       *ledger.FailureType `json:"type"`
	Cause      *string             `json:"cause"`
	DurationMS int64               `json:"duration_ms"`
	Tools      []string            `json:"tools"`
	RetryAfter *string             `json:"retry_after"`
	Transport  string              `json:"transport"`
	Phase      *string             `json:"phase"`
	Status     *int                `json:"status"`
	Error      *string             `json:"error"`
	// ClientAuth: reachable, and authentication is the client's (a 401 challenge to a server
	// configured without credentials; docs/probes.md).
	ClientAuth bool `json:"client_auth"`
}

func parseProbe(c *cli.Context) (*probeOptions, error) {
	g, err := parseGlobal(c)
	if err != nil {
		return nil, err
	}
	opts := &probeOptions{globalOptions: g, All: c.Bool("all"), Server: c.String("server"),
		IncludeProject: c.Bool("include-project"), AllowUnapproved: c.Bool(allowUnapprovedFlag), MCPConfig: c.StringSlice("mcp-config"), Timeout: c.Duration("timeout"),
		Connect: c.Duration("connect-timeout"), Initialize: c.Duration("initialize-timeout"), List: c.Duration("list-timeout"), Ctx: c.Context}
	n := c.NArg()
	switch {
	case opts.All && (opts.Server != "" || n > 0), opts.Server != "" && n > 0:
		return nil, usagef("probe takes one of TOOL, --server NAME or --all")
	case !opts.All && opts.Server == "" && n != 1:
		return nil, usagef("probe needs TOOL, --server NAME or --all")
	case opts.IncludeProject && !opts.All:
		return nil, usagef("--include-project goes with --all")
	case opts.AllowUnapproved && opts.All:
		return nil, usagef("--" + allowUnapprovedFlag + " goes with TOOL or --server NAME: it vouches for one server")
	case n == 1:
		opts.Tool = c.Args().First()
		if err := checkToolKey(opts.Tool); err != nil {
			return nil, err
		}
	}
	return opts, nil
}

// probeTarget is one server to probe and the circuit key its outcome is recorded on.
type probeTarget struct {
	server mcpconfig.Server
	key    string // mcp__<server>__<tool> or mcp__<server>__*
	tool   string // the tool that must be listed, "" for a server probe
}

func runProbe(opts *probeOptions, e *Env) error {
	all, name := opts.All, opts.Server
	now, err := e.now()
	if err != nil {
		return err
	}
	p, err := e.project(opts.Dir)
	if err != nil {
		return err
	}
	servers, derr := p.DiscoverServers(opts.MCPConfig, opts.AllowUnapproved)
	if derr != nil {
		e.warnf("%v", derr)
	}
	var targets []probeTarget
	switch {
	case all:
		for _, s := range servers {
			if !s.Approval.Usable() {
				e.notef("skipping %s from %s (%s: %s)", s.Name, s.Source, s.Approval, s.ApprovalNote)
				continue
			}
			if s.Scope == mcpconfig.ScopeProject && !opts.IncludeProject {
				e.notef("skipping %s from %s (project scope: its command comes from the repository; add --include-project to probe it)", s.Name, s.Source)
				continue
			}
			targets = append(targets, probeTarget{server: s, key: string(ledger.ServerKey(s.Sanitized))})
		}
		if len(targets) == 0 {
			return withHint(errors.New("probe --all: no server to probe"), noConfigHint(servers))
		}
	case name != "":
		s, ok := mcpconfig.Lookup(servers, name)
		if !ok {
			return withHint(fmt.Errorf("probe: no MCP server named %q", name), noConfigHint(servers))
		}
		if err := checkApproved(s, opts.AllowUnapproved); err != nil {
			return err
		}
		targets = append(targets, probeTarget{server: s, key: string(ledger.ServerKey(s.Sanitized))})
	default:
		tool := opts.Tool
		srv, toolPart, _ := ledger.Key(tool).Split()
		s, ok := mcpconfig.Lookup(servers, srv)
		if !ok {
			return withHint(fmt.Errorf("probe %s: no MCP server %q in the configuration files", tool, srv), noConfigHint(servers))
		}
		if err := checkApproved(s, opts.AllowUnapproved); err != nil {
			return err
		}
		t := probeTarget{server: s, key: tool}
		if !ledger.Key(tool).IsServer() {
			t.tool = toolPart
		}
		targets = append(targets, t)
	}
	pol := e.usablePolicy(p)
	// The state directory is made only once there is something to record.
	st, err := p.Store(true)
	if err != nil {
		return err
	}
	// Servers are probed concurrently, at most probeParallel at once, so that hung servers cost
	// one timeout rather than one each; progress goes to stderr as each starts and ends, and the
	// results are recorded and printed in the order of the targets.
	outcomes := make([]probe.Outcome, len(targets))
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, probeParallel)
	for i, t := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			mu.Lock()
			e.notef("probing %s (%s scope, %s): %s", t.server.Name, t.server.Scope, t.server.Source, redact.RedactKnown(probe.Target(t.server), t.server.Secrets()))
			mu.Unlock()
			ctx, cancel := context.WithTimeout(opts.Ctx, opts.Timeout)
			o := probe.Probe(ctx, t.server, probe.Options{Tool: t.tool, Dir: p.Dir, Connect: opts.Connect, Initialize: opts.Initialize, List: opts.List})
			cancel()
			// The server's stderr and replies are its text: strip control characters and redact
			// its configured values before they are printed or stored.
			o.Error = redact.CleanKnown(o.Error, t.server.Secrets())
			outcomes[i] = o
			if len(targets) > 1 {
				mu.Lock()
				e.notef("probed %s: %s", t.server.Name, probeLine(o))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	results := []probeResultJSON{}
	unhealthy := false
	for i, t := range targets {
		o := outcomes[i]
		// The outcome reaches the fleet board too: a hook that took the fleet's trial permit and
		// ran this probe (half_open: probe) reads the board next.
		unbind := e.shareStore(p, st, t.key, now)
		msgs, err := e.recordProbe(st, pol, t, o, now)
		unbind()
		if err != nil {
			return err
		}
		if o.Healthy && len(o.Tools) > 0 {
			if err := toolcache.SaveTools(p.StateDir(), t.server.Name, o.Tools, now); err != nil {
				e.warnf("save tools cache: %v", err)
			}
		}
		unhealthy = unhealthy || !o.Healthy
		results = append(results, toProbeJSON(o))
		if !opts.JSON {
			e.println(term.Escape(probeLine(o)))
			for _, m := range msgs {
				e.println("  " + term.Escape(m))
			}
		}
	}
	if opts.JSON {
		if err := e.printJSON(probeJSON{Results: results}); err != nil {
			return err
		}
	}
	if unhealthy {
		return &exitCodeError{code: exitBlocked}
	}
	return nil
}

// allowUnapprovedFlag is the explicit override that starts a repository server Claude Code has
// not approved.
const allowUnapprovedFlag = "allow-unapproved"

// checkApproved refuses a server Claude Code would not start (docs/probes.md): an unapproved or disabled
// repository server unless the user vouches for it with --allow-unapproved, a denied one always
// (deniedMcpServers and allowedMcpServers are the administrator's or the user's standing rule).
func checkApproved(s mcpconfig.Server, allow bool) error {
	return refuseUnapproved("probe", "probe it once anyway", s, allow)
}

// refuseUnapproved is checkApproved for command op (probe, proxy): anyway says what
// --allow-unapproved does for it.
func refuseUnapproved(op, anyway string, s mcpconfig.Server, allow bool) error {
	switch {
	case s.Approval.Usable():
		return nil
	case s.Approval == mcpconfig.ApprovalDenied:
		return withHint(fmt.Errorf("%s: server %q is denied (%s); refusing to start or connect to it", op, s.Name, s.ApprovalNote),
			"remove it from deniedMcpServers (or add it to allowedMcpServers) if it should run")
	case allow:
		return nil
	}
	return withHint(fmt.Errorf("%s: server %q from %s is %s (%s); refusing to start or connect to it", op, s.Name, s.Source, s.Approval, s.ApprovalNote),
		fmt.Sprintf("approve it in Claude Code (accept it when claude asks, or add %q to enabledMcpjsonServers), or pass --%s to %s: it would run %s",
			s.Name, allowUnapprovedFlag, anyway, redact.RedactKnown(probe.Target(s), s.Secrets())))
}

// noConfigHint says what was found, never "no MCP mounted": plugin and remote servers live in no
// local file (docs/probes.md).
func noConfigHint(servers []mcpconfig.Server) string {
	if len(servers) == 0 {
		return "no project/user-scope config found (.mcp.json, ~/.claude.json, .claude/settings*.json); plugin and remote servers live in no local file, so pass --mcp-config FILE to probe one"
	}
	names := make([]string, len(servers))
	for i, s := range servers {
		names[i] = s.Name
	}
	return "servers found: " + strings.Join(names, ", ") + " ('mcp-circuit-breaker servers' lists where each comes from)"
}

// recordProbe writes the outcome to the ledger: a healthy probe closes what it proves healthy, a
// failed one counts on the key and re-opens with the grown cooldown. A cancelled probe says
// nothing about the server and is not recorded.
func (e *Env) recordProbe(st *states.Store, pol *states.Policy, t probeTarget, o probe.Outcome, now time.Time) ([]string, error) {
	if o.Cause == "canceled" {
		return []string{"probe cancelled: nothing recorded"}, nil
	}
	r := failure.Result{Type: o.Type, Cause: o.Cause, RetryAfter: o.RetryAfter, Transient: o.Type.Transient()}
	if !o.Healthy {
		// The probe knows the phase and status; the text may know more (UNKNOWN means only the
		// text could tell).
		c := failure.Classify(failure.Evidence{Text: o.Error, Status: o.Status, Probe: true}, now)
		if r.Type == ledger.Unknown || r.Type == "" {
			r.Type, r.Transient = c.Type, c.Transient
			if r.Cause == "" {
				r.Cause = c.Cause
			}
		}
		// A broken handshake is the server's; a missing tool or a failed call is the tool's.
		r.ServerWide = o.Cause != "tool_missing" && o.Phase != probe.PhaseCall
		if r.RetryAfter == 0 {
			r.RetryAfter = c.RetryAfter
		}
	}
	var tools []string
	if o.Healthy || o.Tools != nil {
		for _, tl := range o.Tools {
			tools = append(tools, ledger.Sanitize(tl.Name))
		}
		if tools == nil {
			tools = []string{}
		}
	}
	call := states.Call{Tool: t.key, Server: t.server.Name, Source: ledger.SourceProbe, Fingerprint: t.server.Fingerprint()}
	var out states.Outcome
	prev := map[string]ledger.State{}
	after, err := st.Update(func(b *states.Board) ([]ledger.Entry, error) {
		out = b.Probe(call, o.Healthy, project.FailureOf(r, redact.StoredText(o.Error)), tools, now, pol)
		for _, en := range out.Entries {
			prev[en.Tool] = ledger.Closed
			if c := b.Get(en.Tool); c != nil {
				prev[en.Tool] = c.State
			}
		}
		return out.Entries, nil
	})
	if err != nil {
		return nil, fmt.Errorf("record probe of %s: %w", t.server.Name, err)
	}
	return probeMessages(after, out.Entries, prev, now, pol), nil
}

// probeMessages says what a probe's entries did to each circuit, from the states before them and
// the board after them: closed, tripped (it was CLOSED), re-opened (it was OPEN or HALF-OPEN), or
// still CLOSED with one more failure counted.
func probeMessages(after *states.Board, entries []ledger.Entry, prev map[string]ledger.State, now time.Time, pol *states.Policy) []string {
	var msgs []string
	for _, en := range entries {
		c := after.Get(en.Tool)
		st := c.StandingAt(now, pol, "")
		switch {
		case en.ResetMethod == ledger.ResetProbeSuccess:
			msgs = append(msgs, fmt.Sprintf("Circuit CLOSED — %s (reset_method: probe_success).", en.Tool))
		case states.Opens(prev[en.Tool], en) && prev[en.Tool] == ledger.Closed:
			msgs = append(msgs, fmt.Sprintf("Circuit OPEN — %s: this probe tripped it (%s, %s). %s", en.Tool, en.FailureType, message.Failures(st.FailureCount), message.Closes(c, st, now)))
		case states.Opens(prev[en.Tool], en):
			msgs = append(msgs, fmt.Sprintf("%s re-opened (%s, %s). %s", en.Tool, en.FailureType, message.Failures(st.FailureCount), message.Closes(c, st, now)))
		case en.State == ledger.Closed:
			msgs = append(msgs, fmt.Sprintf("%s stays CLOSED (%s, %s).", en.Tool, en.FailureType, message.Failures(st.FailureCount)))
		}
	}
	return msgs
}

// probeParallel bounds how many servers probe --all probes at once.
const probeParallel = 4

func probeLine(o probe.Outcome) string {
	took := seconds(o.Duration)
	if o.ClientAuth {
		return fmt.Sprintf("✓ %s: reachable (%s) in %s; authentication is the client's: it answered HTTP 401 with a WWW-Authenticate challenge and its configuration holds no credentials, so Claude Code signs in (OAuth) — not an AUTH failure", o.Server, o.Transport, took)
	}
	if o.Healthy {
		names := make([]string, len(o.Tools))
		for i, t := range o.Tools {
			names[i] = t.Name
		}
		sort.Strings(names)
		return fmt.Sprintf("✓ %s: healthy (%s, %s) in %s; %d tools: %s", o.Server, o.Transport, o.ProtocolVersion, took, len(o.Tools), project.Clip(strings.Join(names, ", "), 300))
	}
	s := fmt.Sprintf("✗ %s: %s (%s) at %s in %s: %s", o.Server, o.Type, o.Cause, o.Phase, took, project.Clip(o.Error, 300))
	if o.RetryAfter > 0 {
		s += fmt.Sprintf(" (retry after %s)", o.RetryAfter)
	}
	return s
}

func toProbeJSON(o probe.Outcome) probeResultJSON {
	j := probeResultJSON{Server: o.Server, Healthy: o.Healthy, DurationMS: o.Duration.Milliseconds(), Tools: []string{},
		RetryAfter: durOrNull(o.RetryAfter), Transport: string(o.Transport), ClientAuth: o.ClientAuth}
	if o.ClientAuth {
		j.Status = &o.Status
	}
	for _, t := range o.Tools {
		j.Tools = append(j.Tools, t.Name)
	}
	if !o.Healthy {
		phase := string(o.Phase)
		j.Type, j.Cause, j.Phase, j.Error = &o.Type, &o.Cause, &phase, &o.Error
		if o.Status != 0 {
			j.Status = &o.Status
		}
	}
	return j
}
