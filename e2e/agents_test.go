package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/testservers"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// agentRun bounds one headless session of an agent other than Claude Code: a net for a client
// that hangs, not a budget (a session takes seconds on a quiet machine).
const agentRun = 5 * time.Minute

// agentSlots is how many agent clients run at once, whatever the number of parallel scenarios:
// eight Node.js or Bun clients starting together on a 2-core machine that is busy with other work
// starve each other (one opencode session made a single request in 90 s), and a client that
// waits its turn loses nothing, since the scenarios' clocks are fake.
var agentSlots = make(chan struct{}, max(2, runtime.NumCPU()))

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

// newAgentTest starts a test that drives the real client of agent: skipped in -short mode, it
// returns the client install-test-deps installed and a new project with our binaries built.
func newAgentTest(t *testing.T, agent string) (client string, p *agentProject) {
	t.Helper()
	skipShort(t, "drives the real "+agent+" client end to end")
	client = installAgent(t, agent)
	return client, newAgentProject(t, buildOurs(t))
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
	// more are further servers, each the cue fixture too, with a call log of its own (callLogOf).
	more []string
	// toolTimeout, when set, is the agent's timeout on an MCP call, in whole seconds.
	toolTimeout int
	// codexFlags are more flags of codex exec (--ephemeral).
	codexFlags []string
}

// timeoutMS is the agent's timeout on an MCP call in milliseconds: toolTimeout, else def.
func (p *agentProject) timeoutMS(def int) int {
	if p.toolTimeout > 0 {
		return p.toolTimeout * 1000
	}
	return def
}

func (p *agentProject) serverName() string {
	if p.server == "" {
		return "fix"
	}
	return p.server
}

// servers are the names of every MCP server in the agent's configuration, the first one first.
func (p *agentProject) servers() []string {
	return append([]string{p.serverName()}, p.more...)
}

// callLogOf is the call log of the fixture configured as server name: callLog for the first one.
func (p *agentProject) callLogOf(name string) string {
	if name == p.serverName() {
		return p.callLog
	}
	return filepath.Join(p.root, "calls-"+name+".log")
}

// callsOf returns the tools server name received tools/call for, in order.
func (p *agentProject) callsOf(t *testing.T, name string) []string {
	t.Helper()
	return calledTools(t, p.callLogOf(name))
}

// mcpServers is the servers as the mcpServers object most agents read: each the cue fixture,
// with its call log, and more of each one's fields.
func (p *agentProject) mcpServers(more map[string]any) map[string]any {
	out := map[string]any{}
	for _, name := range p.servers() {
		s := map[string]any{"command": p.h.fixture, "args": []string{"cue"},
			"env": map[string]string{testservers.CallLogEnv: p.callLogOf(name)}}
		for k, v := range more {
			s[k] = v
		}
		out[name] = s
	}
	return out
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

// install runs the real `mcp-circuit-breaker install --agent agent` (with args, and --dir the
// project) and logs what it said.
func (p *agentProject) install(t *testing.T, agent string, args ...string) (out, msgs string) {
	t.Helper()
	args = append([]string{"install", "--agent", agent}, args...)
	out, msgs = run(t, p.env, p.dir, 20*time.Second, p.h.cli, append(args, "--dir", p.dir)...)
	t.Logf("mcp-circuit-breaker %s:\n%s%s", strings.Join(args, " "), out, msgs)
	return out, msgs
}

// calls returns the tools the fixture received tools/call for, in order.
func (p *agentProject) calls(t *testing.T) []string {
	t.Helper()
	return calledTools(t, p.callLog)
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
	return strictLedger(t, p.dir)
}

// session is one headless run of an agent: its output and how long it took.
type session struct {
	stdout, stderr string
	took           time.Duration
}

// runAgent runs an agent's headless session in the project and fails the test when it does not
// exit 0 within agentRun. When the test fails, the session's output is logged under label, and
// then dump logs what else explains it (what the fake API received, the agent's own logs).
func runAgent(t *testing.T, dir string, env []string, label string, dump func(), name string, args ...string) session {
	t.Helper()
	agentSlots <- struct{}{}
	defer func() { <-agentSlots }()
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
			t.Logf("%s (%s):\n%s\nstderr:\n%s", label, s.took.Round(time.Millisecond), tail(s.stdout, 16<<10), tail(s.stderr, 8<<10))
			dump()
		}
	})
	if err != nil {
		t.Fatalf("%s: %v (after %s)", filepath.Base(name), err, s.took.Round(time.Millisecond))
	}
	return s
}

// checkFourthBlocked checks the ledger and report after the plugin tests' script (three calls
// that fail with a rate limit, then a fourth the gate refuses): the tool's and the server's
// circuits tripped after two failures each, and call 4 blocked, counted once by report.
func (p *agentProject) checkFourthBlocked(t *testing.T) {
	t.Helper()
	var trips []string
	blocked, failures := 0, 0
	for _, e := range p.ledger(t) {
		switch e.Event {
		case ledger.EventTrip:
			trips = append(trips, e.Tool)
		case ledger.EventBlocked:
			blocked++
			if e.ToolUseID != callID(4) {
				t.Errorf("blocked entry of call %q, want %q", e.ToolUseID, callID(4))
			}
		case ledger.EventFailure:
			failures++
		}
	}
	slices.Sort(trips)
	if !slices.Equal(trips, []string{serverKey, echoTool}) || blocked != 1 || failures != 4 {
		t.Errorf("ledger: trips of %q, %d failures, %d blocked; want trips of %s and %s, 4 failures, 1 blocked", trips, failures, blocked, serverKey, echoTool)
	}
	if out := p.cli(t, t0, "report"); !strings.Contains(out, "Calls blocked: 1") {
		t.Errorf("report lacks \"Calls blocked: 1\":\n%s", out)
	}
}

// checkTripsKeepError checks the ledger after a script whose fourth call is denied: one blocked
// call, the tool's and the server's trips, each keeping the server's own error text want (not
// the agent's wrapping of it).
func (p *agentProject) checkTripsKeepError(t *testing.T, want string) {
	t.Helper()
	var blocked, trips int
	for _, e := range p.ledger(t) {
		switch e.Event {
		case "blocked":
			blocked++
		case "trip":
			trips++
			if e.Error != want {
				t.Errorf("trip of %s keeps the error %q, want %q", e.Tool, e.Error, want)
			}
		}
	}
	if blocked != 1 || trips != 2 {
		t.Errorf("the ledger has %d blocked and %d trip entries, want 1 and 2 (the tool's and the server's)", blocked, trips)
	}
}
