package gate

import (
	"os/exec"
	"runtime"
	"syscall"
)

// catchUpNice is how much lower the detached catch-up runs than the hook calls it shares the CPU
// with: it may take seconds, while the calls made meanwhile (answered from the provisional
// snapshot) each have a budget of 100 ms.
const catchUpNice = 10

// startNiced starts cmd with its priority lowered by catchUpNice. Linux keeps the nice value per
// thread and a child inherits the forking thread's, so the fork runs on a thread of its own that
// is niced first and then ends (it is never unlocked), leaving this process's other threads as
// they were.
func startNiced(cmd *exec.Cmd) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if prio, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0); err == nil {
			// Getpriority returns 20 - nice on Linux.
			syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), 20-prio+catchUpNice)
		}
		done <- cmd.Start()
	}()
	return <-done
}
