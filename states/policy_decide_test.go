package states

import (
	"slices"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// TestPolicyDrivesDecisions checks that the board uses the policy: threshold, scope, cooldown.
func TestPolicyDrivesDecisions(t *testing.T) {
	// types: {TIMEOUT: {threshold: 2}}; tools: solo (scope tool, cooldown 5m), shared (scope server)
	p := &Policy{
		Types: map[ledger.FailureType]Rule{ledger.Timeout: {Threshold: 2}},
		Tools: []ToolRule{
			{Match: "mcp__solo__*", Rule: Rule{Scope: ScopeTool, Cooldown: 5 * time.Minute}},
			{Match: "mcp__shared__*", Rule: Rule{Scope: ScopeServer}},
		},
	}
	w := newWorld(t)
	w.p = p
	// scope: tool keeps a transport failure off the server key; the threshold is 2.
	w.fail("mcp__solo__a", transport)
	out := w.fail("mcp__solo__a", transport)
	if !slices.Equal(out.Tripped, []string{"mcp__solo__a"}) || !out.Entries[0].OpenUntil.Equal(w.now.Add(5*time.Minute)) {
		t.Fatalf("solo: %+v", out)
	}
	// scope: server counts a per-call failure on the server key too.
	out = w.fail("mcp__shared__a", deadline)
	if !slices.Equal(keysOf(out.Entries), []string{"mcp__shared__a", "mcp__shared__*"}) {
		t.Fatalf("shared: entries for %v", keysOf(out.Entries))
	}
}

func TestCooldownGrowth(t *testing.T) {
	r := (*Policy)(nil).For("mcp__s__t", ledger.Timeout)
	at := t0
	for level, nominal := range []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 8 * time.Minute, 10 * time.Minute, 10 * time.Minute} {
		d := cooldown(r, "mcp__s__t", level, at, 0)
		if level == 0 && d != nominal {
			t.Errorf("level 0: %v, want exactly %v", d, nominal)
		}
		if lo, hi := time.Duration(float64(nominal)*0.9), time.Duration(float64(nominal)*1.1); d < lo || d > hi {
			t.Errorf("level %d: %v outside [%v, %v]", level, d, lo, hi)
		}
		// Deterministic: the same key and time give the same jitter.
		if d2 := cooldown(r, "mcp__s__t", level, at, 0); d2 != d {
			t.Errorf("level %d: %v then %v", level, d, d2)
		}
	}
	if d := cooldown(r, "k", 100, at, 0); d > 11*time.Minute {
		t.Errorf("level 100: %v", d)
	}
}
