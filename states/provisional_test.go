package states

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// hookStore is a store of dir as the hook opens it for key: bounded to key and its server, past
// its own deadline (so it never streams forwards itself), with a catch-up that only counts, and
// time left to write the provisional snapshot.
func hookStore(dir, key string, asked *int) *Store {
	s := NewStore(dir, time.Second)
	s.Bound = &Bound{Keys: ledger.Key(key).Circuits(), Deadline: time.Now().Add(-time.Second),
		IndexBy: time.Now().Add(time.Minute), CatchUp: func() {
			if asked != nil {
				*asked++
			}
		}}
	return s
}

// readProv reads the provisional snapshot with every circuit (nil when there is none it parses).
func readProv(s *Store) *snapshot {
	return decodeSnapshot(s.readSnapshotFile(s.provisionalPath(), provisionalVersion))
}

// rewriteProv changes the provisional snapshot and writes it back with valid lengths and
// checksums: what a reader then says comes from it.
func rewriteProv(t *testing.T, s *Store, change func(*snapshot)) {
	t.Helper()
	p := readProv(s)
	if p == nil {
		t.Fatal("no provisional snapshot")
	}
	change(p)
	s.write(s.provisionalPath(), p)
}

// sameCircuits fails unless b has key's circuit (and its server's) as want has it.
func sameCircuits(t *testing.T, what string, b, want *Board, key string) {
	t.Helper()
	for _, k := range ledger.Key(key).Circuits() {
		if got, w := circuitJSON(b.Get(k)), circuitJSON(want.Get(k)); got != w {
			t.Fatalf("%s, %s:\n got %s\nwant %s", what, k, got, w)
		}
	}
}

// replayData is the board data says.
func replayData(data []byte) *Board {
	es, _ := ledger.Parse(data, 1, nil)
	var b Board
	b.Replay(es)
	return &b
}

// lastItemStart is where the last item of data starts.
func lastItemStart(data []byte) int64 {
	return int64(bytes.LastIndex(data, []byte("\n- tool:")) + 1)
}

