package states

import (
	"fmt"
	"strings"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// Notice is the skill's circuit-open notice (SPEC §5.1), exactly.
func Notice(c *Circuit) string {
	return fmt.Sprintf("⚡ CIRCUIT OPEN — %s\nFailure type: %s  |  Consecutive failures: %d\nFurther calls to this tool are blocked until circuit resets.",
		c.Key, c.FailureType, c.FailureCount)
}

// Step2 is the skill's step-2 message for a failure that did not trip the circuit of c.
func Step2(c *Circuit, threshold int) string {
	cause := ""
	if c.Cause != "" {
		cause = ", " + c.Cause
	}
	switch {
	case c.State != ledger.Closed:
		return fmt.Sprintf("MCP tool %s failed again while its circuit is %s (%s%s, %d consecutive failures). Do not retry it.",
			c.Key, c.State, c.FailureType, cause, c.FailureCount)
	case c.FailureCount == 1:
		return fmt.Sprintf("MCP tool %s failed once (%s). Monitoring.", c.Key, c.FailureType)
	case c.FailureCount == 2:
		left := threshold - c.FailureCount
		return fmt.Sprintf("⚠ MCP tool %s failed twice in a row (%s%s). Check the server before calling it again: mcp-circuit-breaker probe %s. %s",
			c.Key, c.FailureType, cause, c.Key, opensIn(left))
	default:
		return fmt.Sprintf("⚠ MCP tool %s failed %d times in a row (%s%s). Check the server: mcp-circuit-breaker probe %s. %s",
			c.Key, c.FailureCount, c.FailureType, cause, c.Key, opensIn(threshold-c.FailureCount))
	}
}

func opensIn(left int) string {
	if left == 1 {
		return "One more failure opens the circuit."
	}
	return fmt.Sprintf("%d more failures open the circuit.", left)
}

// WhenClosable says when and how an open circuit can close, for people and for the model.
func WhenClosable(c *Circuit, now time.Time, p *Policy) string {
	at, auto := c.eligibleAt(Call{}, p, now)
	switch {
	case c.State == ledger.HalfOpen && c.LeaseLive(p, now):
		return fmt.Sprintf("A trial call is in flight (permit until %s); its result closes or re-opens the circuit.", CeilSecond(c.LeaseUntil).Format(time.RFC3339))
	case !auto && c.FailureType == ledger.AdminGated:
		return "An admin must act (approve or enable the MCP server); then a person runs 'mcp-circuit-breaker probe " + c.Key + "' or 'mcp-circuit-breaker reset " + c.Key + "'. No automatic trial."
	case !auto:
		return "A person must close it: 'mcp-circuit-breaker probe " + c.Key + "' or 'mcp-circuit-breaker reset " + c.Key + "'."
	case !now.Before(at):
		return "The cooldown is over: the next call is a trial (one call allowed; success closes the circuit)."
	}
	s := fmt.Sprintf("A trial call becomes possible at %s (in %s).", CeilSecond(at).Format(time.RFC3339), roundDur(at.Sub(now)))
	if c.FailureType == ledger.Auth {
		s += " Fixing the credentials in the server's configuration allows a trial at once."
	}
	return s
}

func roundDur(d time.Duration) string {
	if d = d.Round(time.Second); d < time.Second {
		d = time.Second
	}
	return d.String()
}

// Describe is one line for a circuit in lists (SessionStart, status text).
func Describe(c *Circuit, now time.Time, p *Policy) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s", c.Key, c.State)
	if c.FailureType != "" {
		fmt.Fprintf(&b, " (%s", c.FailureType)
		if c.Cause != "" {
			fmt.Fprintf(&b, ", %s", c.Cause)
		}
		fmt.Fprintf(&b, ", %d consecutive failures)", c.FailureCount)
	}
	if c.State != ledger.Closed {
		b.WriteString(" — ")
		b.WriteString(WhenClosable(c, now, p))
	}
	return b.String()
}

// CeilSecond rounds t up to a whole second in UTC: a time printed without fractions must never name
// a moment before the real one, or a call made at the printed time would still be denied.
func CeilSecond(t time.Time) time.Time {
	t = t.UTC()
	if r := t.Truncate(time.Second); !r.Equal(t) {
		return r.Add(time.Second)
	}
	return t
}

// TripDetail says why a circuit is open and when it can close.
func TripDetail(c *Circuit, now time.Time, pol *Policy) string {
	var b strings.Builder
	if c.Cause != "" {
		fmt.Fprintf(&b, "Cause: %s", c.Cause)
		if ledger.IsServerKey(c.Key) {
			fmt.Fprintf(&b, " (server-wide: every tool of server %s is blocked)", ServerOf(c.Key))
		}
		b.WriteString("\n")
	}
	if c.Error != "" {
		fmt.Fprintf(&b, "Evidence: %s\n", Clip(c.Error, 200))
	}
	b.WriteString(WhenClosable(c, now, pol))
	return b.String()
}

// FailureText is what a recorded failure says, fallbacks aside: the step-2 message, or on a trip
// the notice and trip detail of every circuit that opened (the caller adds the fallbacks of the
// widest, out.Tripped's last).
func FailureText(b *Board, out Outcome, pol *Policy, now time.Time) string {
	if len(out.Tripped) == 0 {
		tc := out.Tool
		msg := Step2(tc, pol.For(tc.Key, tc.FailureType).Threshold)
		if sc := out.ServerCircuit; sc != nil && sc.State == ledger.Closed && sc.FailureCount >= 2 {
			msg += fmt.Sprintf("\nServer %s: %d consecutive server-wide failures across its tools (%s).", sc.Key, sc.FailureCount,
				serverOpensAt(pol.For(sc.Key, sc.FailureType).Threshold-sc.FailureCount))
		}
		return msg
	}
	parts := make([]string, 0, len(out.Tripped))
	for _, key := range out.Tripped {
		circ := b.Get(key)
		parts = append(parts, Notice(circ)+"\n"+TripDetail(circ, now, pol))
	}
	return strings.Join(parts, "\n\n")
}

func serverOpensAt(left int) string {
	if left <= 1 {
		return "one more opens the server circuit"
	}
	return fmt.Sprintf("%d more open the server circuit", left)
}

// Clip keeps s on one line and at most n characters, marking a cut with "…".
func Clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
