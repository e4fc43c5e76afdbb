package project

import (
	"fmt"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/message"
	"strings"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

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
		named[i] = message.ShownKey(k) // a committed ledger's name is data
	}
	more := ""
	if len(keys) > len(named) {
		more = fmt.Sprintf(" and %d more", len(keys)-len(named))
	}
	return fmt.Sprintf("unverified: %d circuit(s) rest on ledger entries this user's gate did not write (committed with the repository, merged in or written by hand): %s%s. "+
		"They count here, but are never shared on the fleet-shared board and never held until a person acts (an ADMIN_GATED or manual trip gets the ordinary cooldown); "+
		"'mcp-circuit-breaker doctor' says which entries", len(keys), strings.Join(named, ", "), more)
}
