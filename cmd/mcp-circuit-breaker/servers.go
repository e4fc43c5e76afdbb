package main

import (
	"errors"
	"fmt"
	"sort"

	multierror "github.com/hashicorp/go-multierror"
	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/probe"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/redact"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

func serversCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:  "servers",
		Usage: "list the MCP servers found in .mcp.json, ~/.claude.json, .claude/settings*.json and --mcp-config, with their source and scope",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "mcp-config", Usage: "an extra MCP config file (as claude --mcp-config)"},
			dirFlag(), jsonFlag(),
		},
		Action: action(e, parseServers, runServers),
	}
}

// serversOptions are the options of servers.
type serversOptions struct {
	globalOptions
	// MCPConfig are extra MCP config files (as claude --mcp-config).
	MCPConfig []string
}

// serversJSON is servers' --json output.
type serversJSON struct {
	Servers  []serverJSON `json:"servers"`
	Problems []string     `json:"problems"`
}

// serverJSON is one server in --json output: names of variables and headers, never values.
type serverJSON struct {
	Name        string   `json:"name"`
	Sanitized   string   `json:"sanitized"`
	Scope       string   `json:"scope"`
	Source      string   `json:"source"`
	Transport   string   `json:"transport"`
	Target      string   `json:"target"`
	Env         []string `json:"env"`
	Headers     []string `json:"headers"`
	MissingVars []string `json:"missing_vars"`
	// CommandProblem says why a stdio server's command cannot be started (missing, not
	// executable), null when it can.
	CommandProblem *string `json:"command_problem"`
	// Approval is trusted, approved, unapproved, disabled or denied (docs/probes.md); ApprovalNote says
	// which file and key decide it.
	Approval     string `json:"approval"`
	ApprovalNote any    `json:"approval_note"`
}

func parseServers(c *cli.Context) (*serversOptions, error) {
	g, err := parseGlobal(c)
	if err != nil {
		return nil, err
	}
	return &serversOptions{globalOptions: g, MCPConfig: c.StringSlice("mcp-config")}, noArgs(c)
}

func runServers(opts *serversOptions, e *Env) error {
	p, err := e.project(opts.Dir)
	if err != nil {
		return err
	}
	servers, derr := p.Discover(opts.MCPConfig)
	var problems []string
	if derr != nil {
		// A broken file is named; the others are still listed.
		for _, err := range unjoin(derr) {
			problems = append(problems, err.Error())
		}
	}
	if opts.JSON {
		list := []serverJSON{}
		for _, s := range servers {
			list = append(list, serverJSON{Name: s.Name, Sanitized: s.Sanitized, Scope: string(s.Scope),
				Source: s.Source, Transport: string(s.Transport), Target: redact.RedactKnown(probe.Target(s), s.Secrets()),
				Env: keysSorted(s.Env), Headers: keysSorted(s.Headers), MissingVars: nonNil(s.Missing),
				CommandProblem: strOrNull(probe.CommandProblem(s, p.Dir)),
				Approval:       string(s.Approval), ApprovalNote: nilIfEmpty(s.ApprovalNote)})
		}
		return e.printJSON(serversJSON{Servers: list, Problems: nonNil(problems)})
	}
	for _, p := range problems {
		e.warnf("%s", p)
	}
	if len(servers) == 0 {
		fmt.Fprintln(e.Stdout, "no project/user-scope config found (.mcp.json, ~/.claude.json, .claude/settings*.json).")
		fmt.Fprintln(e.Stdout, "This does not mean no MCP server is mounted: plugin and remote servers live in no local file; the failing tool's name (mcp__<server>__<tool>) is the evidence.")
		return nil
	}
	rows := [][]string{{"NAME", "TOOL PREFIX", "SCOPE", "TRANSPORT", "APPROVAL", "SOURCE"}}
	for _, s := range servers {
		rows = append(rows, []string{s.Name, string(ledger.ToolKey(s.Sanitized, "")), string(s.Scope), string(s.Transport), string(s.Approval), s.Source})
	}
	printTable(e, rows)
	for _, s := range servers {
		if !s.Approval.Usable() {
			fmt.Fprintf(e.Stdout, "%s is %s: %s. It is never started, connected to or given your environment's values.\n", s.Name, s.Approval, s.ApprovalNote)
		}
		for _, o := range s.Ignored {
			fmt.Fprintf(e.Stdout, "%s: the definition in %s (%s) is not approved, so it shadows nothing.\n", s.Name, o.Source, o.Scope)
		}
	}
	for _, s := range servers {
		if len(s.Missing) > 0 {
			e.warnf("server %s: variables not set: %v", s.Name, s.Missing)
		}
		if msg := probe.CommandProblem(s, p.Dir); msg != "" {
			e.warnf("server %s: %s: Claude Code cannot start it, and a probe trips its circuit at once; fix \"command\" in %s", s.Name, msg, s.Source)
		}
	}
	return nil
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func keysSorted[V any](m map[string]V) []string {
	out := []string{}
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// unjoin splits a list of problems (a *multierror.Error) into its parts.
func unjoin(err error) []error {
	if me, ok := errors.AsType[*multierror.Error](err); ok {
		return me.WrappedErrors()
	}
	return []error{err}
}

// strOrNull is s for JSON: null when empty.
func strOrNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
