package states

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// weakFail is a failure on weak evidence only (an unknown text) whose text has the shape shape.
func weakFail(shape string) Failure {
	return Failure{Type: ledger.Unknown, Cause: "unknown", Fault: ledger.FaultTool, Weak: true, Shape: shape}
}

// evidenceStep is one event of an evidence scenario: a weak failure ("w SHAPE HASH", HASH "-" for
// unknown arguments), a strong one ("strong"), a call error ("call"), a success ("ok"), a person's
// reset ("reset"), a clock advance past CallMemoryAge ("sleep"); want is the tool's count after it and held whether a failure is held.
type evidenceStep struct {
	do    string
	count int
	held  bool
	state ledger.State
}

func ev(do string, count int, held bool) evidenceStep {
	return evidenceStep{do: do, count: count, held: held, state: ledger.Closed}
}

// worked is the start of a tool that failed once and worked since: its circuit knows it.
var worked = []evidenceStep{ev("strong", 1, false), ev("ok", 0, false)}

func seq(parts ...[]evidenceStep) []evidenceStep {
	var s []evidenceStep
	for _, p := range parts {
		s = append(s, p...)
	}
	return s
}

// TestEvidenceOverCalls is the rule of docs/classification.md, "Evidence over calls", step by step.
func TestEvidenceOverCalls(t *testing.T) {
	trip := func(do string, count int) evidenceStep {
		return evidenceStep{do: do, count: count, state: ledger.Open}
	}
	for _, tc := range []struct {
		name  string
		steps []evidenceStep
	}{
		// With no success since its last failure, weak evidence counts as it always did.
		{"down from the first call: trips at 3, the same text", seq([]evidenceStep{ev("w s a", 1, false), ev("w s b", 2, false), trip("w s c", 3)})},
		{"down from the first call: the same call again", seq([]evidenceStep{ev("w s a", 1, false), ev("w s a", 2, false), trip("w s a", 3)})},
		{"down from the first call: texts that differ", seq([]evidenceStep{ev("w s a", 1, false), ev("w t b", 2, false), trip("w u c", 3)})},
		{"failing again after a counted failure", seq([]evidenceStep{ev("strong", 1, false), ev("w s a", 2, false), trip("w t b", 3)})},
		{"calls that failed on their own terms are no success", seq([]evidenceStep{ev("call", 0, false), ev("w s a", 1, false)})},
		{"a person's reset is no success", seq([]evidenceStep{ev("strong", 1, false), ev("reset", 0, false), ev("w s a", 1, false)})},
		// A success since the last counted failure outweighs weak evidence: the failure is held.
		{"after a success the first is held", seq(worked, []evidenceStep{ev("w s a", 0, true)})},
		{"the same text for another call: both count, and it trips at the usual third failure", seq(worked,
			[]evidenceStep{ev("w s a", 0, true), ev("w s b", 2, false), trip("w s c", 3)})},
		{"texts that differ by what each call asked for never count", seq(worked,
			[]evidenceStep{ev("w s a", 0, true), ev("w t b", 0, true), ev("w u c", 0, true), ev("w v d", 0, true), ev("w x e", 0, true)})},
		{"one text that differs: it trips one failure later", seq(worked,
			[]evidenceStep{ev("w s a", 0, true), ev("w t b", 0, true), ev("w t c", 2, false), trip("w t d", 3)})},
		{"the same call again is no new evidence", seq(worked, []evidenceStep{ev("w s a", 0, true), ev("w s a", 0, true), ev("w s b", 2, false)})},
		{"unknown arguments: the same text confirms", seq(worked, []evidenceStep{ev("w s -", 0, true), ev("w s -", 2, false)})},
		{"a success clears what is held", seq(worked, []evidenceStep{ev("w s a", 0, true), ev("ok", 0, false), ev("w s b", 0, true)})},
		{"a call error between changes nothing", seq(worked, []evidenceStep{ev("w s a", 0, true), ev("call", 0, true), ev("w s b", 2, false)})},
		{"a failure on strong evidence counts, and settles what is held", seq(worked,
			[]evidenceStep{ev("w s a", 0, true), ev("strong", 1, false), ev("w s b", 2, false)})},
		{"after both count, weak evidence counts at once", seq(worked, []evidenceStep{ev("w s a", 0, true), ev("w s b", 2, false), ev("ok", 0, false),
			ev("w t c", 0, true)})},
		{"a failure held a day ago is forgotten", seq(worked, []evidenceStep{ev("w s a", 0, true), ev("sleep", 0, true), ev("w s b", 0, true),
			ev("w s c", 2, false)})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			for i, st := range tc.steps {
				w.sleep(time.Second)
				var out Outcome
				fields := strings.Fields(st.do)
				switch fields[0] {
				case "w":
					h := fields[2]
					if h == "-" {
						h = ""
					}
					out = w.failAs(Call{Tool: tool1, Hash: h}, weakFail(fields[1]))
					if out.Held != st.held {
						t.Fatalf("step %d (%s): held %v, want %v", i, st.do, out.Held, st.held)
					}
					if out.Held && (len(out.Entries) != 1 || out.Entries[0].HeldShape != fields[1] || out.Entries[0].Event != ledger.EventFailure) {
						t.Fatalf("step %d: held entries %+v", i, out.Entries)
					}
				case "strong":
					w.fail(tool1, deadlineStrong)
				case "call":
					w.failAs(Call{Tool: tool1, Hash: "bad"}, callErr)
				case "ok":
					w.apply(w.b.Success(Call{Tool: tool1, Hash: "ok"}, w.now).Entries)
				case "reset":
					w.apply(w.b.Reset(Call{Tool: tool1}, w.now))
				case "sleep":
					w.sleep(CallMemoryAge + time.Minute)
				}
				c := w.b.Get(tool1)
				if c.State != st.state || c.FailureCount != st.count || (c.Held.Shape != "") != st.held {
					t.Fatalf("step %d (%s): %s count %d held %+v, want %s count %d held %v", i, st.do, c.State, c.FailureCount, c.Held, st.state, st.count, st.held)
				}
			}
			// The ledger is the memory: replayed, and through the file, it gives the same circuit.
			var file []byte
			for _, e := range w.log {
				file = ledger.AppendEncoded(file, e)
			}
			read, problems := ledger.Parse(file, 1, nil)
			var fresh Board
			fresh.Replay(read)
			if got, want := fresh.Get(tool1), w.b.Get(tool1); len(problems) > 0 || got.Held != want.Held || got.Worked != want.Worked || got.FailureCount != want.FailureCount {
				t.Errorf("from the file (%v): %+v, want %+v", problems, got, want)
			}
		})
	}
}

