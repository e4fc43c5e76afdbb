//go:build unix

package safefile

import (
	"errors"
	"syscall"
)

// O_NOFOLLOW makes open(2) fail with ELOOP on a link; O_NONBLOCK makes it return at once on a FIFO
// without a writer, so that the fstat after it can refuse the FIFO.
const (
	oNoFollow = syscall.O_NOFOLLOW
	oNonblock = syscall.O_NONBLOCK
)

func isLinkLoop(err error) bool {
	return errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EMLINK)
}

// preOpenCheck has nothing to do where open(2) itself refuses links and does not block.
func preOpenCheck(string, bool) error { return nil }
