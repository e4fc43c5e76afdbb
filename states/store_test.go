package states

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/safefile"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

func newStore(t testing.TB) *Store {
	t.Helper()
	s := NewStore(filepath.Join(t.TempDir(), ".claude", "mcp_circuit"), 30*time.Second)
	if _, err := s.Ledger.EnsureDir(); err != nil {
		t.Fatal(err)
	}
	return s
}

// failEntry is a failure entry of key with count, written at t0 + i seconds.
func failEntry(key string, count, i int) ledger.Entry {
	return ledger.Entry{Tool: key, State: ledger.Closed, FailureType: ledger.Timeout, FailureCount: count,
		Event: ledger.EventFailure, At: t0.Add(time.Duration(i) * time.Second), Error: "timed out " + strings.Repeat("a", 300)}
}

// handAppend appends entries to the ledger file directly, as another program or a person would.
func handAppend(t testing.TB, s *Store, es ...ledger.Entry) {
	t.Helper()
	f, err := os.OpenFile(s.Ledger.Path(), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, e := range es {
		if _, err := f.Write(ledger.Encode(e)); err != nil {
			t.Fatal(err)
		}
	}
}

// replayFile is the board the ledger file says, from scratch.
func replayFile(t testing.TB, s *Store) *Board {
	t.Helper()
	// Every readable item counts, damaged ones are left out: what the reader promises.
	es, _, err := s.Ledger.ReadFile()
	if err != nil {
		t.Fatal(err)
	}
	var b Board
	b.Replay(es)
	return &b
}

// nonIdle renders the circuits that are not idle as JSON, for comparison (the snapshot leaves
// idle circuits out: they equal no circuit at all).
func nonIdle(b *Board) string {
	m := map[string]*Circuit{}
	for k, c := range b.Circuits {
		if !c.Idle() {
			m[k] = c
		}
	}
	out, _ := json.Marshal(m)
	return string(out)
}

func view(t testing.TB, s *Store) *Board {
	t.Helper()
	b, err := s.View()
	if err != nil {
		t.Fatalf("View: %v", err)
	}
	return b
}

func wantSame(t testing.TB, s *Store, b *Board) {
	t.Helper()
	if got, want := nonIdle(b), nonIdle(replayFile(t, s)); got != want {
		t.Fatalf("board differs from the ledger:\n got %s\nwant %s", got, want)
	}
}

func readSnap(t testing.TB, s *Store) *snapshot {
	t.Helper()
	snap := s.readSnapshot()
	if snap == nil {
		t.Fatal("no snapshot")
	}
	return snap
}

// update appends es through the store, under the lock.
func update(t testing.TB, s *Store, es ...ledger.Entry) *Board {
	t.Helper()
	b, err := s.Update(func(*Board) ([]ledger.Entry, error) { return es, nil })
	if err != nil {
		t.Fatalf("Update: %v", err)
	}
	return b
}

func TestViewEmpty(t *testing.T) {
	s := newStore(t)
	b := view(t, s)
	if len(b.Circuits) != 0 {
		t.Fatalf("board of a missing ledger: %+v", b)
	}
	if _, err := os.Stat(filepath.Join(s.Ledger.Dir, SnapshotName)); !os.IsNotExist(err) {
		t.Errorf("a snapshot was written for a missing ledger: %v", err)
	}
}

func TestViewCatchesUpWithHandAppends(t *testing.T) {
	s := newStore(t)
	update(t, s, failEntry("mcp__s__a", 1, 0))
	if c := view(t, s).Get("mcp__s__a"); c == nil || c.FailureCount != 1 {
		t.Fatalf("after Update: %+v", c)
	}
	handAppend(t, s, failEntry("mcp__s__a", 2, 1), failEntry("mcp__s__b", 1, 2), failEntry("mcp__s__a", 3, 3))
	b := view(t, s)
	if c := b.Get("mcp__s__a"); c == nil || c.FailureCount != 3 {
		t.Fatalf("after hand appends: %+v", c)
	}
	wantSame(t, s, b)
	// A small tail is replayed by readers without rewriting the snapshot (maxLag); a large one is
	// saved by the reader that replays it.
	fi, _ := os.Stat(s.Ledger.Path())
	if snap := readSnap(t, s); snap.Offset != fi.Size()-int64(len(ledger.Encode(failEntry("mcp__s__a", 2, 1))))*3 && snap.Offset != fi.Size() {
		t.Errorf("snapshot at offset %d, ledger is %d bytes", snap.Offset, fi.Size())
	}
	var big []ledger.Entry
	for i := 0; i < 40; i++ {
		big = append(big, failEntry("mcp__s__c", i+1, 4+i))
	}
	handAppend(t, s, big...)
	view(t, s)
	fi, _ = os.Stat(s.Ledger.Path())
	if snap := readSnap(t, s); snap.Offset != fi.Size() || snap.Lines != 44*9 {
		t.Errorf("after a tail over maxLag: snapshot at offset %d (%d lines), ledger is %d bytes", snap.Offset, snap.Lines, fi.Size())
	}
	// And an Update after hand appends decides on the caught-up board.
	var seen int
	s.Update(func(b *Board) ([]ledger.Entry, error) {
		seen = b.Get("mcp__s__a").FailureCount
		return nil, nil
	})
	handAppend(t, s, failEntry("mcp__s__a", 4, 4))
	b, err := s.Update(func(b *Board) ([]ledger.Entry, error) {
		seen = b.Get("mcp__s__a").FailureCount
		return []ledger.Entry{failEntry("mcp__s__a", seen+1, 5)}, nil
	})
	if err != nil || seen != 4 || b.Get("mcp__s__a").FailureCount != 5 {
		t.Fatalf("Update after a hand append saw %d: %v", seen, err)
	}
	wantSame(t, s, view(t, s))
}

func TestViewRebuildsAfterReplace(t *testing.T) {
	s := newStore(t)
	for i := range 5 {
		update(t, s, failEntry(fmt.Sprintf("mcp__s__t%d", i), 1, i))
	}
	view(t, s)
	// A new, longer ledger by rename (as repair and compact do): a catch-up from the old offset
	// would read the middle of an item.
	var data []byte
	for i := range 8 {
		data = ledger.AppendEncoded(data, failEntry("mcp__other__x", i+1, i))
	}
	if err := safefile.WriteFileAtomic(s.Ledger.Path(), data, 0o600); err != nil {
		t.Fatal(err)
	}
	b := view(t, s)
	if len(b.Circuits) != 1 || b.Get("mcp__other__x").FailureCount != 8 {
		t.Fatalf("after replace: %s", nonIdle(b))
	}
	wantSame(t, s, b)
	// A shorter one.
	if err := safefile.WriteFileAtomic(s.Ledger.Path(), ledger.Encode(failEntry("mcp__s__t0", 7, 0)), 0o600); err != nil {
		t.Fatal(err)
	}
	b = view(t, s)
	if len(b.Circuits) != 1 || b.Get("mcp__s__t0").FailureCount != 7 {
		t.Fatalf("after a shorter replace: %s", nonIdle(b))
	}
	// The ledger removed: the board is empty.
	os.Remove(s.Ledger.Path())
	if b := view(t, s); len(b.Circuits) != 0 {
		t.Fatalf("after remove: %s", nonIdle(b))
	}
}

// TestViewRebuildsAfterInPlaceEdit edits the ledger in place without changing its size, at its
// start, middle and end (the windows the snapshot keeps checksums of).
//
// The edit's mtime is moved one second on: a same-size edit within one tick of the file system's
// clock after the snapshot's own write is invisible by design (the snapshot trusts an unchanged
// size and mtime), and no person edits that fast.
func TestViewRebuildsAfterInPlaceEdit(t *testing.T) {
	const n = 40
	for _, where := range []string{"start", "middle", "end", "shorter"} {
		t.Run(where, func(t *testing.T) {
			s := newStore(t)
			var data []byte
			for i := range n {
				data = ledger.AppendEncoded(data, failEntry(fmt.Sprintf("mcp__s__t%03d", i), 1+i%2, i))
			}
			if err := os.WriteFile(s.Ledger.Path(), data, 0o600); err != nil {
				t.Fatal(err)
			}
			before := nonIdle(view(t, s))
			size := int64(len(data))
			w := windows(size)
			edited := append([]byte(nil), data...)
			switch where {
			case "start":
				// "- tool: mcp__s__t000" → "mcp__s__u000"
				i := strings.Index(string(edited), "__t000")
				edited[i+2] = 'u'
			case "middle", "end":
				win := w[1]
				if where == "end" {
					win = w[2]
				}
				i := findEditable(edited, int(win[0]), int(win[1]))
				if i < 0 {
					t.Fatalf("no editable byte in the %s window %v", where, win)
				}
				edited[i] = 'b'
			case "shorter":
				edited = edited[:len(edited)-len(ledger.Encode(failEntry("mcp__s__t039", 2, 39)))]
			}
			f, err := os.OpenFile(s.Ledger.Path(), os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt(edited, 0); err != nil {
				t.Fatal(err)
			}
			if err := f.Truncate(int64(len(edited))); err != nil {
				t.Fatal(err)
			}
			f.Close()
			later := time.Now().Add(time.Second)
			os.Chtimes(s.Ledger.Path(), later, later)

			b := view(t, s)
			if nonIdle(b) == before {
				t.Fatalf("the board did not change after an edit at the %s", where)
			}
			wantSame(t, s, b)
		})
	}
}

// findEditable returns an offset in [lo, hi) that holds an 'a' of an error text, or -1.
func findEditable(data []byte, lo, hi int) int {
	for i := hi - 1; i >= lo; i-- {
		if data[i] == 'a' && i > 0 && (data[i-1] == 'a' || data[i-1] == ' ') {
			return i
		}
	}
	return -1
}

func TestViewRebuildsASnapshotItCannotUse(t *testing.T) {
	tests := []struct {
		name  string
		spoil func(t *testing.T, s *Store)
	}{
		{"missing", func(t *testing.T, s *Store) { os.Remove(s.snapshotPath()) }},
		{"garbage", func(t *testing.T, s *Store) { os.WriteFile(s.snapshotPath(), []byte("{\x00 not json"), 0o600) }},
		{"truncated", func(t *testing.T, s *Store) {
			data, _ := os.ReadFile(s.snapshotPath())
			os.WriteFile(s.snapshotPath(), data[:len(data)/2], 0o600)
		}},
		{"other version", func(t *testing.T, s *Store) {
			snap := readSnap(t, s)
			snap.Version = 99
			snap.Board = Board{}
			data, _ := json.Marshal(snap)
			os.WriteFile(s.snapshotPath(), data, 0o600)
		}},
		{"offset past the end", func(t *testing.T, s *Store) {
			snap := readSnap(t, s)
			snap.Offset += 1000
			snap.Board = Board{}
			data, _ := json.Marshal(snap)
			os.WriteFile(s.snapshotPath(), data, 0o600)
		}},
		{"another file's", func(t *testing.T, s *Store) {
			snap := readSnap(t, s)
			snap.Ino++
			snap.Board = Board{}
			data, _ := json.Marshal(snap)
			os.WriteFile(s.snapshotPath(), data, 0o600)
		}},
		{"a directory", func(t *testing.T, s *Store) {
			os.Remove(s.snapshotPath())
			os.Mkdir(s.snapshotPath(), 0o700)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			for i := range 6 {
				update(t, s, failEntry(fmt.Sprintf("mcp__s__t%d", i%3), 1+i/3, i))
			}
			want := nonIdle(replayFile(t, s))
			tt.spoil(t, s)
			b := view(t, s)
			if got := nonIdle(b); got != want {
				t.Fatalf("got %s\nwant %s", got, want)
			}
			if tt.name == "a directory" {
				return
			}
			// The snapshot is rewritten, so the next reader has it.
			if snap := readSnap(t, s); snap.Version != snapshotVersion || nonIdle(&snap.Board) != want {
				t.Errorf("snapshot not rebuilt: %+v", snap)
			}
		})
	}
}

// TestCorruptTail: a torn last item is isolated to itself. The view counts every other entry and
// names the torn item's line; Update goes on, closing the torn line off in the same write as its
// entries, so they are never merged into it, and the damage stays reported until a repair.
func TestCorruptTail(t *testing.T) {
	for _, withSnapshot := range []bool{true, false} {
		t.Run(fmt.Sprint("snapshot=", withSnapshot), func(t *testing.T) {
			s := newStore(t)
			update(t, s, failEntry("mcp__s__a", 1, 0), failEntry("mcp__s__a", 2, 1))
			if !withSnapshot {
				s.Invalidate()
			}
			handAppend(t, s, failEntry("mcp__s__a", 3, 2))
			f, _ := os.OpenFile(s.Ledger.Path(), os.O_WRONLY|os.O_APPEND, 0)
			f.WriteString("- tool: mcp__s__a\n  state: OP")
			f.Close()

			b := view(t, s)
			if c := b.Get("mcp__s__a"); c == nil || c.FailureCount != 3 {
				t.Fatalf("the entries before the torn item do not count: %+v", c)
			}
			d := b.Damage
			if d.Count != 1 || d.Problems[0].Kind != ledger.Torn || d.Problems[0].Line != 28 || d.Unreadable() {
				t.Errorf("damage %+v, want one torn item at line 28", d)
			}
			if !strings.Contains(d.Summary("L"), "ledger repair") {
				t.Errorf("summary %q does not name ledger repair", d.Summary("L"))
			}
			after := update(t, s, failEntry("mcp__s__a", 9, 9))
			if c := after.Get("mcp__s__a"); c == nil || c.FailureCount != 9 {
				t.Fatalf("the entry appended after the torn item does not count: %+v", c)
			}
			entries, problems, err := s.Ledger.ReadFile()
			if err != nil || len(problems) != 1 || problems[0].Kind != ledger.Invalid || problems[0].Line != 28 {
				t.Fatalf("after the append: problems %v, err %v; want the torn item alone, closed off", problems, err)
			}
			if n := len(entries); n != 4 || entries[n-1].FailureCount != 9 || entries[n-1].Line != 30 {
				t.Fatalf("after the append: %d entries, last %+v", n, entries[n-1])
			}
			for _, b := range []*Board{view(t, s), after} {
				if b.Damage.Count != 1 || b.Damage.Problems[0].Line != 28 {
					t.Errorf("damage after the append %+v, want the closed-off item at line 28", b.Damage)
				}
			}
			wantSame(t, s, view(t, s))
		})
	}
}

func TestUpdateDecideError(t *testing.T) {
	s := newStore(t)
	update(t, s, failEntry("mcp__s__a", 1, 0))
	fi, _ := os.Stat(s.Ledger.Path())
	boom := errors.New("boom")
	_, err := s.Update(func(*Board) ([]ledger.Entry, error) { return []ledger.Entry{failEntry("mcp__s__a", 2, 1)}, boom })
	if !errors.Is(err, boom) {
		t.Fatalf("Update: %v", err)
	}
	if fi2, _ := os.Stat(s.Ledger.Path()); fi2.Size() != fi.Size() {
		t.Errorf("entries appended despite the error")
	}
}

func TestUpdateLockTimeout(t *testing.T) {
	s := newStore(t)
	s.Ledger.LockWait = 50 * time.Millisecond
	unlock, err := s.Ledger.Lock()
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	other := NewStore(s.Ledger.Dir, 50*time.Millisecond)
	if _, err := other.Update(func(*Board) ([]ledger.Entry, error) { return nil, nil }); !errors.Is(err, ledger.ErrLockTimeout) {
		t.Fatalf("Update while locked: %v", err)
	}
}

// TestUpdateConcurrent runs 20 goroutines × 50 Updates, each appending one failure entry that
// counts on what it read: the lock makes read-decide-append atomic, so no entry and no count is
// lost.
func TestUpdateConcurrent(t *testing.T) {
	s := newStore(t)
	const workers, each = 20, 50
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	start := make(chan struct{})
	for w := range workers {
		wg.Go(func() {
			// Each goroutine has its own Store, as each process has.
			st := NewStore(s.Ledger.Dir, 30*time.Second)
			key := fmt.Sprintf("mcp__s%d__t", w%5)
			<-start
			for i := range each {
				_, err := st.Update(func(b *Board) ([]ledger.Entry, error) {
					n := 0
					if c := b.Get(key); c != nil {
						n = c.FailureCount
					}
					return []ledger.Entry{failEntry(key, n+1, i)}, nil
				})
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	es, err := s.Ledger.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != workers*each {
		t.Fatalf("%d entries, want %d", len(es), workers*each)
	}
	b := view(t, s)
	for w := range 5 {
		key := fmt.Sprintf("mcp__s%d__t", w)
		if c := b.Get(key); c == nil || c.FailureCount != workers/5*each {
			t.Errorf("%s: %+v, want %d failures", key, c, workers/5*each)
		}
	}
	wantSame(t, s, b)
}

func TestInvalidate(t *testing.T) {
	s := newStore(t)
	update(t, s, failEntry("mcp__s__a", 1, 0))
	s.Invalidate()
	if _, err := os.Stat(s.snapshotPath()); !os.IsNotExist(err) {
		t.Fatalf("snapshot still there: %v", err)
	}
	wantSame(t, s, view(t, s))
}

func TestSnapshotLeavesIdleCircuitsOut(t *testing.T) {
	s := newStore(t)
	update(t, s, failEntry("mcp__s__a", 1, 0), failEntry("mcp__s__b", 1, 1), failEntry("mcp__s__c", 1, 2))
	update(t, s, ledger.Entry{Tool: "mcp__s__a", State: ledger.Closed, Event: ledger.EventReset, ResetAt: t0.Add(time.Minute), At: t0.Add(time.Minute)})
	// A success leaves the circuit at rest, but it knows its tool worked: kept.
	update(t, s, ledger.Entry{Tool: "mcp__s__c", State: ledger.Closed, Event: ledger.EventSuccess, At: t0.Add(time.Minute)})
	snap := readSnap(t, s)
	if _, ok := snap.Board.Circuits["mcp__s__a"]; ok || snap.Board.Circuits["mcp__s__b"] == nil || !snap.Board.Circuits["mcp__s__c"].OnlyWorked() {
		t.Errorf("snapshot circuits: %+v", snap.Board.Circuits)
	}
	fi, _ := os.Stat(s.snapshotPath())
	if fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("snapshot mode %o", fi.Mode().Perm())
	}
}

// TestViewNamesTheLineVerifyNames damages an entry in place, away from the sample windows, keeping
// the file's size: the view must report the damage on the line the strict reader of the whole
// file (ledger verify) names, not carry on with the snapshot.
func TestViewNamesTheLineVerifyNames(t *testing.T) {
	s := newStore(t)
	data := writeFailures(t, s, 40)
	view(t, s)
	// Between the start and middle windows: "failure_count: 1" of an early item becomes "x".
	w := windows(int64(len(data)))
	at := strings.Index(string(data[w[0][1]:w[1][0]]), "failure_count: 1")
	if at < 0 {
		t.Fatal("no failure_count between the windows")
	}
	edited := append([]byte(nil), data...)
	edited[int(w[0][1])+at+len("failure_count: ")] = 'x'
	if err := os.WriteFile(s.Ledger.Path(), edited, 0o600); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Second)
	os.Chtimes(s.Ledger.Path(), later, later)
	_, problems := ledger.Parse(edited, 1, nil)
	if len(problems) != 1 {
		t.Fatalf("the strict reader found %d problems, want 1", len(problems))
	}
	d := view(t, s).Damage
	if d.Count != 1 || d.Problems[0].Line != problems[0].Line {
		t.Fatalf("view damage %+v; want the damage on line %d, as ledger verify names it", d, problems[0].Line)
	}
}

// TestViewDuringAppend: a reader that meets another process's append part way through (the writer
// holds the lock) sees the ledger as it was before the append, not a torn item, with and without a
// snapshot; once the append is whole it sees it.
func TestViewDuringAppend(t *testing.T) {
	for _, withSnapshot := range []bool{true, false} {
		t.Run(fmt.Sprint("snapshot=", withSnapshot), func(t *testing.T) {
			s := newStore(t)
			update(t, s, failEntry("mcp__s__a", 1, 0))
			if !withSnapshot {
				s.Invalidate()
			}
			writer := NewStore(s.Ledger.Dir, time.Second)
			unlock, err := writer.Ledger.Lock()
			if err != nil {
				t.Fatal(err)
			}
			whole := ledger.Encode(failEntry("mcp__s__a", 2, 1))
			f, err := os.OpenFile(s.Ledger.Path(), os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			f.Write(whole[:len(whole)/2])
			b, err := NewStore(s.Ledger.Dir, time.Second).View()
			if err != nil {
				t.Fatalf("View during an append: %v", err)
			}
			if c := b.Get("mcp__s__a"); c == nil || c.FailureCount != 1 {
				t.Fatalf("View during an append: %+v, want the count before it (1)", c)
			}
			f.Write(whole[len(whole)/2:])
			unlock()
			b, err = NewStore(s.Ledger.Dir, time.Second).View()
			if err != nil {
				t.Fatalf("View after the append: %v", err)
			}
			if c := b.Get("mcp__s__a"); c == nil || c.FailureCount != 2 {
				t.Fatalf("View after the append: %+v, want count 2", c)
			}
		})
	}
}

// TestViewNoticesEditKeepingSizeAndMtime: an edit in the middle of the ledger that keeps its size
// and sets its mtime back is still noticed (the ctime moved), and the snapshot is not trusted.
func TestViewNoticesEditKeepingSizeAndMtime(t *testing.T) {
	s := newStore(t)
	data := writeFailures(t, s, 40)
	fi, _ := os.Stat(s.Ledger.Path())
	before := nonIdle(view(t, s))
	// Outside the three sample windows, so only the file's times can tell.
	i := strings.Index(string(data), "mcp__s__t013")
	edited := append([]byte(nil), data...)
	copy(edited[i:], "mcp__s__u013")
	f, err := os.OpenFile(s.Ledger.Path(), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt(edited, 0)
	f.Close()
	if err := os.Chtimes(s.Ledger.Path(), fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	b := view(t, s)
	if nonIdle(b) == before || b.Get("mcp__s__u013") == nil {
		t.Fatalf("the board did not change after a same-size edit with the mtime set back")
	}
	wantSame(t, s, b)
}

// writeFailures writes a ledger of n failures of n tools, by hand, and returns its bytes.
func writeFailures(t *testing.T, s *Store, n int) []byte {
	t.Helper()
	var data []byte
	for i := range n {
		data = ledger.AppendEncoded(data, failEntry(fmt.Sprintf("mcp__s__t%03d", i), 1, i))
	}
	if err := os.WriteFile(s.Ledger.Path(), data, 0o600); err != nil {
		t.Fatal(err)
	}
	return data
}
