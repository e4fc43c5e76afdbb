//go:build unix

package ledger

import (
	"fmt"
	"os"
	"syscall"
)

// ownKeyFile refuses a key file that is not this user's alone: owned by another user, or with any
// permission for the group or others. A missing file is left to the read (which says so).
func ownKeyFile(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("owned by user %d, not by this user", st.Uid)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("mode %04o: others can read or write it (the gate makes it 0600)", perm)
	}
	return nil
}
