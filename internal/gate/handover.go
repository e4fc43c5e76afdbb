package gate

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
)

// The lean binary links neither YAML nor the fleet board's Redis client: their package
// initialisation and the network and TLS stacks would cost every hook event, MCP or not, more
// than the gate's own work (docs/performance.md). What needs them is rare on the hot path and is
// known before the event is read, so the lean binary hands such a run, untouched, to the full
// CLI's hook, which holds the same gate with everything wired in.

// handOverReason says why the lean binary cannot decide this run itself ("" when it can): a
// fleet board the user configured.
func handOverReason(getenv func(string) string, projectBoard func(func(string) string) bool) string {
	if projectBoard(getenv) {
		return "a fleet-shared board is configured"
	}
	return ""
}

// handOver runs `mcp-circuit-breaker hook ARGS` (bin) on stdin (what this process read of its own
// stdin, then the rest), this process's stdout and stderr, and returns its exit status. started
// says whether the full CLI ran: once it did, the event is its to answer, whatever err says. The
// environment is passed as it came: the full CLI applies the same trust rules to it
// (internal/userenv).
func handOver(bin string, args []string, stdin io.Reader, stdout, stderr io.Writer) (code int, started bool, err error) {
	cmd := exec.Command(bin, append([]string{"hook"}, args...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	cmd.Env = os.Environ()
	if err := cmd.Start(); err != nil {
		return 0, false, fmt.Errorf("run %s hook: %w", bin, err)
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.Exited() {
		return ee.ExitCode(), true, nil
	}
	if err != nil {
		return 0, true, fmt.Errorf("run %s hook: %w", bin, err)
	}
	return 0, true, nil
}
