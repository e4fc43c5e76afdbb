// Package ledger owns the append-only YAML ledger file (docs/ledger.md): its format, its locking and
// durability, the strict reader that says which line is wrong, and the repairs that keep a backup.
//
// # Durability
//
// Appends hold an exclusive flock on a lock file next to the ledger (never on the ledger itself, so
// that repair and compact can replace the ledger by rename), write every new item with one write(2),
// and fsync before the lock is released. A write that fails part way (a full disk) is cut back to the
// previous length, so a failed append leaves the file as it was.
package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/safefile"
)

// File names inside the state directory.
const (
	FileName     = "circuit_log.yaml"
	lockFileName = ".circuit_log.lock"
)

// DefaultLockWait is how long an append waits for the lock before failing (docs/ledger.md).
const DefaultLockWait = 2 * time.Second

// ErrLockTimeout is returned when the ledger lock could not be taken within the wait.
var ErrLockTimeout = errors.New("timed out waiting for the ledger lock")

// MaxLedgerBytes bounds the ledger for the commands that read it whole (verify, report, repair):
// about three million entries, so the million-entry ledgers the gate is built to handle stay
// readable; `ledger compact` keeps a real ledger far below. The hook streams and needs no cap.
const MaxLedgerBytes = 1 << 30

// ErrCorrupt is returned when nothing at all of a ledger can be read (a damaged item among readable
// ones is left out on its own, not an error), or by ReadAll, which wants every item; the wrapping
// error lists the problems.
var ErrCorrupt = errors.New("ledger cannot be parsed")

// CorruptError carries the problems of a ledger that cannot be parsed.
type CorruptError struct {
	Path     string
	Problems []Problem
	// Total is the number of problems when Problems holds only the first ones (0: all).
	Total int
}

// Error names the file and its first problems.
func (e *CorruptError) Error() string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s: %d problem(s)", e.Path, max(e.Total, len(e.Problems)))
	for i, p := range e.Problems {
		if i == 3 {
			fmt.Fprintf(&b, "; …")
			break
		}
		fmt.Fprintf(&b, "; line %d: %s", p.Line, p.Msg)
	}
	return b.String()
}

// Unwrap makes errors.Is(err, ErrCorrupt) hold.
func (e *CorruptError) Unwrap() error { return ErrCorrupt }

// Ledger is the ledger file of one state directory.
type Ledger struct {
	// Dir is the state directory, DIR/.claude/mcp_circuit.
	Dir string
	// LockWait bounds the wait for the lock; zero means DefaultLockWait.
	LockWait time.Duration
	// Waiting, when set, is called once when the lock is held by another process and Lock starts
	// to wait for it (a command tells its user why it pauses).
	Waiting func(wait time.Duration)
	// Slow reads the items in shapes the built-in reader does not know (SlowReader); nil leaves
	// them out as Invalid.
	Slow SlowReader
	// Provenance signs what this process appends through its callers and checks what it reads
	// (ReadFile); nil checks nothing, so every entry read is unverified.
	Provenance *Provenance
	// Prefetch, when set, is shown each chunk of items before they are read, so that a Slow that
	// is costly per call (the lean hook asks another process) reads all the chunk's items in odd
	// shapes at once; the items are then read one by one as always.
	Prefetch func(chunk []byte)
}

// Path returns the ledger file's path.
func (l *Ledger) Path() string { return filepath.Join(l.Dir, FileName) }

// EnsureDir creates the state directory with mode 0700 when it does not exist. It reports whether
// it created it.
// The directory and its parent must be real directories: a link committed in their place would
// make every append land outside the project.
func (l *Ledger) EnsureDir() (bool, error) { return safefile.MakeStateDir(l.Dir) }

// Append writes the entries at the end of the ledger with one write and fsyncs it. The caller must
// hold the lock and must have checked that the ledger parses. It returns the ledger's size before and
// after the write.
func (l *Ledger) Append(entries ...Entry) (before, after int64, err error) {
	if len(entries) == 0 {
		fi, err := os.Stat(l.Path())
		if err != nil && !os.IsNotExist(err) {
			return 0, 0, fmt.Errorf("stat ledger: %w", err)
		}
		if fi != nil {
			return fi.Size(), fi.Size(), nil
		}
		return 0, 0, nil
	}
	buf := make([]byte, 0, 512*len(entries))
	for _, e := range entries {
		buf = AppendEncoded(buf, e)
	}
	return l.AppendRaw(buf)
}

