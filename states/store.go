// The store ties the ledger to the circuit board: it keeps the derived snapshot (state.json)
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
	"slices"
	"sync"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/filelock"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/safefile"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// SnapshotName is the snapshot's file name in the state directory.
const SnapshotName = "state.json"

// snapshotVersion 5: circuits carry Unverified; a snapshot of an earlier version would take every
// circuit for verified, so it is rebuilt.
const snapshotVersion = 5

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
	Sums [3]uint32 `json:"sums"`
	// BodyLen and BodyCRC cover the circuit lines after the header line, so that a snapshot cut
	// short at a line boundary is not taken for one with fewer circuits.
	BodyLen int    `json:"body_len"`
	BodyCRC uint32 `json:"body_crc"`
	Board   Board  `json:"board,omitzero"`
	// Runs are Board.Runs, in the header: a reader of a few circuits has them without reading
	// the others.
	Runs map[string]*Run `json:"runs,omitempty"`
	// Damage is the board's Damage as saved: the items left out of [0, Offset) stay reported
	// while they remain, whichever reader comes next.
	Damage Damage `json:"damage,omitzero"`
	// Unresolved, in a provisional snapshot only, are the circuits its backward read did not
	// fold (a trail longer than maxTrail): a reader of one of them reads the ledger backwards.
	Unresolved []string `json:"unresolved,omitempty"`
	// EndSize, EndMtimeNS and EndCtimeNS, in a provisional snapshot only, are the ledger's size
	// and times when its backward read started. Its Offset is the start of the last item, which
	// it leaves out, so the size alone cannot tell an append from an edit in place: while the
	// ledger still has that size, the times must still hold.
	EndSize    int64 `json:"end_size,omitempty"`
	EndMtimeNS int64 `json:"end_mtime_ns,omitempty"`
	EndCtimeNS int64 `json:"end_ctime_ns,omitempty"`
	// unsettled marks a board read while an append held the lock: its last item may be one still
	// being written, so it answers this reader but is never saved.
	unsettled bool
	// partial marks a board that holds only the circuits a Bound asked for: never saved.
	partial bool
	// midLine marks a board read to a ledger end that is not a line end (a hand edit without the
	// final newline, a write cut short): the next append closes that line off, so the board is
	// not saved as of an offset inside it.
	midLine bool
	// keys are those circuits; entries of other keys are not applied to a partial board.
	keys []string
}

// Store is the ledger and snapshot of one state directory.
type Store struct {
	Ledger ledger.Ledger
	// Bound, when set, bounds what reading the board costs when there is no usable snapshot: the
	// hook decides on the circuits of Bound.Keys only.
	Bound *Bound
	// caughtUp is set once Bound.CatchUp was asked for.
	caughtUp bool
	// late is set while a read that waited in vain for the provisional snapshot looks for its own
	// keys: it looks for their trips from the ledger's start at once (tripWatch).
	late bool
	// last is the snapshot this process loaded last: an Update right after a View (the gate's
	// deny) reuses it when the ledger has not changed since, instead of reading state.json again.
	last *snapshot
	// Shared, when set, is a board other sessions share (the fleet board of internal/fleet): View
	// overlays its circuits and Update decides through it. Nil is this project's ledger alone.
	Shared Shared
	// Damaged, when set, is told after View and Update when the board was read without some
	// damaged items (a command warns its user; the hook says it in its answer).
	Damaged func(path string, d Damage)
}

