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

// firstCalls measures the hook on ledgers with no snapshot (the README's Performance section: the first call decides
// correctly within the hook budget, memory O(circuits), and the saved snapshot makes later calls
// fast). For each size it writes a ledger whose target tool's server circuit is OPEN, deletes any
// snapshot, and runs the hook PreToolUse again and again: every call must deny. The first call
// answers from a backward read and starts the detached catch-up of the snapshot; the second runs at
// once, while it may still be running; then the bench waits for the snapshot to be whole (printing
// how long after the first call's start it was) and shows the steady state: the median and the
// slowest of 5 calls.
func firstCalls(hook, home, work, sizes string) error {
	fmt.Printf("first calls without a snapshot: hook PreToolUse of an OPEN circuit (deny), wall time and peak RSS per call\n\n")
	fmt.Printf("%-10s %8s %6s %10s %9s  %s\n", "entries", "MB", "call", "wall", "peak RSS", "snapshot")
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
		data, entries, now := generate(n, true, 0)
		if err := os.WriteFile(filepath.Join(sd, ledger.FileName), data, 0o600); err != nil {
			return err
		}
		data = nil
		os.Remove(filepath.Join(sd, states.SnapshotName))
		env := baseEnv(home, dir, now)
		snapState := func() string {
			if b, err := os.ReadFile(filepath.Join(sd, states.SnapshotName)); err == nil {
				return snapshotOffset(b)
			}
			return "none"
		}
		firstAt := time.Now()
		for call := 1; call <= 40; call++ {
			if call == 3 {
				// The first call started the detached catch-up: wait for it (bounded), and say
				// how long after the first call's start the snapshot was whole.
				for !strings.HasPrefix(snapState(), "complete") && time.Since(firstAt) < 2*time.Minute {
					time.Sleep(20 * time.Millisecond)
				}
				fmt.Printf("%-10d %8s %6s %10s %9s  %s\n", entries, "", "", ms(time.Since(firstAt)), "", "snapshot state after waiting for the detached catch-up: "+snapState())
			}
			stdout, wall, rss, err := measure(hook, env)
			if err != nil {
				return fmt.Errorf("call %d at %d entries: %v", call, n, err)
			}
			if !bytes.Contains(stdout, []byte(`"permissionDecision":"deny"`)) {
				return fmt.Errorf("call %d at %d entries: the OPEN circuit was not denied: %s", call, n, stdout)
			}
			state := snapState()
			fmt.Printf("%-10d %8.1f %6d %10s %7.1fMB  %s\n", entries, float64(fileSize(filepath.Join(sd, ledger.FileName)))/1e6, call, ms(wall), float64(rss)/1024, state)
			if call >= 2 && strings.HasPrefix(state, "complete") {
				// Later calls: the steady state (median of 5).
				var walls []time.Duration
				var rss int64
				for range 5 {
					_, wall, r, err := measure(hook, env)
					if err != nil {
						return err
					}
					walls, rss = append(walls, wall), max(rss, r)
				}
				slices.Sort(walls)
				fmt.Printf("%-10d %8s %6s %10s %7.1fMB  %s\n", entries, "", "later", ms(walls[2]), float64(rss)/1024, "complete (median of 5 calls)")
				fmt.Printf("%-10d %8s %6s %10s %9s  %s\n", entries, "", "later", ms(walls[4]), "", "complete (slowest of the 5 calls)")
				break
			}
		}
	}
	return nil
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
