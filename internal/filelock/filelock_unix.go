//go:build unix

package filelock

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/safefile"
)

// Exclusive takes the exclusive lock on the lock file name (created 0600 when missing), waiting at
// most o.Wait. The returned function releases it.
//
// The wait is a blocking flock(2) in a goroutine bounded by the wait; when the bound passes first,
// the goroutine is left to finish and releases the late acquisition at once, so a timed-out caller
// never holds the lock.
func Exclusive(name string, o Options) (unlock func(), err error) {
	f, err := safefile.OpenRegular(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock file: %w", err)
	}
	if err := lockFile(f, syscall.LOCK_EX, o.Wait, o.Waiting); err != nil {
		if !errors.Is(err, ErrTimeout) {
			// On ErrTimeout f belongs to the late waiter, which releases and closes it: closing
			// it here would let the descriptor number be reused under a flock still in flight.
			f.Close()
		}
		return nil, err
	}
	return func() { unlockFile(f) }, nil
}

// Shared takes the shared lock on the existing lock file name, waiting at most wait. A missing lock
// file is an error wrapping os.ErrNotExist (never created: a reader leaves no trace).
func Shared(name string, wait time.Duration) (release func(), err error) {
	f, err := safefile.OpenRegular(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	if err := lockFile(f, syscall.LOCK_SH, wait, nil); err != nil {
		if !errors.Is(err, ErrTimeout) {
			f.Close()
		}
		return nil, err
	}
	return func() { unlockFile(f) }, nil
}

// TryShared takes the shared lock on the existing lock file name if no one holds it exclusively,
// without waiting; ok is false when another process does. A missing lock file is an error
// wrapping os.ErrNotExist.
func TryShared(name string) (release func(), ok bool, err error) {
	f, err := safefile.OpenRegular(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, false, err
	}
	switch err := flock(f, syscall.LOCK_SH|syscall.LOCK_NB); {
	case errors.Is(err, syscall.EWOULDBLOCK):
		f.Close()
		return nil, false, nil
	case err != nil:
		f.Close()
		return nil, false, err
	}
	return func() { unlockFile(f) }, true, nil
}

// TryExclusive takes the exclusive lock on name (created when missing) if no one holds it, without
// waiting; ok is false when another process holds it.
func TryExclusive(name string) (unlock func(), ok bool, err error) {
	f, err := safefile.OpenRegular(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, false, fmt.Errorf("open lock file: %w", err)
	}
	switch err := flock(f, syscall.LOCK_EX|syscall.LOCK_NB); {
	case errors.Is(err, syscall.EWOULDBLOCK):
		f.Close()
		return nil, false, nil
	case err != nil:
		f.Close()
		return nil, false, err
	}
	return func() { unlockFile(f) }, true, nil
}

func unlockFile(f *os.File) {
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	f.Close()
}

// lockFile takes the flock how (LOCK_EX or LOCK_SH) on f, waiting at most wait; waiting, when set,
// is told when the lock is busy and the wait begins. On ErrTimeout f is no longer the caller's:
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
		return ErrTimeout
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
