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
	"syscall"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// SnapshotName is the snapshot's file name in the state directory.
const SnapshotName = "state.json"

const snapshotVersion = 1

// sampleLen is the size of the ledger windows whose checksums a snapshot keeps, to notice a ledger
// edited in place.
const sampleLen = 64

// snapshot is the board as of a byte offset of one version of the ledger file.
type snapshot struct {
	Version int    `json:"version"`
	Dev     uint64 `json:"dev"`
	Ino     uint64 `json:"ino"`
	Offset  int64  `json:"offset"`
	// MtimeNS is the ledger's modification time when Offset was its size: when both still hold,
	// nothing needs to be read from the ledger.
	MtimeNS int64 `json:"mtime_ns"`
	// Lines is the number of lines before Offset, so tail problems get absolute line numbers.
	Lines int `json:"lines"`
	// Sums are CRC-32s of the windows at the start, middle and end of [0, Offset).
	Sums  [3]uint32 `json:"sums"`
	Board Board     `json:"board"`
}

// Store is the ledger and snapshot of one state directory.
type Store struct {
	Ledger ledger.Ledger
	// last is the snapshot this process loaded last: an Update right after a View (the gate's
	// deny) reuses it when the ledger has not changed since, instead of reading state.json again.
	last *snapshot
	// Shared, when set, is a board other sessions share (the fleet board of internal/fleet): View
	// overlays its circuits and Update decides through it. Nil is this project's ledger alone.
	Shared Shared
}

// Shared is a view of some circuits that other sessions share and that decisions must agree
// with. It is set per call (the keys of one tool call), so the store's callers need not know it.
type Shared interface {
	// Overlay returns local with the shared circuits laid over it; local itself on any problem
	// (the shared board being away never stops a local decision).
	Overlay(local *Board) *Board
	// Update runs decide on the shared circuits and records the outcome with local, which is the
	// store's own locked update.
	Update(decide func(*Board) ([]ledger.Entry, error), local func(func(*Board) ([]ledger.Entry, error)) (*Board, error)) (*Board, error)
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
	b, err := s.view()
	if err != nil || s.Shared == nil {
		return b, err
	}
	return s.Shared.Overlay(b), nil
}

