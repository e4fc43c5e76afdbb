package states

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// randomResult draws a classified failure: every type, server-wide and per-call causes, and retry
// hints from none to beyond the one-hour cap.
func randomResult(r *rand.Rand) Failure {
	results := []Failure{transport, deadline, notFound, auth401, auth403, admin, malformed, unknown,
		{Type: ledger.Timeout, Cause: "http_503", ServerWide: true},
		{Type: ledger.RateLimit, Cause: "http_429", ServerWide: true}}
	res := results[r.IntN(len(results))]
	switch k := r.IntN(10); {
	case k < 5:
	case k < 8:
		res.RetryAfter = time.Duration(1+r.IntN(600)) * time.Second
	case k < 9:
		res.RetryAfter = time.Duration(1+r.IntN(120)) * time.Minute
	default:
		res.RetryAfter = time.Duration(1+r.Int64N(int64(3*time.Hour)/int64(time.Millisecond))) * time.Millisecond
	}
	if r.IntN(6) == 0 {
		// A failure on weak evidence only (an unknown text), of one of two shapes.
		res = Failure{Type: ledger.Unknown, Cause: "unknown", Fault: ledger.FaultTool, Weak: true, Shape: []string{"s1", "s2"}[r.IntN(2)]}
	}
	if r.IntN(5) == 0 {
		// A call that failed on its own terms: a missing file, a refused path, bad arguments.
		calls := []Failure{{Type: ledger.NotFound, Cause: "http_404"}, {Type: ledger.Auth, Cause: "path_outside_roots"},
			{Type: ledger.Malformed, Cause: "invalid_params"}}
		res = calls[r.IntN(len(calls))]
		res.Fault = ledger.FaultCall
	}
	return res
}

// nominalCooldown is the cooldown at level without jitter: the base doubled per level, capped.
func nominalCooldown(level int) time.Duration {
	d := DefaultCooldown
	for i := 0; i < level && d < DefaultCooldownCap; i++ {
		d *= 2
	}
	return min(d, DefaultCooldownCap)
}

// shown is what status and the gate use of a circuit.
func shown(c Circuit) string {
	return fmt.Sprintf("%s %s %d %v %v %d %d", c.State, c.FailureType, c.FailureCount, c.OpenUntil, c.LeaseUntil, c.Level, c.Blocked)
}

// TestRandomHistories drives the board through thousands of random events on several keys of two
// servers, with random clock advances, and checks the invariants of docs/circuits.md after every entry.
// Every decision is computed on the board, its entries applied one by one, as the store does.
func TestRandomHistories(t *testing.T) {
	for _, seed := range []uint64{1, 2} {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { randomHistory(t, seed, 5000) })
	}
}

