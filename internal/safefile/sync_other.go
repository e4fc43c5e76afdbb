//go:build !linux

package safefile

import "os"

// Datasync flushes f; without fdatasync(2) that is a full fsync.
func Datasync(f *os.File) error { return f.Sync() }
