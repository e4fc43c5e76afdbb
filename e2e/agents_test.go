package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/testservers"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// agentRun bounds one headless session of an agent other than Claude Code.
const agentRun = 90 * time.Second

// installAgent runs scripts/install-test-deps NAME and returns the path it prints (the agent's
// binary, or its JS entry point). Without node or npm the test is skipped; any other failure
// fails it with the script's output.
func installAgent(t *testing.T, name string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("skipped: scripts/install-test-deps is a bash script; the e2e tests run on Linux and macOS")
	}
	for _, tool := range []string{"node", "npm", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipped: %s is not on PATH; scripts/install-test-deps needs node and npm to fetch %s", tool, name)
		}
	}
	script, err := filepath.Abs(filepath.Join("..", "scripts", "install-test-deps"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cmd := exec.Command("bash", script, name)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", script, name, err, stdout.String(), stderr.String())
	}
	path := strings.TrimSpace(stdout.String())
	if msg := strings.TrimSpace(stderr.String()); msg != "" {
		t.Log(msg)
	}
	t.Logf("install-test-deps %s: %s in %s", name, path, time.Since(start).Round(time.Millisecond))
	return path
}

// buildOurs builds our two binaries and the fixture once for a test and returns them.
func buildOurs(t *testing.T) *harness {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bin")
	goBuild(t, bin, module+"/cmd/mcp-circuit-breaker", module+"/cmd/mcp-circuit-breaker-hook", testservers.FixturePackage)
	return &harness{cli: filepath.Join(bin, "mcp-circuit-breaker"),
		hookBin: filepath.Join(bin, "mcp-circuit-breaker-hook"), fixture: filepath.Join(bin, "mcpfixture")}
}

// agentProject is one project directory, a HOME of its own, and the call log of its cue
// fixture (MCP server "fix": tools echo and other, which fail, stall or succeed on cue).
type agentProject struct {
	h                    *harness
	root, dir, home, tmp string
	callLog              string
	env                  []string // HOME, PATH and TMPDIR only: nothing of the caller's leaks in
	// server is the fixture's name in the agent's MCP configuration ("fix" when empty).
	server string
}

func (p *agentProject) serverName() string {
	if p.server == "" {
		return "fix"
	}
	return p.server
}

func newAgentProject(t *testing.T, h *harness) *agentProject {
	t.Helper()
	root := t.TempDir()
	p := &agentProject{h: h, root: root, dir: filepath.Join(root, "proj"), home: filepath.Join(root, "home"),
		tmp: filepath.Join(root, "tmp"), callLog: filepath.Join(root, "calls.log")}
	for _, d := range []string{p.dir, p.home, p.tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p.env = []string{"HOME=" + p.home, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + p.tmp}
	return p
}

// calls returns the tools the fixture received tools/call for, in order.
func (p *agentProject) calls(t *testing.T) []string {
	t.Helper()
	var tools []string
	for _, c := range loggedCalls(t, p.callLog) {
		tools = append(tools, c.Tool)
	}
	return tools
}

// cli runs our CLI in the project at now.
func (p *agentProject) cli(t *testing.T, now string, args ...string) string {
	t.Helper()
	env := append(append([]string(nil), p.env...), "MCP_CIRCUIT_NOW="+now)
	out, _ := run(t, env, p.dir, 20*time.Second, p.h.cli, append(args, "--dir", p.dir)...)
	return out
}

// ledger parses the project's ledger strictly.
func (p *agentProject) ledger(t *testing.T) []ledger.Entry {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(p.dir, ".claude", "mcp_circuit", "circuit_log.yaml"))
	if err != nil {
		t.Fatalf("ledger: %v", err)
	}
	entries, problems := ledger.Parse(data, 1)
	if len(problems) > 0 {
		t.Fatalf("ledger problems: %v\n%s", problems, data)
	}
	return entries
}

// session is one headless run of an agent: its output and how long it took.
type session struct {
	stdout, stderr string
	took           time.Duration
}

// runAgent runs an agent's headless session in the project and fails the test when it does not
// exit 0 within agentRun; dump is called with the session when the test fails.
func runAgent(t *testing.T, dir string, env []string, dump func(session), name string, args ...string) session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), agentRun)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env, cmd.WaitDelay = dir, env, 5*time.Second
	cmd.Stdin = nil // </dev/null: an agent that reads stdin must not wait for the test
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	s := session{stdout: stdout.String(), stderr: stderr.String(), took: time.Since(start)}
	t.Cleanup(func() {
		if t.Failed() {
			dump(s)
		}
	})
	if err != nil {
		t.Fatalf("%s: %v (after %s)", filepath.Base(name), err, s.took.Round(time.Millisecond))
	}
	return s
}
