package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/message"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/redact"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/term"
)

// Markdown renders the report in the skill's Step 6 format, then the details of every circuit
// that is not CLOSED, the calls saved, recommendations and warnings.
func (r *Report) Markdown() string {
	var b strings.Builder
	b.WriteString("## MCP Circuit Breaker Report\n\n")
	if len(r.Circuits) == 0 {
		b.WriteString("No MCP tool failures recorded")
		if r.Entries > 0 {
			b.WriteString(" in this window")
		}
		b.WriteString(".\n")
	} else {
		b.WriteString("| Tool | State | Failures | Tripped | Reset |\n|---|---|---|---|---|\n")
		for _, c := range r.Circuits {
			fmt.Fprintf(&b, "| %s | %s | %d | %s | %s |\n", cell(data(c.Tool)), c.label, c.FailureCount,
				r.clock(c.TrippedAt, ""), r.clock(c.ResetAt, resetLabel(c.ResetMethod)))
		}
		if r.quotedNames {
			fmt.Fprintf(&b, "\n(%s.)\n", strings.ToUpper(message.NameSource[:1])+message.NameSource[1:])
		}
	}
	var open []*Circuit
	for _, c := range r.Circuits {
		if c.State != "CLOSED" {
			open = append(open, c)
		}
	}
	if len(open) > 0 {
		b.WriteString("\n### Open circuits\n")
		for _, c := range open {
			fmt.Fprintf(&b, "\n**%s** — %s", inline(data(c.Tool)), c.State)
			if c.FailureType != nil {
				fmt.Fprintf(&b, " (%s", inline(*c.FailureType))
				if c.Cause != nil {
					fmt.Fprintf(&b, ", %s", inline(data(*c.Cause)))
				}
				b.WriteString(")")
			}
			b.WriteString("\n")
			if c.Evidence != "" {
				fmt.Fprintf(&b, "- Evidence (%s): %s\n", c.EvidenceSource, quoted(c.Evidence, 200))
			}
			fmt.Fprintf(&b, "- Closes: %s\n", mdQuoted(c.Closes))
			fmt.Fprintf(&b, "- Calls blocked: %d\n", c.Blocked)
			fmt.Fprintf(&b, "- Open for: %s\n", (time.Duration(c.TimeOpenS) * time.Second).String())
		}
	}
	if len(r.CallErrors) > 0 {
		b.WriteString("\n### Calls that failed on their own terms\n\nNot counted against the tools: the tool answered, the request was at fault (a missing target, a refused path or table, invalid arguments).\n\n")
		for _, ce := range r.CallErrors {
			fmt.Fprintf(&b, "- %s: %d %s (%s); last (%s): %s\n", inline(data(ce.Tool)), ce.Count, plural(ce.Count, "call", "calls"),
				inline(mdQuoted(ce.Types)), ce.LastErrorSource, quoted(ce.LastError, 200))
		}
	}
	if r.Held > 0 {
		fmt.Fprintf(&b, "\n%d failed %s held, not counted: weak evidence only (an unknown text, a generic error or deadline) from a tool that had worked since its last counted failure; such a failure counts when the next one reads the same for other arguments.\n",
			r.Held, plural(r.Held, "call was", "calls were"))
	}
	fmt.Fprintf(&b, "\nCalls blocked: %d", r.CallsBlocked)
	if r.CallsBlocked > 0 {
		fmt.Fprintf(&b, " — %d %s not spent retrying dead tools", r.CallsBlocked, plural(r.CallsBlocked, "turn", "turns"))
	}
	if r.LoopGuarded > 0 {
		fmt.Fprintf(&b, "; %d of them by the loop guard (the same call failing the same way)", r.LoopGuarded)
	}
	if r.StreakGuarded > 0 {
		fmt.Fprintf(&b, "; %d by the streak guard (a tool that refused different calls in a row, each on its own terms)", r.StreakGuarded)
	}
	if r.RunawayGuarded > 0 {
		fmt.Fprintf(&b, "; %d by the runaway guard (a session whose MCP calls failed in a row across tools)", r.RunawayGuarded)
	}
	if r.WouldBlock > 0 {
		fmt.Fprintf(&b, "; %d more would have been blocked (shadow mode)", r.WouldBlock)
	}
	b.WriteString("\n")
	r.Cost.markdown(&b)
	if len(r.Recommendations) > 0 {
		b.WriteString("\nRecommendations:\n")
		for _, s := range r.Recommendations {
			fmt.Fprintf(&b, "- %s\n", inline(mdQuoted(s)))
		}
	}
	if len(r.Warnings) > 0 {
		b.WriteString("\nWarnings:\n")
		for _, s := range r.Warnings {
			fmt.Fprintf(&b, "- ⚠ %s\n", inline(s))
		}
	}
	return b.String()
}

func resetLabel(method *string) string {
	if method == nil {
		return ""
	}
	switch *method {
	case "probe_success":
		return " (probe)"
	case "user_forced":
		return " (user)"
	}
	return " (" + cell(*method) + ")"
}

// clock shows a time as HH:MM and the zone's name on the report's day, else with its date.
func (r *Report) clock(s *string, suffix string) string {
	if s == nil {
		return "—"
	}
	t, err := time.Parse(time.RFC3339Nano, *s)
	if err != nil {
		return cell(*s)
	}
	loc := r.loc
	if loc == nil {
		loc = time.UTC
	}
	t = t.In(loc)
	y1, m1, d1 := t.Date()
	if y2, m2, d2 := r.Now.In(loc).Date(); y1 == y2 && m1 == m2 && d1 == d2 {
		return t.Format("15:04 MST") + suffix
	}
	return t.Format("2006-01-02 15:04 MST") + suffix
}