// TestProvisionalSnapshot: the first bounded read without a snapshot reads the whole ledger
// backwards, answers exactly, and saves the provisional snapshot: every circuit as the whole ledger
// has it, as of the start of the last item, never as state.json. Later reads answer every key from
// it (what it says is what they say), an absent key included, and catch up what was appended.
func TestProvisionalSnapshot(t *testing.T) {
	for seed := range uint64(3) {
		s := newStore(t)
		want := writeRandomLedger(t, s, seed, 12000)
		data, _ := os.ReadFile(s.Ledger.Path())
		asked := 0
		first := hookStore(s.Ledger.Dir, "mcp__never__seen", &asked)
		sameCircuits(t, "first read", view(t, first), want, "mcp__never__seen")
		if asked != 1 {
			t.Fatalf("catch-up asked for %d times", asked)
		}
		if _, err := os.Stat(s.snapshotPath()); err == nil {
			t.Fatal("the backward read saved state.json")
		}
		prov := readProv(s)
		if prov == nil {
			t.Fatal("no provisional snapshot saved")
		}
		if off := lastItemStart(data); prov.Offset != off || prov.Lines != bytes.Count(data[:off], []byte("\n")) || prov.EndSize != int64(len(data)) {
			t.Fatalf("provisional snapshot at %d (%d lines, end %d), want the last item's start %d", prov.Offset, prov.Lines, prov.EndSize, off)
		}
		if len(prov.Unresolved) > 0 {
			t.Fatalf("unresolved circuits %v", prov.Unresolved)
		}
		upto := replayData(data[:prov.Offset])
		for _, k := range want.Keys() {
			if got, w := circuitJSON(prov.Board.Get(k)), circuitJSON(upto.Get(k)); got != w {
				t.Fatalf("seed %d, provisional %s:\n got %s\nwant %s", seed, k, got, w)
			}
		}
		for _, k := range append(want.Keys(), "mcp__never__seen") {
			sameCircuits(t, "later read", view(t, hookStore(s.Ledger.Dir, k, nil)), want, k)
		}
		// A read for no key (SessionStart, which lists the circuits) gets every circuit from
		// it, not a partial board, and never saves that as state.json.
		all := hookStore(s.Ledger.Dir, "", nil)
		all.Bound.Keys = nil
		b := view(t, all)
		if b.Partial {
			t.Fatal("a read for every circuit did not use the provisional snapshot")
		}
		for _, k := range want.Keys() {
			if got, w := circuitJSON(b.Get(k)), circuitJSON(want.Get(k)); got != w {
				t.Fatalf("every circuit, %s:\n got %s\nwant %s", k, got, w)
			}
		}
		if _, err := os.Stat(s.snapshotPath()); err == nil {
			t.Fatal("the board of the provisional snapshot was saved as state.json")
		}
		// And every key as the first read (the one that writes it) answers for it, the key
		// of the last item included (which the provisional snapshot leaves out).
		for _, k := range want.Keys() {
			os.Remove(s.provisionalPath())
			os.Remove(filepath.Join(s.Ledger.Dir, catchUpLockName))
			sameCircuits(t, "first read", view(t, hookStore(s.Ledger.Dir, k, nil)), want, k)
		}
	}

	// What later reads say comes from it: a circuit changed in it is read as changed, and a
	// circuit taken out of it is no history at all, although the ledger names it.
	s := newStore(t)
	want := writeRandomLedger(t, s, 5, 12000)
	view(t, hookStore(s.Ledger.Dir, "mcp__a__x", nil))
	rewriteProv(t, s, func(p *snapshot) {
		p.Board.Circuits["mcp__b__y"] = &Circuit{Key: "mcp__b__y", State: ledger.Open, FailureCount: 99}
		delete(p.Board.Circuits, "mcp__a__x")
	})
	if c := view(t, hookStore(s.Ledger.Dir, "mcp__b__y", nil)).Get("mcp__b__y"); c == nil || c.FailureCount != 99 {
		t.Fatalf("a later read did not take the provisional snapshot's circuit: %+v", c)
	}
	if want.Get("mcp__a__x") == nil {
		t.Fatal("fixture: mcp__a__x is not in the ledger")
	}
	if c := view(t, hookStore(s.Ledger.Dir, "mcp__a__x", nil)).Get("mcp__a__x"); c != nil && !c.Idle() {
		t.Fatalf("a key absent from the provisional snapshot was read from the ledger: %+v", c)
	}

	// Appended after it: replayed on top of it, by a read with and without the lock.
	s = newStore(t)
	writeRandomLedger(t, s, 6, 12000)
	view(t, hookStore(s.Ledger.Dir, "mcp__c__q", nil))
	handAppend(t, s, failEntry("mcp__c__q", 7, 1), failEntry("mcp__new__t", 1, 2))
	want = replayFile(t, s)
	for _, k := range []string{"mcp__c__q", "mcp__new__t"} {
		sameCircuits(t, "after an append", view(t, hookStore(s.Ledger.Dir, k, nil)), want, k)
	}
	if c := want.Get("mcp__c__q"); c.FailureCount != 7 {
		t.Fatalf("fixture: %+v", c)
	}
	locked := hookStore(s.Ledger.Dir, "mcp__c__q", nil)
	if b := update(t, locked); b.Get("mcp__c__q").FailureCount != 7 {
		t.Fatalf("locked read: %+v", b.Get("mcp__c__q"))
	}
}

