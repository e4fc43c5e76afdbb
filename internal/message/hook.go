package message

import (
	"fmt"
	"strings"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/redact"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/term"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/timetext"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// DenyHead is the part of a deny reason before its fallbacks: the notice, why the called tool is
// blocked when its server's circuit is the open one, a trial in flight, the trip's cause and
// evidence, when it can close, where the circuit came from when the fleet-shared board decided it
// (origin, "" otherwise), and "do not retry".
func DenyHead(d states.Decision, called string, now time.Time, pol *states.Policy, origin string) string {
	c := d.Circuit
	var sb strings.Builder
	sb.WriteString(Notice(c))
	sb.WriteString("\n")
	if c.Key != called {
		fmt.Fprintf(&sb, "%s is blocked because the server circuit %s is open: every tool of this server is blocked.\n", called, c.Key)
	}
	if d.Block == states.BlockInFlight {
		sb.WriteString("A trial call is in flight for this circuit; wait for its result.\n")
	}
	sb.WriteString(TripDetail(c, now, pol))
	if origin != "" {
		// Where a circuit the fleet-shared board decided came from (internal/fleet's words).
		sb.WriteString("\nThis circuit was " + origin + ".")
	}
	sb.WriteString("\nDo not retry this tool. Use a fallback:\n")
	return sb.String()
}

// CalledAs is the line a deny reason adds when the agent names the tool otherwise than its circuit
// key (Copilot CLI's fix-echo, Gemini CLI's mcp_fix_echo): the model must know that the key, which
// the rest of the reason and the fallbacks use, is the tool it called. "" when the names are one.
func CalledAs(called, key string) string {
	if called == "" || called == key {
		return ""
	}
	return fmt.Sprintf("You called this tool as %s; %s is its name in this message and in the circuit breaker.\n", called, key)
}

// Ambiguous is the line a deny reason adds when the agent's name of the tool, called, stands for
// more than one configured server's tool (keys, the one the gate decides first), and the circuit of
// open is not CLOSED: which server the agent calls cannot be told, so the gate does not guess.
func Ambiguous(called string, keys []string, open string) string {
	return fmt.Sprintf("The name %s stands for more than one tool of the servers configured here (%s), and the circuit of %s is not CLOSED: "+
		"which server the agent will call cannot be told, so the call is denied rather than guessed. "+
		"Rename one of these servers (or remove the one a repository's MCP file adds) to make the name unambiguous.\n",
		called, strings.Join(keys, ", "), open)
}

// MaxSessionStart bounds the SessionStart listing, under the 10,000 characters Claude Code keeps.
const MaxSessionStart = 9000

// SessionStart is the context a session starts with when circuits are not CLOSED: one line each
// (Describe), and what the gate does about them (nothing, in shadow mode).
func SessionStart(lines []string, shadow bool) string {
	enforce := "Do not call tools whose circuit is OPEN: the PreToolUse gate denies them."
	if shadow {
		enforce = "Do not call tools whose circuit is OPEN: shadow mode is on, so the gate lets them through, and avoiding them is up to you."
	}
	text := term.Prefix + "these MCP circuits are not CLOSED (from .claude/mcp_circuit/circuit_log.yaml, which outlives the context window):\n" +
		strings.Join(lines, "\n") + "\n" + enforce + " For alternatives run: mcp-circuit-breaker fallbacks TOOL"
	return term.Clip(text, MaxSessionStart)
}

// TrialClosed is the context after the successful trial call that closed the circuits keys.
func TrialClosed(keys []string) string {
	return fmt.Sprintf(term.Prefix+"the call succeeded; circuit CLOSED for %s (reset_method: probe_success). The tool may be used again.", strings.Join(keys, ", "))
}

// ProbeClosed is the context of a call let through because the probe that half_open: probe ran
// for its circuit key succeeded.
func ProbeClosed(key string) string {
	return fmt.Sprintf(term.Prefix+"%s was OPEN; a probe of server %s just succeeded (MCP handshake and tools/list), so the circuit is CLOSED and this call goes ahead.",
		key, ledger.Key(key).Server())
}

// FleetUnreachable is the SessionStart line when the fleet-shared board (its redacted address)
// does not answer.
func FleetUnreachable(board string) string {
	return fmt.Sprintf(term.Prefix+"the fleet-shared board %s is unreachable, so circuits are decided from this project's ledger alone: other sessions' trips are not seen until it answers.", board)
}

// The notices for the user (the agent's user-facing channel: Claude Code's systemMessage), one per
// event: a trip, a close and a runaway deny are said when they happen, never again per call.

// TripNotice tells the user, in one line, that circuit c opened at now and until when.
func TripNotice(c *states.Circuit, p *states.Policy, now time.Time) string {
	why := string(c.FailureType)
	if c.Cause != "" {
		why += ", " + redact.CauseText(c.Cause)
	}
	until := "until you reset it ('mcp-circuit-breaker reset " + ShownKey(c.Key) + "')"
	if at := c.TrialAtNow(p, now); !at.IsZero() {
		until = "until a trial at " + timetext.CeilSecond(at).UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf(term.Prefix+"⚡ circuit OPEN: %s (%s): its calls are denied %s.", ShownKey(c.Key), why, until)
}

// CloseNotice tells the user that the circuits of keys closed: a trial call or a probe succeeded.
func CloseNotice(keys []string, how string) string {
	return fmt.Sprintf(term.Prefix+"✓ circuit CLOSED: %s (%s): its calls go through again.", strings.Join(keys, ", "), how)
}

// RunawayNotice tells the user that the runaway guard stopped the session's call of tool: r's
// failures in a row across its tools.
func RunawayNotice(tool string, r states.Run) string {
	return fmt.Sprintf(term.Prefix+"⛔ runaway guard: this session's last %d MCP calls all failed (%s), so %s was held back once and the model was told to change course or ask you. No circuit is open.",
		r.Count, strings.Join(r.Tools, ", "), tool)
}

// EmptyStreak is the context after the n-th call of tool in a row, each with other arguments, that
// came back empty: told once, it is not a failure, and what to try instead.
func EmptyStreak(tool string, n int) string {
	return fmt.Sprintf(term.Prefix+"∅ EMPTY RESULTS — %s\nThis tool has returned an empty result for %d different calls in a row (no content, [], {} or \"no results\"). "+
		"The tool works, but what you are asking it for is not there, or not where you are looking: more variations of the same request are unlikely to find it. "+
		"Try another approach: check the names, ids or scope you pass (list what exists first), broaden or drop filters, use another tool or source, "+
		"or tell the user what you looked for and ask where it is. This is not a failure and nothing is blocked.", tool, n)
}
