//go:build !unix

package ledger

import (
	"errors"
	"os"
	"time"
)

// ErrUnsupported is returned when the ledger lock is asked for on a system without flock(2): the
// ledger's guarantees (whole, ordered appends from concurrent processes) rest on it.
var ErrUnsupported = errors.New("the ledger lock needs flock(2): mcp-circuit-breaker runs on unix systems only (Linux, macOS, BSD)")

// Lock fails with ErrUnsupported: without flock(2) appends from concurrent processes could merge.
func (l *Ledger) Lock() (unlock func(), err error) {
	return nil, ErrUnsupported
}

// settled reports false: without a lock no read can tell an append in progress from a torn item.
func (l *Ledger) settled(time.Duration) (release func(), ok bool) { return func() {}, false }

func fileID(fi os.FileInfo) FileID {
	return FileID{Size: fi.Size(), MtimeNS: fi.ModTime().UnixNano()}
}
