package states

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/filelock"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// tripFirstLedger writes a ledger far larger than a reader replays whose first entry trips
// mcp__a__* (ADMIN_GATED, this user's gate: held until a person acts) and whose other entries are
// of other servers, then tail; it returns the state directory.
func tripFirstLedger(t *testing.T, prov *ledger.Provenance, size int, tail ...ledger.Entry) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), ".claude", "mcp_circuit")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	sign := func(e ledger.Entry) ledger.Entry { prov.Sign(&e); return e }
	data := ledger.AppendEncoded(nil, sign(ledger.Entry{Tool: "mcp__a__*", State: ledger.Open, FailureType: ledger.AdminGated,
		FailureCount: 1, TrippedAt: t0, Event: ledger.EventTrip, At: t0, Server: "a", Cause: "admin_approval", Source: ledger.SourceHook}))
	for i := 0; len(data) < size; i++ {
		data = ledger.AppendEncoded(data, sign(ledger.Entry{Tool: fmt.Sprintf("mcp__s%d__t", i%50), State: ledger.Closed,
			Event: ledger.EventSuccess, At: t0.Add(time.Duration(i+1) * time.Second), Source: ledger.SourceHook}))
	}
	for _, e := range tail {
		data = ledger.AppendEncoded(data, sign(e))
	}
	if err := os.WriteFile(filepath.Join(dir, ledger.FileName), data, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

var testProv = []byte("first-calls-test-key-32-bytes!!!")

// callStore is a store of dir as a hook opens it for mcp__a__x, with stopBy as its Bound.StopBy
// and catchUp as its catch-up.
func callStore(dir string, stopBy time.Time, catchUp func()) *Store {
	s := NewStore(dir, time.Second)
	s.Ledger.Provenance = ledger.NewProvenanceKey(testProv)
	now := time.Now()
	s.Bound = &Bound{Keys: ledger.Key("mcp__a__x").Circuits(), Deadline: now.Add(-time.Second), IndexBy: stopBy.Add(-50 * time.Millisecond),
		StopBy: stopBy, CatchUp: catchUp}
	return s
}

// TestFirstCallsWaitForTheCatchUp: a first call on a large ledger without a snapshot, while the
// catch-up holds the provisional snapshot's lock, does not read the ledger itself: it sleeps until
// the catch-up has saved the snapshot and decides from that (here doctored, to tell it apart from
// a read of its own).
func TestFirstCallsWaitForTheCatchUp(t *testing.T) {
	dir := tripFirstLedger(t, ledger.NewProvenanceKey(testProv), 2<<20)
	// A hard link of the ledger (the same file) for the catch-up below, made before any call
	// looks at the file: a link changes the file's ctime, which is part of its identity.
	side := t.TempDir()
	if err := os.Link(filepath.Join(dir, ledger.FileName), filepath.Join(side, ledger.FileName)); err != nil {
		t.Fatal(err)
	}
	unlock, err := filelock.Exclusive(filepath.Join(dir, provisionalLockName), filelock.Options{Wait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var asked atomic.Int32 // the catch-ups the calls ask for (they run in the background)
	var wg sync.WaitGroup
	boards := make([]*Board, 4)
	for i := range boards {
		wg.Go(func() {
			b, err := callStore(dir, time.Now().Add(5*time.Second), func() { asked.Add(1) }).View()
			if err != nil {
				t.Error(err)
			}
			boards[i] = b
		})
	}
	// The catch-up's provisional snapshot, saved while it holds the lock; the server's circuit
	// in it has a blocked count no read of the ledger gives. It is built and doctored beside a
	// hard link of the ledger (the same file) and moved in whole: the waiting calls take the
	// first snapshot that appears, which must be the doctored one (saving and then doctoring it
	// in place let a call take the first version).
	time.Sleep(200 * time.Millisecond)
	builder := NewStore(side, time.Second)
	builder.Ledger.Provenance = ledger.NewProvenanceKey(testProv)
	builder.Bound = &Bound{IndexBy: time.Now().Add(time.Minute)}
	if _, _, err := builder.loadFresh(false); err != nil {
		t.Fatal(err)
	}
	rewriteProv(t, builder, func(p *snapshot) { p.Board.Get("mcp__a__*").Blocked = 4242 })
	if err := os.Rename(builder.provisionalPath(), filepath.Join(dir, ProvisionalName)); err != nil {
		t.Fatal(err)
	}
	unlock()
	wg.Wait()
	for i, b := range boards {
		c := b.Get("mcp__a__*")
		if c == nil || c.State != ledger.Open || c.Blocked != 4242 {
			t.Fatalf("call %d: %+v, want the circuit of the catch-up's provisional snapshot", i, c)
		}
	}
	// Nobody building it (the catch-up gone, no lock held): a call does not wait for it.
	os.Remove(filepath.Join(dir, ProvisionalName))
	start := time.Now()
	b, err := callStore(dir, time.Now().Add(5*time.Second), nil).View()
	if err != nil || b.Get("mcp__a__*") == nil || b.Get("mcp__a__*").State != ledger.Open {
		t.Fatalf("alone: %v %+v", err, b)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("a call with nobody building the provisional snapshot waited %s", took)
	}
}

// TestBoundedReadGivesUpAndSaysTripped: a backward read past Bound.StopBy stops, and leaves the
// circuits it did not reach undecided, telling those the ledger was seen to trip (blocked calls
// near the end) from those it knows nothing of; a locked update on such a board appends nothing.
func TestBoundedReadGivesUpAndSaysTripped(t *testing.T) {
	blocked := ledger.Entry{Tool: "mcp__a__*", State: ledger.Open, FailureType: ledger.AdminGated, FailureCount: 1, TrippedAt: t0,
		Event: ledger.EventBlocked, At: t0.Add(time.Hour), Source: ledger.SourceHook}
	for _, tc := range []struct {
		name        string
		tail        []ledger.Entry
		wantTripped bool
	}{
		{"blocked calls near the end", []ledger.Entry{blocked, blocked}, true},
		{"nothing of it near the end", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := tripFirstLedger(t, ledger.NewProvenanceKey(testProv), 4<<20, tc.tail...)
			s := callStore(dir, time.Now(), nil) // out of time at once
			b, err := s.View()
			if err != nil {
				t.Fatal(err)
			}
			us := b.UndecidedOf("mcp__a__x")
			if len(us) != 2 || us[0].Tripped != tc.wantTripped || us[1].Tripped ||
				tc.wantTripped && us[0].Key != "mcp__a__*" {
				t.Fatalf("undecided %+v, want both circuits, the server's tripped %v (and first if so)", us, tc.wantTripped)
			}
			if b.Get("mcp__a__*") != nil {
				t.Errorf("an undecided circuit is on the board: %+v", b.Get("mcp__a__*"))
			}
			before, _ := os.ReadFile(filepath.Join(dir, ledger.FileName))
			_, err = s.Update(func(b *Board) ([]ledger.Entry, error) {
				return b.Gate(Call{Tool: "mcp__a__x"}, t0.Add(2*time.Hour), nil, false).Entries, nil
			})
			var ue *UndecidedError
			if !errors.As(err, &ue) {
				t.Fatalf("a locked update on an undecided board: %v", err)
			}
			after, _ := os.ReadFile(filepath.Join(dir, ledger.FileName))
			if len(after) != len(before) {
				t.Errorf("something was appended on what is not known")
			}
		})
	}
}

// TestTripWatch: the look from the ledger's start sees a trip of the asked-for keys near the
// start, never one of another key, and stops where it is told the backward read has got to.
func TestTripWatch(t *testing.T) {
	dir := tripFirstLedger(t, ledger.NewProvenanceKey(testProv), 1<<20)
	s := NewStore(dir, time.Second)
	fi, err := os.Stat(s.Ledger.Path())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		keys []string
		back int64
		want bool
	}{
		{"the server's trip", []string{"mcp__a__x", "mcp__a__*"}, fi.Size(), true},
		{"another key", []string{"mcp__s1__t", "mcp__b__*"}, fi.Size(), false},
		{"before where the backward read got to", []string{"mcp__a__*"}, 0, false},
	} {
		w := s.startWatch(0, tc.back, tc.keys)
		<-w.done
		got := false
		for _, k := range tc.keys {
			got = got || w.saw(k)
		}
		if got != tc.want {
			t.Errorf("%s: saw a trip %v, want %v", tc.name, got, tc.want)
		}
	}
}
