//go:build unix && !linux

package gate

import "os/exec"

// startNiced starts cmd: only Linux lets the priority of the one thread that forks be lowered
// without lowering this whole process's.
func startNiced(cmd *exec.Cmd) error { return cmd.Start() }
