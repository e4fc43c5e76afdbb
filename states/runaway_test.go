package states

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// The tools of two servers a runaway session hops across.
const (
	toolA = "mcp__github__search_issues"
	toolB = "mcp__github__get_issue"
	toolC = "mcp__jira__list_issues"
)

// unknownErr is a failure that counts toward its tool's circuit, below the threshold when a tool
// has it at most twice.
var unknownErr = Failure{Type: ledger.Unknown, Cause: "unknown"}

// TestRunawayGuard drives one session through failures across tools, successes and calls, and
// checks when the gate holds the next call back (docs/circuits.md, "The runaway guard"):
// session_failure_streak failures in a row across any tools deny the next call once, never a trip.
// Steps: "A" "B" "C" a call error of that tool, "uA" an unknown failure, "okX" a success of tool X
// ("okD" is a tool that never failed), "other" a failure of another session, "shared" and "probe"
// failures this session's calls did not make, "?" and "!" a call that must go and one that must be
// denied.
func TestRunawayGuard(t *testing.T) {
	hop8 := []string{"A", "B", "uC", "A", "B", "uC", "A", "B"}
	for _, tc := range []struct {
		name   string
		policy *Policy
		steps  []string
	}{
		{"eight in a row across three tools: the ninth call is denied once", nil, append(slices.Clone(hop8), "!", "?", "?")},
		{"seven are not enough", nil, append(slices.Clone(hop8[:7]), "?")},
		{"after the deny the run starts over", nil, append(slices.Clone(hop8), "!", "A", "B", "A", "B", "A", "B", "A", "?", "B", "!")},
		{"one tool alone is a run too", &Policy{Defaults: Rule{CallErrorStreak: intp(0)}}, []string{"A", "A", "A", "A", "A", "A", "A", "A", "!"}},
		{"a success of any MCP tool clears it", nil, append(slices.Clone(hop8[:7]), "okC", "A", "?")},
		{"a success of a tool that never failed clears it", nil, append(slices.Clone(hop8[:7]), "okD", "A", "?")},
		{"another session's failures are not this one's", nil, append(slices.Clone(hop8[:7]), "other", "?", "A", "!")},
		{"failures the session did not make are not counted", nil, append(slices.Clone(hop8[:7]), "shared", "probe", "?", "A", "!")},
		{"session_failure_streak: 0 turns it off", &Policy{Defaults: Rule{SessionFailureStreak: intp(0)}}, append(slices.Clone(hop8), "A", "B", "A", "B", "A", "B", "A", "B", "?")},
		{"session_failure_streak: 3", &Policy{Defaults: Rule{SessionFailureStreak: intp(3)}}, []string{"A", "B", "?", "C", "!", "?"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.p = tc.policy
			tools := map[string]string{"A": toolA, "B": toolB, "C": toolC, "D": "mcp__jira__get_board"}
			for i, st := range tc.steps {
				w.sleep(time.Second)
				h := fmt.Sprint("h", i)
				call := func(tool string) Call { return Call{Tool: tool, SessionID: "s1", Source: ledger.SourceHook, Hash: h} }
				switch {
				case st == "?" || st == "!":
					before := w.b.Get(toolC)
					d := w.gateAs(call(toolC), false)
					if d.Allowed != (st == "?") {
						t.Fatalf("step %d: allowed %v, want %v (run %+v)", i, d.Allowed, st == "?", w.b.Runs["s1"])
					}
					if st == "?" {
						continue
					}
					if d.Block != BlockRunaway || d.Run == nil || len(d.Entries) != 1 || d.Entries[0].Event != ledger.EventBlocked ||
						d.Entries[0].Cause != CauseRunaway || d.Entries[0].Tool != toolC || !d.RetryAt.Equal(w.now) {
						t.Fatalf("step %d: decision %+v", i, d)
					}
					// Not a trip: the circuit is as it was, and the run starts over.
					if c := w.b.Get(toolC); before != nil && (c.State != before.State || c.FailureCount != before.FailureCount) {
						t.Fatalf("step %d: after the deny %+v", i, c)
					}
					if w.b.Run("s1", w.now) != nil {
						t.Fatalf("step %d: the run did not start over: %+v", i, w.b.Runs["s1"])
					}
				case strings.HasPrefix(st, "ok"):
					w.apply(w.b.Success(call(tools[st[2:]]), w.now).Entries)
				case st == "other":
					c := call(toolA)
					c.SessionID = "s2"
					w.failAs(c, callErr)
				case st == "shared" || st == "probe":
					c := call(toolA)
					c.Source = map[string]string{"shared": ledger.SourceShared, "probe": ledger.SourceProbe}[st]
					w.failAs(c, callErr)
				case strings.HasPrefix(st, "u"):
					if out := w.failAs(call(tools[st[1:]]), unknownErr); len(out.Tripped) > 0 {
						t.Fatalf("step %d: tripped %v", i, out.Tripped)
					}
				default:
					if out := w.failAs(call(tools[st]), callErr); len(out.Tripped) > 0 {
						t.Fatalf("step %d: tripped %v", i, out.Tripped)
					}
				}
			}
			// The ledger is the memory: replayed, it gives the same run.
			var fresh Board
			fresh.Replay(w.log)
			if got, want := fresh.Run("s1", w.now), w.b.Run("s1", w.now); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("replayed run %+v, want %+v", got, want)
			}
		})
	}
}

