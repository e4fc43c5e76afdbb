package states

import (
	"fmt"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// TestEmptyStreak drives one tool through empty results, other results and failures, and checks
// when the model is told (docs/circuits.md, "Empty results"): empty_streak empty results in a row
// with other arguments each, told once, never a failure. Steps: a hash for an empty result ("" for
// unknown arguments), "!ok" a result that is not empty, "!fail" a failure, "!told" an empty result
// that must be the one told.
func TestEmptyStreak(t *testing.T) {
	nine := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"}
	with := func(parts ...[]string) []string {
		var s []string
		for _, p := range parts {
			s = append(s, p...)
		}
		return s
	}
	for _, tc := range []struct {
		name   string
		policy *Policy
		steps  []string
	}{
		{"ten different calls: the tenth is told", nil, with(nine, []string{"!told"})},
		{"after the notice the row starts over", nil, with(nine, []string{"!told"}, nine, []string{"!told"})},
		{"a repeat neither adds nor breaks", nil, with(nine, []string{"i", "i", "", "!told"})},
		{"a result that is not empty ends the row", nil, with(nine, []string{"!ok"}, nine, []string{"!told"})},
		{"a failure ends the row", nil, with(nine, []string{"!fail"}, nine, []string{"!told"})},
		{"empty_streak: 2", &Policy{Defaults: Rule{EmptyStreak: intp(2)}}, []string{"a", "!told", "b", "!told"}},
		{"empty_streak: 0 turns it off", &Policy{Defaults: Rule{EmptyStreak: intp(0)}}, with(nine, nine, nine)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.p = tc.policy
			for i, st := range tc.steps {
				w.sleep(time.Second)
				switch st {
				case "!ok":
					w.apply(w.b.Success(Call{Tool: tool1, Hash: "ok"}, w.now).Entries)
				case "!fail":
					w.failAs(Call{Tool: tool1, Hash: "failed"}, callErr)
				default:
					h := st
					if st == "!told" {
						h = fmt.Sprint("told-", i)
					}
					out := w.b.EmptyResult(Call{Tool: tool1, Hash: h}, w.now, w.p)
					w.apply(out.Entries)
					if (out.EmptyStreak > 0) != (st == "!told") {
						t.Fatalf("step %d (%s): told %d", i, st, out.EmptyStreak)
					}
					if c := w.b.Get(tool1); c.State != ledger.Closed || c.FailureCount != 0 {
						t.Fatalf("step %d: an empty result moved the circuit: %+v", i, c)
					}
				}
			}
			// The ledger is the memory: replayed, it gives the same row.
			var fresh Board
			fresh.Replay(w.log)
			if got, want := fresh.Get(tool1).Empty, w.b.Get(tool1).Empty; got != want {
				t.Errorf("replayed row %+v, want %+v", got, want)
			}
		})
	}
}

// An empty result is a success: it closes a circuit as any success does, ends the session's
// failures in a row, and its cause is not taken for the circuit's.
func TestEmptyResultIsASuccess(t *testing.T) {
	w := newWorld(t)
	for range 3 {
		w.fail(tool1, deadline)
	}
	w.sleep(DefaultCooldown + time.Second)
	if d := w.gate(tool1); !d.Trial {
		t.Fatalf("no trial: %+v", d)
	}
	w.failAs(Call{Tool: tool2, SessionID: "s", Source: ledger.SourceHook, Hash: "x"}, callErr)
	out := w.b.EmptyResult(Call{Tool: tool1, SessionID: "s", Source: ledger.SourceHook, Hash: "a"}, w.now, nil)
	w.apply(out.Entries)
	if c := w.b.Get(tool1); c.State != ledger.Closed || c.Cause == CauseEmptyResult || c.Empty.Count != 1 {
		t.Errorf("after the empty trial: %+v", c)
	}
	if w.b.Run("s", w.now) != nil {
		t.Error("an empty result did not end the session's run")
	}
}
