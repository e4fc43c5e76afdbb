package states

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// TestOutOfTimeCallsKnowTheIndexedTrip: a first call out of time at once on a large ledger without
// a snapshot whose server circuit was tripped at its start or half way (nothing after it naming
// the server) knows the circuit tripped from the trip index, whose record is checked against the
// ledger; without an index it can be relied on (missing, another file's, planted), it knows
// nothing, as before, and says why.
func TestOutOfTimeCallsKnowTheIndexedTrip(t *testing.T) {
	prov := ledger.NewProvenanceKey(testProv)
	sign := func(e ledger.Entry) ledger.Entry { prov.Sign(&e); return e }
	trip := sign(ledger.Entry{Tool: "mcp__a__*", State: ledger.Open, FailureType: ledger.AdminGated, FailureCount: 1, TrippedAt: t0,
		Event: ledger.EventTrip, At: t0, Server: "a", Cause: "admin_approval", Source: ledger.SourceHook})
	// build writes a ledger of about 4 MB of other servers' successes with the trip at its start
	// or half way, through Append (the writer of the trip index), the padding appended as one
	// write, and returns its state directory.
	build := func(t *testing.T, middle bool) string {
		dir := filepath.Join(t.TempDir(), ".claude", "mcp_circuit")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		l := ledger.Ledger{Dir: dir}
		pad := func(n int) {
			var entries []ledger.Entry
			size := 0
			for i := 0; size < n; i++ {
				e := sign(ledger.Entry{Tool: fmt.Sprintf("mcp__s%d__t", i%50), State: ledger.Closed, Event: ledger.EventSuccess,
					At: t0.Add(time.Duration(i+1) * time.Second), Source: ledger.SourceHook})
				entries = append(entries, e)
				size += len(ledger.Encode(e))
			}
			if _, _, err := l.Append(entries...); err != nil {
				t.Fatal(err)
			}
		}
		if middle {
			// Written before this version: by hand here, so the index starts with the trip.
			pad(2 << 20)
			os.Remove(filepath.Join(dir, ledger.TripIndexName))
		}
		if _, _, err := l.Append(trip); err != nil {
			t.Fatal(err)
		}
		pad(4 << 20)
		return dir
	}
	index := func(dir string) string { return filepath.Join(dir, ledger.TripIndexName) }
	for _, tc := range []struct {
		name        string
		middle      bool
		doctor      func(t *testing.T, dir string)
		wantTripped bool
		wantNote    string
	}{
		{"the trip at the start", false, nil, true, ""},
		{"the trip half way, the index started on the ledger before it", true, nil, true, "covers the ledger from byte"},
		{"no index", false, func(t *testing.T, dir string) { os.Remove(index(dir)) }, false, "is missing"},
		{"another file's index (a clone)", false, func(t *testing.T, dir string) {
			// A copy made while the original exists (so another inode), moved in its place.
			data, _ := os.ReadFile(filepath.Join(dir, ledger.FileName))
			if err := os.WriteFile(filepath.Join(dir, "copy"), data, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(filepath.Join(dir, "copy"), filepath.Join(dir, ledger.FileName)); err != nil {
				t.Fatal(err)
			}
		}, false, "belongs to another copy"},
		{"an index of another version", false, func(t *testing.T, dir string) {
			data, _ := os.ReadFile(index(dir))
			os.WriteFile(index(dir), bytes.Replace(data, []byte("trips 1 "), []byte("trips 9 "), 1), 0o600)
		}, false, "another version"},
		{"records pointing at other items", false, func(t *testing.T, dir string) {
			data, _ := os.ReadFile(index(dir))
			head, _, _ := bytes.Cut(data, []byte("\n"))
			// The second item (a success), the first read from one byte on, and past the end.
			recs := "400 300 open mcp__a__*\n1 100 open mcp__a__*\n99999999 300 open mcp__a__*\n"
			os.WriteFile(index(dir), append(append(head, '\n'), recs...), 0o600)
		}, false, ""},
		{"the index cut short in its last record", false, func(t *testing.T, dir string) {
			data, _ := os.ReadFile(index(dir))
			os.WriteFile(index(dir), append(data, "12345 3"...), 0o600)
		}, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := build(t, tc.middle)
			os.Remove(filepath.Join(dir, SnapshotName))
			if tc.doctor != nil {
				tc.doctor(t, dir)
			}
			s := callStore(dir, time.Now(), nil) // out of time at once
			b, err := s.View()
			if err != nil {
				t.Fatal(err)
			}
			us := b.UndecidedOf("mcp__a__x")
			if len(us) != 2 || us[0].Tripped != tc.wantTripped || us[1].Tripped || tc.wantTripped && us[0].Key != "mcp__a__*" {
				t.Fatalf("undecided %+v, want both circuits, the server's tripped %v", us, tc.wantTripped)
			}
			if tc.wantNote == "" && b.IndexNote != "" || !strings.Contains(b.IndexNote, tc.wantNote) {
				t.Errorf("index note %q, want %q", b.IndexNote, tc.wantNote)
			}
			// The watchdog's last look agrees, in no time at all (without the index, its look
			// from the start may or may not reach the trip in no time).
			if k, _ := s.Tripped(ledger.Key("mcp__a__x").Circuits(), 0); tc.wantTripped && k != "mcp__a__*" {
				t.Errorf("Tripped: %q, want the server's circuit", k)
			}
		})
	}
}