// The reason's memory: the tools in the order they last failed, each once, at most MaxRunTools;
// a run a day old is over; the board keeps at most MaxRuns sessions, the oldest forgotten first.
func TestRunMemory(t *testing.T) {
	w := newWorld(t)
	fail := func(session, tool string) {
		w.sleep(time.Second)
		w.failAs(Call{Tool: tool, SessionID: session, Source: ledger.SourceHook, Hash: fmt.Sprint(w.now)}, callErr)
	}
	fail("s1", toolA)
	fail("s1", toolC)
	fail("s1", toolA)
	if r := w.b.Run("s1", w.now); r == nil || r.Count != 3 || !slices.Equal(r.Tools, []string{toolC, toolA}) || r.Type != ledger.Malformed {
		t.Fatalf("run %+v", r)
	}
	for i := range MaxRunTools + 2 {
		fail("s1", fmt.Sprintf("mcp__srv__t%d", i))
	}
	if r := w.b.Run("s1", w.now); len(r.Tools) != MaxRunTools || r.Tools[MaxRunTools-1] != fmt.Sprintf("mcp__srv__t%d", MaxRunTools+1) {
		t.Fatalf("tools %v", r.Tools)
	}
	if w.b.Run("s1", w.now.Add(CallMemoryAge+time.Second)) != nil {
		t.Error("a run a day old is still held")
	}
	w.sleep(CallMemoryAge + time.Second)
	fail("s1", toolA)
	if r := w.b.Run("s1", w.now); r.Count != 1 {
		t.Errorf("a failure a day later continues the run: %+v", r)
	}
	for i := range MaxRuns + 3 {
		fail(fmt.Sprint("other-", i), toolB)
	}
	if len(w.b.Runs) != MaxRuns || w.b.Runs["s1"] != nil || w.b.Runs["other-0"] != nil || w.b.Runs[fmt.Sprint("other-", MaxRuns+2)] == nil {
		t.Errorf("runs kept: %d, s1 %v", len(w.b.Runs), w.b.Runs["s1"])
	}
}

// The run costs the hot path one map lookup: a call of a session with no run, on a board without
// its circuits, is let through by GateOn without reading the policy.
func TestRunawayHotPath(t *testing.T) {
	s := newStore(t)
	now := t0
	for i, tool := range []string{toolA, toolB} {
		now = now.Add(time.Second)
		if _, err := s.Update(func(b *Board) ([]ledger.Entry, error) {
			return b.Failure(Call{Tool: tool, SessionID: "s1", Source: ledger.SourceHook, Hash: fmt.Sprint(i)}, callErr, now, nil).Entries, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	read := 0
	pol := func() (*Policy, error) { read++; return &Policy{Defaults: Rule{SessionFailureStreak: intp(2)}}, nil }
	res, err := s.Gate(GateRequest{Call: Call{Tool: toolC, SessionID: "s2", Source: ledger.SourceHook}, Now: now, Policy: pol})
	if err != nil || !res.Allowed || read != 0 {
		t.Fatalf("another session: %+v, %v, policy read %d times", res.Decision, err, read)
	}
	res, err = s.Gate(GateRequest{Call: Call{Tool: toolC, SessionID: "s1", Source: ledger.SourceHook}, Now: now, Policy: pol})
	if err != nil || res.Allowed || res.Block != BlockRunaway || read != 1 {
		t.Fatalf("the session: %+v, %v, policy read %d times", res.Decision, err, read)
	}
}

// The run survives the snapshot: a store that reads state.json for the circuits of one tool (the
// hook's bounded read) has the session's run, failures of other tools included, also those
// appended after the snapshot was saved.
func TestRunInSnapshot(t *testing.T) {
	s := newStore(t)
	now := t0
	for i, tool := range []string{toolA, toolB, toolA} {
		now = now.Add(time.Second)
		if _, err := s.Update(func(b *Board) ([]ledger.Entry, error) {
			return b.Failure(Call{Tool: tool, SessionID: "s1", Source: ledger.SourceHook, Hash: fmt.Sprint(i)}, callErr, now, nil).Entries, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(s.snapshotPath())
	if err != nil || !strings.Contains(strings.SplitN(string(data), "\n", 2)[0], `"runs":{"s1":{"count":3`) {
		t.Fatalf("state.json (%v):\n%s", err, data)
	}
	// One more failure, appended without a new snapshot (a blocked-only append would not save
	// one either): the bounded reader replays it.
	now = now.Add(time.Second)
	e := Call{Tool: toolB, SessionID: "s1", Source: ledger.SourceHook, Hash: "x"}.callError(nil, ledger.Malformed, callErr, now)
	if _, _, err := s.Ledger.Append(e); err != nil {
		t.Fatal(err)
	}
	r := NewStore(s.Ledger.Dir, time.Second)
	r.Bound = &Bound{Keys: ledger.Key(toolC).Circuits()}
	b := view(t, r)
	if run := b.Run("s1", now); run == nil || run.Count != 4 || !slices.Equal(run.Tools, []string{toolA, toolB}) {
		t.Fatalf("from the snapshot: %+v", run)
	}
	if !b.HoldsCall(Call{Tool: toolC, SessionID: "s1"}) || b.HoldsCall(Call{Tool: toolC, SessionID: "s2"}) {
		t.Error("HoldsCall does not follow the run")
	}
}