// deadlineStrong is a failure whose fault rests on specific evidence (a per-tool deadline).
var deadlineStrong = Failure{Type: ledger.Timeout, Cause: "tool_deadline", Fault: ledger.FaultTool}

// A held failure counts nothing anywhere: not on the server key either, and no multi-tool trip;
// confirmed, it counts on every key the failure counts on.
func TestEvidenceServerKey(t *testing.T) {
	w := newWorld(t)
	w.p = &Policy{Defaults: Rule{Scope: ScopeServer}}
	w.fail(tool1, deadlineStrong)
	w.succeed(tool1)
	out := w.failAs(Call{Tool: tool1, Hash: "a"}, weakFail("s"))
	if !out.Held || len(out.Entries) != 1 || out.Entries[0].Tool != tool1 {
		t.Fatalf("held: %+v", out)
	}
	w.wantState(srvK, ledger.Closed, 0)
	out = w.failAs(Call{Tool: tool1, Hash: "b"}, weakFail("s"))
	if !out.Confirmed || len(out.Entries) != 2 {
		t.Fatalf("confirmed: %+v", out)
	}
	w.wantState(tool1, ledger.Closed, 2)
	w.wantState(srvK, ledger.Closed, 2)
}

// Only a tool that worked holds a failure; a circuit that knows only that is kept (snapshot) but
// is none for the gate, a person or a probe: it writes nothing on the hot paths.
func TestWorkedIsNoCircuitForTheGate(t *testing.T) {
	w := newWorld(t)
	w.fail(tool1, deadlineStrong)
	w.succeed(tool1)
	c := w.circuit(tool1)
	if !c.OnlyWorked() || c.Idle() || !c.AtRest() {
		t.Fatalf("after the success: %+v", c)
	}
	if w.b.Holds(tool1) || !w.b.Quiet(tool1) {
		t.Error("the gate reads a circuit that only knows its tool worked")
	}
	if es := w.b.Success(Call{Tool: tool1, Hash: "x"}, w.now).Entries; len(es) != 0 {
		t.Errorf("a success writes %+v", es)
	}
	if es := w.b.Reset(Call{Tool: tool1}, w.now); len(es) != 0 {
		t.Errorf("a reset writes %+v", es)
	}
	if es := w.b.Probe(Call{Tool: srvK}, true, Failure{}, nil, w.now, nil).Entries; len(es) != 0 {
		t.Errorf("a healthy probe writes %+v", es)
	}
	// A failure held is something to settle: the next success writes once. Its call is in the
	// loop guard's memory like any failed call.
	w.failAs(Call{Tool: tool1, Hash: "a"}, weakFail("s"))
	if !w.b.Holds(tool1) || w.b.Quiet(tool1) {
		t.Error("a failure held is not seen")
	}
	if r := w.circuit(tool1).repeat("a"); r == nil || r.Count != 1 {
		t.Errorf("the loop guard's memory of the call held: %+v", w.circuit(tool1).Repeats)
	}
	if es := w.b.Success(Call{Tool: tool1, Hash: "x"}, w.now).Entries; len(es) != 1 {
		t.Errorf("the success after a failure held writes %+v", es)
	}
}