func (s *Store) tell(b *Board) {
	if b != nil && b.Damage.Count > 0 && s.Damaged != nil {
		s.Damaged(s.Ledger.Path(), b.Damage)
	}
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

// Bound is what a caller with a deadline (the hook) needs from the board.
//
// Without a usable snapshot (missing, or trailing the ledger by more than boundedLag) a bounded
// read finds the circuits of Keys by reading the ledger backwards from its end, where the newest
// entries are, back to each key's last CLOSED entry (from which its state is replayed exactly), so
// its cost is what was written since, and its memory grows with the circuits, not the entries.
// Until Deadline it then streams the ledger forwards from the snapshot (or its start), and saves
// the snapshot as far as it got: every call makes progress, and once it reaches the end later calls
// are fast again.
type Bound struct {
	Keys     []string
	Deadline time.Time
	// CatchUp, when set, is called instead of streaming forwards until Deadline (at most once per
	// Store, and not while another process is catching up): it starts a process that brings the
	// whole snapshot up to date (CatchUpSnapshot), so that this call answers from its backward
	// read at once and the next calls find the snapshot complete.
	CatchUp func()
	// IndexBy, when set, lets a backward read made without a usable provisional snapshot read
	// on to the ledger's start until then, folding every circuit it meets, and save them as the
	// provisional snapshot (state.provisional.json), so that the calls made while the catch-up
	// still runs decode their circuits from it instead of reading the ledger again. Past IndexBy
	// it answers for Keys alone, as without it. With no Keys (SessionStart), a provisional
	// snapshot that holds every circuit answers with all of them.
	IndexBy time.Time
	// StopBy, when set, is when a backward read gives up on the asked-for keys it has not found
	// yet, so that the caller still has time to answer: those are left Undecided on the board,
	// each marked Tripped when the ledger was seen to open it. While a read runs long, a second
	// reader looks at the ledger from its start for such trips (the costliest case for a
	// backward read is a trip near the start, with nothing after it).
	StopBy time.Time
}

// boundedLag is the lag up to which a bounded read still catches up the whole snapshot.
const boundedLag = 1 << 20

// New returns the store of stateDir (DIR/.claude/mcp_circuit); lockWait bounds lock waits.
// It has no provenance: it signs nothing it appends and every entry it reads is unverified, until a
// caller sets the user's (project.Store does), so a store left without one fails safe.
func NewStore(stateDir string, lockWait time.Duration) *Store {
	return &Store{Ledger: ledger.Ledger{Dir: stateDir, LockWait: lockWait}}
}

func (s *Store) snapshotPath() string { return filepath.Join(s.Ledger.Dir, SnapshotName) }

// View returns the current board without taking the lock. It reads the snapshot and only the ledger
// bytes appended after it; it rebuilds from the whole ledger when the snapshot is missing or the
// ledger was replaced or edited. Items that cannot be read are left out, each on its own, and said
// in the board's Damage; every other item counts.
func (s *Store) View() (*Board, error) {
	b, err := s.view()
	s.tell(b)
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
	if err := s.unreadable(&snap.Board); err != nil {
		return nil, err
	}
	if lag < 0 || lag > maxLag {
		// Saving without the lock is safe: a snapshot is a consistent (offset, board) pair, and an
		// older one is merely caught up again by the next reader.
		s.save(snap)
	}
	return &snap.Board, nil
}

// unreadable fails with a *ledger.CorruptError when not one entry of the ledger could be read:
// then nothing is known (the gate follows on_error) and nothing is appended to text that is not a
// ledger. A damaged item among readable ones is no error: it is left out and said (Board.Damage).
func (s *Store) unreadable(b *Board) error {
	if !b.Damage.Unreadable() {
		return nil
	}
	return &ledger.CorruptError{Path: s.Ledger.Path(), Problems: b.Damage.Problems, Total: b.Damage.Count}
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
	// state.json is read once: the bounded decode of two keys and the full one both come from it.
	head, body := s.readSnapshotFile(s.snapshotPath(), snapshotVersion)
	var snap *snapshot
	if s.Bound != nil && len(s.Bound.Keys) > 0 {
		// Only the asked-for circuits are decoded, while the snapshot is current or trails by
		// no more than a reader replays anyway (maxLag); past that it is caught up whole and
		// saved below.
		snap = decodeSnapshotKeys(head, body, s.Bound.Keys)
		if snap != nil && snap.Dev == id.Dev && snap.Ino == id.Ino {
			if snap.current(id) {
				return snap, 0, nil
			}
			if id.Size > snap.Offset && id.Size-snap.Offset <= maxLag && s.samplesMatch(snap) {
				if err := s.stream(snap, locked, time.Time{}); err != nil {
					return nil, 0, err
				}
				return snap, 0, nil
			}
		}
	}
	snap = decodeSnapshot(head, body)
	valid := false
	if snap != nil && snap.Dev == id.Dev && snap.Ino == id.Ino {
		if snap.current(id) {
			return snap, 0, nil
		}
		// Same size but other times: the bytes were rewritten in place, so only a rebuild is
		// safe. A longer file had entries appended: replay them when the samples still match.
		valid = id.Size > snap.Offset && s.samplesMatch(snap)
	}
	if !valid {
		snap = &snapshot{Version: snapshotVersion}
	}
	if s.Bound != nil && id.Size-snap.Offset > boundedLag {
		// Asked once per call: a first look creates the catch-up's lock file, and a second
		// would take that for a catch-up started moments ago.
		startCatchUp := !locked && s.Bound.CatchUp != nil && !s.caughtUp
		running := startCatchUp && s.catchingUp()
		var b *snapshot
		phead, pbody := s.readProvisional(id, snap.Offset)
		waited, asked := false, false
		if phead == nil && startCatchUp && !s.Bound.StopBy.IsZero() {
			// The detached catch-up reads the whole ledger for the provisional snapshot first, at
			// full priority, and saves it; this call (and every other call made meanwhile, all
			// at once perhaps) sleeps until it is there, rather than each reading the whole
			// ledger on the same cores and none finishing within its budget.
			var started time.Time
			if !running {
				s.caughtUp, asked = true, true
				s.Bound.CatchUp()
				started = time.Now()
			}
			var late bool
			phead, pbody, late = s.awaitProvisional(id, snap.Offset, started)
			// Nobody builds it (a catch-up that did not start, or could not save one): this
			// call does, as without a catch-up. Out of time: its own keys only.
			waited = late
		}
		if phead != nil {
			if b, err = s.fromProvisional(phead, pbody, id, locked); err != nil {
				return nil, 0, err
			}
		}
		if b == nil {
			// Without a usable provisional snapshot, a reader asked to (the hook) reads on to
			// the base and writes one; under the lock, which others wait for, only when its own
			// keys need the whole read anyway. While a catch-up runs, it writes the provisional
			// snapshot if the hook that started it could not: the calls made meanwhile do not
			// each read the whole ledger.
			mode := noIndex
			switch {
			case phead != nil || s.Bound.IndexBy.IsZero() || running || waited:
			case locked:
				mode = indexFree
			default:
				mode = indexFull
			}
			if mode == indexFull {
				// Without a detached catch-up, one process at a time reads the whole ledger for
				// it; the others sleep until it is saved, then read it.
				var release func()
				phead, pbody, release = s.shareProvisional(id, snap.Offset)
				switch {
				case phead != nil:
					if b, err = s.fromProvisional(phead, pbody, id, locked); err != nil {
						return nil, 0, err
					}
				case release == nil:
					mode = noIndex // waited in vain: this call's own keys only
				default:
					defer release()
				}
			}
			if b == nil {
				s.late = waited
				b, err = s.lookup(snap, id, mode)
				s.late = false
				if err != nil {
					return nil, 0, err
				}
			}
		}
		if !locked && s.Bound.CatchUp != nil {
			if startCatchUp && !running && !asked {
				s.caughtUp = true
				s.Bound.CatchUp()
			}
		} else if !locked && time.Now().Before(s.Bound.Deadline) {
			// Progress on the full snapshot, saved as far as it gets; never under the lock,
			// which other callers wait for.
			if err := s.stream(snap, locked, s.Bound.Deadline); err != nil {
				return nil, 0, err
			}
			s.save(snap)
			if snap.Offset >= id.Size {
				// The whole ledger was read: its damage report has line numbers.
				b.Board.Damage = snap.Board.Damage
			}
		}
		return b, -1, nil
	}
	from := snap.Offset
	if err := s.stream(snap, locked, time.Time{}); err != nil {
		return nil, 0, err
	}
	if !valid {
		return snap, -1, nil
	}
	return snap, snap.Offset - from, nil
}

// provisionalLockName is the lock file a hook holds while it reads the whole ledger for the
// provisional snapshot (shareProvisional).
const provisionalLockName = ".state.provisional.lock"

// ownReadShare is what a hook that waited for another's provisional snapshot keeps of its budget
// (before Bound.StopBy) to read its own keys when that did not come.
const ownReadShare = 300 * time.Millisecond

// shareProvisional decides who reads the whole ledger for the provisional snapshot. The process
// that takes provisionalLockName does (release is its unlock). Another sleeps until that one is
// done, at most until ownReadShare before Bound.StopBy, and returns the provisional snapshot it
// saved (head not nil), or nothing (release nil: read only the keys asked for). Without a
// deadline (the catch-up), or without flock, the caller reads as if alone.
func (s *Store) shareProvisional(id ledger.FileID, after int64) (head *snapshot, body []byte, release func()) {
	none := func() {}
	if s.Bound.StopBy.IsZero() {
		return nil, nil, none
	}
	name := filepath.Join(s.Ledger.Dir, provisionalLockName)
	unlock, ok, err := filelock.TryExclusive(name)
	switch {
	case err != nil:
		return nil, nil, none
	case ok:
		return nil, nil, unlock
	}
	wait := time.Until(s.Bound.StopBy.Add(-ownReadShare))
	if wait <= 0 {
		return nil, nil, nil
	}
	done, err := filelock.Shared(name, wait)
	if err != nil {
		return nil, nil, nil
	}
	done()
	head, body = s.readProvisional(id, after)
	return head, body, nil
}

// catchUpStartGrace is how long a call that started the catch-up waits for it to take
// provisionalLockName before it takes the lock's being free for "no provisional snapshot comes".
const catchUpStartGrace = 250 * time.Millisecond

// provisionalPoll is how often a call waiting for the provisional snapshot looks for it.
const provisionalPoll = 10 * time.Millisecond

// awaitProvisional waits for the provisional snapshot the catch-up is building (it holds
// provisionalLockName meanwhile), at most until ownReadShare before Bound.StopBy; started is when
// this call started the catch-up (zero: another had). It returns the snapshot once it can be
// trusted for the ledger id beyond after, or nil when it does not come: nobody builds it, or not
// in time (late).
func (s *Store) awaitProvisional(id ledger.FileID, after int64, started time.Time) (head *snapshot, body []byte, late bool) {
	until := s.Bound.StopBy.Add(-ownReadShare)
	lock := filepath.Join(s.Ledger.Dir, provisionalLockName)
	if fi, err := os.Lstat(filepath.Join(s.Ledger.Dir, catchUpLockName)); started.IsZero() && err == nil && time.Since(fi.ModTime()) < catchUpRetry {
		// Started by another call (which made the lock file just before): it may not have
		// taken the provisional snapshot's lock yet.
		started = fi.ModTime()
	}
	var seen time.Time
	for {
		// Read only a file that is new since the last look: a provisional snapshot of many
		// circuits is megabytes.
		if fi, err := os.Lstat(s.provisionalPath()); err == nil && !fi.ModTime().Equal(seen) {
			seen = fi.ModTime()
			if head, body := s.readProvisional(id, after); head != nil {
				return head, body, false
			}
		}
		now := time.Now()
		if now.After(until) {
			return nil, nil, true
		}
		if !held(lock) && (started.IsZero() || now.Sub(started) > catchUpStartGrace) {
			return nil, nil, false
		}
		time.Sleep(provisionalPoll)
	}
}

// held reports whether another process holds the lock file name.
func held(name string) bool {
	unlock, ok, err := filelock.TryExclusive(name)
	if err != nil {
		return false
	}
	if ok {
		unlock()
	}
	return !ok
}

// catchUpLockName is the lock file CatchUpSnapshot holds while it runs.
const catchUpLockName = ".state.catchup.lock"

// catchUpRetry is how soon after a catch-up started another may be started: a catch-up whose
// snapshot could not be saved (a read-only directory, appends at the end all along) must not make
// every hook call start another full read.
const catchUpRetry = 30 * time.Second

// catchingUp reports whether another process runs CatchUpSnapshot for this state directory now,
// or started one less than catchUpRetry ago.
func (s *Store) catchingUp() bool {
	name := filepath.Join(s.Ledger.Dir, catchUpLockName)
	if fi, err := os.Lstat(name); err == nil && time.Since(fi.ModTime()) < catchUpRetry {
		return true
	}
	unlock, ok, err := filelock.TryExclusive(name)
	if err != nil || !ok {
		return err == nil
	}
	unlock()
	return false
}

// CatchUpSnapshot reads the whole ledger and saves the complete snapshot, unless another process
// is doing so already (then it returns at once, ran false). It is what a hook starts, detached,
// when it finds the snapshot missing or far behind a large ledger (Bound.CatchUp): the reading
// takes seconds on a million entries, which no single hook call may spend. An append in progress
// at the very end leaves a read unsettled, and an unsettled read is never saved: it tries again.
//
// It first brings the provisional snapshot, holding provisionalLockName meanwhile (the calls made
// then wait for it), then calls demote (when set: the process lowers its own priority) and reads
// forwards: the calls made from then on answer from the provisional snapshot.
func (s *Store) CatchUpSnapshot(demote func()) (ran bool, err error) {
	if err := safefile.CheckStateDir(s.Ledger.Dir); err != nil {
		return false, err
	}
	// The provisional snapshot's lock before the catch-up's: a call that sees the catch-up
	// running and this lock free knows no provisional snapshot is coming.
	provUnlock, err := filelock.Exclusive(filepath.Join(s.Ledger.Dir, provisionalLockName), filelock.Options{Wait: time.Second})
	if err != nil {
		provUnlock = func() {}
	}
	var provOnce sync.Once
	provDone := func() { provOnce.Do(provUnlock) }
	defer provDone()
	name := filepath.Join(s.Ledger.Dir, catchUpLockName)
	unlock, ok, err := filelock.TryExclusive(name)
	if err != nil || !ok {
		return false, err
	}
	defer unlock()
	now := time.Now()
	os.Chtimes(name, now, now) // when this catch-up started (catchingUp)
	bound := s.Bound
	s.Bound = nil
	defer func() { s.Bound = bound }()
	// A ledger that ends inside a line (a hand edit without the final newline) gives reads that
	// are never saved; close the line off first, under the lock, as the next append would. The
	// lock only then: this process runs at a low priority (DetachedCatchUp), and a hook's append
	// waiting for a lock it holds would wait for it to be scheduled.
	if inside, err := s.Ledger.EndsInsideLine(); err != nil {
		return true, err
	} else if inside {
		if unlock, err := s.Ledger.Lock(); err == nil {
			_, err = s.Ledger.Seal()
			unlock()
			if err != nil {
				return true, err
			}
		}
	}
	// First the provisional snapshot, when the hook that started this could not write one (out
	// of time, or under the lock): one backward read, so that the calls made while the forward
	// read below runs decode their circuits from it.
	s.Bound = &Bound{IndexBy: time.Now().Add(catchUpIndexTime)}
	if _, _, err := s.loadFresh(false); err != nil {
		return true, err
	}
	provDone()
	if demote != nil {
		demote()
	}
	// Forwards a step at a time, saving the snapshot after each: a hook call made meanwhile
	// without a provisional snapshot reads backwards only down to the last step saved.
	for last := int64(-1); ; {
		off, size, err := s.progress()
		if err != nil {
			return true, err
		}
		if size-off <= boundedLag || off <= last {
			break // the rest in one go (or no step could be saved: a read-only directory)
		}
		last = off
		s.Bound = &Bound{Deadline: time.Now().Add(catchUpStep)}
		if _, _, err := s.loadFresh(false); err != nil {
			return true, err
		}
	}
	s.Bound = nil
	for range 3 {
		snap, _, err := s.loadFresh(false)
		if err != nil {
			return true, err
		}
		if !snap.unsettled {
			s.save(snap)
			if s.readSnapshot() != nil {
				s.removeProvisional() // the complete snapshot is saved: it answers from now on
			}
			s.Reindex()
			return true, nil
		}
	}
	s.Reindex()
	return true, nil
}

// Reindex rebuilds the trip index when it cannot be relied on for the whole ledger (missing,
// another version, another copy's, or started on a ledger an earlier version wrote), so that the
// next first call without a snapshot finds every trip in it. The catch-up does it last, at its
// low priority (it is what makes such a call sure, not what this one needs), and so does
// `ledger repair`.
func (s *Store) Reindex() error {
	if st := s.Ledger.TripIndex(); !st.Usable || st.From > 0 {
		return s.Ledger.RebuildTripIndex()
	}
	return nil
}

// catchUpStep is how long CatchUpSnapshot reads forwards between two saves of its progress.
const catchUpStep = 250 * time.Millisecond

// catchUpIndexTime bounds the catch-up's backward read for the provisional snapshot.
const catchUpIndexTime = time.Minute

// progress returns the offset the saved snapshot reaches in the current ledger (0 when it cannot
// be used) and the ledger's size.
func (s *Store) progress() (off, size int64, err error) {
	id, err := s.Ledger.Stat()
	if err != nil {
		return 0, 0, err
	}
	snap := s.readSnapshot()
	if snap != nil && snap.Dev == id.Dev && snap.Ino == id.Ino && snap.Offset <= id.Size &&
		(snap.current(id) || snap.Offset < id.Size && s.samplesMatch(snap)) {
		off = snap.Offset
	}
	return off, id.Size, nil
}

// stream replays the ledger from snap.Offset into snap, reading it a chunk at a time, until its
// end or, when deadline is not zero, until deadline passes (at an item boundary).
func (s *Store) stream(snap *snapshot, locked bool, deadline time.Time) error {
	var stop func() bool
	if !deadline.IsZero() {
		stop = func() bool { return time.Now().After(deadline) }
	}
	end, settled, err := s.Ledger.Stream(snap.Offset, locked, stop, func(chunk []byte, atEnd bool) error {
		// Damage is item-level: what cannot be read is left out and reported with its line,
		// and every other item counts (a known-OPEN circuit stays OPEN).
		if s.Ledger.Prefetch != nil {
			s.Ledger.Prefetch(chunk)
		}
		entries, problems := ledger.ReadChunk(chunk, snap.Lines+1, atEnd, s.Ledger.Slow)
		snap.Board.Damage.Add(problems, len(entries))
		if atEnd {
			snap.midLine = len(chunk) > 0 && chunk[len(chunk)-1] != '\n'
		}
		for _, e := range entries {
			if snap.keys == nil || slices.Contains(snap.keys, e.Tool) {
				s.check(&e)
				snap.Board.Apply(e)
			} else {
				// The runaway guard's memory is the session's, across every tool.
				snap.Board.noteRun(e)
			}
		}
		snap.Lines += bytes.Count(chunk, []byte("\n"))
		return nil
	})
	if err != nil {
		return err
	}
	if !settled {
		snap.unsettled = true
	}
	return s.advance(snap, end)
}

// allMerged reports whether every problem is a merged item, whose entries ReadChunk has read.
func allMerged(problems []ledger.Problem) bool {
	for _, p := range problems {
		if p.Kind != ledger.Merged {
			return false
		}
	}
	return len(problems) > 0
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

// The snapshot file is one header line (the snapshot's JSON without its board), then one line per
// circuit, sorted by key, each the circuit's JSON starting with its key. A reader that needs a few
// circuits (the hook) finds their lines without decoding the others, so its cost does not grow
// with the number of live circuits.

// readSnapshot reads the snapshot with every circuit, or nil when it is missing or unusable.
func (s *Store) readSnapshot() *snapshot {
	return decodeSnapshot(s.readSnapshotFile(s.snapshotPath(), snapshotVersion))
}

// decodeSnapshot decodes every circuit of a snapshot read by readSnapshotFile (nil head: none).
func decodeSnapshot(head *snapshot, body []byte) *snapshot {
	if head == nil {
		return nil
	}
	snap := *head
	snap.Board = Board{Damage: head.Damage, Runs: cloneRuns(head.Runs)}
	for len(body) > 0 {
		i := bytes.IndexByte(body, '\n')
		var c Circuit
		if i < 0 || json.Unmarshal(body[:i], &c) != nil || c.Key == "" {
			return nil
		}
		if snap.Board.Circuits == nil {
			snap.Board.Circuits = make(map[string]*Circuit)
		}
		snap.Board.Circuits[c.Key] = &c
		body = body[i+1:]
	}
	return &snap
}

// readSnapshotKeys reads the snapshot with the circuits of keys only: a partial board.
func (s *Store) readSnapshotKeys(keys []string) *snapshot {
	head, body := s.readSnapshotFile(s.snapshotPath(), snapshotVersion)
	return decodeSnapshotKeys(head, body, keys)
}

// decodeSnapshotKeys decodes the circuits of keys only, from a snapshot read by readSnapshotFile.
func decodeSnapshotKeys(head *snapshot, body []byte, keys []string) *snapshot {
	if head == nil {
		return nil
	}
	snap := *head
	snap.Board = Board{Circuits: make(map[string]*Circuit, len(keys)), Damage: head.Damage, Runs: cloneRuns(head.Runs)}
	for _, k := range keys {
		q, _ := json.Marshal(k)
		prefix := append(append([]byte(`{"key":`), q...), ',')
		i := 0
		if !bytes.HasPrefix(body, prefix) {
			if i = bytes.Index(body, append([]byte("\n"), prefix...)); i < 0 {
				continue
			}
			i++
		}
		line := body[i:]
		if j := bytes.IndexByte(line, '\n'); j >= 0 {
			line = line[:j]
		}
		var c Circuit
		if json.Unmarshal(line, &c) != nil || c.Key != k {
			return nil
		}
		snap.Board.Circuits[k] = &c
	}
	snap.partial = true
	snap.keys = keys
	return &snap
}

// readSnapshotFile reads and checks a snapshot file (state.json, or the provisional snapshot with
// its own version): its header, and the circuit lines after it, which must have the length and
// checksum the header says.
func (s *Store) readSnapshotFile(name string, version int) (*snapshot, []byte) {
	data, err := safefile.ReadRegular(name, safefile.MaxStateBytes)
	if err != nil {
		return nil, nil
	}
	head, body, _ := bytes.Cut(data, []byte("\n"))
	var snap snapshot
	if json.Unmarshal(head, &snap) != nil || snap.Version != version ||
		snap.Version == snapshotVersion && (snap.Unresolved != nil || snap.EndSize != 0) ||
		len(body) != snap.BodyLen || crc32.ChecksumIEEE(body) != snap.BodyCRC {
		return nil, nil
	}
	return &snap, body
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

// catchUp applies the entries appended after snap.Offset.
func (s *Store) catchUp(snap *snapshot, locked bool) error {
	return s.stream(snap, locked, time.Time{})
}

// save writes the snapshot atomically, leaving out idle circuits (they equal no circuit at all).
// Errors are ignored: the snapshot is derived and rebuilt when missing.
func (s *Store) save(snap *snapshot) {
	if snap.unsettled || snap.partial || snap.midLine {
		return
	}
	s.write(s.snapshotPath(), snap)
}

// write writes a snapshot file (state.json, or the provisional snapshot) atomically.
func (s *Store) write(name string, snap *snapshot) {
	var body []byte
	for _, k := range snap.Board.Keys() {
		c := snap.Board.Circuits[k]
		if c.Idle() {
			delete(snap.Board.Circuits, k)
			continue
		}
		line, err := json.Marshal(c)
		if err != nil {
			return
		}
		body = append(append(body, line...), '\n')
	}
	head := *snap
	head.Board, head.BodyLen, head.BodyCRC = Board{}, len(body), crc32.ChecksumIEEE(body)
	head.Runs = snap.Board.Runs
	head.Damage = snap.Board.Damage
	data, err := json.Marshal(&head)
	if err != nil {
		return
	}
	data = append(append(data, '\n'), body...)
	tmp, err := os.CreateTemp(s.Ledger.Dir, ".state.*.tmp")
	if err != nil {
		return
	}
	// No fsync: after a crash a torn snapshot fails to parse and is rebuilt from the ledger.
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), name) != nil {
		os.Remove(tmp.Name())
	}
}

// check sets e.Verified for an entry read from the ledger, where its provenance can matter: the
// counters (blocked, would_block) move no circuit's state.
func (s *Store) check(e *ledger.Entry) {
	if e.Provenance != "" && e.Event != ledger.EventBlocked && e.Event != ledger.EventWouldBlock {
		s.Ledger.Provenance.Check(e)
	}
}

// Update takes the ledger lock, brings the board up to date, asks decide for entries, appends them
// in one fsynced write and applies them. decide must be quick: the lock is held while it runs.
// It returns the board after the entries. With Shared set, the decision goes through it.
//
// Every entry decide returns is signed with the store's provenance before anything sees it (the
// shared board's plan included), so that what this process decides and what a later reader
// replays from the file agree on which circuits are verified.
func (s *Store) Update(decide func(b *Board) ([]ledger.Entry, error)) (*Board, error) {
	var b *Board
	var err error
	signed := decide
	decide = func(b *Board) ([]ledger.Entry, error) {
		entries, err := signed(b)
		for i := range entries {
			s.Ledger.Provenance.Sign(&entries[i])
		}
		return entries, err
	}
	if s.Shared != nil {
		b, err = s.Shared.Update(decide, s.update)
	} else {
		b, err = s.update(decide)
	}
	s.tell(b)
	return b, err
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
	if err := s.unreadable(&snap.Board); err != nil {
		return nil, err
	}
	if len(snap.Board.Undecided) > 0 {
		return nil, &UndecidedError{Keys: snap.Board.Undecided}
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
	snap.Board.Damage.Entries += len(entries)
	// A ledger that did not end with a newline got one first, in the same write.
	sealed := after - before - int64(len(buf))
	if sealed > 0 {
		snap.midLine = false
	}
	if sealed == 0 && lag >= 0 && lag+int64(len(buf)) <= maxLag && countersOnly(entries) {
		// The snapshot on disk stays valid; readers replay these few bytes.
		return &snap.Board, nil
	}
	snap.Lines += bytes.Count(buf, []byte("\n")) + int(sealed)
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

// Invalidate removes the snapshot (and the provisional one), after the ledger was rewritten by
// repair or compact.
func (s *Store) Invalidate() {
	os.Remove(s.snapshotPath())
	s.removeProvisional()
}
