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

// handOver runs `mcp-circuit-breaker hook ARGS` (bin) on this process's own stdin, stdout and
// stderr and returns its exit status. The environment is passed as it came: the full CLI
// applies the same trust rules to it (internal/userenv).
func handOver(bin string, args []string, stdin io.Reader, stdout, stderr io.Writer) (int, error) {
	cmd := exec.Command(bin, append([]string{"hook"}, args...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	cmd.Env = os.Environ()
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.Exited() {
		return ee.ExitCode(), nil
	}
	if err != nil {
		return 0, fmt.Errorf("run %s hook: %w", bin, err)
	}
	return 0, nil
}
