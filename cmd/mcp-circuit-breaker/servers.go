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
				"source": s.Source, "transport": s.Transport, "target": failure.Redact(probe.Target(s)),
				"env": envNames, "headers": headerNames, "missing_vars": nonNil(s.Missing),
				"command_problem": nullIfEmpty(probe.CommandProblem(s, p.Dir))})
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
	rows := [][]string{{"NAME", "TOOL PREFIX", "SCOPE", "TRANSPORT", "SOURCE"}}
	for _, s := range servers {
		rows = append(rows, []string{s.Name, "mcp__" + s.Sanitized + "__", string(s.Scope), string(s.Transport), s.Source})
	}
	printTable(e, rows)
	for _, s := range servers {
		if len(s.Missing) > 0 {
			fmt.Fprintf(e.Stderr, "mcp-circuit-breaker: warning: server %s: variables not set: %v\n", s.Name, s.Missing)
		}
		if msg := probe.CommandProblem(s, p.Dir); msg != "" {
			fmt.Fprintf(e.Stderr, "mcp-circuit-breaker: warning: server %s: %s: Claude Code cannot start it, and a probe trips its circuit at once; fix \"command\" in %s\n", s.Name, msg, s.Source)
		}
	}
	return nil
}

func nullIfEmpty(s string) any {
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
