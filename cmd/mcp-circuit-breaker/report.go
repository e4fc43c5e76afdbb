package main

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/mcpconfig"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/report"
)

func reportCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:  "report",
		Usage: "the skill's Step 6 report: circuits, calls blocked, recommendations and warnings",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Value: "markdown", Usage: "markdown or json"},
			&cli.StringFlag{Name: "since", Usage: "only activity in this window: a duration such as 24h, or an RFC 3339 time"},
			&cli.StringFlag{Name: "session", Usage: "only activity of this Claude Code session id"},
			dirFlag(), jsonFlag(), fleetFlag(),
		},
		Action: e.report,
	}
}

func (e *Env) report(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("report takes no arguments")
	}
	format := c.String("format")
	if c.Bool("json") {
		format = "json"
	}
	if format != "markdown" && format != "json" {
		return usagef("--format %q is not markdown or json", format)
	}
	run, err := e.begin(c, false)
	if err != nil {
		return err
	}
	now := run.now
	opts := report.Options{Now: now, Session: c.String("session")}
	if s := c.String("since"); s != "" {
		if d, err := time.ParseDuration(s); err == nil && d > 0 {
			opts.Since = now.Add(-d)
		} else if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			opts.Since = t
		} else {
			return usagef("--since %q is not a duration such as 24h or an RFC 3339 time", s)
		}
	}
	if opts.Policy, err = run.Policy(); err != nil {
		return err
	}
	entries, problems, err := run.store.Ledger.ReadFile()
	if err != nil {
		return err
	}
	if e.shadow() {
		opts.Warnings = append(opts.Warnings, project.ShadowWarning)
	}
	if w := e.fleetWarning(run.Dir); w != "" && !c.Bool("fleet") {
		opts.Warnings = append(opts.Warnings, w)
	}
	if len(problems) > 0 {
		// The report still shows what can be read: it is how a person finds out.
		opts.Warnings = append(opts.Warnings, fmt.Sprintf("the ledger has %d problem(s), first at line %d: %s; the report leaves those items out. Run 'mcp-circuit-breaker ledger verify', then 'ledger repair'",
			len(problems), problems[0].Line, problems[0].Msg))
	}
	if len(entries) > 0 && !project.Gitignored(run.Dir) {
		opts.Warnings = append(opts.Warnings, project.StateDirName+"/ is not git-ignored: add the line '.claude/mcp_circuit/' to the project's .gitignore (or run 'mcp-circuit-breaker install')")
	}
	servers, _ := run.Discover(nil)
	opts.ConfigFile = func(server string) string {
		if s, ok := mcpconfig.Lookup(servers, server); ok {
			return s.Source
		}
		return ""
	}
	r := report.Build(entries, opts)
	if c.Bool("fleet") {
		return e.reportFleet(run.Dir, now, format, r)
	}
	if format == "json" {
		return e.printJSON(r)
	}
	fmt.Fprint(e.Stdout, r.Markdown())
	return nil
}