// AppendRaw appends already-encoded items; see Append. When the ledger does not end with a newline
// (a hand edit, a write cut short) the write starts with one, so after-before may exceed len(buf)
// by one.
func (l *Ledger) AppendRaw(buf []byte) (before, after int64, err error) {
	if err := safefile.CheckStateDir(l.Dir); err != nil {
		return 0, 0, fmt.Errorf("open ledger: %w", err)
	}
	f, err := safefile.OpenRegular(l.Path(), os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return 0, 0, fmt.Errorf("open ledger: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return 0, 0, fmt.Errorf("stat ledger: %w", err)
	}
	before = fi.Size()
	items, start := buf, before
	if before > 0 {
		// Only under the lock can a last item that does not end with a newline be called torn
		// (no append of ours is in progress): it is closed off in the same write, so the new
		// items start at column 0 and are never merged into it.
		var last [1]byte
		if _, err := f.ReadAt(last[:], before-1); err != nil {
			return before, before, fmt.Errorf("read ledger end: %w", err)
		}
		if last[0] != '\n' {
			buf = append([]byte{'\n'}, buf...)
			start++
		}
	}
	n, err := f.Write(buf)
	if err == nil {
		err = safefile.Datasync(f)
	}
	if err == nil && before == 0 {
		// A new ledger: its directory entry must be durable too.
		if d, derr := os.Open(l.Dir); derr == nil {
			d.Sync()
			d.Close()
		}
	}
	if err != nil {
		// Cut a partial write back so the ledger never keeps a torn item (a full disk).
		if n > 0 {
			if terr := f.Truncate(before); terr != nil {
				return before, before + int64(n), fmt.Errorf("append to ledger: %w (and cutting back the partial write failed: %v; run ledger repair)", err, terr)
			}
			f.Sync()
		}
		return before, before, fmt.Errorf("append to ledger: %w", err)
	}
	// Still under the lock, after the items are durable: the index never points past the ledger.
	l.indexAppend(f, items, start)
	return before, before + int64(n), nil
}

// Seal closes off a last line that does not end with a newline (a hand edit, a write cut short),
// as the next append would: after it, a reader's read ends at a line end and can be saved as the
// snapshot. The caller must hold the lock. A missing or empty ledger is left alone; it reports
// whether it wrote.
func (l *Ledger) Seal() (bool, error) {
	if err := safefile.CheckStateDir(l.Dir); err != nil {
		return false, err
	}
	f, err := safefile.OpenRegular(l.Path(), os.O_RDWR|os.O_APPEND, 0)
	if os.IsNotExist(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("open ledger: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return false, err
	}
	var last [1]byte
	if _, err := f.ReadAt(last[:], fi.Size()-1); err != nil {
		return false, fmt.Errorf("read ledger end: %w", err)
	}
	if last[0] == '\n' {
		return false, nil
	}
	if _, err := f.Write([]byte{'\n'}); err != nil {
		return false, fmt.Errorf("append to ledger: %w", err)
	}
	return true, safefile.Datasync(f)
}

// ReadFile reads and parses the whole ledger. A missing file is an empty ledger.
func (l *Ledger) ReadFile() ([]Entry, []Problem, error) {
	data, err := l.read()
	if os.IsNotExist(err) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read ledger: %w", err)
	}
	entries, problems := Parse(data, 1, l.Slow)
	l.Provenance.CheckAll(entries)
	return entries, problems, nil
}

// read returns the ledger's bytes after checking the state directory; the ledger must be a
// regular file of at most MaxLedgerBytes.
func (l *Ledger) read() ([]byte, error) {
	if err := safefile.CheckStateDir(l.Dir); err != nil {
		return nil, err
	}
	return safefile.ReadRegular(l.Path(), MaxLedgerBytes)
}

// Open opens the ledger for reading after the same checks as every read: the state directory is
// real and the ledger is a regular file, not followed through a link.
func (l *Ledger) Open() (*os.File, error) {
	if err := safefile.CheckStateDir(l.Dir); err != nil {
		return nil, err
	}
	return safefile.OpenRegular(l.Path(), os.O_RDONLY, 0)
}

// ReadAll reads the whole ledger and fails with a *CorruptError when it has problems.
func (l *Ledger) ReadAll() ([]Entry, error) {
	entries, problems, err := l.ReadFile()
	if err != nil {
		return nil, err
	}
	if len(problems) > 0 {
		return entries, &CorruptError{Path: l.Path(), Problems: problems}
	}
	return entries, nil
}

// ReadTail reads the bytes of the ledger from offset to its end. It also returns the file's
// identity, so a caller can notice that the ledger was replaced.
func (l *Ledger) ReadTail(offset int64) (data []byte, id FileID, err error) {
	f, err := l.Open()
	if os.IsNotExist(err) {
		return nil, FileID{}, nil
	}
	if err != nil {
		return nil, FileID{}, fmt.Errorf("open ledger: %w", err)
	}
	defer f.Close()
	return l.tailOf(f, offset)
}

// tailOf is ReadTail on the ledger already open as f: a reader that streamed the file reads its
// end from the same file, not from whatever the path names by then.
func (l *Ledger) tailOf(f *os.File, offset int64) (data []byte, id FileID, err error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, FileID{}, fmt.Errorf("stat ledger: %w", err)
	}
	id = fileID(fi)
	if offset > id.Size {
		return nil, id, nil
	}
	if id.Size-offset > MaxLedgerBytes {
		return nil, id, safefile.TooLarge(l.Path(), MaxLedgerBytes)
	}
	data = make([]byte, id.Size-offset)
	if _, err := f.ReadAt(data, offset); err != nil && err != io.EOF {
		return nil, id, fmt.Errorf("read ledger: %w", err)
	}
	return data, id, nil
}

