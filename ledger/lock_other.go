//go:build !unix

package ledger

import (
	"os"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/filelock"
)

// Lock fails with ErrUnsupported: without flock(2) appends from concurrent processes could merge.
func (l *Ledger) Lock() (unlock func(), err error) {
	return nil, filelock.ErrUnsupported
}

// settled reports false: without a lock no read can tell an append in progress from a torn item.
func (l *Ledger) settled(time.Duration) (release func(), ok bool) { return func() {}, false }

func (l *Ledger) trySettled() (release func(), ok bool) { return func() {}, false }

func fileID(fi os.FileInfo) FileID {
	return FileID{Size: fi.Size(), MtimeNS: fi.ModTime().UnixNano()}
}
