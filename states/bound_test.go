package states

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// writeRandomLedger writes a random history of n decisions (larger than boundedLag) and returns the
// board the whole file says.
func writeRandomLedger(t testing.TB, s *Store, seed uint64, n int) *Board {
	t.Helper()
	log, _ := randomLedger(rand.New(rand.NewPCG(seed, 3)), n, t0)
	var data []byte
	for _, e := range log {
		e.Error = "error text long enough to make the ledger larger than a chunk " + e.Error
		data = ledger.AppendEncoded(data, e)
	}
	if len(data) <= boundedLag {
		t.Fatalf("ledger of %d bytes, want more than %d", len(data), boundedLag)
	}
	if err := os.WriteFile(s.Ledger.Path(), data, 0o600); err != nil {
		t.Fatal(err)
	}
	return replayFile(t, s)
}

// circuitJSON renders what decisions read of a circuit. A bounded read replays a key from its last
// CLOSED entry, which fixes all of it: a CLOSED circuit has level 0, no open_until, lease or
// blocked count; what it carries from before (the last trip's time, cause and evidence) is read
// again from the next trip. So those are compared only while the circuit is not CLOSED. The retry
// hint a CLOSED failure left is carried into a later trip of another type by the full replay; it
// only words the fallback text, and a bounded read may not see it, so it is not compared.
func circuitJSON(c *Circuit) string {
	if c.Idle() {
		return "idle"
	}
	v := *c
	v.RetryAfter = 0
	if v.State == ledger.Closed {
		v.TrippedAt, v.ResetAt, v.ResetMethod, v.Fingerprint = time.Time{}, time.Time{}, "", ""
		v.FailureType, v.Cause, v.Error, v.Server = "", "", "", ""
	}
	j, _ := json.Marshal(v)
	return string(j)
}

// TestBoundedViewWithoutSnapshot: with no snapshot, a bounded read past its deadline reads the
// ledger backwards only, and still gives every asked-for circuit exactly as the whole ledger does;
// it saves no snapshot of its partial board.
func TestBoundedViewWithoutSnapshot(t *testing.T) {
	for seed := range uint64(4) {
		s := newStore(t)
		want := writeRandomLedger(t, s, seed, 12000)
		for _, k := range append(want.Keys(), "mcp__never__seen") {
			s.Bound = &Bound{Keys: []string{k, string(ledger.Key(k).ServerKey())}, Deadline: time.Now().Add(-time.Second)}
			b, err := s.View()
			if err != nil {
				t.Fatal(err)
			}
			for _, kk := range s.Bound.Keys {
				if got, w := circuitJSON(b.Get(kk)), circuitJSON(want.Get(kk)); got != w {
					t.Fatalf("seed %d, %s:\n got %s\nwant %s", seed, kk, got, w)
				}
			}
			if _, err := os.Stat(s.snapshotPath()); err == nil {
				t.Fatalf("a partial board was saved as the snapshot")
			}
		}
	}
}

// TestBoundedViewMakesProgress: bounded reads with time left stream the ledger forwards and save
// the snapshot as far as they got; from a snapshot that trails far behind, the asked-for circuits
// are still exact; once complete, the snapshot holds the whole board.
func TestBoundedViewMakesProgress(t *testing.T) {
	s := newStore(t)
	want := writeRandomLedger(t, s, 7, 12000)
	// A snapshot a third of the way in: what an earlier call's progress left.
	third := NewStore(s.Ledger.Dir, time.Second)
	snap := &snapshot{Version: snapshotVersion}
	fi, _ := os.Stat(s.Ledger.Path())
	calls := 0
	third.Bound = &Bound{Keys: []string{"mcp__a__x", "mcp__a__*"}}
	for {
		third.Bound.Deadline = time.Now().Add(time.Duration(calls+1) * 8 * time.Millisecond) // grows, so a slow machine still gets there
		b, err := third.View()
		if err != nil {
			t.Fatal(err)
		}
		calls++
		for _, k := range third.Bound.Keys {
			if got, w := circuitJSON(b.Get(k)), circuitJSON(want.Get(k)); got != w {
				t.Fatalf("call %d, %s:\n got %s\nwant %s", calls, k, got, w)
			}
		}
		if snap = third.readSnapshot(); snap == nil {
			snap = &snapshot{}
		}
		if snap.Offset == fi.Size() || calls > 1000 {
			break
		}
	}
	if snap.Offset != fi.Size() {
		t.Fatalf("after %d calls the snapshot is at %d of %d bytes", calls, snap.Offset, fi.Size())
	}
	t.Logf("%d bounded calls completed the snapshot", calls)
	wantSame(t, s, view(t, s))
}

