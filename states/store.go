// Package store ties the ledger to the circuit board: it keeps the derived snapshot (state.json)
// that makes reading the current state cost the same at 1,000 and 100,000 entries, catches it up
// with entries appended since (by another process or by hand), and runs locked read-decide-append
// updates.
package states

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// SnapshotName is the snapshot's file name in the state directory.
const SnapshotName = "state.json"

const snapshotVersion = 2

// sampleLen is the size of the ledger windows whose checksums a snapshot keeps, to notice a ledger
// edited in place.
const sampleLen = 64

// snapshot is the board as of a byte offset of one version of the ledger file.
type snapshot struct {
	Version int    `json:"version"`
	Dev     uint64 `json:"dev"`
	Ino     uint64 `json:"ino"`
	Offset  int64  `json:"offset"`
	// MtimeNS and CtimeNS are the ledger's modification and status-change times when Offset was
	// its size: when all still hold, nothing needs to be read from the ledger. The ctime is what
	// makes this safe against an edit in place that keeps the size and resets the mtime: every
	// write sets it, and no user call can set it back.
	MtimeNS int64 `json:"mtime_ns"`
	CtimeNS int64 `json:"ctime_ns"`
	// Lines is the number of lines before Offset, so tail problems get absolute line numbers.
	Lines int `json:"lines"`
	// Sums are CRC-32s of the windows at the start, middle and end of [0, Offset).
	Sums  [3]uint32 `json:"sums"`
	Board Board     `json:"board"`
	// unsettled marks a board read while an append held the lock: its last item may be one still
	// being written, so it answers this reader but is never saved.
	unsettled bool
}

// Store is the ledger and snapshot of one state directory.
type Store struct {
	Ledger ledger.Ledger
	// last is the snapshot this process loaded last: an Update right after a View (the gate's
	// deny) reuses it when the ledger has not changed since, instead of reading state.json again.
	last *snapshot
}

// New returns the store of stateDir (DIR/.claude/mcp_circuit); lockWait bounds lock waits.
func NewStore(stateDir string, lockWait time.Duration) *Store {
	return &Store{Ledger: ledger.Ledger{Dir: stateDir, LockWait: lockWait}}
}

func (s *Store) snapshotPath() string { return filepath.Join(s.Ledger.Dir, SnapshotName) }

// View returns the current board without taking the lock. It reads the snapshot and only the ledger
// bytes appended after it; it rebuilds from the whole ledger when the snapshot is missing or the
// ledger was replaced or edited. A ledger that cannot be parsed gives a *ledger.CorruptError.
func (s *Store) View() (*Board, error) {
	snap, lag, err := s.load(false)
	if err != nil {
		return nil, err
	}
	if lag < 0 || lag > maxLag {
		// Saving without the lock is safe: a snapshot is a consistent (offset, board) pair, and an
		// older one is merely caught up again by the next reader.
		s.save(snap)
	}
	return &snap.Board, nil
}

// maxLag is how many ledger bytes a snapshot on disk may trail by before a reader or writer saves
// a new one. A gate that denies a call appends a blocked entry; rewriting the snapshot for each
// would double the cost of a deny, while replaying a few hundred bytes costs a reader microseconds.
const maxLag = 4 << 10

// load returns an up-to-date snapshot and its lag: how many ledger bytes it replayed on top of the
// snapshot on disk, or -1 when it rebuilt from the whole ledger.
// With reuse, the snapshot this process loaded last is taken when the ledger has not changed since
// (Update right after View); View always reads the files, so it also repairs a damaged state.json.
func (s *Store) load(locked bool) (*snapshot, int64, error) {
	snap, lag, err := s.loadFresh(locked)
	if err == nil {
		s.last = snap
	}
	return snap, lag, err
}

// current reports whether snap holds the whole ledger whose identity is id: same file, same size,
// same times.
func (snap *snapshot) current(id ledger.FileID) bool {
	return snap.Dev == id.Dev && snap.Ino == id.Ino && snap.Offset == id.Size &&
		snap.MtimeNS == id.MtimeNS && snap.CtimeNS == id.CtimeNS && snap.MtimeNS != 0
}

