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

// noProcessGroups is the warning every stdio probe carries here, so that the missing group kill is
// said rather than silently skipped.
const noProcessGroups = "this system has no process groups: after the probe only the server's own process was stopped, and programs it started may still be running"

// setProcessGroup is a no-op where process groups do not exist; only the direct child is
// stopped there.
func setProcessGroup(*exec.Cmd) {}

// signalGroup signals the direct child only.
func signalGroup(cmd *exec.Cmd, sig os.Signal) {
	if cmd.Process != nil {
		cmd.Process.Signal(sig)
	}
}
