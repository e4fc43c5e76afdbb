package main

// Everything the CLI prints goes through this file: the house prefixes (mcp-circuit-breaker:
// error:/warning:/hint:, lowercase, no period at the end), JSON, tables, and the rules for times
// and durations shown to a person. Instants are RFC 3339 in the local zone, with its offset, in
// text (people read it where they are); the ledger and every --json output keep UTC, which is
// what scripts and the hook's texts to the model compare.

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/term"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// errorf, warnf and hintf write the house lines through internal/term, which escapes every control
// character of the message: names, causes and error texts come from servers, cloned repositories
// and hand-edited ledgers.
func (e *Env) errorf(format string, args ...any) { term.Errorf(e.Stderr, format, args...) }

func (e *Env) warnf(format string, args ...any) { term.Warnf(e.Stderr, format, args...) }

func (e *Env) hintf(format string, args ...any) { term.Hintf(e.Stderr, format, args...) }

// notef writes a "mcp-circuit-breaker: …" progress line to stderr.
func (e *Env) notef(format string, args ...any) { term.Notef(e.Stderr, format, args...) }

// printJSON writes v as indented JSON.
func (e *Env) printJSON(v any) error {
	enc := json.NewEncoder(e.Stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// println prints human text: the UTC instants the library packages write into it are shown in
// the local zone, and control characters are shown escaped (see term.Lines).
func (e *Env) println(s string) { fmt.Fprintln(e.Stdout, term.Lines(e.local(s))) }

// printf is println with a format.
func (e *Env) printf(format string, args ...any) {
	fmt.Fprint(e.Stdout, term.Lines(e.local(fmt.Sprintf(format, args...))))
}

// utcStamp is an RFC 3339 instant in UTC as the library packages format it (time.RFC3339 or
// ledger.TimeFormat).
var utcStamp = regexp.MustCompile(`\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)

// local rewrites the UTC instants in s to the local zone, keeping their precision.
func (e *Env) local(s string) string {
	if e.Loc == nil || e.Loc == time.UTC || !strings.Contains(s, "Z") {
		return s
	}
	return utcStamp.ReplaceAllStringFunc(s, func(m string) string {
		t, err := time.Parse(time.RFC3339Nano, m)
		if err != nil {
			return m
		}
		layout := time.RFC3339
		if strings.Contains(m, ".") {
			layout = "2006-01-02T15:04:05.000Z07:00"
		}
		return t.In(e.Loc).Format(layout)
	})
}

// localTime formats t for a person: RFC 3339 in the local zone.
func (e *Env) localTime(t time.Time) string {
	if e.Loc != nil {
		t = t.In(e.Loc)
	}
	return t.Format(time.RFC3339)
}

// seconds shows a duration to a person: "15.0s", "0.2s", and from a minute on "2m5s".
func seconds(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

// printTable prints rows as aligned columns, every cell escaped on one line (see term.Escape).
func printTable(e *Env, rows [][]string) {
	for _, r := range rows {
		for i, c := range r {
			r[i] = term.Escape(c)
		}
	}
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			if n := len([]rune(c)); n > widths[i] {
				widths[i] = n
			}
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for i, c := range r {
			if i == len(r)-1 {
				b.WriteString(c)
				break
			}
			b.WriteString(c)
			b.WriteString(strings.Repeat(" ", widths[i]-len([]rune(c))+2))
		}
		fmt.Fprintln(e.Stdout, strings.TrimRight(b.String(), " "))
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// utcOrNull is t for JSON: UTC with milliseconds, or null for the zero time.
func utcOrNull(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(ledger.TimeFormat)
	return &s
}

// durOrNull is d for JSON: "30s", or null when there is none.
func durOrNull(d time.Duration) *string {
	if d <= 0 {
		return nil
	}
	s := d.String()
	return &s
}
