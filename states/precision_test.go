package states

import (
	"slices"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// Call errors: failures that are the call's own fault.
var (
	missingFile = Failure{Type: ledger.NotFound, Cause: "http_404", Fault: ledger.FaultCall}
	outsideRoot = Failure{Type: ledger.Auth, Cause: "path_outside_roots", Fault: ledger.FaultCall}
	badArgs     = Failure{Type: ledger.Malformed, Cause: "invalid_params", Fault: ledger.FaultCall}
	// internalError is the tool's: broken for every input.
	internalError = Failure{Type: ledger.Unknown, Cause: "jsonrpc_-32603", Fault: ledger.FaultTool}
)

// TestCallErrorsNeverCount is the counting rule of docs/circuits.md as a table: a call's own
// failure opens nothing, adds nothing to the consecutive count and resets nothing, whatever came
// before it.
func TestCallErrorsNeverCount(t *testing.T) {
	cases := []struct {
		name   string
		before []Failure // recorded first on tool1
		call   Failure
		state  ledger.State
		count  int
	}{
		{"a missing file on a healthy tool", nil, missingFile, ledger.Closed, 0},
		{"a path outside the roots: AUTH, but the call's", nil, outsideRoot, ledger.Closed, 0},
		{"invalid arguments", nil, badArgs, ledger.Closed, 0},
		{"after two deadlines the count stays two", []Failure{deadline, deadline}, missingFile, ledger.Closed, 2},
		{"after one internal error the count stays one", []Failure{internalError}, badArgs, ledger.Closed, 1},
		{"an OPEN circuit stays OPEN", []Failure{notFound}, missingFile, ledger.Open, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			for _, f := range c.before {
				w.fail(tool1, f)
			}
			before := w.b.Clone()
			for i := range 10 {
				out := w.failAs(Call{Tool: tool1, Hash: string(rune('a' + i))}, c.call)
				if !out.CallError || len(out.Tripped) > 0 || len(out.Entries) != 1 || out.ServerCircuit != nil {
					t.Fatalf("call error %d: %+v", i, out)
				}
				e := out.Entries[0]
				if e.Tool != tool1 || e.Event != ledger.EventFailure || e.Fault != ledger.FaultCall || e.FailureType != c.call.Type {
					t.Fatalf("call error entry: %+v", e)
				}
			}
			w.wantState(tool1, c.state, c.count)
			if sc, bc := w.b.Get(srvK), before.Get(srvK); (sc == nil) != (bc == nil) || sc != nil && (sc.State != bc.State || sc.FailureCount != bc.FailureCount) {
				t.Fatalf("the server circuit moved: %+v → %+v", bc, sc)
			}
			if c.state == ledger.Closed {
				// The count goes on from where it was: one more failure of the tool's own trips at 3.
				for n := c.count; n < 2; n++ {
					w.fail(tool1, deadline)
				}
				if out := w.fail(tool1, deadline); !slices.Equal(out.Tripped, []string{tool1}) {
					t.Fatalf("the third counted failure did not trip: %+v", out)
				}
			}
			// A replay of the ledger gives the same board.
			var fresh Board
			fresh.Replay(w.log)
			if fc, c := fresh.Get(tool1), w.b.Get(tool1); fc.State != c.State || fc.FailureCount != c.FailureCount {
				t.Fatalf("replay: %+v, want %+v", fc, c)
			}
		})
	}
}

// TestToolBrokenForEveryInput: the same server-side failure for different inputs trips at 3.
func TestToolBrokenForEveryInput(t *testing.T) {
	w := newWorld(t)
	for i, h := range []string{"q1", "q2", "q3"} {
		out := w.failAs(Call{Tool: tool1, Hash: h}, internalError)
		if tripped := len(out.Tripped) > 0; tripped != (i == 2) {
			t.Fatalf("failure %d (input %s): tripped %v", i+1, h, out.Tripped)
		}
	}
	w.wantState(tool1, ledger.Open, 3)
	if c := w.b.Get(srvK); c != nil && c.State != ledger.Closed {
		t.Fatalf("one broken tool opened its server: %+v", c)
	}
}

// TestHalfOpenTrialCallError: a trial that fails on its own terms leaves the circuit HALF-OPEN with
// its permit released, so the next call is the trial instead of waiting out the lease.
func TestHalfOpenTrialCallError(t *testing.T) {
	w := newWorld(t)
	w.fail(tool1, notFound)
	w.sleep(DefaultCooldown)
	if d := w.gate(tool1); !d.Trial {
		t.Fatalf("want a trial: %+v", d)
	}
	w.fail(tool1, missingFile)
	w.wantState(tool1, ledger.HalfOpen, 1)
	if d := w.gate(tool1); !d.Allowed || !d.Trial {
		t.Fatalf("the next call is not the trial: %+v", d)
	}
}

