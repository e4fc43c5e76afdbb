package claude

import "testing"

func TestAnswerEncode(t *testing.T) {
	cases := []struct {
		name string
		a    Answer
		want string
	}{
		{"allow says nothing", Answer{}, ""},
		{"deny", Deny("⚡ CIRCUIT OPEN — mcp__s__*\nDo not retry this tool. <b> & \"x\""),
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"⚡ CIRCUIT OPEN — mcp__s__*\nDo not retry this tool. <b> & \"x\""}}` + "\n"},
		{"context", Context("SessionStart", "circuits"),
			`{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"circuits"}}` + "\n"},
		{"system message only", Answer{SystemMessage: "gate broken"}, `{"systemMessage":"gate broken"}` + "\n"},
		{"deny with a system message", func() Answer { a := Deny("r"); a.SystemMessage = "m"; return a }(),
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"r"},"systemMessage":"m"}` + "\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := string(c.a.Encode()); got != c.want {
				t.Errorf("Encode:\n got %q\nwant %q", got, c.want)
			}
		})
	}
}
