package main

import (
	"fmt"
	"sort"

	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/failure"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/probe"
)

func serversCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:  "servers",
		Usage: "list the MCP servers found in .mcp.json, ~/.claude.json, .claude/settings*.json and --mcp-config, with their source and scope",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "mcp-config", Usage: "an extra MCP config file (as claude --mcp-config)"},
			dirFlag(), jsonFlag(),
		},
		Action: e.servers,
	}
}

func (e *Env) servers(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("servers takes no arguments")
	}
	p, err := e.project(c)
	if err != nil {
		return err
	}
	servers, derr := p.Discover(c.StringSlice("mcp-config"))
	var problems []string
	if derr != nil {
		// A broken file is named; the others are still listed.
		for _, err := range unjoin(derr) {
			problems = append(problems, err.Error())
		}
	}
	if c.Bool("json") {
		list := []map[string]any{}
		for _, s := range servers {
			envNames, headerNames := keysSorted(s.Env), keysSorted(s.Headers)
			list = append(list, map[string]any{"name": s.Name, "sanitized": s.Sanitized, "scope": s.Scope,
				"source": s.Source, "transport": s.Transport, "target": failure.RedactKnown(probe.Target(s), s.Secrets()),
				"env": envNames, "headers": headerNames, "missing_vars": nonNil(s.Missing),
				"approval": s.Approval, "approval_note": nilIfEmpty(s.ApprovalNote)})
		}
		return e.printJSON(map[string]any{"servers": list, "problems": nonNil(problems)})
	}
	for _, p := range problems {
		fmt.Fprintf(e.Stderr, "mcp-circuit-breaker: warning: %s\n", p)
	}
	if len(servers) == 0 {
		fmt.Fprintln(e.Stdout, "no project/user-scope config found (.mcp.json, ~/.claude.json, .claude/settings*.json).")
		fmt.Fprintln(e.Stdout, "This does not mean no MCP server is mounted: plugin and remote servers live in no local file; the failing tool's name (mcp__<server>__<tool>) is the evidence.")
		return nil
	}
	rows := [][]string{{"NAME", "TOOL PREFIX", "SCOPE", "TRANSPORT", "APPROVAL", "SOURCE"}}
	for _, s := range servers {
		rows = append(rows, []string{s.Name, "mcp__" + s.Sanitized + "__", string(s.Scope), string(s.Transport), string(s.Approval), s.Source})
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
			fmt.Fprintf(e.Stderr, "mcp-circuit-breaker: warning: server %s: variables not set: %v\n", s.Name, s.Missing)
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

// unjoin splits an errors.Join error into its parts.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
