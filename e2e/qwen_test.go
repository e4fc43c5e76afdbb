package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// qwenCall is the call a model makes to reach MCP tool tool with input in Qwen Code: its MCP
// tools are deferred behind tool_search and tool_call, so the model calls
// tool_call({"name": TOOL, "arguments": INPUT}); hooks still see the MCP tool's own name.
func qwenCall(tool, input string) scriptCall {
	b, _ := json.Marshal(map[string]any{"name": tool, "arguments": json.RawMessage(input)})
	return scriptCall{"tool_call", string(b)}
}

// qwenSettings writes the user settings.json of Qwen Code in the project's HOME: no update
// check, no telemetry, and the cue fixture as the trusted MCP server "fix" (a server that is not
// trusted is declined headless before any hook runs). hooks, when not nil, is its "hooks".
func (p *agentProject) qwenSettings(t *testing.T, hooks map[string]any, timeoutMS int) {
	t.Helper()
	if timeoutMS == 0 {
		timeoutMS = p.timeoutMS(20000)
	}
	dir := filepath.Join(p.home, ".qwen")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, "settings.json")
	settings := map[string]any{}
	if b, err := os.ReadFile(name); err == nil {
		if err := json.Unmarshal(b, &settings); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	settings["general"] = map[string]any{"disableAutoUpdate": true}
	settings["privacy"] = map[string]any{"usageStatisticsEnabled": false}
	settings["telemetry"] = map[string]any{"enabled": false}
	settings["mcpServers"] = p.mcpServers(map[string]any{"timeout": timeoutMS, "trust": true})
	if hooks != nil {
		settings["hooks"] = hooks
	}
	writeJSON(t, name, settings)
}

// qwenSession runs Qwen Code headless (-p) in the project against a fake Chat Completions API
// that plays turns, with the hooks' clock at now.
func (p *agentProject) qwenSession(t *testing.T, qwen, now string, turns [][]scriptCall) (*fakeOpenAI, session) {
	t.Helper()
	const final = "Done."
	api, srv := newFakeOpenAI(t, turns, final)
	env := append(append([]string(nil), p.env...), "TERM=dumb", "MCP_CIRCUIT_NOW="+now)
	s := runAgent(t, p.dir, env, "qwen stream-json", func() { t.Log(api.dump()) },
		"node", qwen, "-p", "use the fix tools", "--auth-type", "openai", "--openai-base-url", srv.URL+"/v1",
		"--openai-api-key", "sk-fake", "-m", "fake-model", "--output-format", "stream-json")
	t.Logf("qwen -p (%d turns, MCP_CIRCUIT_NOW=%s): %s", len(turns), now, s.took.Round(time.Millisecond))
	if !strings.Contains(s.stdout, final) {
		t.Errorf("the session did not end with the scripted answer %q", final)
	}
	return api, s
}

// TestQwenGate drives the real Qwen Code CLI (headless -p, pinned by scripts/install-test-deps
// qwen) against a fake Chat Completions API and the cue fixture: the model calls echo (through
// Qwen's tool_call, behind which it defers MCP tools) four times, each failing with a rate limit.
// PostToolUseFailure records each failure and appends our step message to the tool's result; the
// third trips the circuits, the fourth is denied by PreToolUse before it reaches the server, and
// the model reads our reason as the tool's result.
func TestQwenGate(t *testing.T) {
	qwen, p := newAgentTest(t, "qwen")
	p.install(t, "qwen", "--scope", "user")
	p.qwenSettings(t, nil, 0)
	call := qwenCall(echoTool, cue(quotaError))
	api, _ := p.qwenSession(t, qwen, t0, [][]scriptCall{{call}, {call}, {call}, {call}})
	logResults(t, api, 4)
	for i, want := range map[int]string{1: "failed once (RATE_LIMIT)", 2: "failed twice in a row (RATE_LIMIT", 3: "⚡ CIRCUIT OPEN — " + serverKey} {
		if r, ok := api.result(i); !ok || !strings.Contains(r.Text, quotaError) || !strings.Contains(r.Text, "mcp-circuit-breaker: ") || !strings.Contains(r.Text, want) {
			t.Errorf("call %d: the model read %q; want the server's error with our %q", i, r.Text, want)
		}
	}
	if r, ok := api.result(4); !ok || !strings.HasPrefix(r.Text, "⚡ CIRCUIT OPEN — "+serverKey+"\n") || !strings.Contains(r.Text, "Do not retry this tool") {
		t.Errorf("call 4 was not denied with our reason: %q", r.Text)
	}
	if calls := p.calls(t); len(calls) != 3 {
		t.Errorf("the MCP server received %d calls (%q), want 3", len(calls), calls)
	}
	// The ledger keeps what the server said, not Qwen's dump of the call around it.
	p.checkTripsKeepError(t, quotaError)
}
