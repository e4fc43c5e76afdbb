package states

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// callErr is a failure that was the call's own (a missing file, invalid arguments).
var callErr = Failure{Type: ledger.Malformed, Cause: "invalid_params", Fault: ledger.FaultCall}

// streakStep is one event of a streak scenario: a call error with arguments hash ("" unknown), a
// counted failure ("!fail"), a success ("!ok"), a person's reset ("!reset"), or a call before
// which the gate decides ("?", then want is what it must say).
type streakStep struct {
	do   string
	deny bool
}

func callErrors(hashes ...string) []streakStep {
	var s []streakStep
	for _, h := range hashes {
		s = append(s, streakStep{do: h})
	}
	return s
}

func steps(parts ...[]streakStep) []streakStep {
	var s []streakStep
	for _, p := range parts {
		s = append(s, p...)
	}
	return s
}

var (
	allow = []streakStep{{do: "?"}}
	deny  = []streakStep{{do: "?", deny: true}}
)

// TestStreakGuard drives one tool through calls failing on their own terms, successes and counted
// failures, and checks when the gate holds the next call back (docs/circuits.md, "The streak
// guard"): call_error_streak calls in a row with other arguments each, denied once, never a trip.
func TestStreakGuard(t *testing.T) {
	five := callErrors("a", "b", "c", "d", "e")
	for _, tc := range []struct {
		name   string
		policy *Policy
		steps  []streakStep
	}{
		{"five different calls: the next is denied once", nil, steps(five, deny, allow, allow)},
		{"four are not enough", nil, steps(callErrors("a", "b", "c", "d"), allow)},
		{"after the deny the streak starts over", nil, steps(five, deny, callErrors("f", "g", "h", "i"), allow, callErrors("j"), deny)},
		{"a repeat of the last call neither adds nor breaks", nil, steps(callErrors("a", "b", "b", "b", "c", "d"), allow, callErrors("e"), deny)},
		{"alternating calls are different calls in a row", nil, steps(callErrors("a", "b", "a", "b", "a"), deny)},
		{"unknown arguments neither add nor break", nil, steps(callErrors("a", "b", "", "c", "", "d"), allow, callErrors("e"), deny)},
		{"a success of the tool clears it", nil, steps(callErrors("a", "b", "c", "d"), []streakStep{{do: "!ok"}}, callErrors("e"), allow,
			callErrors("f", "g", "h"), allow, callErrors("i"), deny)},
		{"a failure that counts breaks the row", nil, steps(callErrors("a", "b", "c", "d"), []streakStep{{do: "!fail"}}, callErrors("e"), allow,
			callErrors("f", "g", "h"), allow, callErrors("i"), deny)},
		{"a person's reset clears it", nil, steps(callErrors("a", "b", "c", "d"), []streakStep{{do: "!reset"}}, callErrors("e"), allow)},
		{"call_error_streak: 0 turns it off", &Policy{Defaults: Rule{CallErrorStreak: intp(0)}}, steps(five, five, allow)},
		{"call_error_streak: 2", &Policy{Defaults: Rule{CallErrorStreak: intp(2)}}, steps(callErrors("a"), allow, callErrors("b"), deny, callErrors("c"), allow)},
		// The number that applies is the one for the last call's failure type.
		{"per type", &Policy{Types: map[ledger.FailureType]Rule{ledger.Malformed: {CallErrorStreak: intp(2)}}}, steps(callErrors("a", "b"), deny)},
		{"per tool glob", &Policy{Tools: []ToolRule{{Match: "mcp__other__*", Rule: Rule{CallErrorStreak: intp(2)}}}}, steps(callErrors("a", "b", "c"), allow)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.p = tc.policy
			for i, st := range tc.steps {
				w.sleep(time.Second)
				h := fmt.Sprint("h-", st.do)
				switch st.do {
				case "?":
					var before Circuit
					if c := w.b.Get(tool1); c != nil {
						before = *c
					}
					d := w.gateAs(Call{Tool: tool1, Hash: fmt.Sprint("next-", i)}, false)
					if d.Allowed == st.deny {
						t.Fatalf("step %d: allowed %v, want %v (streak %+v)", i, d.Allowed, !st.deny, w.b.Get(tool1).Streak)
					}
					if !st.deny {
						continue
					}
					if d.Block != BlockStreak || d.Streak == nil || len(d.Entries) != 1 || d.Entries[0].Event != ledger.EventBlocked ||
						d.Entries[0].Cause != CauseStreakGuard || !d.RetryAt.Equal(w.now) {
						t.Fatalf("step %d: decision %+v", i, d)
					}
					// Not a trip: the circuit's state and count are as they were, and its streak starts over.
					c := w.b.Get(tool1)
					if c.State != before.State || c.FailureCount != before.FailureCount || c.Streak.Count != 0 {
						t.Fatalf("step %d: after the deny %+v", i, c)
					}
				case "!ok":
					w.apply(w.b.Success(Call{Tool: tool1, Hash: "ok"}, w.now).Entries)
				case "!fail":
					w.fail(tool1, deadline)
					w.apply(w.b.Success(Call{Tool: tool2}, w.now).Entries) // another tool: the count stays
				case "!reset":
					w.apply(w.b.Reset(Call{Tool: tool1}, w.now))
				default:
					if st.do == "" {
						h = ""
					}
					out := w.failAs(Call{Tool: tool1, Hash: h}, callErr)
					if !out.CallError {
						t.Fatalf("step %d: not a call error", i)
					}
				}
			}
			// The ledger is the memory: replayed, it gives the same streak.
			var fresh Board
			fresh.Replay(w.log)
			if got, want := fresh.Get(tool1), w.b.Get(tool1); got.Streak != want.Streak {
				t.Errorf("replayed streak %+v, want %+v", got.Streak, want.Streak)
			}
		})
	}
}