// TestLoopGuard: the same call failing the same way loop_guard times is denied on its next attempt
// with a loop block; other arguments go; a different way of failing starts the count again; the
// guard expires a cooldown after the last failure, and a success forgets the call.
func TestLoopGuard(t *testing.T) {
	same := Call{Tool: tool1, Hash: "h-same"}
	other := Call{Tool: tool1, Hash: "h-other"}
	t.Run("fourth identical call denied, other arguments allowed", func(t *testing.T) {
		w := newWorld(t)
		for i := range DefaultLoopGuard {
			if d := w.gateAs(same, false); !d.Allowed {
				t.Fatalf("attempt %d denied: %+v", i+1, d)
			}
			w.failAs(same, missingFile)
			w.sleep(time.Second)
		}
		d := w.gateAs(same, false)
		if d.Allowed || d.Block != BlockLoop || d.Loop == nil || d.Loop.Count != DefaultLoopGuard || len(d.Entries) != 1 {
			t.Fatalf("4th identical call: %+v", d)
		}
		if e := d.Entries[0]; e.Event != ledger.EventBlocked || e.Cause != CauseLoopGuard || e.CallHash != same.Hash {
			t.Fatalf("blocked entry: %+v", e)
		}
		if d := w.gateAs(other, false); !d.Allowed {
			t.Fatalf("other arguments denied: %+v", d)
		}
		if d := w.gateAs(Call{Tool: tool1}, false); !d.Allowed {
			t.Fatalf("a call without a hash denied: %+v", d)
		}
		w.wantState(tool1, ledger.Closed, 0)
		// Expiry: a cooldown after the last failure the call may go again, and one more failure
		// holds it back again at once.
		w.sleep(DefaultCooldown)
		if d := w.gateAs(same, false); !d.Allowed {
			t.Fatalf("after the cooldown: %+v", d)
		}
		w.failAs(same, missingFile)
		if d := w.gateAs(same, false); d.Allowed || d.Block != BlockLoop {
			t.Fatalf("after failing again: %+v", d)
		}
		// A success of this very call forgets it.
		out := w.b.Success(same, w.now)
		if len(out.Entries) != 1 || out.Entries[0].CallHash != same.Hash {
			t.Fatalf("success entries: %+v", out.Entries)
		}
		w.apply(out.Entries)
		if d := w.gateAs(same, false); !d.Allowed {
			t.Fatalf("after a success: %+v", d)
		}
		if c := w.b.Get(tool1); c != nil && !c.Idle() && !c.OnlyWorked() {
			t.Fatalf("not at rest after the success: %+v", c)
		}
	})
	t.Run("a success of other arguments keeps the call, and writes once", func(t *testing.T) {
		w := newWorld(t)
		w.failAs(same, missingFile)
		// The success ends the tool's streak of call errors (the streak guard's memory): written
		// once; the loop guard still remembers the call that failed.
		out := w.b.Success(other, w.now)
		if len(out.Entries) != 1 {
			t.Fatalf("entries: %+v", out.Entries)
		}
		w.apply(out.Entries)
		if c := w.b.Get(tool1); c.Streak.Count != 0 || c.repeat(same.Hash) == nil {
			t.Fatalf("after the success: %+v", c)
		}
		if out := w.b.Success(other, w.now); len(out.Entries) != 0 {
			t.Fatalf("a second success writes %+v", out.Entries)
		}
	})
	t.Run("failing another way starts again", func(t *testing.T) {
		w := newWorld(t)
		w.failAs(same, missingFile)
		w.failAs(same, missingFile)
		w.failAs(same, badArgs)
		if d := w.gateAs(same, false); !d.Allowed {
			t.Fatalf("denied after two ways of failing: %+v", d)
		}
	})
	t.Run("counted failures are guarded too", func(t *testing.T) {
		w := newWorld(t)
		w.p = &Policy{Defaults: Rule{Threshold: 10}}
		for range 3 {
			w.failAs(same, deadline)
		}
		if d := w.gateAs(same, false); d.Allowed || d.Block != BlockLoop {
			t.Fatalf("%+v", d)
		}
	})
	t.Run("policy", func(t *testing.T) {
		guard := func(n int) *int { return &n }
		for _, tc := range []struct {
			name   string
			policy *Policy
			fails  int
			denied bool
		}{
			{"loop_guard: 0", &Policy{Defaults: Rule{LoopGuard: guard(0)}}, 10, false},
			{"loop_guard: 1", &Policy{Defaults: Rule{LoopGuard: guard(1)}}, 1, true},
			{"loop_guard: 5", &Policy{Defaults: Rule{LoopGuard: guard(5)}}, 4, false},
			{"loop_guard: 5", &Policy{Defaults: Rule{LoopGuard: guard(5)}}, 5, true},
			{"tools mcp__srv__* loop_guard: 0", &Policy{Tools: []ToolRule{{Match: "mcp__srv__*", Rule: Rule{LoopGuard: guard(0)}}}}, 5, false},
		} {
			w := newWorld(t)
			w.p = tc.policy
			for range tc.fails {
				w.failAs(same, missingFile)
			}
			if d := w.gateAs(same, false); d.Allowed == tc.denied {
				t.Errorf("%s after %d failures: %+v", tc.name, tc.fails, d)
			}
		}
	})
	t.Run("shadow mode records would_block", func(t *testing.T) {
		w := newWorld(t)
		for range 3 {
			w.failAs(same, missingFile)
		}
		d := w.gateAs(same, true)
		if !d.Allowed || !d.Shadow || d.Entries[0].Event != ledger.EventWouldBlock {
			t.Fatalf("%+v", d)
		}
	})
	t.Run("memory is bounded", func(t *testing.T) {
		w := newWorld(t)
		for i := range 50 {
			w.failAs(Call{Tool: tool1, Hash: string(rune('A' + i))}, missingFile)
		}
		if n := len(w.b.Get(tool1).Repeats); n != MaxRepeats {
			t.Fatalf("%d repeats kept", n)
		}
	})
}
