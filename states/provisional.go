// The backward read and the provisional snapshot: how the hook decides on a large ledger without a
// usable snapshot, and why the calls after the first do not read the ledger again while the
// complete snapshot is still being built.
//
// A backward read finds a circuit's state by reading the ledger from its end back to the circuit's
// last CLOSED entry, from which its state is replayed exactly. For a circuit the ledger never
// names, that is the whole ledger. The first call on a large ledger without a snapshot therefore
// reads on to the start (it pays that for an absent key anyway, and reading the items of circuits
// already found costs only a look at their first line), folds every circuit it meets the same way,
// and saves the result as the provisional snapshot: the whole board as of the start of the last
// item. Later calls decode their two circuits from it and replay the few items after it, as they
// would from state.json. It is provisional because a backward read does not parse the items of a
// circuit older than that circuit's last CLOSED entry, so damage there is not seen: the complete
// snapshot (the detached catch-up's forward read of every item) replaces it and removes it.

package states

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// ProvisionalName is the provisional snapshot's file name in the state directory.
const ProvisionalName = "state.provisional.json"

// provisionalVersion is the header version of a provisional snapshot: distinct from
// snapshotVersion, so that neither file is ever read as the other.
const provisionalVersion = 1000 + snapshotVersion

// Bounds of the provisional snapshot's fold, so that the read that builds it holds memory in
// proportion to the circuits, whatever the ledger holds: a circuit whose trail back to its last
// CLOSED entry is longer than maxTrail entries is left out of it (listed as unresolved: a reader
// of that circuit reads backwards as before); past maxIndexKeys circuits, maxKept kept entries or
// maxUnresolved unresolved circuits, no provisional snapshot is written.
const (
	maxIndexKeys  = 10000
	maxTrail      = 64
	maxKept       = 20000
	maxUnresolved = 64
)

func (s *Store) provisionalPath() string { return filepath.Join(s.Ledger.Dir, ProvisionalName) }

// keyTrail is what a backward scan keeps of one key: its entries newest first, each with the
// number of counting entries (blocked, would_block) that followed it, up to its last CLOSED entry.
type keyTrail struct {
	entries   []ledger.Entry
	counters  []int
	counterAt []time.Time // the newest counting entry's time, per entry
	pending   int         // counting entries newer than every entry kept so far
	pendingAt time.Time
	anchored  bool
	// own marks a key the caller asked for: it is always followed back to its anchor.
	own bool
	// resolved marks an own key whose state is known: anchored, or anchored by the last item
	// (lastAnchor), which a read that indexes keeps out of the trails.
	resolved, lastAnchor bool
	// given marks a key that is not own whose trail grew past maxTrail: no longer followed.
	given bool
}

func (tr *keyTrail) done() bool { return tr.anchored || tr.given }

// replayCounters applies n counting entries of key, the newest at at.
func replayCounters(b *Board, key string, n int, at time.Time) {
	for i := range n {
		e := ledger.Entry{Tool: key, Event: ledger.EventBlocked}
		if i == n-1 {
			e.At = at
		}
		b.Apply(e)
	}
}

// badItem is an item a backward read left out (or read with problems), with the number of lines
// from its start to where the read's line count ends, so that its problems get absolute line
// numbers once the read reaches its base.
type badItem struct {
	problems   []ledger.Problem
	unreadable bool
	back       int
}

// indexMode says whether a backward read also builds the provisional snapshot.
type indexMode int

const (
	noIndex indexMode = iota
	// indexFree: only while the asked-for keys need the read anyway (an absent key needs all
	// of it); for a reader under the lock, which the others' appends wait for.
	indexFree
	// indexFull: on to the base, until Bound.IndexBy.
	indexFull
)

