package project

import (
	"fmt"
	"strings"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/failure"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// FailureOf is the failure r, as the classifier saw it, in the circuits' terms, with text as stored
// (redacted and clipped by the caller).
func FailureOf(r failure.Result, text string) states.Failure {
	return states.Failure{Type: r.Type, Cause: r.Cause, Fault: r.Fault, RetryAfter: r.RetryAfter,
		ServerWide: r.ServerWide, Error: text}
}

// FailureMessage is what record prints and the PostToolUseFailure hook tells the model: the step-2
// message, or on a trip the notice, when it may close, and the fallbacks.
func (p *Project) FailureMessage(b *states.Board, out states.Outcome, pol *states.Policy, now time.Time) string {
	if out.CallError && len(out.Entries) > 0 {
		e := out.Entries[0]
		return states.CallError(out.Tool, e.FailureType, e.Cause)
	}
	if len(out.Tripped) == 0 {
		tc := out.Tool
		msg := states.Step2(tc, pol.For(tc.Key, tc.FailureType).Threshold)
		if sc := out.ServerCircuit; sc != nil && sc.State == ledger.Closed && sc.FailureCount >= 2 {
			msg += fmt.Sprintf("\nServer %s: %d consecutive server-wide failures across its tools (%s).", sc.Key, sc.FailureCount,
				opensAt(pol.For(sc.Key, sc.FailureType).Threshold-sc.FailureCount))
		}
		return msg
	}
	var parts []string
	for _, key := range out.Tripped {
		circ := b.Get(key)
		parts = append(parts, states.Notice(circ)+"\n"+TripDetail(circ, now, pol))
	}
	// Fallbacks for the widest circuit that opened: the server's when it opened.
	widest := b.Get(out.Tripped[len(out.Tripped)-1])
	parts = append(parts, p.FallbackMarkdown(b, widest, pol, now))
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
			name := c.Server // the real name, as Claude Code and the fallbacks say it
			if name == "" {
				name = k.Server()
			}
			fmt.Fprintf(&b, " (server-wide: every tool of server %s is blocked)", name)
		}
		b.WriteString("\n")
	}
	if c.Error != "" {
		// The error text is the tool's (or a hand-written ledger entry's): data with its source,
		// never words of ours.
		fmt.Fprintf(&b, "Evidence (the error text, quoted from %s/%s): %s\n", StateDirName, ledger.FileName, failure.QuoteData(c.Error, 200))
	}
	b.WriteString(states.WhenClosable(c, now, pol))
	return b.String()
}