// TestSnapshotKeyedRead: a reader that asks for two circuits of a snapshot with a thousand live
// ones decodes those two exactly as the full read does; a snapshot cut short at a line boundary
// (fewer circuits, each line whole) is not trusted.
func TestSnapshotKeyedRead(t *testing.T) {
	s := newStore(t)
	var es []ledger.Entry
	for i := range 1000 {
		es = append(es, failEntry(fmt.Sprintf("mcp__live%04d__t", i), 1, i))
	}
	update(t, s, es...)
	full := readSnap(t, s)
	for _, k := range []string{"mcp__live0000__t", "mcp__live0500__t", "mcp__live0999__t", "mcp__none__t"} {
		part := s.readSnapshotKeys([]string{k, string(ledger.Key(k).ServerKey())})
		if part == nil || !part.partial {
			t.Fatalf("%s: keyed read failed", k)
		}
		if got, want := circuitJSON(part.Board.Get(k)), circuitJSON(full.Board.Get(k)); got != want {
			t.Errorf("%s: got %s, want %s", k, got, want)
		}
		if len(part.Board.Circuits) > 2 {
			t.Errorf("%s: %d circuits decoded", k, len(part.Board.Circuits))
		}
	}
	data, _ := os.ReadFile(s.snapshotPath())
	cut := bytes.LastIndexByte(data[:len(data)-1], '\n') + 1
	os.WriteFile(s.snapshotPath(), data[:cut], 0o600)
	if s.readSnapshot() != nil || s.readSnapshotKeys([]string{"mcp__live0999__t"}) != nil {
		t.Fatal("a snapshot missing its last circuit line was trusted")
	}
	s.Bound = &Bound{Keys: []string{"mcp__live0999__t", "mcp__live0999__*"}, Deadline: time.Now().Add(time.Second)}
	if c := view(t, s).Get("mcp__live0999__t"); c == nil || c.FailureCount != 1 {
		t.Fatalf("bounded view after the cut snapshot: %+v", c)
	}
}

// TestBoundedViewCatchUp: with Bound.CatchUp set, a bounded read without a snapshot answers from
// its backward read alone and asks for the catch-up once per store, without streaming forwards
// itself; CatchUpSnapshot then saves the whole board, after which a bounded read is exact and needs
// no catch-up. A damaged item far back is left out by both, and named with its line once the whole
// ledger was read.
func TestBoundedViewCatchUp(t *testing.T) {
	s := newStore(t)
	writeRandomLedger(t, s, 11, 12000)
	data, err := os.ReadFile(s.Ledger.Path())
	if err != nil {
		t.Fatal(err)
	}
	// A typo in the state of the first item: damage far from the end.
	i := bytes.Index(data, []byte("  state: "))
	j := i + bytes.IndexByte(data[i:], '\n')
	data = append(append(append([]byte(nil), data[:i]...), "  state: CLOSD"...), data[j:]...)
	if err := os.WriteFile(s.Ledger.Path(), data, 0o600); err != nil {
		t.Fatal(err)
	}
	want := replayFile(t, s)
	asked := 0
	keys := []string{"mcp__a__x", "mcp__a__*"}
	s.Bound = &Bound{Keys: keys, Deadline: time.Now().Add(time.Hour), CatchUp: func() { asked++ }}
	for range 2 {
		b := view(t, s)
		for _, k := range keys {
			if got, w := circuitJSON(b.Get(k)), circuitJSON(want.Get(k)); got != w {
				t.Fatalf("%s:\n got %s\nwant %s", k, got, w)
			}
		}
	}
	if asked != 1 {
		t.Errorf("the catch-up was asked for %d times, want once", asked)
	}
	if _, err := os.Stat(s.snapshotPath()); err == nil {
		t.Fatalf("the bounded read streamed and saved a snapshot itself")
	}
	other := NewStore(s.Ledger.Dir, time.Second)
	if ran, err := other.CatchUpSnapshot(nil); !ran || err != nil {
		t.Fatalf("CatchUpSnapshot: %v %v", ran, err)
	}
	snap := readSnap(t, s)
	if fi, _ := os.Stat(s.Ledger.Path()); snap.Offset != fi.Size() || nonIdle(&snap.Board) != nonIdle(want) {
		t.Fatalf("the caught-up snapshot is at %d of %d bytes, or differs from the ledger", snap.Offset, fi.Size())
	}
	fresh := NewStore(s.Ledger.Dir, time.Second)
	fresh.Bound = &Bound{Keys: keys, Deadline: time.Now().Add(time.Hour), CatchUp: func() { t.Error("catch-up asked for with a complete snapshot") }}
	b := view(t, fresh)
	if d := b.Damage; d.Count != 1 || d.Problems[0].Line != 1 {
		t.Errorf("damage %+v, want the typo in the item on line 1", d)
	}
}
