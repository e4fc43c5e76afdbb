package message

import (
	"fmt"
	"strings"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/failure"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// stateDir is where the project's state files live, named as the source of quoted texts.
const stateDir = ".claude/mcp_circuit"

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
		fmt.Fprintf(&b, "Cause: %s", failure.CauseText(c.Cause))
		if k := ledger.Key(c.Key); k.IsServer() {
			name := ledger.ServerName(c.Server, k) // the real name, as Claude Code and the fallbacks say it
			fmt.Fprintf(&b, " (server-wide: every tool of server %s is blocked)", name)
		}
		b.WriteString("\n")
	}
	if c.Error != "" {
		// The error text is the tool's (or a hand-written ledger entry's): data with its source,
		// never words of ours.
		fmt.Fprintf(&b, "Evidence (the error text, quoted from %s/%s): %s\n", stateDir, ledger.FileName, failure.QuoteData(c.Error, 200))
	}
	b.WriteString(WhenClosable(c, now, pol))
	return b.String()
}
