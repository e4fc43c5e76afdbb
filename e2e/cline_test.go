package e2e

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/plugin"
)

// clineSettings writes Cline's settings in the project's HOME: the openai-compatible provider
// pointed at the fake API (what `cline auth -p openai-compatible` writes) and the cue fixture as
// MCP server "fix"; install --agent cline puts the gate's plugin in ~/.cline/plugins.
func (p *agentProject) clineSettings(t *testing.T, apiURL string) {
	t.Helper()
	settings := filepath.Join(p.home, ".cline", "data", "settings")
	if err := os.MkdirAll(settings, 0o755); err != nil {
		t.Fatal(err)
	}
	writeJSON(t, filepath.Join(settings, "providers.json"), map[string]any{"version": 1, "lastUsedProvider": "openai-compatible", "modes": map[string]any{},
		"providers": map[string]any{"openai-compatible": map[string]any{"settings": map[string]any{"provider": "openai-compatible", "apiKey": "sk-fake",
			"model": "fake-model", "baseUrl": apiURL + "/v1"}, "updatedAt": "2026-01-01T00:00:00.000Z", "tokenSource": "manual"}}})
	writeJSON(t, filepath.Join(settings, "cline_mcp_settings.json"), map[string]any{"mcpServers": p.mcpServers(map[string]any{
		"disabled": false, "timeout": p.timeoutMS(10000) / 1000})})
}

// checkPlugin checks that install wrote the gate's plugin of agent at name, with the path of the
// hook binary written in.
func (p *agentProject) checkPlugin(t *testing.T, agent, name string) {
	t.Helper()
	got, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("plugin written by install: %v", err)
	}
	want, err := plugin.Source(agent, p.h.hookBin)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("%s is not the plugin of %s with the hook's path %s", name, agent, p.h.hookBin)
	}
}

