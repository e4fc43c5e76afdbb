package main

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/agent"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/mcpconfig"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/message"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/redact"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/report"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/safefile"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// reportOptions are the options of report.
type reportOptions struct {
	globalOptions
	// Since is --since, as an age or a time; exactly one of SinceAge and SinceTime is set when
	// it was given.
	SinceAge  time.Duration
	SinceTime time.Time
	Session   string
	// Fleet is --fleet: the fleet-shared board's circuits follow the report.
	Fleet bool
	// HTML is --format html: one self-contained page with a timeline of the circuits.
	HTML bool
	// Output is --output: where the HTML page goes ("" is stdout).
	Output string
}

func reportCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:  "report",
		Usage: "the skill's Step 6 report: circuits, calls blocked, recommendations and warnings",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "format", Value: "markdown", Usage: "markdown, json, or html (one self-contained page with a timeline)"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "with --format html: write the page to this file instead of stdout"},
			&cli.StringFlag{Name: "since", Usage: "only activity in this window: an age such as 24h or 7d, or an RFC 3339 time"},
			&cli.StringFlag{Name: "session", Usage: "only activity of this Claude Code session id"},
			dirFlag(), &cli.BoolFlag{Name: "json", Usage: "print JSON (the same as --format json)"}, fleetFlag(),
		},
		Action: action(e, parseReport, runReport),
	}
}

func parseReport(c *cli.Context) (*reportOptions, error) {
	g, err := parseGlobal(c)
	if err != nil {
		return nil, err
	}
	if err := noArgs(c); err != nil {
		return nil, err
	}
	opts := &reportOptions{globalOptions: g, Session: c.String("session"), Fleet: c.Bool("fleet"), Output: c.String("output")}
	switch format := c.String("format"); {
	case format != "markdown" && format != "json" && format != "html":
		return nil, usagef("--format %q is not markdown, json or html", format)
	case g.JSON && c.IsSet("format") && format != "json":
		return nil, usagef("--json asks for JSON and --format for %s: give one of them", format)
	case format == "json":
		opts.JSON = true
	case format == "html":
		opts.HTML = true
	}
	if opts.Output != "" && !opts.HTML {
		return nil, usagef("--output writes the HTML page: give it with --format html")
	}
	if s := c.String("since"); s != "" {
		if d, err := parseAge(s); err == nil && d > 0 {
			opts.SinceAge = d
		} else if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			opts.SinceTime = t
		} else {
			return nil, usagef("--since %q is not an age such as 24h or 7d, or an RFC 3339 time", s)
		}
	}
	return opts, nil
}

func runReport(opts *reportOptions, e *Env) error {
	run, err := e.begin(opts.globalOptions, false)
	if err != nil {
		return err
	}
	now := run.now
	ro := report.Options{Now: now, Session: opts.Session, Since: opts.SinceTime, Location: e.Loc, Fingerprint: run.Fingerprint, Timeline: opts.HTML}
	if opts.SinceAge > 0 {
		ro.Since = now.Add(-opts.SinceAge)
	}
	ro.Policy = e.usablePolicy(run.Project)
	entries, problems, err := run.store.Ledger.ReadFile()
	if err != nil {
		return err
	}
	if opts.Session != "" {
		if err := knownSession(entries, opts.Session); err != nil {
			return err
		}
	}
	if e.shadow() {
		ro.Warnings = append(ro.Warnings, message.ShadowWarning)
	}
	if w := e.fleetWarning(run.Dir); w != "" && !opts.Fleet {
		ro.Warnings = append(ro.Warnings, w)
	}
	if len(problems) > 0 {
		// The report still shows what can be read: it is how a person finds out.
		ro.Warnings = append(ro.Warnings, fmt.Sprintf("the ledger has %d problem(s), first at line %d: %s; the report leaves those items out. Run 'mcp-circuit-breaker ledger verify', then 'ledger repair'",
			len(problems), problems[0].Line, problems[0].Msg))
	}
	var replayed states.Board
	replayed.Replay(entries)
	if w := message.UnverifiedWarning(&replayed); w != "" {
		ro.Warnings = append(ro.Warnings, w)
	}
	if len(entries) > 0 && !project.Gitignored(run.Dir) {
		ro.Warnings = append(ro.Warnings, project.StateDirName+"/ is not git-ignored: add the line '.claude/mcp_circuit/' to the project's .gitignore (or run 'mcp-circuit-breaker install')")
	}
	servers, _ := run.Discover(nil)
	// A ledger may hold hand-written entries or ones written before a server's secret was
	// configured: the report redacts again, with every configured value (control characters are
	// escaped where the report is printed).
	secrets := run.Secrets()
	for i := range entries {
		entries[i].Error = redact.RedactKnown(entries[i].Error, secrets)
		entries[i].Cause = redact.RedactKnown(entries[i].Cause, secrets)
	}
	ro.ConfigFile = func(server string) string {
		if s, ok := mcpconfig.Lookup(servers, server); ok {
			return s.Source
		}
		return ""
	}
	ro.Costs, ro.CostsLeftOut = e.readCosts(run.Dir, report.CostSessions(entries, ro))
	r := report.Build(entries, ro)
	if opts.HTML {
		var fleet *report.FleetSection
		if opts.Fleet {
			v, err := e.readFleet(run.Dir, now)
			if err != nil {
				return err
			}
			fleet = e.fleetSection(v)
		}
		return e.writeHTML(opts.Output, r, fleet)
	}
	if opts.Fleet {
		return e.reportFleet(run.Dir, now, opts.JSON, r)
	}
	if opts.JSON {
		return e.printJSON(r)
	}
	e.printf("%s", r.Markdown())
	return nil
}

