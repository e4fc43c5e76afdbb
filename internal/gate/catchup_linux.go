package gate

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
)

// catchUpNice is how much lower the detached catch-up runs than the hook calls it shares the CPU
// with: it may take seconds, while the calls made meanwhile (answered from the provisional
// snapshot) each have a budget of 100 ms. Not more: at 10 (a tenth of a fair share) a machine
// busy with other work stretched a 2 s catch-up to 28 s.
const catchUpNice = 5

// startNiced starts cmd, a process in a session of its own, with its priority lowered by
// catchUpNice. Linux keeps the nice value per thread and a child inherits the forking thread's,
// so the fork runs on a thread of its own that is niced first and then ends (it is never
// unlocked), leaving this process's other threads as they were. With autogroup scheduling (the
// default on desktop kernels) the CPU is shared between sessions first, whatever their threads'
// nice values: the child's new session gets the nice value too. That is written only once Start
// has returned, when the child has called setsid and exec'd, so it never lowers this session's.
func startNiced(cmd *exec.Cmd) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if prio, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0); err == nil {
			// The system call returns 20 - nice.
			syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), 20-prio+catchUpNice)
		}
		done <- cmd.Start()
	}()
	if err := <-done; err != nil {
		return err
	}
	// Best effort: no autogroup support, or a kernel that refuses, leaves the threads' nice.
	os.WriteFile("/proc/"+strconv.Itoa(cmd.Process.Pid)+"/autogroup", []byte(strconv.Itoa(catchUpNice)), 0)
	return nil
}
