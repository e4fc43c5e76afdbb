package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/agent"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/failure"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/redact"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// recordOptions are the options of record.
type recordOptions struct {
	globalOptions
	Tool     string
	Evidence evidenceOptions
	// Server is the server's real name when it differs from the sanitized one in Tool.
	Server string
	// Args is --args, the call's arguments as JSON; "" when not given.
	Args string
}

// recordJSON is record's --json output.
type recordJSON struct {
	Tool       string             `json:"tool"`
	Type       ledger.FailureType `json:"type"`
	Cause      string             `json:"cause"`
	Fault      ledger.Fault       `json:"fault"`
	Transient  bool               `json:"transient"`
	RetryAfter *string            `json:"retry_after"`
	Tripped    []string           `json:"tripped"`
	Circuits   []circuitJSON      `json:"circuits"`
	Message    string             `json:"message"`
}

func recordCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:      "record",
		Usage:     "record a failed MCP call: classify it, count it, trip the circuit at its threshold",
		ArgsUsage: "TOOL (--error TEXT | --type TYPE)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "error", Usage: "the failure text (Claude Code's error, the tool's error content)"},
			&cli.StringFlag{Name: "type", Usage: "the failure type, when known: " + typeNames()},
			&cli.StringFlag{Name: "fault", Usage: "whose fault it is, when known: " + faultNames()},
			&cli.IntFlag{Name: "status", Usage: "HTTP status code"},
			&cli.IntFlag{Name: "code", Usage: "JSON-RPC error code"},
			&cli.StringFlag{Name: "retry-after", Usage: "upstream retry hint, such as 30s"},
			&cli.StringFlag{Name: "server", Usage: "the server's real name, when it differs from the sanitized one in TOOL"},
			&cli.StringFlag{Name: "args", Usage: "the call's arguments as JSON (its tool_input): what the failure text says of them is evidence of whose fault it is, and they tell this call from others for the loop and streak guards"},
			dirFlag(), jsonFlag(),
		},
		Action: action(e, parseRecord, runRecord),
	}
}

func parseRecord(c *cli.Context) (*recordOptions, error) {
	g, err := parseGlobal(c)
	if err != nil {
		return nil, err
	}
	opts := &recordOptions{globalOptions: g, Server: c.String("server"), Args: c.String("args")}
	if c.IsSet("args") && !json.Valid([]byte(opts.Args)) {
		return nil, usagef("--args %s is not JSON; give the call's arguments as its tool_input, such as '{\"path\": \"docs/a.md\"}'", redact.QuoteData(opts.Args, 60))
	}
	if opts.Tool, err = toolArg(c); err != nil {
		return nil, err
	}
	if opts.Evidence, err = parseEvidence(c, "--error TEXT or --type TYPE (or --status N / --code N)"); err != nil {
		return nil, err
	}
	return opts, nil
}

func faultNames() string {
	s := make([]string, len(ledger.Faults))
	for i, f := range ledger.Faults {
		s[i] = string(f)
	}
	return strings.Join(s, ", ")
}

func typeNames() string {
	s := make([]string, len(ledger.FailureTypes))
	for i, t := range ledger.FailureTypes {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}

// evidenceOptions are what is known of a failure: --error, --type, --status, --code and
// --retry-after.
type evidenceOptions struct {
	failure.Evidence
	RetryAfter time.Duration
}

// parseEvidence reads the evidence flags the command has; need names those of which one must be
// given, in the command's own words.
func parseEvidence(c *cli.Context, need string) (evidenceOptions, error) {
	var ev evidenceOptions
	ev.Text = c.String("error")
	if s := c.String("type"); s != "" {
		t, ok := ledger.ParseFailureType(s)
		if !ok {
			return ev, usagef("--type %q is not one of %s", s, typeNames())
		}
		ev.Type = t
	}
	if c.IsSet("fault") {
		f := ledger.Fault(c.String("fault"))
		if !f.Valid() {
			return ev, usagef("--fault %q is not one of %s", c.String("fault"), faultNames())
		}
		ev.Fault = f
	}
	ev.Status, ev.Code = c.Int("status"), c.Int("code")
	if ev.Text == "" && ev.Type == "" && ev.Status == 0 && ev.Code == 0 {
		return ev, usagef("%s needs %s", c.Command.Name, need)
	}
	if s := c.String("retry-after"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			var n int
			if _, serr := fmt.Sscanf(s, "%d", &n); serr == nil && fmt.Sprint(n) == s {
				d, err = time.Duration(n)*time.Second, nil
			}
		}
		if err != nil || d <= 0 {
			return ev, usagef("--retry-after %q is not a duration such as 30s or 2m", s)
		}
		ev.RetryAfter = d
	}
	return ev, nil
}

func runRecord(opts *recordOptions, e *Env) error {
	tool, ev := opts.Tool, opts.Evidence
	run, err := e.begin(opts.globalOptions, true)
	if err != nil {
		return err
	}
	defer run.share(e, tool)()
	now := run.now
	call := states.Call{Tool: tool, Server: opts.Server, Source: ledger.SourceCLI}
	// The tool and the call's arguments are evidence, as the hook gives them.
	ev.Tool = tool
	if opts.Args != "" {
		ev.Args = failure.ArgsFromJSON([]byte(opts.Args))
		if call.Hash, err = agent.HashArgs([]byte(opts.Args)); err != nil {
			return fmt.Errorf("record %s: %w", tool, err)
		}
	}
	r := failure.Classify(ev.Evidence, now)
	if ev.RetryAfter > 0 {
		r.RetryAfter = ev.RetryAfter
	}
	text := ev.Text
	if text == "" {
		text = string(r.Type)
	}
	text = redact.StoredTextKnown(text, run.Secrets())
	// An invalid policy.yaml must not stop the decision: its valid parts and the built-in
	// values apply, and the user is told.
	pol := e.usablePolicy(run.Project)
	call.Fingerprint = run.Fingerprint(tool, r.Type)
	var out states.Outcome
	board, err := run.store.Update(func(b *states.Board) ([]ledger.Entry, error) {
		out = b.Failure(call, project.FailureOf(r, text), now, pol)
		return out.Entries, nil
	})
	if err != nil {
		return fmt.Errorf("record %s: %w", tool, err)
	}
	msg := run.FailureMessage(board, out, pol, now)
	if opts.JSON {
		return e.printJSON(recordJSON{Tool: tool, Type: r.Type, Cause: r.Cause, Fault: r.Fault, Transient: r.Transient,
			RetryAfter: durOrNull(r.RetryAfter), Tripped: out.Tripped,
			Circuits: circuitsJSON(board, keysOf(out.Entries), standingFn(run.Project, now, pol), pol), Message: msg})
	}
	e.println(msg)
	return nil
}

func keysOf(entries []ledger.Entry) []string {
	var keys []string
	seen := map[string]bool{}
	for _, en := range entries {
		if !seen[en.Tool] {
			seen[en.Tool] = true
			keys = append(keys, en.Tool)
		}
	}
	return keys
}
