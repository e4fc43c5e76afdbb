package gate

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// catchUpNice is how much lower the detached catch-up runs than the hook calls it shares the CPU
// with, once it has saved the provisional snapshot: its forward read may take seconds, while the
// calls made meanwhile (answered from the provisional snapshot) each have a budget of 100 ms. Not
// more: at 10 (a tenth of a fair share) a machine busy with other work stretched a 2 s catch-up
// to 28 s. Before that it runs at the priority it was started with: every call made until the
// provisional snapshot is saved waits for it.
const catchUpNice = 5

// startDetached starts cmd, a process in a session of its own, at this process's priority.
func startDetached(cmd *exec.Cmd) error { return cmd.Start() }

// lowerPriority lowers this process's priority by catchUpNice, for the catch-up's forward read.
// Linux keeps the nice value per thread (a thread the runtime starts later inherits it from the
// one that starts it), so each thread is niced; with autogroup scheduling (the default on desktop
// kernels) the CPU is shared between sessions first, whatever their threads' nice values, so the
// session of its own the catch-up runs in gets the nice value too. Best effort: a kernel that
// refuses leaves the priority as it was.
func lowerPriority() {
	for range 2 { // a thread started while the first pass ran gets the second
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			break
		}
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil {
				continue
			}
			// The system call returns 20 - nice.
			if prio, err := syscall.Getpriority(syscall.PRIO_PROCESS, tid); err == nil && 20-prio < catchUpNice {
				syscall.Setpriority(syscall.PRIO_PROCESS, tid, catchUpNice)
			}
		}
	}
	os.WriteFile("/proc/self/autogroup", []byte(strconv.Itoa(catchUpNice)), 0)
}