func (s *Store) loadFresh(locked bool) (*snapshot, int64, error) {
	id, err := s.Ledger.Stat()
	if err != nil {
		return nil, 0, err
	}
	if id == (ledger.FileID{}) {
		return &snapshot{Version: snapshotVersion}, 0, nil
	}
	if l := s.last; locked && l != nil && l.current(id) {
		return l, 0, nil
	}
	snap := s.readSnapshot()
	if snap != nil && snap.Dev == id.Dev && snap.Ino == id.Ino {
		if snap.current(id) {
			return snap, 0, nil
		}
		// Same size but other times: the bytes were rewritten in place, so only a rebuild is
		// safe. A longer file had entries appended: replay them when the samples still match.
		if id.Size > snap.Offset && s.samplesMatch(snap) {
			from := snap.Offset
			if err := s.catchUp(snap, locked); err != nil {
				return nil, 0, err
			}
			return snap, snap.Offset - from, nil
		}
	}
	snap, err = s.rebuild(locked)
	return snap, -1, err
}

// read returns the ledger's bytes from offset: all of them under the lock, else only the items an
// append in progress cannot still be writing (ledger.ReadSettled).
// When the read may end in an append in progress, snap is marked unsettled, so it is not saved.
func (s *Store) read(snap *snapshot, offset int64, locked bool) ([]byte, error) {
	if locked {
		data, _, err := s.Ledger.ReadTail(offset)
		return data, err
	}
	data, _, settled, err := s.Ledger.ReadSettled(offset)
	if !settled {
		snap.unsettled = true
	}
	return data, err
}

// countersOnly reports whether entries only count calls (blocked, would_block): they change no
// circuit's state, so the snapshot may lag behind them.
func countersOnly(entries []ledger.Entry) bool {
	for _, e := range entries {
		if e.Event != ledger.EventBlocked && e.Event != ledger.EventWouldBlock {
			return false
		}
	}
	return true
}

func (s *Store) readSnapshot() *snapshot {
	data, err := os.ReadFile(s.snapshotPath())
	if err != nil {
		return nil
	}
	var snap snapshot
	if json.Unmarshal(data, &snap) != nil || snap.Version != snapshotVersion {
		return nil
	}
	return &snap
}

// windows returns the three sample windows of [0, off).
func windows(off int64) [3][2]int64 {
	w := func(start int64) [2]int64 {
		if start < 0 {
			start = 0
		}
		end := start + sampleLen
		if end > off {
			end = off
		}
		return [2]int64{start, end}
	}
	return [3][2]int64{w(0), w(off/2 - sampleLen/2), w(off - sampleLen)}
}

func (s *Store) samplesMatch(snap *snapshot) bool {
	f, err := os.Open(s.Ledger.Path())
	if err != nil {
		return false
	}
	defer f.Close()
	buf := make([]byte, sampleLen)
	for i, w := range windows(snap.Offset) {
		b := buf[:w[1]-w[0]]
		if _, err := f.ReadAt(b, w[0]); err != nil && len(b) > 0 {
			return false
		}
		if crc32.ChecksumIEEE(b) != snap.Sums[i] {
			return false
		}
	}
	return true
}

// catchUp applies the entries appended after snap.Offset.
func (s *Store) catchUp(snap *snapshot, locked bool) error {
	tail, err := s.read(snap, snap.Offset, locked)
	if err != nil {
		return err
	}
	entries, problems := ledger.Parse(tail, snap.Lines+1)
	if len(problems) > 0 {
		return &ledger.CorruptError{Path: s.Ledger.Path(), Problems: problems}
	}
	snap.Board.Replay(entries)
	snap.Lines += bytes.Count(tail, []byte("\n"))
	return s.advance(snap, snap.Offset+int64(len(tail)))
}

// rebuild replays the whole ledger.
func (s *Store) rebuild(locked bool) (*snapshot, error) {
	snap := &snapshot{Version: snapshotVersion}
	data, err := s.read(snap, 0, locked)
	if err != nil {
		return nil, err
	}
	entries, problems := ledger.Parse(data, 1)
	if len(problems) > 0 {
		return nil, &ledger.CorruptError{Path: s.Ledger.Path(), Problems: problems}
	}
	snap.Lines = bytes.Count(data, []byte("\n"))
	snap.Board.Replay(entries)
	if err := s.advance(snap, int64(len(data))); err != nil {
		return nil, err
	}
	return snap, nil
}