// backRead is one backward read of the ledger: the trails of the asked-for keys and, while it
// builds the provisional snapshot (index), of every key it meets.
type backRead struct {
	base    *snapshot
	slow    ledger.SlowReader  // the ledger's reader of odd shapes
	prov    *ledger.Provenance // checks the entries kept
	trails  map[string]*keyTrail
	left    int // asked-for keys not resolved yet
	index   bool
	free    bool // index only while left > 0 (indexFree)
	indexBy time.Time
	items   int
	kept    int
	given   int
	stopped bool // the read ended before base
	first   bool
	// lastOff is where the last item starts. A provisional snapshot ends there: the last item
	// may be an append still being written (a reader without the lock cannot tell), so it is
	// never part of a saved board; every later reader replays it.
	lastOff int64
	// last holds the last item's entries while indexing: they answer this call but stay out of
	// the trails, and lastBad its problems.
	last    []ledger.Entry
	lastBad []ledger.Problem
	damage  Damage
	// bad are the damaged items read, newest first: only the oldest are kept (a board keeps the
	// first MaxDamageKept problems of the file); the others are counted in dropped, as the
	// whole read counts them (dropped[0]) and as a read that stopped early does (dropped[1]).
	bad     []badItem
	dropped [2]int
	// lines counts the lines of the items read (without the last one while indexing).
	lines int
	// stopBy is Bound.StopBy: past it the read gives up on the asked-for keys not found (cut).
	stopBy time.Time
	cut    bool
	// watchAt is when a read still running starts watch, the look from the ledger's start for
	// trips of the asked-for keys; watchFrom is where it starts.
	watchAt   time.Time
	watchFrom int64
	watch     *tripWatch
	store     *Store
}

// watchAfter is how long a bounded backward read runs before it also looks at the ledger from its
// start (tripWatch): most reads are done by then, and pay nothing for it.
const watchAfter = 150 * time.Millisecond

// checkClock is how many items a backward read handles between two looks at the clock.
const checkClock = 256

// tripWatch reads the ledger forwards from the base of a backward read, on a goroutine of its
// own, looking only at the items of the asked-for keys, for an entry that says the circuit was
// opened (OPEN or HALF-OPEN). A trip near the start of a huge ledger is what a backward read finds
// last; when the read runs out of time first, what the watch saw still says the circuit was
// tripped, and the gate denies rather than guess (Undecided.Tripped). It stops where the backward
// read has got to, when it has seen one of the keys tripped (enough to deny the call), or when
// told.
type tripWatch struct {
	keys    []string
	back    atomic.Int64 // the backward read's position
	stop    atomic.Bool
	done    chan struct{}
	mu      sync.Mutex
	tripped map[string]bool
}

func (s *Store) startWatch(from, back int64, keys []string) *tripWatch {
	w := &tripWatch{keys: keys, done: make(chan struct{}), tripped: map[string]bool{}}
	w.back.Store(back)
	go func() {
		defer close(w.done)
		s.Ledger.ScanForward(from, w.item)
	}()
	return w
}

func (w *tripWatch) item(off int64, item []byte) bool {
	if w.stop.Load() || off >= w.back.Load() {
		return false
	}
	opened := func(k string) {
		w.mu.Lock()
		w.tripped[k] = true
		w.mu.Unlock()
	}
	if k, ok := ledger.ItemTool(item); ok {
		if !slices.Contains(w.keys, string(k)) {
			return true
		}
		// The shape Encode writes: read without a YAML reader, which may be a process away.
		entries, _ := ledger.ReadChunk(item, 1, false, nil)
		for _, e := range entries {
			if e.State == ledger.Open || e.State == ledger.HalfOpen {
				opened(e.Tool)
			}
		}
	} else {
		// Another shape: looked at, not parsed. A mention of the key and of an open state is
		// taken for a trip, which only ever makes the gate deny.
		for _, k := range w.keys {
			if bytes.Contains(item, []byte(k)) && bytes.Contains(item, []byte("OPEN")) {
				opened(k)
			}
		}
	}
	// One tripped circuit of the call is enough to deny it.
	w.mu.Lock()
	found := len(w.tripped) > 0
	w.mu.Unlock()
	return !found
}

// Tripped returns the first of keys that the ledger holds an entry opening (OPEN or HALF-OPEN),
// "" when none, looking from its start for at most within. It is what a hook that ran out of its budget still
// asks before it lets a call through: a trip near the start of a large ledger, or in a ledger
// whose items another process must read, is what a read from the end or a slow read finds last.
//
// The trip index is asked first: it finds a trip anywhere in the ledger in a few small reads.
// note says why it could not be relied on ("" when it covers the whole ledger), for the answer
// that lets the call through.
func (s *Store) Tripped(keys []string, within time.Duration) (key, note string) {
	id, err := s.Ledger.Stat()
	if err != nil || id.Size == 0 {
		return "", ""
	}
	indexed, note := s.indexedTrips(keys)
	if len(indexed) > 0 {
		return indexed[0], ""
	}
	w := s.startWatch(0, id.Size+1, keys)
	t := time.NewTimer(within)
	select {
	case <-w.done:
	case <-t.C:
	}
	t.Stop()
	w.end()
	for _, k := range keys {
		if w.saw(k) {
			return k, ""
		}
	}
	return "", note
}