// TestEvidenceProperty: whatever came before, a tool that breaks for every input (its failures
// read the same for other arguments, though the first may read otherwise) trips by the usual
// threshold of failures, one later at most; a tool that worked and then fails for reasons that
// differ by what each call asked for is never counted against.
func TestEvidenceProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	threshold := DefaultThreshold(ledger.Unknown)
	for run := range 400 {
		w := newWorld(t)
		// A random past of the tool: successes, failures of every kind, call errors.
		for range r.IntN(12) {
			w.sleep(time.Duration(r.IntN(90)) * time.Second)
			switch k := r.IntN(6); k {
			case 0:
				w.succeed(tool1)
			case 1:
				w.fail(tool1, deadlineStrong)
			case 2:
				w.failAs(Call{Tool: tool1, Hash: fmt.Sprint("p", r.IntN(3))}, callErr)
			default:
				w.failAs(Call{Tool: tool1, Hash: fmt.Sprint("p", r.IntN(3))}, weakFail([]string{"s", "t", "broken"}[r.IntN(3)]))
			}
			if c := w.b.Get(tool1); c != nil && c.State != ledger.Closed {
				w.sleep(10 * time.Minute)
				w.gate(tool1)
				w.succeed(tool1)
			}
		}
		prefix := len(w.log)
		// The tool breaks: every call fails with one text (its first failure may read otherwise).
		failures := 0
		for c := w.b.Get(tool1); c == nil || c.State == ledger.Closed; c = w.b.Get(tool1) {
			w.sleep(time.Second)
			shape := "broken"
			if failures == 0 && r.IntN(2) == 0 {
				shape = "first"
			}
			w.failAs(Call{Tool: tool1, Hash: fmt.Sprint("b", failures)}, weakFail(shape))
			failures++
			if failures > threshold+1 {
				t.Fatalf("run %d: a broken tool is not open after %d failures: %+v\nlog after its past: %+v", run, failures, w.b.Get(tool1), w.log[prefix:])
			}
		}
		// It recovers; then its calls fail, each for what it asked for.
		w.sleep(10 * time.Minute)
		w.gate(tool1)
		w.succeed(tool1)
		for i := range 20 {
			w.sleep(time.Second)
			w.failAs(Call{Tool: tool1, Hash: fmt.Sprint("c", i)}, weakFail(fmt.Sprint("call-", i)))
			if c := w.b.Get(tool1); c.FailureCount != 0 || c.State != ledger.Closed {
				t.Fatalf("run %d: failures that differ by call counted: %+v", run, c)
			}
		}
	}
}