// save writes the snapshot atomically, leaving out idle circuits (they equal no circuit at all).
// Errors are ignored: the snapshot is derived and rebuilt when missing.
func (s *Store) save(snap *snapshot) {
	if snap.unsettled {
		return
	}
	for k, c := range snap.Board.Circuits {
		if c.Idle() {
			delete(snap.Board.Circuits, k)
		}
	}
	data, err := json.Marshal(snap)
	if err != nil {
		return
	}
	tmp, err := os.CreateTemp(s.Ledger.Dir, ".state.*.tmp")
	if err != nil {
		return
	}
	// No fsync: after a crash a torn snapshot fails to parse and is rebuilt from the ledger.
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), s.snapshotPath()) != nil {
		os.Remove(tmp.Name())
	}
}

// Update takes the ledger lock, brings the board up to date, asks decide for entries, appends them
// in one fsynced write and applies them. decide must be quick: the lock is held while it runs.
// It returns the board after the entries.
func (s *Store) Update(decide func(b *Board) ([]ledger.Entry, error)) (*Board, error) {
	unlock, err := s.Ledger.Lock()
	if err != nil {
		return nil, err
	}
	defer unlock()
	snap, lag, err := s.load(true)
	if err != nil {
		return nil, err
	}
	entries, err := decide(&snap.Board)
	if err != nil || len(entries) == 0 {
		if lag < 0 || lag > maxLag {
			s.save(snap)
		}
		return &snap.Board, err
	}
	var buf []byte
	for _, e := range entries {
		buf = ledger.AppendEncoded(buf, e)
	}
	before, after, err := s.Ledger.AppendRaw(buf)
	if err != nil {
		return nil, err
	}
	if before != snap.Offset {
		// The file changed between load and append (only a hand edit can do that: we hold the
		// lock); replay from where the snapshot was rather than guess.
		if err := s.catchUp(snap, true); err != nil {
			return nil, err
		}
		s.save(snap)
		return &snap.Board, nil
	}
	snap.Board.Replay(entries)
	if lag >= 0 && lag+int64(len(buf)) <= maxLag && countersOnly(entries) {
		// The snapshot on disk stays valid; readers replay these few bytes.
		return &snap.Board, nil
	}
	snap.Lines += bytes.Count(buf, []byte("\n"))
	if err := s.advance(snap, after); err != nil {
		return nil, err
	}
	s.save(snap)
	return &snap.Board, nil
}

// advance moves snap's offset to after, whose bytes snap.Board already holds, and records the
// checksums and file identity that let the next reader trust it.
func (s *Store) advance(snap *snapshot, after int64) error {
	f, err := os.Open(s.Ledger.Path())
	if errors.Is(err, os.ErrNotExist) && after == 0 {
		*snap = snapshot{Version: snapshotVersion, Board: snap.Board}
		return nil
	}
	if err != nil {
		return fmt.Errorf("open ledger: %w", err)
	}
	defer f.Close()
	buf := make([]byte, sampleLen)
	for i, w := range windows(after) {
		b := buf[:w[1]-w[0]]
		if _, err := f.ReadAt(b, w[0]); err != nil && len(b) > 0 {
			return fmt.Errorf("read ledger: %w", err)
		}
		snap.Sums[i] = crc32.ChecksumIEEE(b)
	}
	id, err := ledger.StatFile(f)
	if err != nil {
		return err
	}
	snap.Offset = after
	snap.MtimeNS, snap.CtimeNS = 0, 0
	if id.Size == after {
		snap.MtimeNS, snap.CtimeNS = id.MtimeNS, id.CtimeNS
	}
	snap.Dev, snap.Ino = id.Dev, id.Ino
	return nil
}

// Invalidate removes the snapshot, after the ledger was rewritten by repair or compact.
func (s *Store) Invalidate() {
	os.Remove(s.snapshotPath())
}
