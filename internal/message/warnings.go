package message

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// ShadowWarning is printed by status, report and doctor, and told at SessionStart, while shadow
// mode is on.
const ShadowWarning = "SHADOW MODE IS ON (MCP_CIRCUIT_FAIL_OPEN is set): the gate blocks nothing; OPEN circuits are only recorded as would_block. Unset MCP_CIRCUIT_FAIL_OPEN to enforce them."

// PolicyWarning is the warning for a policy.yaml that could be used only in part (err wraps
// states.ErrInvalidPolicy) or not at all.
func PolicyWarning(err error) string {
	if !errors.Is(err, states.ErrInvalidPolicy) {
		return fmt.Sprintf("policy.yaml could not be read, so the built-in values apply: %v", err)
	}
	return fmt.Sprintf("policy.yaml is not valid, so the built-in values apply to what is invalid: %v (run 'mcp-circuit-breaker doctor')", err)
}

// maxUnverifiedNamed bounds the keys an unverified-circuits warning names.
const maxUnverifiedNamed = 5

// UnverifiedKeys are the circuits of b that are not at rest and rest on ledger entries without
// this user's provenance (states.Circuit.Unverified), sorted.
func UnverifiedKeys(b *states.Board) []string {
	var keys []string
	for _, k := range b.Keys() {
		if c := b.Get(k); !c.AtRest() && c.Unverified {
			keys = append(keys, k)
		}
	}
	return keys
}

// UnverifiedWarning names the circuits of b whose state rests on entries this user's gate did not
// write, for status, report and doctor; "" when there is none.
func UnverifiedWarning(b *states.Board) string {
	keys := UnverifiedKeys(b)
	if len(keys) == 0 {
		return ""
	}
	named := keys[:min(len(keys), maxUnverifiedNamed)]
	for i, k := range named {
		named[i] = ShownKey(k) // a committed ledger's name is data
	}
	more := ""
	if len(keys) > len(named) {
		more = fmt.Sprintf(" and %d more", len(keys)-len(named))
	}
	return fmt.Sprintf("unverified: %d circuit(s) rest on ledger entries this user's gate did not write (committed with the repository, merged in or written by hand): %s%s. "+
		"They count here, but are never shared on the fleet-shared board and never held until a person acts (an ADMIN_GATED or manual trip gets the ordinary cooldown); "+
		"'mcp-circuit-breaker doctor' says which entries", len(keys), strings.Join(named, ", "), more)
}

// GateFailure is what the gate says when it cannot decide for subject (a tool's key, or the hook
// event when there is none) because of err: notice for the user (stderr and systemMessage), and,
// when deny is set (a PreToolUse under on_error: deny), the reason the model reads. corrupt says
// err is a damaged ledger, whose fix is a repair.
func GateFailure(prefix, subject string, err error, corrupt, deny bool) (reason, notice string) {
	msg := fmt.Sprintf(prefix+"the gate could not decide for %s: %v", subject, err)
	hint := "run 'mcp-circuit-breaker doctor' or 'mcp-circuit-breaker ledger verify'"
	if corrupt {
		hint = "run 'mcp-circuit-breaker ledger verify', then 'mcp-circuit-breaker ledger repair'"
	}
	if deny {
		return msg + ". Policy on_error is deny, so MCP calls are blocked until the gate works again; do not retry, tell the user.",
			msg + " — denied (on_error: deny); " + hint
	}
	return "", msg + " — allowed (on_error: allow); " + hint
}
