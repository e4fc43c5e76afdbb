//go:build unix

package ledger

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Lock takes the exclusive ledger lock, waiting at most LockWait. The returned function releases it.
//
// The wait is a blocking flock(2), so waiters queue in the kernel instead of polling (a poller that
// sleeps between tries starves behind waiters that happen to retry at the right moment). The blocking
// call runs in a goroutine bounded by LockWait; when the bound passes first, the goroutine is left to
// finish and releases the late acquisition at once, so a timed-out caller never holds the lock.
func (l *Ledger) Lock() (unlock func(), err error) {
	if _, err := l.EnsureDir(); err != nil {
		return nil, err
	}
	f, err := OpenRegular(filepath.Join(l.Dir, lockFileName), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open ledger lock: %w", err)
	}
	wait := l.LockWait
	if wait <= 0 {
		wait = DefaultLockWait
	}
	if err := lockFile(f, syscall.LOCK_EX, wait, l.Waiting); err != nil {
		if errors.Is(err, ErrLockTimeout) {
			// f now belongs to the late waiter, which releases and closes it: closing it here
			// would let the descriptor number be reused under a flock still in flight.
			return nil, fmt.Errorf("lock ledger %s after %s: %w", l.Path(), wait, err)
		}
		f.Close()
		return nil, fmt.Errorf("lock ledger: %w", err)
	}
	return func() { unlockFile(f) }, nil
}

func unlockFile(f *os.File) {
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	f.Close()
}

// lockFile takes the flock how (LOCK_EX or LOCK_SH) on f, waiting at most wait; waiting, when set,
// is told when the lock is busy and the wait begins. On ErrLockTimeout f is no longer the caller's:
// a goroutine still waits for the lock and, when it gets it, releases it and closes f.
func lockFile(f *os.File, how int, wait time.Duration, waiting func(time.Duration)) error {
	err := flock(f, how|syscall.LOCK_NB)
	if err == nil || !errors.Is(err, syscall.EWOULDBLOCK) {
		return err
	}
	if waiting != nil {
		waiting(wait)
	}
	done := make(chan error, 1)
	go func() { done <- flock(f, how) }()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case err := <-done:
		return err
	case <-timer.C:
		go func() {
			if <-done == nil {
				unlockFile(f)
				return
			}
			f.Close()
		}()
		return ErrLockTimeout
	}
}

// flock calls flock(2) again when a signal interrupts it (the Go runtime's preemption signals do).
func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// settled takes the shared lock, waiting at most wait, and reports whether it got it: while it is
// held no append is in progress, so everything in the ledger was written whole. A ledger that was
// never locked (no lock file) is settled. The returned function releases the lock.
func (l *Ledger) settled(wait time.Duration) (release func(), ok bool) {
	f, err := OpenRegular(filepath.Join(l.Dir, lockFileName), os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return func() {}, true
	}
	if err != nil {
		return func() {}, false
	}
	switch err := lockFile(f, syscall.LOCK_SH, wait, nil); {
	case errors.Is(err, ErrLockTimeout):
		return func() {}, false // f now belongs to the late waiter
	case err != nil:
		f.Close()
		return func() {}, false
	}
	return func() { unlockFile(f) }, true
}

func fileID(fi os.FileInfo) FileID {
	id := FileID{Size: fi.Size(), MtimeNS: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id.Dev, id.Ino = uint64(st.Dev), uint64(st.Ino)
		id.CtimeNS = ctimeNS(st)
	}
	return id
}
