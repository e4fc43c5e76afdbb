// Package filelock owns the one lock discipline of the state directory, for the ledger and the
// tools cache alike: flock(2) on a lock file next to what it guards (never on the guarded file,
// which may be replaced by rename), opened without following a link, waited for in the kernel
// (waiters queue instead of polling) and for a bounded time only.
package filelock

import (
	"errors"
	"time"
)

// ErrTimeout is returned when a lock could not be taken within the wait.
var ErrTimeout = errors.New("timed out waiting for the lock")

// ErrUnsupported is returned on a system without flock(2).
var ErrUnsupported = errors.New("file locks need flock(2): mcp-circuit-breaker runs on unix systems only (Linux, macOS, BSD)")

// Options tune a wait for a lock.
type Options struct {
	// Wait bounds the wait; it must be positive.
	Wait time.Duration
	// Waiting, when set, is called once when the lock is held by another process and the wait
	// begins (a command tells its user why it pauses).
	Waiting func(wait time.Duration)
}