// TestProvisionalOnAProgressSnapshot: with a state.json far behind (a catch-up's progress, or a
// megabyte appended since), the backward read stops at it and the provisional snapshot is that
// board with every circuit read since brought forward.
func TestProvisionalOnAProgressSnapshot(t *testing.T) {
	s := newStore(t)
	writeRandomLedger(t, s, 8, 12000)
	// A damaged item in the first part: the snapshot of it names it, and so must the
	// provisional snapshot built on it.
	data, _ := os.ReadFile(s.Ledger.Path())
	i := bytes.Index(data, []byte("  state: "))
	j := i + bytes.IndexByte(data[i:], '\n')
	data = append(append(append([]byte(nil), data[:i]...), "  state: CLOSD"...), data[j:]...)
	os.WriteFile(s.Ledger.Path(), data, 0o600)
	view(t, s) // the complete snapshot of the first part
	log, _ := randomLedger(rand.New(rand.NewPCG(9, 3)), 12000, t0.Add(400*24*time.Hour))
	var more []byte
	for _, e := range log {
		e.Error = "error text long enough to make the ledger larger than a chunk " + e.Error
		more = ledger.AppendEncoded(more, e)
	}
	f, _ := os.OpenFile(s.Ledger.Path(), os.O_WRONLY|os.O_APPEND, 0)
	f.Write(more)
	f.Close()
	view(t, hookStore(s.Ledger.Dir, "mcp__a__y", nil))
	prov := readProv(s)
	if prov == nil || prov.Offset <= readSnap(t, s).Offset {
		t.Fatal("no provisional snapshot past state.json")
	}
	if d, want := prov.Board.Damage, readSnap(t, s).Board.Damage; d.Count != 1 || want.Count != 1 || d.Problems[0] != want.Problems[0] {
		t.Fatalf("provisional damage %+v, want the snapshot's %+v", d, want)
	}
	data, _ = os.ReadFile(s.Ledger.Path())
	want := replayData(data[:prov.Offset])
	for _, k := range want.Keys() {
		if got, w := circuitJSON(prov.Board.Get(k)), circuitJSON(want.Get(k)); got != w {
			t.Fatalf("provisional %s:\n got %s\nwant %s", k, got, w)
		}
	}
}

// TestProvisionalRejected: a provisional snapshot is as untrusted as state.json. One that claims
// an OPEN circuit the ledger does not have is ignored when it is another ledger's (planted by a
// cloned repository, or left by a replaced ledger), when the ledger was edited in place keeping its
// size, or cut back, when its lines are damaged or cut short, or when it is a link; the read is
// then exact again, from the ledger.
func TestProvisionalRejected(t *testing.T) {
	const key = "mcp__b__x"
	bogus := func(p *snapshot) {
		p.Board.Circuits[key] = &Circuit{Key: key, State: ledger.Open, FailureCount: 99}
	}
	cases := []struct {
		name string
		make func(t *testing.T, s *Store)
	}{
		{"another ledger's", func(t *testing.T, s *Store) {
			rewriteProv(t, s, func(p *snapshot) { bogus(p); p.Ino++ })
		}},
		{"edited in place", func(t *testing.T, s *Store) {
			rewriteProv(t, s, bogus)
			data, _ := os.ReadFile(s.Ledger.Path())
			fi, _ := os.Stat(s.Ledger.Path())
			i := findEditable(data, len(data)/4, len(data)/3)
			data[i] = 'Z'
			os.WriteFile(s.Ledger.Path(), data, 0o600)
			os.Chtimes(s.Ledger.Path(), fi.ModTime(), fi.ModTime())
		}},
		{"replaced", func(t *testing.T, s *Store) {
			rewriteProv(t, s, bogus)
			data, _ := os.ReadFile(s.Ledger.Path())
			tmp := s.Ledger.Path() + ".new"
			os.WriteFile(tmp, data, 0o600)
			os.Rename(tmp, s.Ledger.Path())
		}},
		{"ledger cut back", func(t *testing.T, s *Store) {
			rewriteProv(t, s, bogus)
			data, _ := os.ReadFile(s.Ledger.Path())
			os.WriteFile(s.Ledger.Path(), data[:lastItemStart(data)], 0o600)
		}},
		{"a damaged line", func(t *testing.T, s *Store) {
			rewriteProv(t, s, bogus)
			data, _ := os.ReadFile(s.provisionalPath())
			i := bytes.Index(data, []byte(`"failure_count":99`))
			data[i+len(`"failure_count":9`)] = '8'
			os.WriteFile(s.provisionalPath(), data, 0o600)
		}},
		{"cut short", func(t *testing.T, s *Store) {
			rewriteProv(t, s, bogus)
			data, _ := os.ReadFile(s.provisionalPath())
			cut := bytes.LastIndexByte(data[:len(data)-1], '\n') + 1
			os.WriteFile(s.provisionalPath(), data[:cut], 0o600)
		}},
		{"a complete snapshot's version", func(t *testing.T, s *Store) {
			rewriteProv(t, s, func(p *snapshot) { bogus(p); p.Version = snapshotVersion })
		}},
		{"a link", func(t *testing.T, s *Store) {
			rewriteProv(t, s, bogus)
			elsewhere := filepath.Join(t.TempDir(), "planted.json")
			os.Rename(s.provisionalPath(), elsewhere)
			if err := os.Symlink(elsewhere, s.provisionalPath()); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := newStore(t)
			writeRandomLedger(t, s, 12, 12000)
			view(t, hookStore(s.Ledger.Dir, key, nil))
			c.make(t, s)
			want := replayFile(t, s)
			if w := want.Get(key); w != nil && w.FailureCount == 99 {
				t.Fatal("fixture")
			}
			sameCircuits(t, c.name, view(t, hookStore(s.Ledger.Dir, key, nil)), want, key)
		})
	}
	// And one planted as state.json is not taken for a complete snapshot.
	s := newStore(t)
	writeRandomLedger(t, s, 13, 12000)
	view(t, hookStore(s.Ledger.Dir, key, nil))
	rewriteProv(t, s, bogus)
	os.Rename(s.provisionalPath(), s.snapshotPath())
	if c := view(t, s).Get(key); c != nil && c.FailureCount == 99 {
		t.Fatal("a provisional snapshot was read as state.json")
	}
}