func (s *Store) view() (*Board, error) {
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
func (s *Store) load(reuse bool) (*snapshot, int64, error) {
	snap, lag, err := s.loadFresh(reuse)
	if err == nil {
		s.last = snap
	}
	return snap, lag, err
}

func (s *Store) loadFresh(reuse bool) (*snapshot, int64, error) {
	if err := ledger.CheckStateDir(s.Ledger.Dir); err != nil {
		return nil, 0, err
	}
	fi, err := ledger.LstatRegular(s.Ledger.Path())
	if errors.Is(err, os.ErrNotExist) {
		return &snapshot{Version: snapshotVersion}, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("stat ledger: %w", err)
	}
	st, _ := fi.Sys().(*syscall.Stat_t)
	if l := s.last; reuse && l != nil && st != nil && l.Dev == uint64(st.Dev) && l.Ino == st.Ino &&
		fi.Size() == l.Offset && fi.ModTime().UnixNano() == l.MtimeNS && l.MtimeNS != 0 {
		return l, 0, nil
	}
	snap, err := s.readSnapshot()
	if err != nil {
		return nil, 0, err
	}
	if snap != nil && st != nil && snap.Dev == uint64(st.Dev) && snap.Ino == st.Ino {
		if fi.Size() == snap.Offset && fi.ModTime().UnixNano() == snap.MtimeNS {
			return snap, 0, nil
		}
		// The same size with another modification time is an edit in place, not an append: the
		// sample windows may miss it, so read the whole ledger, as ledger verify does, and name
		// the same damage on the same line.
		editedInPlace := fi.Size() == snap.Offset && snap.MtimeNS != 0
		if !editedInPlace && fi.Size() >= snap.Offset && s.samplesMatch(snap) {
			from := snap.Offset
			if err := s.catchUp(snap); err != nil {
				return nil, 0, err
			}
			return snap, snap.Offset - from, nil
		}
	}
	snap, err = s.rebuild()
	return snap, -1, err
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

// readSnapshot reads state.json; a missing, unreadable or outdated one is nil (it is rebuilt). It
// is read without following a link or blocking on a FIFO, and one that is not a regular file is
// ignored like a damaged one: the snapshot is derived, and save replaces the entry itself by
// rename (never writing through it). doctor still fails on it.
func (s *Store) readSnapshot() (*snapshot, error) {
	data, err := ledger.ReadRegular(s.snapshotPath(), ledger.MaxStateBytes)
	if err != nil {
		return nil, nil
	}
	var snap snapshot
	if json.Unmarshal(data, &snap) != nil || snap.Version != snapshotVersion {
		return nil, nil
	}
	return &snap, nil
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
	f, err := s.Ledger.Open()
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

func sums(data []byte, off int64) [3]uint32 {
	var out [3]uint32
	for i, w := range windows(off) {
		out[i] = crc32.ChecksumIEEE(data[w[0]:w[1]])
	}
	return out
}

// catchUp applies the entries appended after snap.Offset.
func (s *Store) catchUp(snap *snapshot) error {
	tail, _, err := s.Ledger.ReadTail(snap.Offset)
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
func (s *Store) rebuild() (*snapshot, error) {
	f, err := s.Ledger.Open()
	if errors.Is(err, os.ErrNotExist) {
		return &snapshot{Version: snapshotVersion}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open ledger: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat ledger: %w", err)
	}
	if fi.Size() > ledger.MaxLedgerBytes {
		return nil, &ledger.UnsafeFileError{Path: s.Ledger.Path(), What: fmt.Sprintf("larger than %d MiB (run ledger compact)", ledger.MaxLedgerBytes>>20), Err: ledger.ErrTooLarge}
	}
	data := make([]byte, fi.Size())
	if _, err := f.ReadAt(data, 0); err != nil && len(data) > 0 {
		return nil, fmt.Errorf("read ledger: %w", err)
	}
	entries, problems := ledger.Parse(data, 1)
	if len(problems) > 0 {
		return nil, &ledger.CorruptError{Path: s.Ledger.Path(), Problems: problems}
	}
	snap := &snapshot{Version: snapshotVersion, Offset: int64(len(data)), Lines: bytes.Count(data, []byte("\n")),
		Sums: sums(data, int64(len(data))), MtimeNS: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		snap.Dev, snap.Ino = uint64(st.Dev), st.Ino
	}
	snap.Board.Replay(entries)
	return snap, nil
}

// save writes the snapshot atomically, leaving out idle circuits (they equal no circuit at all).
// Errors are ignored: the snapshot is derived and rebuilt when missing.
func (s *Store) save(snap *snapshot) {
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
// It returns the board after the entries. With Shared set, the decision goes through it.
func (s *Store) Update(decide func(b *Board) ([]ledger.Entry, error)) (*Board, error) {
	if s.Shared != nil {
		return s.Shared.Update(decide, s.update)
	}
	return s.update(decide)
}

func (s *Store) update(decide func(b *Board) ([]ledger.Entry, error)) (*Board, error) {
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
		if err := s.catchUp(snap); err != nil {
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
	f, err := s.Ledger.Open()
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
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("stat ledger: %w", err)
	}
	snap.Offset = after
	snap.MtimeNS = 0
	if fi.Size() == after {
		snap.MtimeNS = fi.ModTime().UnixNano()
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		snap.Dev, snap.Ino = uint64(st.Dev), st.Ino
	}
	return nil
}

// Invalidate removes the snapshot, after the ledger was rewritten by repair or compact.
func (s *Store) Invalidate() {
	os.Remove(s.snapshotPath())
}
