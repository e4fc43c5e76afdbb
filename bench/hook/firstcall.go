//go:build unix

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// firstCalls measures the hook on ledgers with no snapshot (the README's Performance section: the
// first call decides correctly within the hook budget, memory O(circuits), and every later call is
// fast, also while the complete snapshot is still being built). For each size it writes a ledger
// whose target tool's server circuit is OPEN (the tool itself is one the ledger never names, the
// costliest key for a backward read), deletes any snapshot, and runs the hook PreToolUse: every
// call must deny. The first call answers from a backward read, saves the provisional snapshot and
// starts the detached catch-up of the complete one. Right after it, 10 calls at once, then one
// call every 100 ms until the catch-up has saved the complete snapshot (printing when that was,
// after the first call's start): the calls made while it still ran, each timed (median and
// slowest). Then the same on the complete snapshot, side by side: as many calls one every 100 ms
// (5 at least), and 10 at once.
func firstCalls(hook, home, work, sizes string) error {
	fmt.Printf("first calls without a snapshot: hook PreToolUse of an OPEN circuit (deny), wall time and peak RSS per call\n\n")
	fmt.Printf("%-10s %8s %-22s %10s %10s %9s  %s\n", "entries", "MB", "calls", "median", "slowest", "peak RSS", "snapshot")
	for _, f := range strings.Split(sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return fmt.Errorf("-first %q: %v", sizes, err)
		}
		dir := filepath.Join(work, fmt.Sprintf("first-%d", n))
		sd := filepath.Join(dir, ".claude", "mcp_circuit")
		if err := os.MkdirAll(sd, 0o700); err != nil {
			return err
		}
		data, entries, now := generate(n, true, 0, homeSigner(home))
		if err := writeSynced(filepath.Join(sd, ledger.FileName), data); err != nil {
			return err
		}
		data = nil
		os.Remove(filepath.Join(sd, states.SnapshotName))
		os.Remove(filepath.Join(sd, states.ProvisionalName))
		env := baseEnv(home, dir, now)
		mb := float64(fileSize(filepath.Join(sd, ledger.FileName))) / 1e6
		snapState := func() string {
			if b, err := os.ReadFile(filepath.Join(sd, states.SnapshotName)); err == nil {
				return snapshotOffset(b)
			}
			return "none"
		}
		complete := func() bool { return strings.HasPrefix(snapState(), "complete") }
		// done is when the catch-up's complete snapshot appeared, watched from the start.
		firstAt := time.Now()
		doneAt := make(chan time.Duration, 1)
		stopWatch := make(chan struct{})
		defer close(stopWatch)
		go func() {
			for {
				select {
				case <-stopWatch:
					return
				case <-time.After(10 * time.Millisecond):
				}
				if complete() {
					doneAt <- time.Since(firstAt)
					return
				}
			}
		}()
		type sample struct {
			wall   time.Duration
			rss    int64
			during bool          // the complete snapshot was not there yet when the call ended
			ended  time.Duration // when it ended, after the first call's start
		}
		call := func(what string) (sample, error) {
			stdout, wall, rss, err := measure(hook, env)
			if err != nil {
				return sample{}, fmt.Errorf("%s at %d entries: %v", what, n, err)
			}
			if !bytes.Contains(stdout, []byte(`"permissionDecision":"deny"`)) {
				return sample{}, fmt.Errorf("%s at %d entries: the OPEN circuit was not denied: %s", what, n, stdout)
			}
			return sample{wall: wall, rss: rss, during: !complete(), ended: time.Since(firstAt)}, nil
		}
		row := func(what string, ss []sample, state string) {
			if len(ss) == 0 {
				fmt.Printf("%-10d %8.1f %-22s %10s %10s %9s  %s\n", entries, mb, what, "-", "-", "", state)
				return
			}
			walls := make([]time.Duration, len(ss))
			var rss int64
			for i, s := range ss {
				walls[i], rss = s.wall, max(rss, s.rss)
			}
			slices.Sort(walls)
			fmt.Printf("%-10d %8.1f %-22s %10s %10s %7.1fMB  %s\n", entries, mb, what, ms(walls[len(walls)/2]), ms(walls[len(walls)-1]), float64(rss)/1024, state)
		}
		first, err := call("call 1")
		if err != nil {
			return err
		}
		prov := "no provisional snapshot"
		if _, err := os.Stat(filepath.Join(sd, states.ProvisionalName)); err == nil {
			prov = "provisional snapshot saved"
		}
		row("1 (first)", []sample{first}, snapState()+"; "+prov)
		// 10 at once, right after it.
		burst, err := atOnce(10, call)
		if err != nil {
			return err
		}
		var during []sample
		for _, s := range burst {
			if s.during {
				during = append(during, s)
			}
		}
		row("2-11 (10 at once)", burst, fmt.Sprintf("%d of them ended before the complete snapshot was saved", len(during)))
		// Then one every 100 ms while the catch-up runs.
		var paced []sample
		for !complete() && time.Since(firstAt) < 2*time.Minute {
			s, err := call(fmt.Sprintf("call %d", 12+len(paced)))
			if err != nil {
				return err
			}
			paced = append(paced, s)
			if s.during {
				during = append(during, s)
			}
			time.Sleep(100 * time.Millisecond)
		}
		row(fmt.Sprintf("12-%d (every 100 ms)", 11+len(paced)), paced, "until the complete snapshot was saved")
		slowest := sample{}
		for _, s := range during {
			if s.wall > slowest.wall {
				slowest = s
			}
		}
		row("2-… before complete", during, fmt.Sprintf("every call after the first that ended while the catch-up still ran (%d; the slowest ended %s after the first call's start)",
			len(during), ms(slowest.ended)))
		var done time.Duration
		select {
		case done = <-doneAt:
		case <-time.After(2 * time.Minute):
			return fmt.Errorf("at %d entries: the snapshot is not complete 2 min after the first call", n)
		}
		fmt.Printf("%-10d %8.1f %-22s %10s %10s %9s  %s\n", entries, mb, "catch-up done", ms(done), "", "", "complete snapshot saved, after the first call's start: "+snapState())
		// The steady state, beside the calls made during the catch-up: as many calls (5 at
		// least, 100 at most), one every 100 ms, on the complete snapshot.
		var steady []sample
		for i := range min(max(len(paced), 5), 100) {
			s, err := call(fmt.Sprintf("steady call %d", i+1))
			if err != nil {
				return err
			}
			steady = append(steady, s)
			time.Sleep(100 * time.Millisecond)
		}
		row(fmt.Sprintf("%d later (every 100 ms)", len(steady)), steady, "on the complete snapshot")
		// And 10 at once on it, beside the 10 at once above: each deny appends under the lock
		// and syncs, so the slowest of 10 waits for the others' syncs whatever the snapshot.
		burst, err = atOnce(10, call)
		if err != nil {
			return err
		}
		row("10 later, at once", burst, "on the complete snapshot")
	}
	return nil
}

