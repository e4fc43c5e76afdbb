package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/testservers"
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
		timeoutMS = 20000
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
	settings["mcpServers"] = map[string]any{"fix": map[string]any{"command": p.h.fixture, "args": []string{"cue"},
		"env": map[string]string{testservers.CallLogEnv: p.callLog}, "timeout": timeoutMS, "trust": true}}
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
	s := runAgent(t, p.dir, env, func(s session) {
		t.Logf("qwen stream-json (%s):\n%s\nstderr:\n%s", s.took.Round(time.Millisecond), tail(s.stdout, 16<<10), tail(s.stderr, 8<<10))
		t.Log(api.dump())
	}, "node", qwen, "-p", "use the fix tools", "--auth-type", "openai", "--openai-base-url", srv.URL+"/v1",
		"--openai-api-key", "sk-fake", "-m", "fake-model", "--output-format", "stream-json")
	t.Logf("qwen -p (%d turns, MCP_CIRCUIT_NOW=%s): %s", len(turns), now, s.took.Round(time.Millisecond))
	if !strings.Contains(s.stdout, final) {
		t.Errorf("the session did not end with the scripted answer %q", final)
	}
	return api, s
}

// TestQwenSmoke is phase A's check of the harness: Qwen Code's Claude-format hooks run our hook
// as it is, and three failures trip the circuit that denies the fourth call.
func TestQwenSmoke(t *testing.T) {
	qwen := installAgent(t, "qwen")
	h := buildOurs(t)
	p := newAgentProject(t, h)
	command := fmt.Sprintf("'%s' hook", h.hookBin)
	group := func(matcher string) []any {
		g := map[string]any{"hooks": []any{map[string]any{"type": "command", "command": command, "timeout": 10, "name": "mcp-circuit-breaker"}}}
		if matcher != "" {
			g["matcher"] = matcher
		}
		return []any{g}
	}
	p.qwenSettings(t, map[string]any{"PreToolUse": group("mcp__.*"), "PostToolUse": group("mcp__.*"),
		"PostToolUseFailure": group("mcp__.*"), "SessionStart": group("")}, 0)
	call := qwenCall(echoTool, cue("upstream quota exceeded"))
	api, _ := p.qwenSession(t, qwen, t0, [][]scriptCall{{call}, {call}, {call}, {call}})
	for i := 1; i <= 4; i++ {
		r, _ := api.result(i)
		t.Logf("output %d: %q beside %q", i, r.Text, r.Beside)
	}
	if c := p.calls(t); len(c) != 3 {
		t.Errorf("server got %v", c)
	}
}