func randomHistory(t *testing.T, seed uint64, steps int) {
	r := rand.New(rand.NewPCG(seed, 99))
	tools := []string{"mcp__a__x", "mcp__a__y", "mcp__a__z", "mcp__b__x", "mcp__b__y"}
	servers := []string{"mcp__a__*", "mcp__b__*"}
	fingerprints := []string{"", "fpA", "fpB"}
	b := &Board{}
	now := t0
	var log []ledger.Entry
	// snap is the board as the store's snapshot keeps it: idle circuits dropped after every step.
	snap := &Board{}
	live := map[string]time.Time{} // key → lease_until of its trial permit, while HALF-OPEN
	counts := map[string]int{}

	for step := 0; step < steps; step++ {
		switch k := r.IntN(10); {
		case k < 4:
			now = now.Add(time.Duration(r.IntN(20_000)) * time.Millisecond)
		case k < 7:
			now = now.Add(time.Duration(r.IntN(180_000)) * time.Millisecond)
		case k < 8:
			now = now.Add(time.Duration(r.IntN(900_000)) * time.Millisecond)
		case k < 9 && r.IntN(4) == 0:
			now = now.Add(time.Duration(r.IntN(3)) * time.Hour)
		}
		tool := tools[r.IntN(len(tools))]
		key := tool
		if r.IntN(5) == 0 {
			key = servers[r.IntN(len(servers))]
		}
		call := Call{Tool: tool, Source: ledger.SourceHook, SessionID: "s", Fingerprint: fingerprints[r.IntN(len(fingerprints))],
			Hash: []string{"", "h1", "h2"}[r.IntN(3)]}
		before := b.Clone()
		var es []ledger.Entry
		var hint time.Duration
		var what string
		success := false
		switch k := r.IntN(100); {
		case k < 35:
			what = "failure"
			res := randomResult(r)
			hint = res.RetryAfter
			es = b.Failure(call, res, now, nil).Entries
		case k < 60:
			what = "gate"
			d := b.Gate(call, now, nil, r.IntN(8) == 0)
			es = d.Entries
			if d.Trial != (len(es) > 0 && es[0].Event == ledger.EventHalfOpen) || (!d.Allowed && d.Trial) {
				t.Fatalf("step %d: inconsistent decision %+v", step, d)
			}
		case k < 80:
			what = "success"
			success = true
			es = b.Success(call, now).Entries
		case k < 90:
			what = "probe"
			call.Tool = key
			var tl []string
			if r.IntN(2) == 0 {
				tl = []string{"x"}
			}
			res := randomResult(r)
			if res.Fault == ledger.FaultCall {
				res = transport // a probe sends no arguments: never the call's fault
			}
			hint = res.RetryAfter
			es = b.Probe(call, r.IntN(2) == 0, res, tl, now, nil).Entries
		case k < 96:
			what = "reset"
			call.Tool = key
			es = b.Reset(call, now)
		default:
			what = "trip"
			call.Tool = key
			es = b.Trip(call, ledger.FailureTypes[r.IntN(len(ledger.FailureTypes))], now)
		}
		if !reflect.DeepEqual(before, b.Clone()) {
			t.Fatalf("step %d: the %s decision changed the board", step, what)
		}
		capped := min(hint, time.Hour)

		for _, e := range es {
			if !e.At.Equal(now) || e.Tool == "" {
				t.Fatalf("step %d: %s entry %+v", step, what, e)
			}
			runBefore := 0
			if r := b.Runs["s"]; r != nil {
				runBefore = r.Count
			}
			var prev Circuit
			if c := b.Get(e.Tool); c != nil {
				prev = *c
			} else {
				prev = Circuit{Key: e.Tool, State: ledger.Closed}
			}
			if e.Event == ledger.EventHalfOpen {
				if until, ok := live[e.Tool]; ok && now.Before(until) {
					t.Fatalf("step %d: a second trial permit for %s while the lease until %v lives", step, e.Tool, until)
				}
				if !e.LeaseUntil.Equal(now.Add(DefaultLease)) {
					t.Fatalf("step %d: lease %v", step, e.LeaseUntil)
				}
			}
			b.Apply(e)
			snap.Apply(e)
			log = append(log, e)
			counts[string(e.Event)]++
			c := b.Get(e.Tool)

			if prev.State == ledger.Closed && c.State == ledger.HalfOpen {
				t.Fatalf("step %d: %s went CLOSED → HALF-OPEN directly (%s entry)", step, e.Tool, e.Event)
			}
			if c.State == ledger.HalfOpen {
				// A permit taken, or released (a trial that failed on its own terms proves
				// nothing, and frees the permit for the next call).
				if e.Event == ledger.EventHalfOpen || !c.LeaseUntil.Equal(prev.LeaseUntil) {
					live[e.Tool] = c.LeaseUntil
				}
			} else {
				delete(live, e.Tool)
			}
			switch e.Event {
			case ledger.EventBlocked, ledger.EventWouldBlock:
				if c.State != prev.State || !c.OpenUntil.Equal(prev.OpenUntil) || !c.LeaseUntil.Equal(prev.LeaseUntil) ||
					c.FailureCount != prev.FailureCount || c.Blocked != prev.Blocked+1 {
					t.Fatalf("step %d: a %s entry moved %s: %+v → %+v", step, e.Event, e.Tool, prev, *c)
				}
				if prev.State == ledger.Closed && e.Cause != CauseLoopGuard && e.Cause != CauseStreakGuard && e.Cause != CauseRunaway {
					t.Fatalf("step %d: a call was blocked by the CLOSED circuit %s", step, e.Tool)
				}
				if e.Cause == CauseRunaway {
					counts["runaway_guard"]++
					if runBefore < DefaultSessionFailureStreak || b.Run("s", now) != nil {
						t.Fatalf("step %d: the runaway guard held back %s on a run of %d (now %+v)", step, e.Tool, runBefore, b.Runs["s"])
					}
				}
				if e.Cause == CauseStreakGuard {
					counts["streak_guard"]++
					if prev.Streak.Count < DefaultCallErrorStreak || c.Streak.Count != 0 {
						t.Fatalf("step %d: the streak guard held back %s on a streak of %d (now %d)", step, e.Tool, prev.Streak.Count, c.Streak.Count)
					}
				}
				if e.Cause == CauseLoopGuard {
					counts["loop_guard"]++
					if rp := prev.repeat(e.CallHash); rp == nil || rp.Count < DefaultLoopGuard || !now.Before(rp.At.Add(DefaultCooldown)) {
						t.Fatalf("step %d: the loop guard blocked %s %s without %d live failures: %+v", step, e.Tool, e.CallHash, DefaultLoopGuard, rp)
					}
				}
			}
			// The streak of call errors: one more for a call error with other arguments than the
			// last, none for a repeat or unknown arguments; a success or a counted failure ends it.
			switch {
			case e.Fault == ledger.FaultCall && e.Event == ledger.EventFailure:
				want := prev.Streak.Count
				if e.CallHash != "" && e.CallHash != prev.Streak.Hash {
					want++
				}
				if c.Streak.Count != want {
					t.Fatalf("step %d: a call error took the streak of %s from %d to %d", step, e.Tool, prev.Streak.Count, c.Streak.Count)
				}
			case e.Event == ledger.EventSuccess || IsFailure(prev.State, e) && !IsHeld(e):
				if c.Streak.Count != 0 {
					t.Fatalf("step %d: a %s entry left %s a streak of %d", step, e.Event, e.Tool, c.Streak.Count)
				}
			}
			// The evidence over calls: a failure is held only on a tool that worked since its last
			// counted failure, at rest, and moves nothing; one counts two only when it confirms the
			// failure held before it.
			if IsHeld(e) {
				counts["held"]++
				if !prev.Worked || prev.State != ledger.Closed || prev.FailureCount != 0 || c.State != ledger.Closed || c.FailureCount != 0 ||
					c.Held.Shape != e.HeldShape || !c.Worked {
					t.Fatalf("step %d: a failure was held on %+v, giving %+v", step, prev, *c)
				}
			} else if IsFailure(prev.State, e) && e.Event != ledger.EventProbe && c.FailureCount == prev.FailureCount+2 {
				counts["confirmed"]++
				if prev.Held.Shape == "" && !ledger.Key(e.Tool).IsServer() {
					t.Fatalf("step %d: a failure counted two on %s with nothing held: %+v", step, e.Tool, prev)
				}
			}
			if IsFailure(prev.State, e) && !IsHeld(e) && (c.Worked || c.Held.Shape != "") {
				t.Fatalf("step %d: a counted failure left %s knowing its tool worked: %+v", step, e.Tool, *c)
			}
			// A call's own failure moves no circuit: not its state, count, type, trip or cooldown.
			if e.Fault == ledger.FaultCall {
				counts["call_error"]++
				// (An idle circuit is no circuit: its past may go; so may that of one that only
				// knows its tool worked.)
				past := !prev.Idle() && !prev.OnlyWorked()
				if c.State != prev.State || c.FailureCount != prev.FailureCount || past && c.FailureType != prev.FailureType ||
					!c.OpenUntil.Equal(prev.OpenUntil) || past && !c.TrippedAt.Equal(prev.TrippedAt) || c.Level != prev.Level {
					t.Fatalf("step %d: a call error moved %s: %+v → %+v", step, e.Tool, prev, *c)
				}
				if e.Tool != call.Tool || ledger.Key(e.Tool).IsServer() && !ledger.Key(call.Tool).IsServer() {
					t.Fatalf("step %d: a call error was recorded on %s for %s", step, e.Tool, call.Tool)
				}
			}
			// A trip (or a failed probe re-opening) with a timer: the cooldown law of docs/circuits.md.
			if e.State == ledger.Open && !e.OpenUntil.IsZero() && (e.Event == ledger.EventTrip || e.Event == ledger.EventProbe) {
				d := e.OpenUntil.Sub(now)
				if d < capped {
					t.Fatalf("step %d: %s open_until %v is earlier than now + the hint %v", step, e.Tool, e.OpenUntil, capped)
				}
				wantLevel := 0
				if prev.State != ledger.Closed {
					wantLevel = prev.Level + 1
				}
				if c.Level != wantLevel {
					t.Fatalf("step %d: %s level %d after a trip from %s at level %d", step, e.Tool, c.Level, prev.State, prev.Level)
				}
				n := nominalCooldown(c.Level)
				lo, hi := time.Duration(float64(n)*0.9)-time.Millisecond, time.Duration(float64(n)*1.1)+time.Millisecond
				if c.Level == 0 {
					lo, hi = n, n
				}
				if d != capped && (d < lo || d > hi) {
					t.Fatalf("step %d: %s cooldown %v at level %d, want %v ±10%% (hint %v)", step, e.Tool, d, c.Level, n, capped)
				}
				if capped > hi && d != capped {
					t.Fatalf("step %d: %s cooldown %v, want the hint %v", step, e.Tool, d, capped)
				}
				if !c.OpenUntil.Equal(e.OpenUntil) {
					t.Fatalf("step %d: the trip's open_until was not applied", step)
				}
			}
			// open_until is set once per trip: nothing but a trip or a close moves it.
			if prev.State == ledger.Open && c.State == ledger.Open && e.Event != ledger.EventTrip && e.Event != ledger.EventProbe &&
				!c.OpenUntil.Equal(prev.OpenUntil) {
				t.Fatalf("step %d: a %s entry moved open_until of %s", step, e.Event, e.Tool)
			}
		}
		if success {
			for _, k := range []string{call.Tool, string(ledger.Key(call.Tool).ServerKey())} {
				if c := b.Get(k); c != nil && (c.State != ledger.Closed || c.FailureCount != 0) {
					t.Fatalf("step %d: after a success %s is %+v", step, k, c)
				}
			}
		}
		// An idle circuit is the same as no circuit: the snapshot's board shows what the full one
		// shows.
		for k, c := range snap.Circuits {
			if c.Idle() {
				delete(snap.Circuits, k)
			}
		}
		for k, c := range b.Circuits {
			if sc := snap.Circuits[k]; !c.Idle() && (sc == nil || shown(*sc) != shown(*c)) {
				t.Fatalf("step %d: %s with idle circuits dropped:\n %+v\nwant\n %+v", step, k, sc, c)
			}
		}
		if step%250 == 0 || step == steps-1 {
			var fresh Board
			fresh.Replay(log)
			if !reflect.DeepEqual(fresh.Circuits, b.Circuits) {
				t.Fatalf("step %d: replaying the %d entries gives another board", step, len(log))
			}
		}
	}

	// The ledger file is the source of truth: the entries written out and read back replay to the
	// same board.
	// A store signs what it appends and checks what it reads.
	prov := ledger.NewProvenanceKey([]byte("property-test-key-of-32-bytes..."))
	var file []byte
	for _, e := range log {
		prov.Sign(&e)
		file = ledger.AppendEncoded(file, e)
	}
	read, problems := ledger.Parse(file, 1, nil)
	if len(problems) > 0 || len(read) != len(log) {
		t.Fatalf("the ledger reads back as %d entries with problems %v", len(read), problems)
	}
	prov.CheckAll(read)
	var fromFile Board
	fromFile.Replay(read)
	for k, c := range b.Circuits {
		fc := fromFile.Circuits[k]
		if fc == nil || !reflect.DeepEqual(*fc, *c) {
			t.Fatalf("%s from the file:\n %+v\nwant\n %+v", k, fc, c)
		}
	}
	t.Logf("%d steps, %d entries: %v; clock advanced %v", steps, len(log), counts, now.Sub(t0))
	for _, ev := range []ledger.Event{ledger.EventTrip, ledger.EventHalfOpen, ledger.EventBlocked, ledger.EventWouldBlock, ledger.EventSuccess, ledger.EventProbe, ledger.EventReset, "call_error", "held", "confirmed", "runaway_guard"} {
		if counts[string(ev)] == 0 {
			t.Errorf("the random history never produced a %s entry: the generator needs tuning", ev)
		}
	}
}