// maxCostSessions bounds the sessions whose transcripts one report reads, the most recent first:
// a ledger of months names hundreds of sessions, each transcript tens of MB.
const maxCostSessions = 50

// readCosts finds and reads the transcripts of sessions (report.CostSessions) for the tokens their
// calls cost, and returns them by session id with the number of sessions left out. Transcripts are
// found from the session id alone under the user's own agent directories
// (agent.FindTranscripts): no path is read from the ledger or any file of the project.
func (e *Env) readCosts(dir string, sessions []report.CostSession) (map[string]*report.SessionCosts, int) {
	costs := map[string]*report.SessionCosts{}
	left := 0
	if len(sessions) > maxCostSessions {
		left, sessions = len(sessions)-maxCostSessions, sessions[:maxCostSessions]
	}
	home := e.Getenv("HOME")
	for _, s := range sessions {
		sc := &report.SessionCosts{Transcripts: []string{}, Calls: map[string]report.CallCost{}}
		costs[s.ID] = sc
		found := agent.FindTranscripts(s.ID, dir, e.Getenv)
		if len(found) == 0 {
			claude, codex := agent.TranscriptRoots(e.Getenv)
			sc.Missing = fmt.Sprintf("no transcript found (looked for Claude Code's in %s, Codex CLI's in %s)", showPath("", home, claude), showPath("", home, codex))
			continue
		}
		want := map[string]bool{}
		for _, id := range s.Calls {
			want[id] = true
		}
		var problems []string
		for _, t := range found {
			scan, err := agent.ReadCosts(t, want)
			if err != nil {
				problems = append(problems, err.Error())
				continue
			}
			sc.Transcripts = append(sc.Transcripts, showPath("", home, t.Path))
			if c, err := agent.Lookup(t.Agent); err == nil {
				sc.Agent = c.Title()
			}
			for id, c := range scan.Calls {
				if _, dup := sc.Calls[id]; dup || !c.HasTurn {
					continue // a call is costed from the transcript that records its turn
				}
				sc.Calls[id] = report.CallCost{Tool: c.Tool, Turn: c.Share, Result: c.ResultTokens}
			}
		}
		if len(sc.Transcripts) == 0 {
			sc.Missing = "its transcript could not be read: " + strings.Join(problems, "; ")
		}
	}
	return costs, left
}

// knownSession returns an error unless some entry belongs to session: a mistyped id must not
// read as "no failures".
func knownSession(entries []ledger.Entry, session string) error {
	var recent []string
	seen := map[string]bool{}
	for i := len(entries) - 1; i >= 0; i-- {
		id := entries[i].SessionID
		if id == session {
			return nil
		}
		if id != "" && !seen[id] && len(recent) < 3 {
			seen[id] = true
			recent = append(recent, id)
		}
	}
	err := fmt.Errorf("report --session %s: no such session in the ledger", session)
	if len(recent) == 0 {
		return withHint(err, "no entry of the ledger names a session: the CLI's own records have none, only the hook's do")
	}
	return withHint(err, "the latest sessions are: "+strings.Join(recent, ", "))
}

// writeHTML renders the HTML report to stdout, or to file through a temporary file and a rename,
// so that a browser never reads half a page; the path is the user's own choice on the command line.
func (e *Env) writeHTML(file string, r *report.Report, fleet *report.FleetSection) error {
	var b bytes.Buffer
	if err := r.HTML(&b, fleet); err != nil {
		return err
	}
	if file == "" {
		_, err := e.Stdout.Write(b.Bytes())
		return err
	}
	if err := safefile.WriteFileAtomic(file, b.Bytes(), 0o600); err != nil {
		return fmt.Errorf("write html report %s: %w", file, err)
	}
	e.printf("wrote %s (%d bytes)\n", file, b.Len())
	return nil
}
