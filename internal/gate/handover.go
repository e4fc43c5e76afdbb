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
// than the gate's own work (docs/performance.md). A user who configured a board has each MCP
// event handed, as it was read, to the full CLI's hook, which holds the same gate with the board
// wired in (Config.HandOver).

// handOver runs `mcp-circuit-breaker hook ARGS` (bin) on stdin (what this process read of its own
// stdin, then the rest), this process's stdout and stderr, and returns its exit status. started
// says whether the full CLI ran: once it did, the event is its to answer, whatever err says. The
// environment is passed as it came: the full CLI applies the same trust rules to it
// (internal/userenv).
func handOver(bin string, args []string, stdin io.Reader, stdout, stderr io.Writer) (code int, started bool, err error) {
	// The event goes through a pipe of our own rather than os/exec's copy, whose end Wait would
	// wait for: an agent that never closes the hook's stdin would keep it, and so this process,
	// going after the full CLI had answered and exited.
	pr, pw, err := os.Pipe()
	if err != nil {
		return 0, false, fmt.Errorf("run %s hook: %w", bin, err)
	}
	cmd := exec.Command(bin, append([]string{"hook"}, args...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pr, stdout, stderr
	cmd.Env = os.Environ()
	err = cmd.Start()
	pr.Close()
	if err != nil {
		pw.Close()
		return 0, false, fmt.Errorf("run %s hook: %w", bin, err)
	}
	go func() {
		io.Copy(pw, stdin) // ends when stdin does, or at the write after the full CLI is gone
		pw.Close()
	}()
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