// FileID identifies one version of the ledger file.
type FileID struct {
	Dev, Ino uint64
	Size     int64
	// MtimeNS and CtimeNS are the modification and status-change times in Unix nanoseconds. The
	// ctime changes on every write and cannot be set by a user (touch sets only atime and mtime),
	// so an unchanged (inode, size, ctime) means unchanged bytes; CtimeNS is 0 where unknown.
	MtimeNS, CtimeNS int64
}

// Stat returns the identity of the ledger file; a missing file has the zero identity.
func (l *Ledger) Stat() (FileID, error) {
	if err := safefile.CheckStateDir(l.Dir); err != nil {
		return FileID{}, err
	}
	fi, err := safefile.LstatRegular(l.Path())
	if os.IsNotExist(err) {
		return FileID{}, nil
	}
	if err != nil {
		return FileID{}, fmt.Errorf("stat ledger: %w", err)
	}
	return fileID(fi), nil
}

// Replace atomically replaces the ledger with data, after keeping a copy of the current file as
// <ledger>.bak-<now>. The caller must hold the lock. It returns the backup's path ("" when there
// was no ledger).
func (l *Ledger) Replace(data []byte, now time.Time) (backup string, err error) {
	old, err := l.read()
	if err != nil && !os.IsNotExist(err) {
		return "", fmt.Errorf("read ledger: %w", err)
	}
	if err == nil {
		backup = l.Path() + ".bak-" + now.UTC().Format("20060102T150405.000Z")
		if err := safefile.WriteFileAtomic(backup, old, 0o600); err != nil {
			return "", fmt.Errorf("keep backup: %w", err)
		}
	}
	if err := safefile.WriteFileAtomic(l.Path(), data, 0o600); err != nil {
		return backup, fmt.Errorf("replace ledger: %w", err)
	}
	// The old trip index points into the old file: the new file's is written from the same bytes.
	l.writeTripIndex(data)
	return backup, nil
}

// stableFor is how long an unlocked reader that finds the lock held watches a tail that looks
// whole before it takes it as written (settledTail).
const stableFor = time.Millisecond

// SettleWait bounds how long an unlocked reader waits for an append in progress to finish.
// Appends hold the lock for about a millisecond; a holder that keeps it longer (a stuck process,
// a slow disk) must not stall the hook, so the reader then reads without it.
const SettleWait = 100 * time.Millisecond

// ReadSettled is ReadTail for a reader that does not hold the lock. It waits (at most SettleWait)
// for an append in progress to finish, by taking the shared lock for the read; then the bytes are
// settled and a torn last item is damage. When the lock stays busy, a last item that is incomplete
// is left out, as not yet written (settled is then false, and the read must not be saved as a
// snapshot). So an unlocked reader never calls another process's append in progress torn; only a
// locked reader (or `ledger verify`) does.
func (l *Ledger) ReadSettled(offset int64) (data []byte, id FileID, settled bool, err error) {
	return l.settledTail(l.ReadTail, offset)
}

// settledTail is ReadSettled with read doing the read itself (from the path, or from a file the
// caller has open).
func (l *Ledger) settledTail(read func(int64) ([]byte, FileID, error), offset int64) (data []byte, id FileID, settled bool, err error) {
	if release, ok := l.trySettled(); ok {
		data, id, err = read(offset)
		release()
		return data, id, true, err
	}
	// An append holds the lock: one write(2) of whole items, over in microseconds, then its
	// fsync, which holds the lock for milliseconds, and many hooks at once queue on it. A tail
	// that ends at a line end and has not changed a moment later was written whole: it is read
	// without waiting for the lock (and not saved as the snapshot: settled stays false).
	if data, id, err = read(offset); err == nil && (len(data) == 0 || data[len(data)-1] == '\n') {
		time.Sleep(stableFor)
		if again, aid, err := read(offset); err == nil && aid.Size == id.Size && bytes.Equal(again, data) {
			return data, id, false, nil
		}
	}
	release, settled := l.settled(SettleWait)
	data, id, err = read(offset)
	release()
	if err != nil || settled {
		return data, id, settled, err
	}
	start := lastItemStart(data)
	if _, problems := Parse(data[start:], 1, l.Slow); len(problems) > 0 {
		data = data[:start]
	}
	return data, id, false, nil
}

// lastItemStart returns the offset of the last line of data that starts a list item ("- " or a
// bare "-" at column 0), or 0 when none does.
func lastItemStart(data []byte) int {
	for end := len(data); end > 0; {
		start := bytes.LastIndexByte(data[:end-1], '\n') + 1
		if isItemStart(data[start:end]) {
			return start
		}
		end = start
	}
	return 0
}

// FileIDOf is the identity of a file from its FileInfo (os.Stat or os.Lstat, which never block on
// a FIFO the way opening one does).
func FileIDOf(fi os.FileInfo) FileID { return fileID(fi) }

// StatFile returns the identity of the open ledger file f.
func StatFile(f *os.File) (FileID, error) {
	fi, err := f.Stat()
	if err != nil {
		return FileID{}, fmt.Errorf("stat ledger: %w", err)
	}
	return fileID(fi), nil
}
