//go:build !unix

package safefile

import (
	"errors"
	"io/fs"
	"os"
)

// Without O_NOFOLLOW and O_NONBLOCK the kind of file is checked before it is opened.
const (
	oNoFollow = 0
	oNonblock = 0
)

func isLinkLoop(error) bool { return false }

func preOpenCheck(name string, follow bool) error {
	stat := os.Lstat
	if follow {
		stat = os.Stat
	}
	fi, err := stat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return unsafeFile(name, fi.Mode(), "a regular file")
	}
	return nil
}