// atOnce runs n calls at the same time.
func atOnce[S any](n int, call func(string) (S, error)) ([]S, error) {
	out := make([]S, n)
	errs := make(chan error, n)
	for i := range out {
		go func() {
			var err error
			out[i], err = call(fmt.Sprintf("call %d of %d at once", i+1, n))
			errs <- err
		}()
	}
	var first error
	for range out {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return out, first
}

func fileSize(name string) int64 {
	fi, err := os.Stat(name)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// snapshotOffset reports how far the snapshot reaches into the ledger, from its header line.
func snapshotOffset(b []byte) string {
	head, _, _ := bytes.Cut(b, []byte("\n"))
	i := bytes.Index(head, []byte(`"offset":`))
	if i < 0 {
		return "unreadable"
	}
	rest := head[i+len(`"offset":`):]
	j := bytes.IndexAny(rest, ",}")
	off, _ := strconv.ParseInt(string(rest[:j]), 10, 64)
	k := bytes.Index(head, []byte(`"mtime_ns":0`))
	if k < 0 {
		return fmt.Sprintf("complete (%d bytes)", off)
	}
	return fmt.Sprintf("at byte %d", off)
}

// runnerEnv marks this program re-run as a small runner: the peak RSS the kernel reports for a
// child includes what its parent had mapped when it forked, so the hook is started from a process
// that holds nothing (not from this one, which holds the generated ledger).
const runnerEnv = "MCB_BENCH_RUNNER"

// measure runs the hook once through the runner and returns its stdout, wall time and peak RSS (KiB).
func measure(hook string, env []string) ([]byte, time.Duration, int64, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, 0, 0, err
	}
	cmd := exec.Command(self)
	cmd.Env = append([]string{runnerEnv + "=" + hook}, env...)
	cmd.Stdin = strings.NewReader(preToolUse)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, 0, 0, fmt.Errorf("%v: %s", err, &stderr)
	}
	// The runner's last line is "wall_ns rss_kib"; the hook's answer comes before it.
	out := bytes.TrimRight(stdout.Bytes(), "\n")
	i := bytes.LastIndexByte(out, '\n')
	var wall, rss int64
	if _, err := fmt.Sscanf(string(out[i+1:]), "%d %d", &wall, &rss); err != nil {
		return nil, 0, 0, fmt.Errorf("runner output %q: %v", out, err)
	}
	return out[:i+1], time.Duration(wall), rss, nil
}

// runner is main when re-run by measure: it runs the hook with this process's stdin and
// environment, copies its stdout, and prints the wall time and the hook's peak RSS.
func runner(hook string) {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, runnerEnv+"=") {
			env = append(env, kv)
		}
	}
	cmd := exec.Command(hook, "hook")
	cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = env, os.Stdin, os.Stdout, os.Stderr
	t0 := time.Now()
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	wall := time.Since(t0)
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = int64(ru.Maxrss) // KiB on Linux
	}
	fmt.Printf("\n%d %d\n", wall.Nanoseconds(), rss)
}
