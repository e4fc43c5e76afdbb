// The trip index: a small append-only file beside the ledger that says where the ledger's
// transitions are (each entry that opens a circuit or closes it), written by every append under
// the ledger's lock. A reader without a snapshot of a huge ledger learns from it, in a read of a
// few kilobytes and one read of the ledger per transition it looks at, that a circuit was tripped,
// where a read of the ledger itself may need the whole file (a trip near its start, with nothing
// after it naming the circuit).
//
// The index is a pointer, never a claim: a record is believed only when the ledger item at its
// offset is, byte for byte, an entry of that key making that transition. So an index planted by a
// cloned repository, left over from a ledger since replaced, cut short or of another version can
// point only at what the ledger itself says: it never lets a call through, and what it says is
// what the item says, with the item's own provenance.

package ledger

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/safefile"
)

// TripIndexName is the trip index's file name in the state directory.
const TripIndexName = "circuit_log.trips"

// tripIndexMagic starts the index's header line; the number after it is the format's version.
const tripIndexMagic = "mcp-circuit-breaker trips 1"

// maxTripIndexBytes bounds the index a reader reads: about 200,000 transitions.
const maxTripIndexBytes = 12 << 20

// maxIndexedItem bounds an item a record may point at: the ledger's items are a few hundred bytes.
const maxIndexedItem = 64 << 10

// maxChecksPerKey bounds how many records of one key a reader checks against the ledger, newest
// first, before it gives up on the index for that key.
const maxChecksPerKey = 8

// Transition kinds of the index's records.
const (
	transOpen  = "open"
	transClose = "close"
)

// transition returns the kind of transition e is ("" for none): an entry that leaves its circuit
// OPEN or HALF-OPEN (a trip, a half-open trial, a failure while open), or one that closes it
// (reset_at set). A counting entry (blocked, would_block) is none: it repeats the state it counts.
func transition(e Entry) string {
	if e.Event == EventBlocked || e.Event == EventWouldBlock {
		return ""
	}
	switch {
	case e.State == Open || e.State == HalfOpen:
		return transOpen
	case e.State == Closed && !e.ResetAt.IsZero():
		return transClose
	}
	return ""
}

// mayTransition is a look at an item's bytes, before any parse, that lets through every item
// transition could call one: appends of the hot path (blocked calls, successes) are not parsed.
func mayTransition(item []byte) bool {
	if bytes.Contains(item, []byte("\n  event: blocked\n")) || bytes.Contains(item, []byte("\n  event: would_block\n")) {
		return false
	}
	return bytes.Contains(item, []byte("\n  state: OPEN\n")) || bytes.Contains(item, []byte("\n  state: HALF-OPEN\n")) ||
		bytes.Contains(item, []byte("\n  reset_at: ")) && !bytes.Contains(item, []byte("\n  reset_at: null\n"))
}

// itemTransition returns the key and transition of one item as Encode writes it ("" when it is
// none, or not one entry in that shape).
func itemTransition(item []byte) (key, kind string) {
	if !mayTransition(item) {
		return "", ""
	}
	k, ok := ItemTool(item)
	if !ok {
		return "", ""
	}
	entries, problems := ReadChunk(item, 1, false, nil)
	if len(entries) != 1 || len(problems) > 0 || entries[0].Tool != string(k) {
		return "", ""
	}
	return string(k), transition(entries[0])
}

// indexRecords returns the index's records of the transitions among the items of buf, which
// starts at the ledger's byte at.
func indexRecords(buf []byte, at int64) []byte {
	var out []byte
	ScanItems(buf, func(off int, item []byte) bool {
		if k, kind := itemTransition(item); kind != "" {
			out = fmt.Appendf(out, "%d %d %s %s\n", at+int64(off), len(item), kind, k)
		}
		return true
	})
	return out
}

func (l *Ledger) tripIndexPath() string { return filepath.Join(l.Dir, TripIndexName) }

// tripIndexHeader is the index's first line for the ledger file id, covering it from byte from.
func tripIndexHeader(id FileID, from int64) []byte {
	return fmt.Appendf(nil, "%s dev=%d ino=%d from=%d\n", tripIndexMagic, id.Dev, id.Ino, from)
}

// parseTripIndexHeader reads a header line; ok is false for another version or another shape.
func parseTripIndexHeader(line []byte) (dev, ino uint64, from int64, ok bool) {
	rest, found := bytes.CutPrefix(line, []byte(tripIndexMagic+" "))
	if !found {
		return 0, 0, 0, false
	}
	n, err := fmt.Sscanf(string(rest), "dev=%d ino=%d from=%d", &dev, &ino, &from)
	return dev, ino, from, err == nil && n == 3 && from >= 0
}