// indexedTrips returns those of keys the trip index shows tripped (ledger.IndexedTrips), and
// when the index could not be relied on, why.
func (s *Store) indexedTrips(keys []string) ([]string, string) {
	tripped, st := s.Ledger.IndexedTrips(keys)
	return tripped, st.Note()
}

// end stops the watch and waits for its goroutine to return; a nil watch has nothing to stop.
func (w *tripWatch) end() {
	if w == nil {
		return
	}
	w.stop.Store(true)
	<-w.done
}

// saw reports whether the watch saw key tripped; a nil watch saw nothing.
func (w *tripWatch) saw(key string) bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.tripped[key]
}

// clock looks at the clock every checkClock items of a bounded read: it starts the watch when the
// read has run long, and past stopBy it ends the read (false), leaving the asked-for keys not
// found undecided.
func (r *backRead) clock(off int64) bool {
	if r.stopBy.IsZero() || r.items%checkClock != 0 {
		return true
	}
	if r.watch != nil {
		r.watch.back.Store(off)
	}
	now := time.Now()
	if r.watch == nil && r.left > 0 && now.After(r.watchAt) {
		var keys []string
		for k, tr := range r.trails {
			if tr.own && !tr.resolved {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		r.watch = r.store.startWatch(r.watchFrom, off, keys)
	}
	if now.After(r.stopBy) {
		r.cut = r.left > 0
		r.stopIndex()
		r.stopped = true
		return false
	}
	return true
}

// more reports whether the read goes on past the item just handled.
func (r *backRead) more() bool {
	if r.left > 0 || r.index && !r.free {
		return true
	}
	r.stopped = true
	return false
}

// stopIndex gives up the provisional snapshot: the other keys' trails are dropped, and the read
// goes on only while an asked-for key is not anchored.
func (r *backRead) stopIndex() {
	if !r.index {
		return
	}
	r.index = false
	for k, tr := range r.trails {
		if !tr.own {
			delete(r.trails, k)
		}
	}
}

// parse reads one item as the backward read does: ok is false when it is left out. The last item
// may be an append in progress, cut where it still reads as an entry: with problems it is not yet
// written, not damage (a prefix of one entry repeats no key, so a merged item ending in a newline
// is written, not in progress).
func parse(item []byte, last bool, slow ledger.SlowReader) (entries []ledger.Entry, problems []ledger.Problem, unreadable, ok bool) {
	entries, problems = ledger.ReadChunk(item, 1, last, slow)
	if last && len(problems) > 0 && !(allMerged(problems) && bytes.HasSuffix(item, []byte("\n"))) {
		return nil, nil, false, false
	}
	if len(entries) == 0 || len(entries) > 1 && !allMerged(problems) || len(entries) == 1 && len(problems) > 0 {
		// Left out on its own. The last item may be an append in progress: not yet written,
		// not damage.
		return nil, problems, !last, false
	}
	return entries, problems, false, true
}

// addBad records a damaged item, keeping memory flat.
func (r *backRead) addBad(it badItem) {
	r.bad = append(r.bad, it)
	if len(r.bad) < 2*MaxDamageKept {
		return
	}
	for _, old := range r.bad[:MaxDamageKept] {
		full, early := old.counts()
		r.dropped[0] += full
		r.dropped[1] += early
	}
	r.bad = append(r.bad[:0], r.bad[MaxDamageKept:]...)
}

// counts returns how many damaged items it counts as in a read that reached its base, and in
// one that stopped early (an unreadable item is one generic problem then).
func (it badItem) counts() (full, early int) {
	for _, p := range it.problems {
		if p.Damage() {
			full++
		}
	}
	if it.unreadable {
		return full, 1
	}
	return full, full
}

func (r *backRead) item(off int64, item []byte) bool {
	last := r.first
	r.first = false
	if last {
		r.lastOff = off
		if r.index {
			if entries, problems, _, ok := parse(item, true, r.slow); ok {
				r.last, r.lastBad = entries, problems
				r.prov.CheckAll(r.last)
			}
			for _, e := range r.last {
				if tr := r.trails[e.Tool]; tr != nil && !tr.resolved && anchors(e) {
					tr.resolved, tr.lastAnchor = true, true
					r.left--
				}
			}
			return r.more()
		}
	}
	r.items++
	if !r.clock(off) {
		return false
	}
	if r.index && r.items%1024 == 0 && !r.indexBy.IsZero() && time.Now().After(r.indexBy) {
		// Out of time for the provisional snapshot: answer for the asked-for keys alone; the
		// catch-up builds it.
		r.stopIndex()
		if r.left == 0 {
			r.stopped = true
			return false
		}
	}
	nl := bytes.Count(item, []byte("\n"))
	if k, ok := ledger.ItemTool(item); ok {
		if tr := r.trails[string(k)]; tr == nil && !r.index || tr != nil && tr.done() {
			r.damage.Entries++
			r.lines += nl
			return r.more() // a key not followed: not parsed
		}
	}
	entries, problems, unreadable, ok := parse(item, last, r.slow)
	if !ok {
		if unreadable {
			r.addBad(badItem{problems: problems, unreadable: true, back: r.lines + nl})
		}
		r.lines += nl
		return r.more()
	}
	if len(problems) > 0 {
		// Entries appended as bare indented keys, read as the entries repair splits them into.
		r.addBad(badItem{problems: problems, back: r.lines + nl})
	}
	// Read backwards: a merged item's entries, newest first.
	for i := len(entries) - 1; i >= 0; i-- {
		r.damage.Entries++
		r.add(entries[i])
	}
	r.lines += nl
	return r.more()
}

// add puts e, the newest entry of its key not yet read, on its key's trail.
func (r *backRead) add(e ledger.Entry) {
	tr := r.trails[e.Tool]
	if tr == nil {
		if !r.index {
			return
		}
		if len(r.trails) >= maxIndexKeys {
			r.stopIndex()
			return
		}
		tr = &keyTrail{}
		r.trails[e.Tool] = tr
	}
	if tr.done() {
		return
	}
	if e.Event == ledger.EventBlocked || e.Event == ledger.EventWouldBlock {
		if tr.pending == 0 {
			tr.pendingAt = e.At // read backwards: the first seen is the newest
		}
		tr.pending++
		return
	}
	if e.Provenance != "" {
		r.prov.Check(&e)
	}
	tr.entries = append(tr.entries, e)
	tr.counters = append(tr.counters, tr.pending)
	tr.counterAt = append(tr.counterAt, tr.pendingAt)
	tr.pending, tr.pendingAt = 0, time.Time{}
	if anchors(e) {
		tr.anchored = true
		if tr.own && !tr.resolved {
			tr.resolved = true
			r.left--
		}
		return
	}
	if tr.own {
		return
	}
	r.kept++
	if len(tr.entries) > maxTrail {
		r.kept -= len(tr.entries)
		*tr = keyTrail{given: true}
		if r.given++; r.given > maxUnresolved {
			r.stopIndex()
		}
	}
	if r.kept > maxKept {
		r.stopIndex()
	}
}

// anchors reports whether a backward read of e's key can stop at e: a CLOSED entry that is not a
// counting one fixes the circuit's state, which is replayed from it.
func anchors(e ledger.Entry) bool {
	return e.State == ledger.Closed && e.Event != ledger.EventBlocked && e.Event != ledger.EventWouldBlock
}

// replay puts key's circuit, as its trail says, on b.
func (r *backRead) replay(b *Board, k string, tr *keyTrail) {
	if !tr.anchored {
		// The read reached its base: the key continues from the base's circuit.
		if c := r.base.Board.Get(k); c != nil {
			cc := *c
			cc.Repeats = slices.Clone(c.Repeats)
			b.Circuits[k] = &cc
		}
		replayCounters(b, k, tr.pending, tr.pendingAt)
	}
	for i := len(tr.entries) - 1; i >= 0; i-- {
		b.Apply(tr.entries[i])
		replayCounters(b, k, tr.counters[i], tr.counterAt[i])
	}
}

// damageOf returns the damage the read saw on top of the base's: with absolute line numbers when
// the read reached its base (lines before it: the base's), else without them.
func (r *backRead) damageOf(withLast bool) Damage {
	d := r.damage
	d.Problems = slices.Clone(d.Problems)
	total := r.base.Lines + r.lines
	// In the file's order, so that the problems kept are its first ones, as a forward read keeps.
	for i := len(r.bad) - 1; i >= 0; i-- {
		it := r.bad[i]
		ps := it.problems
		if r.stopped && it.unreadable {
			ps = []ledger.Problem{{Kind: ledger.Invalid, Msg: "an item near the end of the ledger cannot be read"}}
		}
		for _, p := range ps {
			if r.stopped {
				p.Line = 0
			} else {
				p.Line += total - it.back
			}
			d.Add([]ledger.Problem{p}, 0)
		}
	}
	if r.stopped {
		d.Count += r.dropped[1]
	} else {
		d.Count += r.dropped[0]
	}
	if withLast {
		for _, p := range r.lastBad {
			p.Line = 0
			d.Add([]ledger.Problem{p}, 0)
		}
		d.Entries += len(r.last)
	}
	return d
}

// lookup returns a partial board with the circuits of s.Bound.Keys as of the ledger's end: each
// key's state replayed from its last CLOSED entry, found by reading backwards from the end, or
// when the scan reaches base.Offset first, from base's circuit. With an index mode (base must then
// hold every circuit), the read also folds every other key, and when it reaches base.Offset (within
// s.Bound.IndexBy and the bounds on its memory) saves the provisional snapshot.
func (s *Store) lookup(base *snapshot, id ledger.FileID, mode indexMode) (*snapshot, error) {
	r := &backRead{base: base, slow: s.Ledger.Slow, prov: s.Ledger.Provenance, trails: make(map[string]*keyTrail, len(s.Bound.Keys)), index: mode != noIndex,
		free: mode == indexFree, indexBy: s.Bound.IndexBy, first: true, damage: base.Board.Damage,
		stopBy: s.Bound.StopBy, watchAt: time.Now().Add(watchAfter), watchFrom: base.Offset, store: s}
	if s.late {
		r.watchAt = time.Now() // what is left of the budget is short: look from the start at once
	}
	for _, k := range s.Bound.Keys {
		if r.trails[k] == nil {
			r.trails[k] = &keyTrail{own: true}
			r.left++
		}
	}
	if r.free && r.left == 0 {
		r.index = false
	}
	// The identity lets Update reuse this board under the lock when the ledger has not changed.
	snap := &snapshot{Version: snapshotVersion, partial: true, keys: s.Bound.Keys, Offset: id.Size, Dev: id.Dev, Ino: id.Ino,
		MtimeNS: id.MtimeNS, CtimeNS: id.CtimeNS}
	if r.left == 0 && !r.index {
		// No key asked for (SessionStart, the catch-up's steps): nothing to look up.
		snap.keys = nil
		snap.Board = Board{Damage: base.Board.Damage, Partial: true}
		return snap, nil
	}
	scanned, err := s.Ledger.ScanBackAt(base.Offset, r.item)
	r.watch.end()
	if err != nil {
		return nil, err
	}
	b := &snap.Board
	b.Circuits = make(map[string]*Circuit, len(s.Bound.Keys))
	b.Damage = r.damageOf(true)
	b.Partial = true
	var indexed []string // the keys the trip index shows tripped, asked once the read was cut
	asked := false
	for _, k := range s.Bound.Keys {
		tr, from := r.trails[k], 0
		if r.cut && !tr.resolved && len(tr.entries) == 0 {
			// Out of time before any entry of it was read (only blocked calls, perhaps): not
			// known. Its newest entries, had they been read, would say its state (a trail
			// that is not anchored is of a circuit that is not CLOSED, replayed as far as it
			// goes); without them the gate denies it when the ledger was seen to trip it: by
			// the read itself, the look from the start, or the trip index, which finds a trip
			// anywhere in the ledger at the cost of a few small reads, however loaded the machine.
			if !asked {
				indexed, b.IndexNote = s.indexedTrips(s.Bound.Keys)
				asked = true
			}
			b.Undecided = append(b.Undecided, Undecided{Key: k, Tripped: tr.pending > 0 || r.watch.saw(k) || slices.Contains(indexed, k)})
			continue
		}
		if tr.lastAnchor {
			// Anchored by the last item: replayed from its anchor there, the trail unused.
			for i, e := range r.last {
				if e.Tool == k && anchors(e) {
					from = i
				}
			}
		} else {
			r.replay(b, k, tr)
		}
		for _, e := range r.last[from:] {
			if e.Tool == k {
				b.Apply(e)
			}
		}
	}
	if r.index && !r.stopped && r.lastOff > base.Offset {
		s.saveProvisional(r, scanned)
	}
	return snap, nil
}

// saveProvisional writes the board of every key r folded as the provisional snapshot, as of the
// start of the last item of the file r read.
func (s *Store) saveProvisional(r *backRead, scanned ledger.FileID) {
	prov := &snapshot{Version: provisionalVersion, Lines: r.base.Lines + r.lines}
	b := &prov.Board
	b.Circuits = make(map[string]*Circuit, len(r.base.Board.Circuits)+len(r.trails))
	for k, c := range r.base.Board.Circuits {
		if r.trails[k] == nil {
			b.Circuits[k] = c
		}
	}
	for k, tr := range r.trails {
		if tr.given {
			prov.Unresolved = append(prov.Unresolved, k)
			continue
		}
		r.replay(b, k, tr)
	}
	sort.Strings(prov.Unresolved)
	b.Damage = r.damageOf(false)
	// The checksums and identity are those of the file by its path now: when that is not the
	// file read (replaced meanwhile by repair or compact), nothing is saved.
	if s.advance(prov, r.lastOff) != nil || prov.Dev != scanned.Dev || prov.Ino != scanned.Ino {
		return
	}
	prov.EndSize, prov.EndMtimeNS, prov.EndCtimeNS = scanned.Size, scanned.MtimeNS, scanned.CtimeNS
	s.write(s.provisionalPath(), prov)
}

// readProvisional returns the provisional snapshot's header and circuit lines when it can be
// trusted for the ledger whose identity is id and reaches past after; nil otherwise. It is as
// untrusted as state.json (a cloned repository may commit one): read without following a link,
// bounded, its body checksummed, and keyed to the ledger's identity and sample checksums.
func (s *Store) readProvisional(id ledger.FileID, after int64) (*snapshot, []byte) {
	head, body := s.readSnapshotFile(s.provisionalPath(), provisionalVersion)
	if head == nil || head.Dev != id.Dev || head.Ino != id.Ino || head.Offset <= after || head.Offset >= head.EndSize {
		return nil, nil
	}
	switch {
	case id.Size == head.EndSize:
		// Unchanged since it was written, or edited in place: the ctime tells.
		if head.EndMtimeNS == 0 || id.MtimeNS != head.EndMtimeNS || id.CtimeNS != head.EndCtimeNS {
			return nil, nil
		}
	case id.Size < head.EndSize || !s.samplesMatch(head):
		return nil, nil
	}
	return head, body
}

// fromProvisional returns the circuits of s.Bound.Keys from a provisional snapshot, brought up to
// the ledger's end; nil when it cannot answer for them (one it left out). Asked for no key by the
// hook (SessionStart, which lists the circuits that are not CLOSED), it returns every circuit,
// when it left none out and trails by no more than a reader replays.
func (s *Store) fromProvisional(head *snapshot, body []byte, id ledger.FileID, locked bool) (*snapshot, error) {
	keys := s.Bound.Keys
	if len(keys) == 0 {
		if s.Bound.IndexBy.IsZero() || len(head.Unresolved) > 0 || id.Size-head.Offset > boundedLag {
			return nil, nil
		}
		p := decodeSnapshot(head, body)
		if p == nil {
			return nil, nil
		}
		if err := s.stream(p, locked, time.Time{}); err != nil {
			return nil, err
		}
		p.partial = true // never saved as state.json: it does not know every damaged item
		return p, nil
	}
	for _, k := range keys {
		if slices.Contains(head.Unresolved, k) {
			return nil, nil // rare: a trail longer than maxTrail; read backwards
		}
	}
	p := decodeSnapshotKeys(head, body, keys)
	if p == nil {
		return nil, nil
	}
	if id.Size-p.Offset > boundedLag {
		// Far behind (a megabyte appended since): backwards down to it.
		return s.lookup(p, id, noIndex)
	}
	if err := s.stream(p, locked, time.Time{}); err != nil {
		return nil, err
	}
	return p, nil
}

// removeProvisional removes the provisional snapshot once the complete one is saved.
func (s *Store) removeProvisional() { os.Remove(s.provisionalPath()) }
