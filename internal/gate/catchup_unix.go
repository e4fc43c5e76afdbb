//go:build unix

package gate

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
)

// DetachedCatchUp is the Config.CatchUp of both binaries: it starts this program again as
// `hook --catch-up-snapshot --dir DIR`, detached: a session of its own, and no stdin, stdout or
// stderr, since Claude Code waits for the hook's output to close, not for its children. The hook
// answers at once; the child brings the snapshot up to date and exits.
func DetachedCatchUp(dir string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	// argv[0] keeps the name this program was started by: the full CLI and the lean hook both
	// take `hook --catch-up-snapshot`.
	cmd := &exec.Cmd{Path: exe, Args: []string{filepath.Base(os.Args[0]), "hook", "--catch-up-snapshot", "--dir", dir}}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := startDetached(cmd); err != nil {
		return err
	}
	return cmd.Process.Release()
}
