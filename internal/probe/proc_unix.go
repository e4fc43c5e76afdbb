//go:build unix

package probe

import (
	"os/exec"
	"syscall"
)

const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

// noProcessGroups is empty: process groups exist, and the whole group is killed after a probe.
const noProcessGroups = ""

// setProcessGroup makes the child the leader of a new process group, so that everything it
// starts can be signalled at once.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends sig to the child's whole process group. ESRCH (nothing left) is fine.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if cmd.Process == nil {
		return
	}
	// With Setpgid the group ID is the leader's PID.
	syscall.Kill(-cmd.Process.Pid, sig)
}
