package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/failure"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/mcpconfig"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/probe"
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
			&cli.BoolFlag{Name: "include-project", Usage: "with --all, also probe servers from project-scope files"},
			&cli.StringSliceFlag{Name: "mcp-config", Usage: "an extra MCP config file (as claude --mcp-config)"},
			&cli.DurationFlag{Name: "timeout", Value: 30 * time.Second, Usage: "bound on each server's whole probe"},
			// The hook's half_open: probe passes its per-phase deadlines (README "half_open: probe").
			&cli.DurationFlag{Name: "connect-timeout", Hidden: true, Usage: "bound on spawning or connecting (default 5s)"},
			&cli.DurationFlag{Name: "initialize-timeout", Hidden: true, Usage: "bound on the initialize handshake (default 15s)"},
			&cli.DurationFlag{Name: "list-timeout", Hidden: true, Usage: "bound on tools/list (default 5s)"},
			dirFlag(), jsonFlag(),
		},
		Action: e.probe,
	}
}

// probeTarget is one server to probe and the circuit key its outcome is recorded on.
type probeTarget struct {
	server mcpconfig.Server
	key    string // mcp__<server>__<tool> or mcp__<server>__*
	tool   string // the tool that must be listed, "" for a server probe
}

func (e *Env) probe(c *cli.Context) error {
	all, name := c.Bool("all"), c.String("server")
	n := c.NArg()
	switch {
	case all && (name != "" || n > 0), name != "" && n > 0:
		return usagef("probe takes one of TOOL, --server NAME or --all")
	case !all && name == "" && n != 1:
		return usagef("probe needs TOOL, --server NAME or --all")
	case c.Bool("include-project") && !all:
		return usagef("--include-project goes with --all")
	}
	now, err := e.now()
	if err != nil {
		return err
	}
	p, err := e.project(c)
	if err != nil {
		return err
	}
	servers, derr := p.Discover(c.StringSlice("mcp-config"))
	if derr != nil {
		fmt.Fprintf(e.Stderr, "mcp-circuit-breaker: warning: %v\n", derr)
	}
	var targets []probeTarget
	switch {
	case all:
		for _, s := range servers {
			if s.Scope == mcpconfig.ScopeProject && !c.Bool("include-project") {
				fmt.Fprintf(e.Stderr, "mcp-circuit-breaker: skipping %s from %s (project scope: its command comes from the repository; add --include-project to probe it)\n", s.Name, s.Source)
				continue
			}
			targets = append(targets, probeTarget{server: s, key: "mcp__" + s.Sanitized + "__*"})
		}
		if len(targets) == 0 {
			return withHint(errors.New("probe --all: no server to probe"), noConfigHint(servers))
		}
	case name != "":
		s, ok := mcpconfig.Lookup(servers, name)
		if !ok {
			return withHint(fmt.Errorf("probe: no MCP server named %q", name), noConfigHint(servers))
		}
		targets = append(targets, probeTarget{server: s, key: "mcp__" + s.Sanitized + "__*"})
	default:
		tool := c.Args().First()
		if err := checkToolKey(tool); err != nil {
			return err
		}
		srv := states.ServerOf(tool)
		s, ok := mcpconfig.Lookup(servers, srv)
		if !ok {
			return withHint(fmt.Errorf("probe %s: no MCP server %q in the configuration files", tool, srv), noConfigHint(servers))
		}
		t := probeTarget{server: s, key: tool}
		if !ledger.IsServerKey(tool) {
			t.tool = tool[len("mcp__"+srv+"__"):]
		}
		targets = append(targets, t)
	}
	pol, err := p.Policy()
	if err != nil {
		return err
	}
	// The state directory is made only once there is something to record.
	st, err := p.Store(true)
	if err != nil {
		return err
	}
	var results []map[string]any
	unhealthy := false
	for _, t := range targets {
		fmt.Fprintf(e.Stderr, "mcp-circuit-breaker: probing %s (%s scope, %s): %s\n", t.server.Name, t.server.Scope, t.server.Source, failure.Redact(probe.Target(t.server)))
		ctx, cancel := context.WithTimeout(c.Context, c.Duration("timeout"))
		o := probe.Probe(ctx, t.server, probe.Options{Tool: t.tool, Dir: p.Dir, Connect: c.Duration("connect-timeout"),
			Initialize: c.Duration("initialize-timeout"), List: c.Duration("list-timeout")})
		cancel()
		msgs, err := e.recordProbe(st, pol, t, o, now)
		if err != nil {
			return err
		}
		if o.Healthy && len(o.Tools) > 0 {
			if err := toolcache.SaveTools(p.StateDir(), t.server.Name, o.Tools, now); err != nil {
				fmt.Fprintf(e.Stderr, "mcp-circuit-breaker: warning: save tools cache: %v\n", err)
			}
		}
		unhealthy = unhealthy || !o.Healthy
		results = append(results, probeJSON(o))
		if !c.Bool("json") {
			fmt.Fprintln(e.Stdout, probeLine(o))
			for _, m := range msgs {
				fmt.Fprintln(e.Stdout, "  "+m)
			}
		}
	}
	if c.Bool("json") {
		if err := e.printJSON(map[string]any{"results": results}); err != nil {
			return err
		}
	}
	if unhealthy {
		return &exitCodeError{code: exitBlocked}
	}
	return nil
}

