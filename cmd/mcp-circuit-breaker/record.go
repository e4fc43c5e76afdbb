package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/failure"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

func recordCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:      "record",
		Usage:     "record a failed MCP call: classify it, count it, trip the circuit at its threshold",
		ArgsUsage: "TOOL (--error TEXT | --type TYPE)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "error", Usage: "the failure text (Claude Code's error, the tool's error content)"},
			&cli.StringFlag{Name: "type", Usage: "the failure type, when known: " + typeNames()},
			&cli.IntFlag{Name: "status", Usage: "HTTP status code"},
			&cli.IntFlag{Name: "code", Usage: "JSON-RPC error code"},
			&cli.StringFlag{Name: "retry-after", Usage: "upstream retry hint, such as 30s"},
			&cli.StringFlag{Name: "server", Usage: "the server's real name, when it differs from the sanitized one in TOOL"},
			dirFlag(), jsonFlag(),
		},
		Action: e.record,
	}
}

func typeNames() string {
	s := make([]string, len(ledger.FailureTypes))
	for i, t := range ledger.FailureTypes {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}

// evidenceFlags reads --error, --type, --status, --code and --retry-after.
func evidenceFlags(c *cli.Context, needOne bool) (failure.Evidence, time.Duration, error) {
	var ev failure.Evidence
	ev.Text = c.String("error")
	if s := c.String("type"); s != "" {
		t, ok := ledger.ParseFailureType(s)
		if !ok {
			return ev, 0, usagef("--type %q is not one of %s", s, typeNames())
		}
		ev.Type = t
	}
	ev.Status, ev.Code = c.Int("status"), c.Int("code")
	if needOne && ev.Text == "" && ev.Type == "" && ev.Status == 0 && ev.Code == 0 {
		return ev, 0, usagef("%s needs --error TEXT or --type TYPE (or --status N / --code N)", c.Command.Name)
	}
	var ra time.Duration
	if s := c.String("retry-after"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			var n int
			if _, serr := fmt.Sscanf(s, "%d", &n); serr == nil && fmt.Sprint(n) == s {
				d, err = time.Duration(n)*time.Second, nil
			}
		}
		if err != nil || d <= 0 {
			return ev, 0, usagef("--retry-after %q is not a duration such as 30s or 2m", s)
		}
		ra = d
	}
	return ev, ra, nil
}

func (e *Env) record(c *cli.Context) error {
	tool, err := toolArg(c)
	if err != nil {
		return err
	}
	ev, ra, err := evidenceFlags(c, true)
	if err != nil {
		return err
	}
	run, err := e.begin(c, true)
	if err != nil {
		return err
	}
	defer run.share(e, tool)()
	now := run.now
	r := failure.Classify(ev, now)
	if ra > 0 {
		r.RetryAfter = ra
	}
	text := ev.Text
	if text == "" {
		text = string(r.Type)
	}
	text = failure.StoredText(text)
	pol, err := run.Policy()
	if err != nil {
		return err
	}
	call := states.Call{Tool: tool, Server: c.String("server"), Source: ledger.SourceCLI,
		Fingerprint: run.Fingerprint(tool, r.Type)}
	var out states.Outcome
	board, err := run.store.Update(func(b *states.Board) ([]ledger.Entry, error) {
		out = b.Failure(call, r, text, now, pol)
		return out.Entries, nil
	})
	if err != nil {
		return fmt.Errorf("record %s: %w", tool, err)
	}
	msg := run.FailureMessage(board, out, pol, now)
	if c.Bool("json") {
		return e.printJSON(map[string]any{
			"tool": tool, "type": r.Type, "cause": r.Cause, "transient": r.Transient,
			"retry_after": durOrNull(r.RetryAfter), "tripped": out.Tripped,
			"circuits": circuitsJSON(board, keysOf(out.Entries), now, pol), "message": msg,
		})
	}
	fmt.Fprintln(e.Stdout, msg)
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

func durOrNull(d time.Duration) any {
	if d <= 0 {
		return nil
	}
	return d.String()
}
