//go:build !linux

package ledger

import "os"

// datasync flushes f; without fdatasync(2) that is a full fsync.
func datasync(f *os.File) error { return f.Sync() }
