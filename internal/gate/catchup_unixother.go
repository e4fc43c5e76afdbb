//go:build unix && !linux

package gate

import (
	"os/exec"
	"syscall"
)

// catchUpNice is how much lower the detached catch-up's forward read runs (catchup_linux.go).
const catchUpNice = 5

// startDetached starts cmd, a process in a session of its own, at this process's priority.
func startDetached(cmd *exec.Cmd) error { return cmd.Start() }

// lowerPriority lowers this process's priority by catchUpNice (here the nice value is the
// process's, for all its threads).
func lowerPriority() {
	if prio, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0); err == nil {
		syscall.Setpriority(syscall.PRIO_PROCESS, 0, prio+catchUpNice)
	}
}