// TestProvisionalUnresolved: a circuit whose trail back to its last CLOSED entry is longer than
// the provisional snapshot keeps (a server flapping OPEN and HALF-OPEN for a long time) is left out
// of it and named unresolved; a read of that circuit reads the ledger backwards, and is exact;
// the other circuits are read from the provisional snapshot.
func TestProvisionalUnresolved(t *testing.T) {
	s := newStore(t)
	const flap = "mcp__flap__*"
	var data []byte
	data = ledger.AppendEncoded(data, failEntry(flap, 1, 0))
	for i := range 2*maxTrail + 5 {
		at := t0.Add(time.Duration(10+i) * time.Minute)
		data = ledger.AppendEncoded(data, ledger.Entry{Tool: flap, State: ledger.Open, FailureType: ledger.Timeout,
			FailureCount: 3, Event: ledger.EventTrip, At: at, TrippedAt: at, OpenUntil: at.Add(time.Minute)})
		data = ledger.AppendEncoded(data, ledger.Entry{Tool: flap, State: ledger.HalfOpen, FailureType: ledger.Timeout,
			FailureCount: 3, Event: ledger.EventHalfOpen, At: at.Add(time.Minute), TrippedAt: at, LeaseUntil: at.Add(2 * time.Minute)})
	}
	for i := 0; len(data) <= 2*boundedLag; i++ {
		data = ledger.AppendEncoded(data, failEntry(fmt.Sprintf("mcp__s%d__t", i%50), 1+i/50, i))
	}
	os.WriteFile(s.Ledger.Path(), data, 0o600)
	want := replayFile(t, s)
	if c := want.Get(flap); c == nil || c.State != ledger.HalfOpen {
		t.Fatalf("fixture: %+v", c)
	}
	view(t, hookStore(s.Ledger.Dir, "mcp__s1__t", nil))
	prov := readProv(s)
	if prov == nil || strings.Join(prov.Unresolved, ",") != flap || prov.Board.Get(flap) != nil {
		t.Fatalf("provisional snapshot: %+v", prov)
	}
	rewriteProv(t, s, func(p *snapshot) { p.Board.Circuits["mcp__s1__t"].FailureCount = 99 })
	if c := view(t, hookStore(s.Ledger.Dir, "mcp__s1__t", nil)).Get("mcp__s1__t"); c.FailureCount != 99 {
		t.Fatalf("a resolved circuit was not read from the provisional snapshot: %+v", c)
	}
	sameCircuits(t, "unresolved", view(t, hookStore(s.Ledger.Dir, "mcp__flap__x", nil)), want, "mcp__flap__x")
	// Every circuit cannot come from it: it lacks one.
	all := hookStore(s.Ledger.Dir, "", nil)
	all.Bound.Keys = nil
	if b := view(t, all); !b.Partial {
		t.Fatal("a provisional snapshot with an unresolved circuit answered for every circuit")
	}
}