// noConfigHint says what was found, never "no MCP mounted": plugin and remote servers live in no
// local file (SPEC §8).
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
		c := failure.Classify(failure.Evidence{Text: o.Error, Status: o.Status}, now)
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
			tools = append(tools, mcpconfig.Sanitize(tl.Name))
		}
		if tools == nil {
			tools = []string{}
		}
	}
	call := states.Call{Tool: t.key, Server: t.server.Name, Source: ledger.SourceProbe, Fingerprint: t.server.Fingerprint()}
	var out states.Outcome
	_, err := st.Update(func(b *states.Board) ([]ledger.Entry, error) {
		out = b.Probe(call, o.Healthy, r, failure.StoredText(o.Error), tools, now, pol)
		return out.Entries, nil
	})
	if err != nil {
		return nil, fmt.Errorf("record probe of %s: %w", t.server.Name, err)
	}
	var msgs []string
	for _, en := range out.Entries {
		switch {
		case en.ResetMethod == ledger.ResetProbeSuccess:
			msgs = append(msgs, fmt.Sprintf("Circuit CLOSED — %s (reset_method: probe_success).", en.Tool))
		case en.State == ledger.Open:
			msgs = append(msgs, fmt.Sprintf("%s stays OPEN (%s); next trial at %s.", en.Tool, en.FailureType, untilOrPerson(en.OpenUntil)))
		}
	}
	return msgs, nil
}

func untilOrPerson(t time.Time) string {
	if t.IsZero() {
		return "no automatic trial: a person must act"
	}
	return t.UTC().Format(time.RFC3339)
}

func probeLine(o probe.Outcome) string {
	ms := o.Duration.Milliseconds()
	if o.Healthy {
		names := make([]string, len(o.Tools))
		for i, t := range o.Tools {
			names[i] = t.Name
		}
		sort.Strings(names)
		return fmt.Sprintf("✓ %s: healthy (%s, %s) in %d ms; %d tools: %s", o.Server, o.Transport, o.ProtocolVersion, ms, len(o.Tools), states.Clip(strings.Join(names, ", "), 300))
	}
	s := fmt.Sprintf("✗ %s: %s (%s) at %s in %d ms: %s", o.Server, o.Type, o.Cause, o.Phase, ms, states.Clip(o.Error, 300))
	if o.RetryAfter > 0 {
		s += fmt.Sprintf(" (retry after %s)", o.RetryAfter)
	}
	return s
}

func probeJSON(o probe.Outcome) map[string]any {
	tools := []string{}
	for _, t := range o.Tools {
		tools = append(tools, t.Name)
	}
	m := map[string]any{"server": o.Server, "healthy": o.Healthy, "type": nil, "cause": nil,
		"duration_ms": o.Duration.Milliseconds(), "tools": tools, "retry_after": durOrNull(o.RetryAfter),
		"transport": o.Transport, "phase": nil, "status": nil, "error": nil}
	if !o.Healthy {
		m["type"], m["cause"], m["phase"], m["error"] = o.Type, o.Cause, o.Phase, o.Error
		if o.Status != 0 {
			m["status"] = o.Status
		}
	}
	return m
}
