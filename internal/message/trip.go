package message

import (
	"fmt"
	"strings"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/redact"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/term"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// stateDir is where the project's state files live, named as the source of quoted texts.
const stateDir = ".claude/mcp_circuit"

// EvidenceSource attributes a circuit's error text, which a server or a hand-written ledger entry
// wrote: what it is and where it is quoted from.
const EvidenceSource = "the error text, quoted from " + stateDir + "/" + ledger.FileName

// NameSource attributes a tool's or server's name shown in quotes: one the gate could not have
// written, taken from the ledger as it stands.
const NameSource = "names in quotes are quoted from " + stateDir + "/" + ledger.FileName + ": no agent writes a tool's name so, so they are shown as data"

// ShownKey is a circuit key from the ledger as the model and a terminal may read it: as it is when
// the gate could have written it (mcp__, then letters, digits, '_', '-' and the server key's '*',
// as agents' sanitized names are), else as quoted data, since a hand-written or committed ledger's
// "tool" can hold a tag (</system-reminder>) or words that read as ours. Its control characters and
// bidi overrides are shown as escapes (\x1b, \u202e), so that a person sees the name was tampered
// with.
func ShownKey(k string) string {
	if PlainKey(k) {
		return k
	}
	return redact.QuoteData(term.Escape(k), 80)
}

// PlainKey reports whether k is a circuit key the gate could have written.
func PlainKey(k string) bool {
	rest, ok := strings.CutPrefix(k, "mcp__")
	if !ok || rest == "" || len(k) > ledger.MaxToolName {
		return false
	}
	return strings.IndexFunc(rest, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '*')
	}) < 0
}

// ShownServer is the name of the server of key as it may be shown: name when it is a server name
// of the key (ledger.ServerName), else the key's server part, quoted when the key is not plain.
func ShownServer(name, key string) string {
	if !PlainKey(key) {
		return redact.QuoteData(term.Escape(ledger.ServerName(name, ledger.Key(key))), 80)
	}
	return ledger.ServerName(name, ledger.Key(key))
}

// Failure is what record prints and the PostToolUseFailure hook tells the model: the step-2
// message, or on a trip the notice, when it may close, and fallbacks — the rendered options for
// the widest circuit that opened, asked for only then.
func Failure(b *states.Board, out states.Outcome, pol *states.Policy, now time.Time, fallbacks func(widest *states.Circuit) string) string {
	if out.CallError && len(out.Entries) > 0 {
		e := out.Entries[0]
		return CallError(out.Tool, e.FailureType, e.Cause)
	}
	if out.Held && len(out.Entries) > 0 {
		e := out.Entries[0]
		return HeldFailure(out.Tool, e.FailureType, e.Cause)
	}
	confirmed := ""
	if out.Confirmed {
		confirmed = "\n" + ConfirmedText
	}
	if len(out.Tripped) == 0 {
		tc := out.Tool
		msg := Step2(tc, pol.For(tc.Key, tc.FailureType).Threshold) + confirmed
		if sc := out.ServerCircuit; sc != nil && sc.State == ledger.Closed && sc.FailureCount >= 2 {
			msg += fmt.Sprintf("\nServer %s: %d consecutive server-wide failures across its tools (%s).", sc.Key, sc.FailureCount,
				opensAt(pol.For(sc.Key, sc.FailureType).Threshold-sc.FailureCount))
		}
		return msg
	}
	var parts []string
	for _, key := range out.Tripped {
		circ := b.Get(key)
		parts = append(parts, Notice(circ)+"\n"+TripDetail(circ, now, pol))
	}
	if confirmed != "" {
		parts[0] += confirmed
	}
	// Fallbacks for the widest circuit that opened: the server's when it opened.
	widest := b.Get(out.Tripped[len(out.Tripped)-1])
	parts = append(parts, fallbacks(widest))
	return strings.Join(parts, "\n\n")
}

func opensAt(left int) string {
	if left <= 1 {
		return "one more opens the server circuit"
	}
	return fmt.Sprintf("%d more open the server circuit", left)
}

// TripDetail says why a circuit is open and when it can close.
func TripDetail(c *states.Circuit, now time.Time, pol *states.Policy) string {
	var b strings.Builder
	if c.Cause != "" {
		fmt.Fprintf(&b, "Cause: %s", redact.CauseText(c.Cause))
		if k := ledger.Key(c.Key); k.IsServer() {
			name := ledger.ServerName(c.Server, k) // the real name, as Claude Code and the fallbacks say it
			fmt.Fprintf(&b, " (server-wide: every tool of server %s is blocked)", name)
		}
		b.WriteString("\n")
	}
	if c.Error != "" {
		// The error text is the tool's (or a hand-written ledger entry's): data with its source,
		// never words of ours.
		fmt.Fprintf(&b, "Evidence (%s): %s\n", EvidenceSource, redact.QuoteData(c.Error, 200))
	}
	b.WriteString(WhenClosable(c, now, pol))
	return b.String()
}