// cell makes text safe inside a Markdown table cell: a | cannot end the cell, a newline cannot
// end the row.
func cell(s string) string {
	s = inline(s)
	return strings.ReplaceAll(s, "|", `\|`)
}

// inline keeps text on one line and shows every other control character visibly: the report is
// printed to terminals, written to files and read by the model, and a tool name or cause from a
// ledger written by hand may carry ANSI or OSC escapes.
func inline(s string) string {
	return term.Escape(strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' || r == 0x2028 || r == 0x2029 {
			return ' '
		}
		return r
	}, s))
}

// quoted is text a server or a file wrote (already redact.DataText) as the Markdown report shows
// it: quoted as the deny reason quotes it (redact.QuoteData), with Markdown's own syntax escaped
// so that a viewer renders no link, image (a tracking pixel) or emphasis from it.
func quoted(s string, max int) string { return inline(mdEscape(redact.QuoteData(s, max))) }

// data is a name or cause that may be quoted data (message.ShownKey, redact.CauseText): Markdown
// escaped when it is.
func data(s string) string {
	if strings.HasPrefix(s, `"`) {
		return mdEscape(s)
	}
	return s
}

// mdQuoted escapes the quoted parts of a line of ours (a recommendation naming a quoted key).
func mdQuoted(s string) string {
	if !strings.Contains(s, `"`) {
		return s
	}
	return mdEscape(s)
}

// mdEscape puts a backslash before each character Markdown reads as syntax, so that a viewer shows
// the text as written: no ![image](url) fetched, no [link](url), no emphasis, code or HTML entity.
func mdEscape(s string) string { return mdSyntax.Replace(s) }

var mdSyntax = strings.NewReplacer(`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "{", `\{`, "}", `\}`, "[", `\[`, "]", `\]`,
	"(", `\(`, ")", `\)`, "#", `\#`, "!", `\!`, "~", `\~`, "&", `\&`, "<", `\<`, ">", `\>`)

// clip is term.Clip, the one clipping rule.
func clip(s string, n int) string { return term.Clip(s, n) }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Cell is cell for tables that commands add after the report (report --fleet).
func Cell(s string) string { return cell(s) }

// markdown writes the token section: the figures per server and tool, with the assumptions
// under them, or why there are none.
func (c *Cost) markdown(b *strings.Builder) {
	if c == nil || c.FailedCalls+c.Blocked == 0 {
		return
	}
	b.WriteString("\n### Tokens\n\n")
	if !c.Available {
		b.WriteString("No token figures: no transcript of the window's sessions could be read, so what the failed and blocked calls cost is not known.\n")
		for _, s := range c.missingSessions() {
			fmt.Fprintf(b, "- %s\n", inline(mdQuoted(s)))
		}
		if c.NoSession > 0 {
			fmt.Fprintf(b, "- %d %s recorded without a session or call id (the CLI's own records): no transcript names %s\n",
				c.NoSession, plural(c.NoSession, "call", "calls"), plural(c.NoSession, "it", "them"))
		}
		return
	}
	fmt.Fprintf(b, "%s\n\n", inline(c.readFrom()))
	b.WriteString("| Server / tool | Failed calls | Tokens on failed calls | Blocked calls | Tokens saved (estimate) |\n|---|---|---|---|---|\n")
	for _, s := range c.Servers {
		fmt.Fprintf(b, "| **%s** (server) | %s | %d | %d | %s |\n", cell(data(s.Server)), failedCell(s.Figures), s.TokensFailed, s.Blocked, savedCell(s.Figures))
		for _, t := range s.Tools {
			fmt.Fprintf(b, "| %s | %s | %d | %d | %s |\n", cell(data(t.Tool)), failedCell(t.Figures), t.TokensFailed, t.Blocked, savedCell(t.Figures))
		}
	}
	fmt.Fprintf(b, "\nIn all: %d tokens on %d failed %s; %d %s blocked, which cost %d tokens themselves; %s.\n",
		c.TokensFailed, c.FailedCalls, plural(c.FailedCalls, "call", "calls"), c.Blocked, plural(c.Blocked, "call", "calls"),
		c.TokensBlocked, savedText(c.Figures))
	for _, s := range c.missingSessions() {
		fmt.Fprintf(b, "- No figures for %s\n", inline(mdQuoted(s)))
	}
	b.WriteString("\nHow these are counted:\n")
	for _, a := range c.Assumptions {
		fmt.Fprintf(b, "- %s\n", inline(a))
	}
}

// failedCell is a failed-call count, with how many were costed when not all were.
func failedCell(f Figures) string {
	if f.FailedCosted == f.FailedCalls {
		return fmt.Sprint(f.FailedCalls)
	}
	return fmt.Sprintf("%d (%d costed)", f.FailedCalls, f.FailedCosted)
}

// savedCell is the estimate, "—" when no blocked call has one.
func savedCell(f Figures) string {
	if f.BlockedEstimated == 0 {
		return "—"
	}
	return fmt.Sprintf("≈ %d", f.TokensSaved)
}

func savedText(f Figures) string {
	if f.BlockedEstimated == 0 {
		return "no estimate of tokens saved"
	}
	return fmt.Sprintf("≈ %d tokens saved (estimate)", f.TokensSaved)
}
