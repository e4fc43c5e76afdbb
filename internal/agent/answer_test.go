package agent

import (
	"testing"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
)

func TestClaudeEncode(t *testing.T) {
	pre := gate.Event{Kind: gate.Before, Hook: "PreToolUse"}
	start := gate.Event{Kind: gate.SessionStart, Hook: "SessionStart"}
	cases := []struct {
		name string
		ev   gate.Event
		a    gate.Answer
		want string
	}{
		{"allow says nothing", pre, gate.Answer{}, ""},
		{"deny", pre, gate.Answer{Deny: true, Reason: "⚡ CIRCUIT OPEN — mcp__s__*\nDo not retry this tool. <b> & \"x\""},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"⚡ CIRCUIT OPEN — mcp__s__*\nDo not retry this tool. <b> & \"x\""}}` + "\n"},
		{"context", start, gate.Answer{Context: "circuits"},
			`{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"circuits"}}` + "\n"},
		{"context names the event it answers", gate.Event{Kind: gate.Failure}, gate.Answer{Context: "step 2"},
			`{"hookSpecificOutput":{"hookEventName":"PostToolUseFailure","additionalContext":"step 2"}}` + "\n"},
		{"system message only", pre, gate.Answer{Notice: "gate broken"}, `{"systemMessage":"gate broken"}` + "\n"},
		{"deny with a system message", pre, gate.Answer{Deny: true, Reason: "r", Notice: "m"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"r"},"systemMessage":"m"}` + "\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := Claude.Encode(c.ev, c.a)
			if got := string(r.Stdout); got != c.want || r.Exit != 0 || len(r.Stderr) != 0 {
				t.Errorf("Encode:\n got %q, exit %d, stderr %q\nwant %q, exit 0", got, r.Exit, r.Stderr, c.want)
			}
		})
	}
}