// freePort is a TCP port on 127.0.0.1 that nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// stopClineHub ends the hub daemon a Cline run leaves behind (it outlives the CLI by design): the
// one process whose command line is Cline's hub serving this project's directory.
func stopClineHub(t *testing.T, dir string) {
	out, err := exec.Command("ps", "-eo", "pid=,args=").Output()
	if err != nil {
		t.Logf("ps: %v; a Cline hub daemon may be left running", err)
		return
	}
	stopped := 0
	defer func() { t.Logf("stopped %d Cline hub daemon(s) serving %s", stopped, dir) }()
	for _, line := range strings.Split(string(out), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 || !strings.Contains(line, "--cline-hub-daemon") || !slices.Contains(fields, dir) {
			continue
		}
		pid, err := strconv.Atoi(fields[0])
		if err != nil {
			continue
		}
		proc, err := os.FindProcess(pid)
		if err != nil || proc.Signal(syscall.SIGTERM) != nil {
			continue
		}
		stopped++
		// Wait for it to go: it writes into HOME, which the test's cleanup removes next.
		deadline := time.Now().Add(5 * time.Second)
		for proc.Signal(syscall.Signal(0)) == nil {
			if time.Now().After(deadline) {
				proc.Kill()
				time.Sleep(100 * time.Millisecond)
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// clineSession runs the Cline CLI headless (--json, auto-approve) in the project against a fake
// Chat Completions API that plays turns, with the hooks' clock at now.
func (p *agentProject) clineSession(t *testing.T, cline, now string, turns [][]scriptCall) (*fakeOpenAI, session) {
	t.Helper()
	const final = "Done."
	api, srv := newFakeOpenAI(t, turns, final)
	p.clineSettings(t, srv.URL)
	// A hub port of its own: the hub a run leaves behind is found by its port, and one serving
	// another test's HOME must not be reused.
	// Cline gives a plugin 4 s to load (CLINE_PLUGIN_IMPORT_TIMEOUT_MS) and then runs without it;
	// on a loaded test machine its Node sandbox can take longer than that to start.
	env := append(slices.Clip(p.env), "TERM=dumb", "CLINE_HUB_PORT="+strconv.Itoa(freePort(t)),
		"CLINE_PLUGIN_IMPORT_TIMEOUT_MS=60000", "MCP_CIRCUIT_NOW="+now)
	t.Cleanup(func() { stopClineHub(t, p.dir) })
	// --retries 10: Cline ends a run after a few failed calls in a row (its consecutive-mistake
	// limit), before a dead server could fail three times.
	// The hub daemon a run leaves behind runs the plugin's hooks with the environment it was
	// started with: a later session must not reuse it (its MCP_CIRCUIT_NOW would be this one's).
	defer stopClineHub(t, p.dir)
	s := runAgent(t, p.dir, env, "cline --json", func() { t.Log(api.dump()) },
		cline, "--json", "--auto-approve", "true", "--retries", "10", "-P", "openai-compatible", "-m", "fake-model", "-c", p.dir, "use the fix tools")
	t.Logf("cline (%d turns, MCP_CIRCUIT_NOW=%s): %s", len(turns), now, s.took.Round(time.Millisecond))
	if !strings.Contains(s.stdout, `"finishReason":"completed"`) || !strings.Contains(s.stdout, `"text":"`+final+`"`) {
		t.Errorf("the run did not complete with the scripted answer %q", final)
	}
	return api, s
}

// TestClineGate drives the real Cline CLI (npm cline, pinned by scripts/install-test-deps) offline
// against a scripted fake Chat Completions API and the cue fixture, with the gate's Cline plugin.
// The model calls echo four times: three calls fail with a rate limit (the third trips the
// circuits), the fourth is skipped by the plugin's beforeTool with our reason and never reaches
// the server, and the run goes on to its final answer (a file hook's deny would have ended it).
func TestClineGate(t *testing.T) {
	start := time.Now()
	cline, p := newAgentTest(t, "cline")
	p.install(t, "cline", "--scope", "user")
	p.checkPlugin(t, "cline", filepath.Join(p.home, ".cline", "plugins", "mcp-circuit-breaker.js"))
	call := scriptCall{"fix__echo", quotaFail}
	api, _ := p.clineSession(t, cline, t0, [][]scriptCall{{call}, {call}, {call}, {{"fix__echo", `{}`}}})

	for i := 1; i <= 3; i++ {
		r, ok := api.result(i)
		if !ok {
			t.Fatalf("no tool message came back for call %d", i)
		}
		t.Logf("tool message %d: %s\nbeside it: %s", i, r.Text, r.Beside)
		// Cline sends the MCP result as JSON, and the plugin's appendContext after it as a
		// <hook_context> message.
		if !strings.Contains(r.Text, "upstream quota exceeded") || !strings.Contains(r.Beside, `<hook_context source="PostToolUse"`) ||
			!strings.Contains(r.Beside, "mcp-circuit-breaker: ") {
			t.Errorf("call %d: the model did not read the server's error and the gate's context after it", i)
		}
	}
	if r, _ := api.result(1); !strings.Contains(r.Beside, "failed once (RATE_LIMIT)") {
		t.Errorf("call 1: no step-2 message")
	}
	if r, _ := api.result(3); !strings.Contains(r.Beside, "⚡ CIRCUIT OPEN — "+serverKey) {
		t.Errorf("call 3: no trip notice")
	}
	r, ok := api.result(4)
	if !ok {
		t.Fatal("no tool message came back for call 4")
	}
	t.Logf("tool message 4: %s", r.Text)
	// The plugin replaces the skipped call's result ({"error": REASON}, as Cline would send it) by
	// the reason itself: plain text, no JSON around it.
	if !strings.HasPrefix(r.Text, "⚡ CIRCUIT OPEN — "+serverKey+"\n") || !strings.Contains(r.Text, "Do not retry this tool") {
		t.Errorf("tool message 4 is not the gate's deny reason, as plain text")
	}
	if calls := p.calls(t); !slices.Equal(calls, []string{"echo", "echo", "echo"}) {
		t.Errorf("the server received %q, want three echo calls", calls)
	}

	// Two failures per key before the trips; the skipped call is not a failure of the tool.
	p.checkFourthBlocked(t)

	// A new run: the plugin's beforeRun tells the model which circuits are open, after the prompt,
	// and the call is skipped again.
	api, _ = p.clineSession(t, cline, "2026-11-29T12:00:10Z", [][]scriptCall{{{"fix__echo", `{}`}}})
	first := api.requestBodies()[0]
	if !strings.Contains(first, `<hook_context source=\"RunStart\">`) || !strings.Contains(first, "these MCP circuits are not CLOSED") {
		t.Errorf("the new run's first request lacks beforeRun's context")
	}
	if r, _ := api.result(1); !strings.Contains(r.Text, "⚡ CIRCUIT OPEN — "+serverKey) {
		t.Errorf("the new run's call was not skipped: %s", r.Text)
	}
	if calls := p.calls(t); len(calls) != 3 {
		t.Errorf("the server received %d calls, want 3", len(calls))
	}
	t.Logf("TestClineGate: %s in all", time.Since(start).Round(time.Millisecond))
}
