//go:build unix

package ledger

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/filelock"
)

// Lock takes the exclusive ledger lock, waiting at most LockWait. The returned function releases it.
// Waiters queue in the kernel (internal/filelock), so none starves behind luckier pollers.
func (l *Ledger) Lock() (unlock func(), err error) {
	if _, err := l.EnsureDir(); err != nil {
		return nil, err
	}
	wait := l.LockWait
	if wait <= 0 {
		wait = DefaultLockWait
	}
	unlock, err = filelock.Exclusive(filepath.Join(l.Dir, lockFileName), filelock.Options{Wait: wait, Waiting: l.Waiting})
	if errors.Is(err, filelock.ErrTimeout) {
		return nil, fmt.Errorf("lock ledger %s after %s: %w", l.Path(), wait, ErrLockTimeout)
	}
	if err != nil {
		return nil, fmt.Errorf("lock ledger: %w", err)
	}
	return unlock, nil
}

// settled takes the shared lock, waiting at most wait, and reports whether it got it: while it is
// held no append is in progress, so everything in the ledger was written whole. A ledger that was
// never locked (no lock file) is settled. The returned function releases the lock.
// trySettled is settled without waiting: ok is false while an append holds the lock.
func (l *Ledger) trySettled() (release func(), ok bool) {
	release, ok, err := filelock.TryShared(filepath.Join(l.Dir, lockFileName))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return func() {}, true
	case err != nil || !ok:
		return func() {}, false
	}
	return release, true
}

func (l *Ledger) settled(wait time.Duration) (release func(), ok bool) {
	release, err := filelock.Shared(filepath.Join(l.Dir, lockFileName), wait)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return func() {}, true
	case err != nil:
		return func() {}, false
	}
	return release, true
}

func fileID(fi os.FileInfo) FileID {
	id := FileID{Size: fi.Size(), MtimeNS: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id.Dev, id.Ino = uint64(st.Dev), uint64(st.Ino)
		id.CtimeNS = ctimeNS(st)
	}
	return id
}
