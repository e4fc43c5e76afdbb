package ledger

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// indexLedger returns a ledger in a fresh state directory.
func indexLedger(t *testing.T) *Ledger {
	t.Helper()
	l := &Ledger{Dir: filepath.Join(t.TempDir(), ".claude", "mcp_circuit")}
	if _, err := l.EnsureDir(); err != nil {
		t.Fatal(err)
	}
	return l
}

var (
	idxT0   = time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	idxTrip = Entry{Tool: "mcp__gh__*", State: Open, FailureType: AdminGated, FailureCount: 1, TrippedAt: idxT0,
		Event: EventTrip, At: idxT0, Server: "gh", Cause: "admin_approval", Source: SourceHook}
	idxBlocked = Entry{Tool: "mcp__gh__*", State: Open, FailureType: AdminGated, FailureCount: 1, TrippedAt: idxT0,
		Event: EventBlocked, At: idxT0.Add(time.Minute), Source: SourceHook}
	idxReset = Entry{Tool: "mcp__gh__*", State: Closed, ResetAt: idxT0.Add(time.Hour), ResetMethod: "user_forced",
		Event: EventReset, At: idxT0.Add(time.Hour), Source: SourceCLI}
)

// TestTripIndexAppends: an append writes a record for each transition it holds (a trip, a close),
// none for a blocked call or a success, under the index's header for this ledger file; the
// trip is found, and once a close follows it, no longer.
func TestTripIndexAppends(t *testing.T) {
	l := indexLedger(t)
	mustAppend := func(es ...Entry) {
		t.Helper()
		if _, _, err := l.Append(es...); err != nil {
			t.Fatal(err)
		}
	}
	mustAppend(sampleEntry(1), sampleEntry(2))
	if st := l.TripIndex(); !st.Usable || st.From != 0 || st.Note() != "" {
		t.Fatalf("a new ledger's index: %+v", st)
	}
	mustAppend(sampleEntry(3), idxTrip, idxBlocked)
	mustAppend(idxBlocked, sampleEntry(4))
	data, err := os.ReadFile(filepath.Join(l.Dir, TripIndexName))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(data, []byte("\n")); n != 2 {
		t.Fatalf("index with %d lines, want the header and one trip:\n%s", n, data)
	}
	keys := []string{"mcp__gh__search", "mcp__gh__*"}
	if got, _ := l.IndexedTrips(keys); len(got) != 1 || got[0] != "mcp__gh__*" {
		t.Fatalf("IndexedTrips = %v, want the server's circuit", got)
	}
	mustAppend(idxReset)
	if got, _ := l.IndexedTrips(keys); len(got) != 0 {
		t.Fatalf("after the reset: IndexedTrips = %v, want none", got)
	}
	if !strings.Contains(string(mustRead(t, filepath.Join(l.Dir, TripIndexName))), " close mcp__gh__*\n") {
		t.Errorf("the reset is not indexed")
	}
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestTripIndexDistrust: an index is used only as far as the ledger confirms it: a record whose
// item is another key's, another state, not at an item boundary, past the end or the head of a
// longer item is not believed; an index of another ledger file, of another version, or missing is
// not used at all, and the state says why; a record cut short by a crash is skipped and the next
// append starts on a line of its own.
func TestTripIndexDistrust(t *testing.T) {
	idx := func(l *Ledger) string { return filepath.Join(l.Dir, TripIndexName) }
	// plant keeps the index's header and puts recs in place of its records.
	plant := func(t *testing.T, l *Ledger, recs string) {
		head, _, _ := bytes.Cut(mustRead(t, idx(l)), []byte("\n"))
		if err := os.WriteFile(idx(l), append(append(head, '\n'), recs...), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	keys := []string{"mcp__gh__x", "mcp__gh__*"}
	for _, tc := range []struct {
		name     string
		doctor   func(t *testing.T, l *Ledger, tripAt, tripLen int64)
		want     bool
		wantNote string
	}{
		{"as written", nil, true, ""},
		{"missing", func(t *testing.T, l *Ledger, _, _ int64) { os.Remove(idx(l)) }, false, "is missing"},
		{"another version", func(t *testing.T, l *Ledger, _, _ int64) {
			os.WriteFile(idx(l), bytes.Replace(mustRead(t, idx(l)), []byte("trips 1"), []byte("trips 2"), 1), 0o600)
		}, false, "another version"},
		{"another file's (a clone, a repair)", func(t *testing.T, l *Ledger, _, _ int64) {
			data := mustRead(t, l.Path())
			os.WriteFile(l.Path()+".new", data, 0o600)
			os.Rename(l.Path()+".new", l.Path())
		}, false, "another copy"},
		{"pointing at a success", func(t *testing.T, l *Ledger, _, _ int64) {
			plant(t, l, "0 100 open mcp__gh__*\n")
		}, false, ""},
		{"one byte into the trip", func(t *testing.T, l *Ledger, at, n int64) {
			plant(t, l, itoa(at+1)+" "+itoa(n-1)+" open mcp__gh__*\n")
		}, false, ""},
		{"the trip's head only (its lines cut off)", func(t *testing.T, l *Ledger, at, n int64) {
			// The first lines of the trip make an entry of their own: the item goes on, so no.
			first := bytes.Index(mustRead(t, l.Path())[at:], []byte("\n  reset_at: null\n")) + len("\n  reset_at: null\n")
			plant(t, l, itoa(at)+" "+itoa(int64(first))+" open mcp__gh__*\n")
		}, false, ""},
		{"past the end", func(t *testing.T, l *Ledger, _, _ int64) {
			plant(t, l, "99999999 300 open mcp__gh__*\n")
		}, false, ""},
		{"the trip recorded as a close", func(t *testing.T, l *Ledger, at, n int64) {
			plant(t, l, itoa(at)+" "+itoa(n)+" close mcp__gh__*\n")
		}, false, ""},
		{"a record cut short after it", func(t *testing.T, l *Ledger, _, _ int64) {
			os.WriteFile(idx(l), append(mustRead(t, idx(l)), "123 4"...), 0o600)
		}, true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := indexLedger(t)
			if _, _, err := l.Append(sampleEntry(1), sampleEntry(2)); err != nil {
				t.Fatal(err)
			}
			before, after, err := l.Append(idxTrip)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := l.Append(sampleEntry(3)); err != nil {
				t.Fatal(err)
			}
			if tc.doctor != nil {
				tc.doctor(t, l, before, after-before)
			}
			got, st := l.IndexedTrips(keys)
			if (len(got) == 1) != tc.want || len(got) > 1 {
				t.Fatalf("IndexedTrips = %v, want the trip %v", got, tc.want)
			}
			if tc.wantNote == "" && st.Note() != "" || !strings.Contains(st.Note(), tc.wantNote) {
				t.Errorf("note %q, want %q", st.Note(), tc.wantNote)
			}
			// The next append of a trip is indexed and found, whatever the index was: restarted
			// for this file when it was another's or unreadable, closed off when cut short.
			if _, _, err := l.Append(idxTrip); err != nil {
				t.Fatal(err)
			}
			if got, _ := l.IndexedTrips(keys); len(got) != 1 {
				t.Fatalf("after another trip: IndexedTrips = %v", got)
			}
		})
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestTripIndexStartedLate: on a ledger an earlier version wrote (no index), the first trip
// appended starts the index from where it was appended, which says so; RebuildTripIndex indexes
// the whole ledger, the trips before that too.
func TestTripIndexStartedLate(t *testing.T) {
	l := indexLedger(t)
	old := append(Encode(idxTrip), Encode(sampleEntry(1))...)
	if err := os.WriteFile(l.Path(), old, 0o600); err != nil {
		t.Fatal(err)
	}
	other := Entry{Tool: "mcp__db__*", State: Open, FailureType: Timeout, FailureCount: 3, TrippedAt: idxT0, Event: EventTrip, At: idxT0, Source: SourceHook}
	if _, _, err := l.Append(other); err != nil {
		t.Fatal(err)
	}
	st := l.TripIndex()
	if !st.Usable || st.From != int64(len(old)) || !strings.Contains(st.Note(), "covers the ledger from byte") {
		t.Fatalf("index started late: %+v %q", st, st.Note())
	}
	if got, _ := l.IndexedTrips([]string{"mcp__gh__*", "mcp__db__*"}); len(got) != 1 || got[0] != "mcp__db__*" {
		t.Fatalf("IndexedTrips = %v, want the trip appended since", got)
	}
	if err := l.RebuildTripIndex(); err != nil {
		t.Fatal(err)
	}
	if st := l.TripIndex(); !st.Usable || st.From != 0 {
		t.Fatalf("rebuilt: %+v", st)
	}
	if got, _ := l.IndexedTrips([]string{"mcp__gh__*", "mcp__db__*"}); len(got) != 2 {
		t.Fatalf("rebuilt: IndexedTrips = %v, want both", got)
	}
}

// TestTripIndexRebuildWhileAppending: trips appended while the index is rebuilt (the catch-up's
// read runs without the lock) are all in the rebuilt index.
func TestTripIndexRebuildWhileAppending(t *testing.T) {
	l := indexLedger(t)
	l.LockWait = time.Minute // 21 lockers at once on a loaded machine: the order is the test, not the wait
	var pad []Entry
	for i := range 20000 {
		pad = append(pad, sampleEntry(i))
	}
	if _, _, err := l.Append(pad...); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(l.Dir, TripIndexName))
	var wg sync.WaitGroup
	var keys []string
	for i := range 20 {
		k := "mcp__t" + strconv.Itoa(i) + "__*"
		keys = append(keys, k)
		wg.Go(func() {
			e := idxTrip
			e.Tool = k
			unlock, err := l.Lock()
			if err != nil {
				t.Error(err)
				return
			}
			defer unlock()
			if _, _, err := l.Append(e); err != nil {
				t.Error(err)
			}
		})
	}
	if err := l.RebuildTripIndex(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	got, st := l.IndexedTrips(keys)
	if len(got) != len(keys) {
		t.Fatalf("IndexedTrips after a rebuild beside appends: %d of %d (%+v)", len(got), len(keys), st)
	}
}

// TestTripIndexReplace: a ledger replaced (repair, compact) gets the index of its new bytes.
func TestTripIndexReplace(t *testing.T) {
	l := indexLedger(t)
	if _, _, err := l.Append(sampleEntry(1), idxTrip); err != nil {
		t.Fatal(err)
	}
	data := append([]byte("# compacted\n"), Encode(idxTrip)...)
	if _, err := l.Replace(data, idxT0); err != nil {
		t.Fatal(err)
	}
	if got, st := l.IndexedTrips([]string{"mcp__gh__*"}); len(got) != 1 || st.Note() != "" {
		t.Fatalf("after Replace: %v %+v", got, st)
	}
}