// TestProvisionalLastItem: the provisional snapshot never holds the last item (it may be an
// append still being written, which a reader without the lock cannot tell): an append cut part
// way through when the first call reads is replayed whole by the next one.
func TestProvisionalLastItem(t *testing.T) {
	s := newStore(t)
	writeRandomLedger(t, s, 14, 12000)
	whole := ledger.Encode(ledger.Entry{Tool: "mcp__c__*", State: ledger.Open, FailureType: ledger.Timeout, FailureCount: 3,
		Event: ledger.EventTrip, At: t0.Add(9000 * time.Hour), TrippedAt: t0.Add(9000 * time.Hour), OpenUntil: t0.Add(9001 * time.Hour)})
	f, _ := os.OpenFile(s.Ledger.Path(), os.O_WRONLY|os.O_APPEND, 0)
	defer f.Close()
	cut := bytes.Index(whole, []byte("failure_count:"))
	f.Write(whole[:cut])
	before, _ := os.Stat(s.Ledger.Path())
	view(t, hookStore(s.Ledger.Dir, "mcp__c__q", nil))
	if p := readProv(s); p == nil || p.Offset != before.Size()-int64(cut) {
		t.Fatalf("provisional snapshot %+v, want it to end where the cut append starts", p)
	}
	f.Write(whole[cut:])
	if c := view(t, hookStore(s.Ledger.Dir, "mcp__c__q", nil)).Get("mcp__c__*"); c == nil || c.State != ledger.Open {
		t.Fatalf("the completed append was not read: %+v", c)
	}
}

// TestProvisionalDamage: damage the backward read meets is left out item by item and named with
// the lines ledger verify names, the first ones of the file kept and all of them counted, as the
// complete read does, in the provisional snapshot and in the reads from it; the circuits stay
// exact.
func TestProvisionalDamage(t *testing.T) {
	s := newStore(t)
	writeRandomLedger(t, s, 15, 12000)
	data, _ := os.ReadFile(s.Ledger.Path())
	// Hand-written items (quoted keys: every reader parses them) with a typo, spread over the
	// second half.
	const n = 3*MaxDamageKept + 2
	for i := range n {
		from := len(data)/2 + i*len(data)/(3*n)
		at := bytes.Index(data[from:], []byte("\n- tool:")) + from + 1
		hand := fmt.Sprintf("- tool: \"mcp__hand__t%d\"\n  state: CLOSD\n  failure_count: 1\n", i)
		data = append(append(append([]byte(nil), data[:at]...), hand...), data[at:]...)
	}
	os.WriteFile(s.Ledger.Path(), data, 0o600)
	_, problems := ledger.Parse(data, 1, nil)
	if len(problems) != n {
		t.Fatalf("fixture: %d problems", len(problems))
	}
	want := replayFile(t, s)
	first := view(t, hookStore(s.Ledger.Dir, "mcp__a__x", nil))
	prov := readProv(s)
	later := view(t, hookStore(s.Ledger.Dir, "mcp__b__y", nil))
	for what, d := range map[string]Damage{"first read": first.Damage, "provisional": prov.Board.Damage, "later read": later.Damage} {
		if d.Count != n || len(d.Problems) != MaxDamageKept {
			t.Fatalf("%s: damage %+v, want %d counted and %d kept", what, d, n, MaxDamageKept)
		}
		for i, p := range d.Problems {
			if w := problems[i]; p.Line != w.Line || p.Kind != w.Kind || p.Msg != w.Msg {
				t.Fatalf("%s: problem %d is %v, want %v", what, i, p, problems[i])
			}
		}
	}
	sameCircuits(t, "damaged", later, want, "mcp__b__y")
}

