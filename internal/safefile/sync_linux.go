package safefile

import (
	"os"
	"syscall"
)

// Datasync flushes f's data and the metadata needed to read it back (its size), not its
// timestamps: fdatasync(2), as bbolt does, which spares a journal write per append.
func Datasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return err
		}
	}
}
