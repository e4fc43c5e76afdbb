package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// copilotTool is the name Copilot CLI gives MCP tool TOOL of server SERVER, for the model and
// for hooks alike: SERVER-TOOL.
func copilotTool(server, tool string) string { return server + "-" + tool }

// copilotMCPConfig writes the user mcp-config.json of Copilot CLI in the project's HOME: the cue
// fixture as the local MCP server "fix".
func (p *agentProject) copilotMCPConfig(t *testing.T, timeoutMS int) string {
	t.Helper()
	if timeoutMS == 0 {
		timeoutMS = p.timeoutMS(20000)
	}
	dir := filepath.Join(p.home, ".copilot")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeJSON(t, filepath.Join(dir, "mcp-config.json"), map[string]any{"mcpServers": p.mcpServers(map[string]any{
		"type": "local", "tools": []string{"*"}, "timeout": timeoutMS})})
	return dir
}

// copilotSession runs Copilot CLI headless (-p) in the project against a fake Chat Completions
// API that plays turns, with the hooks' clock at now. Its package, unpacked once by
// install-test-deps, is shared read-only through COPILOT_PKG_CACHE_HOME.
func (p *agentProject) copilotSession(t *testing.T, copilot, now string, turns [][]scriptCall) (*fakeOpenAI, session) {
	t.Helper()
	const final = "Done."
	api, srv := newFakeOpenAI(t, turns, final)
	logs := filepath.Join(p.root, "copilot-logs")
	env := append(append([]string(nil), p.env...), "TERM=dumb", "MCP_CIRCUIT_NOW="+now,
		"COPILOT_PKG_CACHE_HOME="+filepath.Join(filepath.Dir(copilot), "pkgcache"),
		"COPILOT_AUTO_UPDATE=false", "COPILOT_OFFLINE=true",
		"COPILOT_PROVIDER_BASE_URL="+srv.URL+"/v1", "COPILOT_PROVIDER_API_KEY=sk-fake", "COPILOT_MODEL=gpt-4.1")
	s := runAgent(t, p.dir, env, "copilot --output-format json", func() {
		if ents, err := os.ReadDir(logs); err == nil {
			for _, e := range ents {
				if b, err := os.ReadFile(filepath.Join(logs, e.Name())); err == nil {
					t.Logf("copilot log %s (last 8 KB):\n%s", e.Name(), tail(string(b), 8<<10))
				}
			}
		}
		t.Log(api.dump())
	}, copilot, "-p", "use the fix tools", "--allow-all-tools", "--no-ask-user", "--disable-builtin-mcps",
		"--output-format", "json", "--log-level", "all", "--log-dir", logs)
	t.Logf("copilot -p (%d turns, MCP_CIRCUIT_NOW=%s): %s", len(turns), now, s.took.Round(time.Millisecond))
	if !strings.Contains(s.stdout, final) {
		t.Errorf("the session did not end with the scripted answer %q", final)
	}
	return api, s
}

// copilotHooks wires our hook for Copilot CLI with the real `mcp-circuit-breaker install --agent
// copilot`: a user hooks file with one camelCase entry per event, each telling the hook its event.
func (p *agentProject) copilotHooks(t *testing.T) {
	t.Helper()
	p.install(t, "copilot", "--scope", "user")
}

// TestCopilotGate drives the real Copilot CLI (-p, BYOK against a fake Chat Completions API,
// offline, pinned by scripts/install-test-deps copilot) and the cue fixture: the model calls
// fix-echo four times, each failing with a rate limit. postToolUseFailure records each failure
// under the canonical key mcp__fix__echo and tells the model; the third trips the circuits, the
// fourth is denied by preToolUse before it reaches the server, with our reason as the tool's result.
func TestCopilotGate(t *testing.T) {
	copilot, p := newAgentTest(t, "copilot")
	p.copilotMCPConfig(t, 0)
	p.copilotHooks(t)
	call := scriptCall{copilotTool("fix", "echo"), cue(quotaError)}
	api, _ := p.copilotSession(t, copilot, t0, [][]scriptCall{{call}, {call}, {call}, {call}})
	logResults(t, api, 4)
	for i, want := range map[int]string{1: "failed once (RATE_LIMIT)", 2: "failed twice in a row (RATE_LIMIT", 3: "⚡ CIRCUIT OPEN — " + serverKey} {
		if r, ok := api.result(i); !ok || !strings.Contains(r.Text, quotaError) || !strings.Contains(r.Beside, "mcp-circuit-breaker: ") || !strings.Contains(r.Beside, want) {
			t.Errorf("call %d: the model read %q with %q beside it; want the server's error and our %q", i, r.Text, r.Beside, want)
		}
	}
	if r, ok := api.result(4); !ok || !strings.HasPrefix(r.Text, "Denied by preToolUse hook: ⚡ CIRCUIT OPEN — "+serverKey+"\n") || !strings.Contains(r.Text, "Do not retry this tool") {
		t.Errorf("call 4 was not denied with our reason: %q", r.Text)
	}
	if calls := p.calls(t); len(calls) != 3 {
		t.Errorf("the MCP server received %d calls (%q), want 3", len(calls), calls)
	}
	// The ledger keeps what the server said, without Copilot's "MCP server 'fix': ".
	p.checkTripsKeepError(t, quotaError)
}