// TestCatchUpWritesProvisional: when the hook could not write the provisional snapshot (out of
// time), the catch-up writes it before its forward read, and removes it once the complete snapshot
// is saved; Invalidate removes it too.
func TestCatchUpWritesProvisional(t *testing.T) {
	s := newStore(t)
	want := writeRandomLedger(t, s, 16, 12000)
	late := hookStore(s.Ledger.Dir, "mcp__a__x", nil)
	late.Bound.IndexBy = time.Now().Add(-time.Second)
	sameCircuits(t, "out of time", view(t, late), want, "mcp__a__x")
	if readProv(s) != nil {
		t.Fatal("a provisional snapshot was written past IndexBy")
	}
	// The catch-up's first step, on its own.
	c := NewStore(s.Ledger.Dir, time.Second)
	c.Bound = &Bound{IndexBy: time.Now().Add(time.Minute)}
	if _, _, err := c.loadFresh(false); err != nil {
		t.Fatal(err)
	}
	if readProv(s) == nil {
		t.Fatal("the catch-up's first step wrote no provisional snapshot")
	}
	if ran, err := NewStore(s.Ledger.Dir, time.Second).CatchUpSnapshot(nil); !ran || err != nil {
		t.Fatalf("CatchUpSnapshot: %v %v", ran, err)
	}
	if _, err := os.Stat(s.provisionalPath()); err == nil {
		t.Fatal("the provisional snapshot was kept after the complete one was saved")
	}
	wantSame(t, s, &readSnap(t, s).Board)
	view(t, hookStore(s.Ledger.Dir, "mcp__a__x", nil))
	// A hook call does not write the provisional snapshot while a catch-up started less than
	// catchUpRetry ago (it does); one that starts a catch-up does.
	os.Remove(s.snapshotPath())
	view(t, hookStore(s.Ledger.Dir, "mcp__a__x", nil))
	if readProv(s) != nil {
		t.Fatal("a hook call wrote the provisional snapshot while a catch-up was running")
	}
	os.Remove(filepath.Join(s.Ledger.Dir, catchUpLockName))
	asked := 0
	view(t, hookStore(s.Ledger.Dir, "mcp__a__x", &asked))
	if readProv(s) == nil || asked != 1 {
		t.Fatalf("a hook call starting the catch-up (asked %d) wrote no provisional snapshot", asked)
	}
	s.Invalidate()
	if _, err := os.Stat(s.provisionalPath()); err == nil {
		t.Fatal("Invalidate kept the provisional snapshot")
	}
}

// TestProvisionalBounds: a ledger with more circuits than the provisional snapshot folds gets
// none (its memory stays bounded), and reads stay exact.
func TestProvisionalBounds(t *testing.T) {
	s := newStore(t)
	var data []byte
	for i := range maxIndexKeys + 10 {
		data = ledger.AppendEncoded(data, failEntry(fmt.Sprintf("mcp__k%05d__t", i), 1, i))
	}
	os.WriteFile(s.Ledger.Path(), data, 0o600)
	want := replayFile(t, s)
	sameCircuits(t, "many circuits", view(t, hookStore(s.Ledger.Dir, "mcp__k00007__t", nil)), want, "mcp__k00007__t")
	if _, err := os.Stat(s.provisionalPath()); err == nil {
		t.Fatal("a provisional snapshot of more than maxIndexKeys circuits was written")
	}
}

