package states

import (
	"fmt"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// TestFutureDatedCircuits: entries written by a clock running ahead (a trip dated three years on,
// a trial permit whose lease ends next year) do not block once the clock is right: a trial time
// further ahead than any trip can set is taken as due, and the next call is the trial.
func TestFutureDatedCircuits(t *testing.T) {
	now := t0
	ahead := now.Add(3 * 365 * 24 * time.Hour)
	tests := []struct {
		name      string
		entries   []ledger.Entry
		wantTrial bool
	}{
		{"trip three years ahead", []ledger.Entry{{Tool: "mcp__s__t", State: ledger.Open, FailureType: ledger.Timeout, FailureCount: 3,
			Event: ledger.EventTrip, At: ahead, TrippedAt: ahead, OpenUntil: ahead.Add(time.Minute)}}, true},
		{"lease a year ahead", []ledger.Entry{
			{Tool: "mcp__s__t", State: ledger.Open, FailureType: ledger.Timeout, FailureCount: 3, Event: ledger.EventTrip, At: now.Add(-time.Hour), TrippedAt: now.Add(-time.Hour), OpenUntil: now.Add(-59 * time.Minute)},
			{Tool: "mcp__s__t", State: ledger.HalfOpen, FailureType: ledger.Timeout, FailureCount: 3, Event: ledger.EventHalfOpen, At: now, LeaseUntil: now.Add(365 * 24 * time.Hour)},
		}, true},
		// Within the cap nothing changes: a trip of 10 minutes (the cap) still blocks.
		{"trip at the cap", []ledger.Entry{{Tool: "mcp__s__t", State: ledger.Open, FailureType: ledger.Timeout, FailureCount: 3,
			Event: ledger.EventTrip, At: now, TrippedAt: now, OpenUntil: now.Add(DefaultCooldownCap)}}, false},
		{"retry hint of an hour", []ledger.Entry{{Tool: "mcp__s__t", State: ledger.Open, FailureType: ledger.RateLimit, FailureCount: 1,
			Event: ledger.EventTrip, At: now, TrippedAt: now, OpenUntil: now.Add(MaxRetryHint), RetryAfter: MaxRetryHint}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b Board
			b.Replay(tt.entries)
			d := b.Gate(Call{Tool: "mcp__s__t"}, now, nil, false)
			if d.Trial != tt.wantTrial || d.Allowed != tt.wantTrial {
				t.Fatalf("Gate: allowed %v, trial %v; want %v (block %q, retry at %s)", d.Allowed, d.Trial, tt.wantTrial, d.Block, d.RetryAt)
			}
			if !tt.wantTrial && d.RetryAt.After(now.Add(MaxRetryHint)) {
				t.Errorf("retry at %s, later than now + the longest cap", d.RetryAt)
			}
			if st := b.Get("mcp__s__t").StandingAt(now, nil, ""); tt.wantTrial != (st.Phase == PhaseTrialDue) {
				t.Errorf("standing %+v, want a trial due: %v", st, tt.wantTrial)
			}
		})
	}
}

// TestCooldownNeverPastCap: jitter on re-trips spreads cooldowns below the cap, never past it.
func TestCooldownNeverPastCap(t *testing.T) {
	r := (*Policy)(nil).For("mcp__s__t", ledger.Timeout)
	for i := range 200 {
		key := fmt.Sprintf("mcp__s%d__t", i)
		at := t0.Add(time.Duration(i) * time.Minute)
		for level := 1; level < 8; level++ {
			if d := cooldown(r, key, level, at, 0); d > r.CooldownCap {
				t.Fatalf("%s level %d: cooldown %s past the cap %s", key, level, d, r.CooldownCap)
			}
		}
	}
}