// indexAppend records the transitions among the items of buf, just appended at the ledger's byte
// at; the caller holds the ledger's lock. Nothing here can fail the append: the ledger is the
// truth and the index only a way to find it, so a failed write leaves a reader with what it
// would have had without the index. An index of another ledger file (a copy committed with the
// ledger, one left from before a repair) is started again from at, and so is a missing one; at 0
// (the ledger is new) the index is always started again.
func (l *Ledger) indexAppend(f *os.File, buf []byte, at int64) {
	recs := indexRecords(buf, at)
	if len(recs) == 0 && at > 0 {
		return
	}
	id, err := StatFile(f)
	if err != nil {
		return
	}
	x, err := safefile.OpenRegular(l.tripIndexPath(), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	defer x.Close()
	head := make([]byte, 256)
	n, _ := x.ReadAt(head, 0)
	line, _, whole := bytes.Cut(head[:n], []byte("\n"))
	dev, ino, _, ok := parseTripIndexHeader(line)
	// A new ledger (at 0) starts a new index, even beside one whose header matches: a ledger
	// removed and made again may get the inode of the one before.
	if at == 0 || !whole || !ok || dev != id.Dev || ino != id.Ino {
		if x.Truncate(0) != nil {
			return
		}
		if _, err := x.WriteAt(tripIndexHeader(id, at), 0); err != nil {
			return
		}
	}
	if len(recs) == 0 {
		return
	}
	end, err := x.Seek(0, io.SeekEnd)
	if err != nil {
		return
	}
	// A record cut short by a crash ends without a newline: closed off, so this one is whole.
	var last [1]byte
	if _, err := x.ReadAt(last[:], end-1); err == nil && last[0] != '\n' {
		recs = append([]byte{'\n'}, recs...)
	}
	x.WriteAt(recs, end)
}

// TripIndexState says how far a reader can rely on the trip index, for the notes that name it.
type TripIndexState struct {
	// Usable is false when there is no index, or one of another version, of another ledger file,
	// or too large: it is not read, and a reader reads the ledger as without it.
	Usable bool
	// From is the ledger offset the index covers the ledger from: transitions before it (written
	// by an earlier version) are not in it.
	From int64
	// Why says what is wrong when it is not Usable, or not From 0.
	Why string
}

// Note is the state said to a user when a reader fell back on reading the ledger: "" when the
// index covers the whole ledger.
func (s TripIndexState) Note() string {
	if s.Usable && s.From == 0 {
		return ""
	}
	return "the trip index " + TripIndexName + " " + s.Why + " (mcp-circuit-breaker ledger repair rebuilds it)"
}

// tripRecord is one record of the index.
type tripRecord struct {
	off, n int64
	kind   string
}

// readTripIndex reads the index's records of keys (newest last), checked only for their form.
func (l *Ledger) readTripIndex(id FileID, keys []string) (map[string][]tripRecord, TripIndexState) {
	data, err := safefile.ReadRegular(l.tripIndexPath(), maxTripIndexBytes)
	switch {
	case os.IsNotExist(err):
		return nil, TripIndexState{Why: "is missing"}
	case err != nil:
		return nil, TripIndexState{Why: "cannot be read: " + err.Error()}
	}
	line, body, _ := bytes.Cut(data, []byte("\n"))
	dev, ino, from, ok := parseTripIndexHeader(line)
	switch {
	case !ok:
		return nil, TripIndexState{Why: "is of another version or damaged"}
	case dev != id.Dev || ino != id.Ino:
		return nil, TripIndexState{Why: "belongs to another copy of the ledger (one committed with it, or from before a repair)"}
	}
	st := TripIndexState{Usable: true, From: from}
	if from > 0 {
		st.Why = fmt.Sprintf("covers the ledger from byte %d only (it was started by this version on a ledger written before it)", from)
	}
	recs := make(map[string][]tripRecord, len(keys))
	for len(body) > 0 {
		var rec []byte
		rec, body, _ = bytes.Cut(body, []byte("\n"))
		f := bytes.Fields(rec)
		if len(f) != 4 {
			continue // cut short, or not ours: skipped
		}
		key := string(f[3])
		if !containsString(keys, key) {
			continue
		}
		off, err1 := strconv.ParseInt(string(f[0]), 10, 64)
		n, err2 := strconv.ParseInt(string(f[1]), 10, 64)
		kind := string(f[2])
		if err1 != nil || err2 != nil || off < 0 || n <= 0 || n > maxIndexedItem || kind != transOpen && kind != transClose {
			continue
		}
		recs[key] = append(recs[key], tripRecord{off: off, n: n, kind: kind})
	}
	return recs, st
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// IndexedTrips returns those of keys whose newest transition the trip index points at is an
// entry of the ledger opening that circuit, checked against the ledger item there, and the
// index's state. It is what a reader out of time for a key asks before it calls that key's state
// unknown: the key is known to have been tripped by the ledger. Records whose item does not match
// (stale, planted) are skipped; a close after the newest open says nothing either way (a
// hand-written entry after it may trip it again), so the key is not reported.
func (l *Ledger) IndexedTrips(keys []string) ([]string, TripIndexState) {
	f, err := l.Open()
	if err != nil {
		return nil, TripIndexState{Why: "has no ledger to point at"}
	}
	defer f.Close()
	id, err := StatFile(f)
	if err != nil {
		return nil, TripIndexState{Why: "has no ledger to point at"}
	}
	recs, st := l.readTripIndex(id, keys)
	if !st.Usable {
		return nil, st
	}
	var tripped []string
	for _, k := range keys {
		rs, checked := recs[k], 0
		for i := len(rs) - 1; i >= 0 && checked < maxChecksPerKey; i-- {
			checked++
			if !pointsAt(f, id.Size, rs[i], k) {
				continue
			}
			if rs[i].kind == transOpen {
				tripped = append(tripped, k)
			}
			break
		}
	}
	return tripped, st
}

// pointsAt reports whether the ledger item at r's offset is whole, starts at an item boundary and
// is one entry of key making r's transition.
func pointsAt(f *os.File, size int64, r tripRecord, key string) bool {
	if r.off+r.n > size {
		return false
	}
	buf := make([]byte, r.n+1)
	at, b := r.off, buf
	if r.off > 0 {
		at--
	} else {
		b = buf[1:]
	}
	if _, err := f.ReadAt(b, at); err != nil {
		return false
	}
	if r.off > 0 {
		if b[0] != '\n' {
			return false
		}
		b = b[1:]
	}
	if !bytes.HasSuffix(b, []byte("\n")) || len(b) < 2 || r.off+r.n < size && !nextIsItem(f, r.off+r.n) {
		return false
	}
	k, kind := itemTransition(b)
	return k == key && kind == r.kind
}

// nextIsItem reports whether the ledger's byte at off starts an item ("-"), so that an item
// pointed at is not the head of one longer item whose later lines say otherwise.
func nextIsItem(f *os.File, off int64) bool {
	var c [1]byte
	_, err := f.ReadAt(c[:], off)
	return err == nil && c[0] == '-'
}

// writeTripIndex replaces the trip index with that of data, the whole ledger as just written
// (Replace; the caller holds the lock). On failure the old index is removed: it points into
// another file, and a reader tells that from its header anyway.
func (l *Ledger) writeTripIndex(data []byte) {
	id, err := l.Stat()
	if err == nil {
		err = safefile.WriteFileAtomic(l.tripIndexPath(), append(tripIndexHeader(id, 0), indexRecords(data, 0)...), 0o600)
	}
	if err != nil {
		os.Remove(l.tripIndexPath())
	}
}

// RebuildTripIndex writes the trip index of the whole ledger again (repair, compact, the
// catch-up of a ledger whose index is missing or partial). It reads the ledger without the lock,
// then takes the lock for the items appended meanwhile, so the new index is whole when it replaces
// the old one; without the lock (a timeout) nothing is replaced.
func (l *Ledger) RebuildTripIndex() error {
	if err := safefile.CheckStateDir(l.Dir); err != nil {
		return err
	}
	var recs []byte
	// scan indexes the items from offset from on and returns where the last one starts, which it
	// leaves out: read without the lock, it may be an append in progress.
	scan := func(from int64, locked bool) (int64, error) {
		lastAt, lastRecs := from, len(recs)
		err := l.ScanForward(from, func(off int64, item []byte) bool {
			lastAt, lastRecs = off, len(recs)
			if k, kind := itemTransition(item); kind != "" {
				recs = fmt.Appendf(recs, "%d %d %s %s\n", off, len(item), kind, k)
			}
			return true
		})
		if !locked {
			recs = recs[:lastRecs]
		}
		return lastAt, err
	}
	before, err := l.Stat()
	if err != nil {
		return fmt.Errorf("rebuild trip index: %w", err)
	}
	done, err := scan(0, false)
	if err != nil {
		return fmt.Errorf("rebuild trip index: %w", err)
	}
	unlock, err := l.Lock()
	if err != nil {
		return fmt.Errorf("rebuild trip index: %w", err)
	}
	defer unlock()
	id, err := l.Stat()
	if err != nil {
		return fmt.Errorf("rebuild trip index: %w", err)
	}
	if id.Dev != before.Dev || id.Ino != before.Ino || id.Size < done {
		// Replaced meanwhile (repair, compact): read it all again, under the lock now.
		recs, done = nil, 0
	}
	if _, err := scan(done, true); err != nil {
		return fmt.Errorf("rebuild trip index: %w", err)
	}
	data := append(tripIndexHeader(id, 0), recs...)
	tmp, err := os.CreateTemp(l.Dir, ".trips.*.tmp")
	if err != nil {
		return fmt.Errorf("rebuild trip index: %w", err)
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr != nil || cerr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("rebuild trip index: %w", firstErr(werr, cerr))
	}
	if err := os.Rename(tmp.Name(), l.tripIndexPath()); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("rebuild trip index: %w", err)
	}
	return nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// TripIndex returns the state of the trip index for the ledger as it is now (doctor, the hook's
// notes).
func (l *Ledger) TripIndex() TripIndexState {
	id, err := l.Stat()
	if err != nil || id == (FileID{}) {
		return TripIndexState{Why: "has no ledger to point at"}
	}
	_, st := l.readTripIndex(id, nil)
	return st
}
