//go:build unix

package probe

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/mcpconfig"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/testservers"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// Binaries built once for the whole package by TestMain.
var (
	fixtureBin    string // internal/testservers/cmd/mcpfixture
	everythingBin string // the go-sdk example server "everything"
)

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	bins, cleanup, err := testservers.BuildBinaries("probe-test-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cleanup()
	fixtureBin, everythingBin = bins.Fixture, bins.Everything
	return m.Run()
}

// stdio returns a stdio server definition.
func stdio(name, command string, args ...string) mcpconfig.Server {
	return mcpconfig.Server{Name: name, Sanitized: ledger.Sanitize(name), Transport: mcpconfig.TransportStdio, Command: command, Args: args}
}

// httpServer returns a streamable HTTP server definition.
func httpServer(name, url string) mcpconfig.Server {
	return mcpconfig.Server{Name: name, Sanitized: ledger.Sanitize(name), Transport: mcpconfig.TransportHTTP, URL: url}
}

func toolNames(tools []Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}

func hasTool(tools []Tool, name string) bool { return findTool(tools, name) != nil }

// startServer starts a long-running server process (not through a shell) in its own process
// group with extra environment variables, and kills the group when the test ends.
func startServer(t *testing.T, env []string, name string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		if t.Failed() {
			t.Logf("%s output:\n%s", name, out.String())
		}
	})
	return cmd
}
