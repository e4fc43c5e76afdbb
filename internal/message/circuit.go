// Package message is the one home of every text the model reads: the skill's circuit-open notice
// and step-2 messages, what a trip says about its cause and evidence, when and how a circuit can
// close, the deny reason's head, the half-open trial's context and the SessionStart listing. Text
// that came from a file or a server is quoted with its source on the line where it appears
// (redact.QuoteData), clipped by the one rule and stripped by the one control-character predicate
// (internal/term); a server name is shown only when it is one (ledger.ServerName).
package message

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/redact"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/term"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/timetext"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// Notice is the skill's circuit-open notice (docs/circuits.md), exactly.
func Notice(c *states.Circuit) string {
	return fmt.Sprintf("⚡ CIRCUIT OPEN — %s\nFailure type: %s  |  Consecutive failures: %d\nFurther calls to this tool are blocked until circuit resets.",
		c.Key, c.FailureType, c.FailureCount)
}

// Step2 is the skill's step-2 message for a failure that did not trip the circuit of c.
func Step2(c *states.Circuit, threshold int) string {
	cause := ""
	if c.Cause != "" {
		cause = ", " + redact.CauseText(c.Cause)
	}
	switch {
	case c.State != ledger.Closed:
		return fmt.Sprintf("MCP tool %s failed again while its circuit is %s (%s%s, %s). Do not retry it.",
			c.Key, c.State, c.FailureType, cause, Failures(c.FailureCount))
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

// WhenClosable says when and how an open circuit can close, for people and for the model; the
// server's configuration fingerprint is taken as unknown.
func WhenClosable(c *states.Circuit, now time.Time, p *states.Policy) string {
	return Closes(c, c.StandingAt(now, p, ""), now)
}

// Closes says when and how c, standing st at now, can close.
func Closes(c *states.Circuit, st states.Standing, now time.Time) string {
	switch st.Phase {
	case states.PhaseTrialInFlight:
		return fmt.Sprintf("A trial call is in flight (permit until %s); its result closes or re-opens the circuit.", timetext.CeilSecond(st.Next).Format(time.RFC3339))
	case states.PhaseAwaitingPerson:
		key := ShownKey(c.Key) // a hand-written ledger's name is data
		if c.FailureType == ledger.AdminGated {
			return "An admin must act (approve or enable the MCP server); then a person runs 'mcp-circuit-breaker probe " + key + "' or 'mcp-circuit-breaker reset " + key + "'. No automatic trial."
		}
		return "A person must close it: 'mcp-circuit-breaker probe " + key + "' or 'mcp-circuit-breaker reset " + key + "'."
	case states.PhaseTrialDue:
		why := "The cooldown is over"
		if st.ConfigChanged {
			why = "The server's configuration changed since the trip"
		}
		return why + ": the next call is a trial (one call allowed; success closes the circuit)."
	case states.PhaseCoolingDown:
		s := fmt.Sprintf("A trial call becomes possible at %s (%s).", timetext.CeilSecond(st.Next).Format(time.RFC3339), timetext.WaitText(now, st.Next))
		if c.FailureType == ledger.Auth {
			s += " Fixing the credentials in the server's configuration allows a trial at once."
		}
		return s
	}
	return "The circuit is CLOSED."
}

// TrialReason says why a trial is due: the server's configuration changed since the trip, or the
// cooldown is over (an expired permit of an earlier trial included).
func TrialReason(st states.Standing) string { return trialWhy(st.ConfigChanged) }

// TrialDue is TrialReason for the trial a decision granted.
func TrialDue(d states.Decision) string { return trialWhy(d.TrialConfigChanged) }

func trialWhy(configChanged bool) string {
	if configChanged {
		return "the server's configuration changed since the trip"
	}
	return "its cooldown is over"
}

// Trial is the context of the call that holds a circuit's single HALF-OPEN trial permit.
func Trial(d states.Decision) string {
	return fmt.Sprintf(term.Prefix+"%s was OPEN (%s) and %s: this call is the single HALF-OPEN trial. If it succeeds the circuit closes; if it fails the circuit re-opens with a doubled cooldown, so do not retry it on failure.",
		d.Circuit.Key, d.Circuit.FailureType, TrialDue(d))
}

// Failures says n consecutive failures with the right grammar.
func Failures(n int) string {
	if n == 1 {
		return "1 consecutive failure"
	}
	return fmt.Sprintf("%d consecutive failures", n)
}

// Describe is one line for a circuit in lists (SessionStart, status text).
func Describe(c *states.Circuit, now time.Time, p *states.Policy) string {
	return DescribeStanding(c, c.StandingAt(now, p, ""), now)
}

// DescribeStanding is Describe for c standing st at now.
func DescribeStanding(c *states.Circuit, st states.Standing, now time.Time) string {
	var b strings.Builder
	// A hand-written or committed ledger entry's name is data, not words of ours.
	key := ShownKey(c.Key)
	fmt.Fprintf(&b, "%s: %s", key, st.Label())
	if c.FailureType != "" {
		fmt.Fprintf(&b, " (%s", c.FailureType)
		if c.Cause != "" {
			fmt.Fprintf(&b, ", %s", redact.CauseText(c.Cause))
		}
		fmt.Fprintf(&b, ", %s)", Failures(st.FailureCount))
	}
	if c.State != ledger.Closed {
		b.WriteString(" — ")
		b.WriteString(Closes(c, st, now))
	}
	return b.String()
}

// CallError is the message for a failure that was the call's own fault: what failed, that it does
// not count against the tool, and to change the call rather than send it again.
func CallError(c *states.Circuit, t ledger.FailureType, cause string) string {
	why := string(t)
	if cause != "" {
		why += ", " + redact.CauseText(cause)
	}
	msg := fmt.Sprintf("MCP tool %s: this call failed on its own terms (%s); the tool works, so this failure does not count toward its circuit. Change the call (its target or arguments) instead of sending it again unchanged.",
		c.Key, why)
	if r := lastRepeat(c); r != nil && r.Count >= 2 {
		msg += fmt.Sprintf(" This exact call has now failed %d times in a row the same way.", r.Count)
	}
	if n := c.Streak.Count; n >= 2 {
		msg += fmt.Sprintf(" The tool has now refused %d different calls in a row: check them against its input schema.", n)
	}
	return msg
}

// HeldFailure is the message for a failure held rather than counted: it rests on weak evidence
// only, and the tool worked since its last counted failure, so it does not count yet; the next
// failure decides (docs/classification.md, "Evidence over calls").
func HeldFailure(c *states.Circuit, t ledger.FailureType, cause string) string {
	why := string(t)
	if cause != "" {
		why += ", " + redact.CauseText(cause)
	}
	return fmt.Sprintf("MCP tool %s failed (%s), but the text says nothing specific and the tool has worked since its last counted failure, so this failure is recorded and not counted yet: "+
		"if the next failure of the tool reads the same for other arguments, both count against the tool; if it reads differently, the failures are about what each call asked for. "+
		"Check this call's arguments before sending it again.",
		c.Key, why)
}

// ConfirmedText follows the step message of a failure that counted together with the failure
// held before it.
const ConfirmedText = "It reads the same as the failure held before it, for other arguments: that points at the tool, not the calls, so both count."

// lastRepeat is the loop guard's memory of the newest failed call of c, nil when none.
func lastRepeat(c *states.Circuit) *states.Repeat {
	if c == nil || len(c.Repeats) == 0 {
		return nil
	}
	return &c.Repeats[len(c.Repeats)-1]
}

// StreakReason is the deny reason of the streak guard: the tool refused s.Count calls in a row,
// each with other arguments and each on its own terms, so this one is held back once, with what to
// check; it is not a trip, and the next call goes.
func StreakReason(tool string, s states.Streak) string {
	why := string(s.Type)
	if s.Cause != "" {
		why += ", " + redact.CauseText(s.Cause)
	}
	return fmt.Sprintf("⊘ CALL ERROR STREAK — %s\nThis tool has refused %d different calls in a row, each on its own terms (the last: %s), with no success between, so this call is held back once. "+
		"Check the calls against the tool's input schema (its tools/list entry: parameter names, types, required fields, allowed values) before calling it again. "+
		"If the calls match the schema, the server may be refusing every call (misconfigured, or a wrong endpoint): check the server. "+
		"This is not a circuit trip: the tool is not blocked, and the next call goes through.",
		tool, s.Count, why)
}

// RunawayReason is the head of the runaway guard's deny reason: the session's MCP calls have failed
// n times in a row across the tools and servers of r, so this call (of tool) is held back once, and
// the model is to change course: the fallbacks that follow, or stop and ask the user.
func RunawayReason(tool string, r states.Run) string {
	var servers []string
	for _, k := range r.Tools {
		if s := ledger.Key(k).Server(); s != "" && !slices.Contains(servers, s) {
			servers = append(servers, s)
		}
	}
	last := string(r.Type)
	if last == "" {
		last = string(ledger.Unknown)
	}
	return fmt.Sprintf("⛔ RUNAWAY GUARD — %s\nThis session's last %d MCP calls all failed, one after another with no success between (the last: %s), across %s of %s: %s. "+
		"Switching from one failing tool to the next is not working, so this call is held back once. "+
		"Do not keep trying MCP tools one after another: use a fallback below (another way to get what you need without %s), "+
		"or stop and tell the user which tools failed and ask how to go on. "+
		"This is not a circuit trip: no tool is blocked, and the next call goes through.",
		tool, r.Count, last, plural(len(r.Tools), "tool", "tools"), plural(len(servers), "server", "servers"), strings.Join(r.Tools, ", "), strings.Join(servers, " and "))
}

// plural is n with the word for one or for many.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// LoopReason is the deny reason of the loop guard: this exact call keeps failing, how, and what to
// change; other calls of the tool are allowed.
func LoopReason(tool string, r states.Repeat, retryAt, now time.Time) string {
	why := string(r.Type)
	if r.Cause != "" {
		why += ", " + redact.CauseText(r.Cause)
	}
	wait := timetext.CeilSecond(retryAt).Sub(timetext.CeilSecond(now)).Round(time.Second)
	return fmt.Sprintf("⟲ LOOP GUARD — %s\nThis exact call (same tool, same arguments) has failed %d times in a row the same way (%s), so it is not sent again. "+
		"Change what the call asks for: another path, id, name or query, or arguments that match the tool's input schema; or use another tool. "+
		"The tool itself is not blocked: calls with other arguments go through. This exact call is allowed again in %s.",
		tool, r.Count, why, wait)
}
