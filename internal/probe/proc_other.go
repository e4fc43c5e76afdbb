//go:build !unix

package probe

import (
	"os"
	"os/exec"
)

var (
	sigTerm = os.Kill // no SIGTERM to deliver: kill at once
	sigKill = os.Kill
)

// setProcessGroup is a no-op where process groups do not exist; only the direct child is
// stopped there.
func setProcessGroup(*exec.Cmd) {}

// signalGroup signals the direct child only.
func signalGroup(cmd *exec.Cmd, sig os.Signal) {
	if cmd.Process != nil {
		cmd.Process.Signal(sig)
	}
}