// TestProvisionalConcurrentAppends: provisional snapshots written while other processes append
// (each a locked, synced append) stay true: every read after the appends, from whichever
// provisional snapshot is left, says what the whole ledger says.
func TestProvisionalConcurrentAppends(t *testing.T) {
	s := newStore(t)
	writeRandomLedger(t, s, 17, 12000)
	done := make(chan struct{})
	go func() {
		defer close(done)
		w := NewStore(s.Ledger.Dir, 10*time.Second)
		for i := range 200 {
			k := []string{"mcp__a__x", "mcp__b__y", "mcp__new__t"}[i%3]
			if _, err := w.Update(func(*Board) ([]ledger.Entry, error) {
				return []ledger.Entry{failEntry(k, 1+i/3, 100000+i), failEntry(k+"2", 1, 100000+i)}, nil
			}); err != nil {
				t.Error(err)
				return
			}
			os.Remove(s.snapshotPath()) // keep the readers on the backward path
		}
	}()
	rounds := 0
	for running := true; running; rounds++ {
		select {
		case <-done:
			running = false
		default:
		}
		// No catch-up runs: each first read writes a provisional snapshot.
		os.Remove(s.provisionalPath())
		os.Remove(filepath.Join(s.Ledger.Dir, catchUpLockName))
		view(t, hookStore(s.Ledger.Dir, "mcp__a__x", nil))
		view(t, hookStore(s.Ledger.Dir, "mcp__new__t", nil))
	}
	t.Logf("%d rounds of reads during the appends", rounds)
	os.Remove(s.snapshotPath())
	want := replayFile(t, s)
	if readProv(s) == nil {
		t.Fatal("fixture: no provisional snapshot")
	}
	for _, k := range append(want.Keys(), "mcp__never__seen") {
		sameCircuits(t, "after concurrent appends", view(t, hookStore(s.Ledger.Dir, k, nil)), want, k)
	}
}

// TestProvisionalUnderTheLock: a first read under the lock (the hook's failure event comes first)
// writes the provisional snapshot only when its own keys need the whole read anyway (a key the
// ledger never names), so it never holds the lock longer than the read it needs; either way it
// answers exactly, and the entries it appends count.
func TestProvisionalUnderTheLock(t *testing.T) {
	s := newStore(t)
	writeRandomLedger(t, s, 18, 12000)
	for _, c := range []struct {
		key   string
		wrote bool
	}{{"mcp__a__x", false}, {"mcp__never__seen", true}} {
		os.Remove(s.provisionalPath())
		w := hookStore(s.Ledger.Dir, c.key, nil)
		b, err := w.Update(func(*Board) ([]ledger.Entry, error) { return []ledger.Entry{failEntry(c.key, 9, 99999)}, nil })
		if err != nil {
			t.Fatal(err)
		}
		want := replayFile(t, s)
		sameCircuits(t, "locked first read", b, want, c.key)
		if _, err := os.Stat(s.provisionalPath()); (err == nil) != c.wrote {
			t.Fatalf("%s: provisional snapshot written %v, want %v", c.key, err == nil, c.wrote)
		}
		sameCircuits(t, "after it", view(t, hookStore(s.Ledger.Dir, c.key, nil)), want, c.key)
	}
}

// TestProvisionalFarBehind: more than a megabyte appended after the provisional snapshot (and no
// state.json): a read takes its circuits as the base of a backward read that stops at it, and is
// exact, for a key appended to since and for one that was not (read from it: a mark put in it is
// what the read says).
func TestProvisionalFarBehind(t *testing.T) {
	s := newStore(t)
	writeRandomLedger(t, s, 19, 12000)
	data, _ := os.ReadFile(s.Ledger.Path())
	last, _ := ledger.ItemTool(data[lastItemStart(data):])
	marked := "mcp__b__y"
	if string(last) == marked {
		marked = "mcp__a__z"
	}
	view(t, hookStore(s.Ledger.Dir, "mcp__c__q", nil))
	var more []byte
	for i := 0; len(more) <= 2*boundedLag; i++ {
		more = ledger.AppendEncoded(more, failEntry(fmt.Sprintf("mcp__late%d__t", i%5), 1+i/5, 200000+i))
	}
	f, _ := os.OpenFile(s.Ledger.Path(), os.O_WRONLY|os.O_APPEND, 0)
	f.Write(more)
	f.Close()
	want := replayFile(t, s)
	for _, k := range []string{"mcp__late3__t", "mcp__c__q"} {
		sameCircuits(t, "far behind", view(t, hookStore(s.Ledger.Dir, k, nil)), want, k)
	}
	rewriteProv(t, s, func(p *snapshot) {
		p.Board.Circuits[marked] = &Circuit{Key: marked, State: ledger.Open, FailureCount: 77}
	})
	if c := view(t, hookStore(s.Ledger.Dir, marked, nil)).Get(marked); c == nil || c.FailureCount != 77 {
		t.Fatalf("%s was not read from the provisional snapshot far behind: %+v", marked, c)
	}
}
