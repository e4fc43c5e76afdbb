package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/testservers"
)

// codexHome writes the project's CODEX_HOME: config.toml with the fake model provider (the
// Responses API at apiURL) and the cue fixture as MCP server "fix".
func (p *agentProject) codexHome(t *testing.T, apiURL string, toolTimeoutS int) string {
	t.Helper()
	home := filepath.Join(p.home, ".codex")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if toolTimeoutS == 0 {
		toolTimeoutS = 20
	}
	config := fmt.Sprintf(`model = "gpt-5"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "workspace-write"

[model_providers.fake]
name = "fake"
base_url = %q
wire_api = "responses"
env_key = "FAKE_OPENAI_KEY"
request_max_retries = 0
stream_max_retries = 0

[mcp_servers.fix]
command = %q
args = ["cue"]
env = { %s = %q }
tool_timeout_sec = %d
startup_timeout_sec = 20
`, apiURL+"/v1", p.h.fixture, testservers.CallLogEnv, p.callLog, toolTimeoutS)
	name := filepath.Join(home, "config.toml")
	if b, err := os.ReadFile(name); err == nil {
		// Keep what install wrote (hooks trust state) after ours.
		config += "\n" + string(b)
	}
	if err := os.WriteFile(name, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	return home
}

// codexTrustHash is the hash Codex keeps for a command hook it trusts: SHA-256 over the
// compact JSON, keys sorted, of {event_name, hooks: [{async, command, timeout, type}], matcher}.
func codexTrustHash(event, matcher, command string, timeout int) string {
	id := map[string]any{"event_name": event, "hooks": []map[string]any{{"async": false, "command": command, "timeout": timeout, "type": "command"}}}
	if matcher != "" {
		id["matcher"] = matcher
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(id)
	sum := sha256.Sum256(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// codexSession runs `codex exec` in the project against a fake Responses API that plays turns,
// with the hooks' clock at now.
func (p *agentProject) codexSession(t *testing.T, codex, now string, turns [][]scriptCall) (*fakeOpenAI, session) {
	t.Helper()
	const final = "Done."
	api, srv := newFakeOpenAI(t, turns, final)
	home := p.codexHome(t, srv.URL, 0)
	env := append(append([]string(nil), p.env...), "CODEX_HOME="+home, "FAKE_OPENAI_KEY=sk-fake", "MCP_CIRCUIT_NOW="+now)
	s := runAgent(t, p.dir, env, func(s session) {
		t.Logf("codex exec --json (%s):\n%s\nstderr:\n%s", s.took.Round(time.Millisecond), tail(s.stdout, 16<<10), tail(s.stderr, 8<<10))
		t.Log(api.dump())
	}, codex, "exec", "--json", "--skip-git-repo-check", "use the fix tools")
	t.Logf("codex exec (%d turns, MCP_CIRCUIT_NOW=%s): %s", len(turns), now, s.took.Round(time.Millisecond))
	if !strings.Contains(s.stdout, final) {
		t.Errorf("the session did not end with the scripted answer %q", final)
	}
	return api, s
}

// TestCodexSmoke is phase A's check of the harness: a hand-written, trusted hooks.json runs our
// hook on PreToolUse, and a circuit tripped beforehand through the CLI is denied.
func TestCodexSmoke(t *testing.T) {
	codex := installAgent(t, "codex")
	h := buildOurs(t)
	p := newAgentProject(t, h)
	home := filepath.Join(p.home, ".codex")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	command := fmt.Sprintf("'%s' hook", h.hookBin)
	writeJSON(t, filepath.Join(home, "hooks.json"), map[string]any{"hooks": map[string]any{
		"PreToolUse": []any{map[string]any{"matcher": "mcp__.*", "hooks": []any{map[string]any{"type": "command", "command": command, "timeout": 10}}}},
	}})
	state := fmt.Sprintf("[hooks.state.%q]\ntrusted_hash = %q\n", filepath.Join(home, "hooks.json")+":pre_tool_use:0:0",
		codexTrustHash("pre_tool_use", "mcp__.*", command, 10))
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(state), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		p.cli(t, t0, "record", echoTool, "--error", "Connection closed")
	}
	api, _ := p.codexSession(t, codex, t0, [][]scriptCall{{{echoTool, `{}`}}})
	r, ok := api.result(1)
	if !ok {
		t.Fatal("no output for call 1")
	}
	t.Logf("output 1: %q beside %q", r.Text, r.Beside)
	if !strings.Contains(r.Text, "Tool call blocked by PreToolUse hook: ⚡ CIRCUIT OPEN") {
		t.Errorf("not denied")
	}
	if c := p.calls(t); len(c) != 0 {
		t.Errorf("server got %v", c)
	}
}