func intp(n int) *int { return &n }

// Shadow mode records would_block and lets the call go; the streak starts over as after a deny.
func TestStreakGuardShadow(t *testing.T) {
	w := newWorld(t)
	for _, h := range []string{"a", "b", "c", "d", "e"} {
		w.failAs(Call{Tool: tool1, Hash: h}, callErr)
	}
	d := w.gateAs(Call{Tool: tool1, Hash: "f"}, true)
	if !d.Allowed || !d.Shadow || d.Block != BlockStreak || len(d.Entries) != 1 || d.Entries[0].Event != ledger.EventWouldBlock ||
		d.Entries[0].Cause != CauseStreakGuard {
		t.Fatalf("shadow decision %+v", d)
	}
	if d := w.gateAs(Call{Tool: tool1, Hash: "f"}, true); !d.Allowed || d.Shadow || len(d.Entries) != 0 {
		t.Fatalf("after would_block: %+v", d)
	}
}

// Questions are not calls: the next call a view names, and check (PermitsOnly), are not held back
// by the streak guard, and record nothing.
func TestStreakGuardAnswersNoQuestion(t *testing.T) {
	w := newWorld(t)
	for _, h := range []string{"a", "b", "c", "d", "e"} {
		w.failAs(Call{Tool: tool1, Hash: h}, callErr)
	}
	if at, person := w.b.NextCall(Call{Tool: tool1}, w.now, nil); person || !at.Equal(w.now) {
		t.Errorf("next call at %v (person %v), want now", at, person)
	}
	s := newStore(t)
	for _, e := range w.log {
		if _, _, err := s.Ledger.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	res, err := s.Gate(GateRequest{Call: Call{Tool: tool1}, Now: w.now, PermitsOnly: true,
		Policy: func() (*Policy, error) { return nil, nil }})
	if err != nil || !res.Allowed || len(res.Entries) != 0 {
		t.Fatalf("check: %+v, %v", res.Decision, err)
	}
	// The hook's call, in another process (a new store reading the snapshot), is held back.
	res, err = NewStore(s.Ledger.Dir, time.Second).Gate(GateRequest{Call: Call{Tool: tool1, Hash: "f"}, Now: w.now,
		Policy: func() (*Policy, error) { return nil, nil }})
	if err != nil || res.Allowed || res.Block != BlockStreak {
		t.Fatalf("the call: %+v, %v", res.Decision, err)
	}
	again, err := NewStore(s.Ledger.Dir, time.Second).View()
	if err != nil {
		t.Fatal(err)
	}
	if c := again.Get(tool1); c.Streak.Count != 0 || c.Blocked != 1 {
		t.Errorf("after the recorded deny: %+v", c)
	}
}

// The streak survives the snapshot: a store that reads state.json (another hook process) sees
// the streak the ledger gives, and the circuit is kept there though it counts nothing.
func TestStreakInSnapshot(t *testing.T) {
	s := newStore(t)
	now := t0
	for _, h := range []string{"a", "b", "c"} {
		now = now.Add(time.Second)
		if _, err := s.Update(func(b *Board) ([]ledger.Entry, error) {
			return b.Failure(Call{Tool: tool1, Hash: h}, callErr, now, nil).Entries, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(s.snapshotPath())
	if err != nil || !strings.Contains(string(data), `"streak":{"count":3`) {
		t.Fatalf("state.json (%v):\n%s", err, data)
	}
	b := view(t, NewStore(s.Ledger.Dir, time.Second))
	if c := b.Get(tool1); c == nil || c.Streak.Count != 3 || c.Streak.Hash != "c" || c.Streak.Type != ledger.Malformed {
		t.Fatalf("from the snapshot: %+v", c)
	}
	wantSame(t, s, b)
}
