package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/testservers"
)

// copilotTool is the name Copilot CLI gives MCP tool TOOL of server SERVER, for the model and
// for hooks alike: SERVER-TOOL.
func copilotTool(server, tool string) string { return server + "-" + tool }

// copilotMCPConfig writes the user mcp-config.json of Copilot CLI in the project's HOME: the cue
// fixture as the local MCP server "fix".
func (p *agentProject) copilotMCPConfig(t *testing.T, timeoutMS int) string {
	t.Helper()
	if timeoutMS == 0 {
		timeoutMS = 20000
	}
	dir := filepath.Join(p.home, ".copilot")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeJSON(t, filepath.Join(dir, "mcp-config.json"), map[string]any{"mcpServers": map[string]any{"fix": map[string]any{
		"type": "local", "command": p.h.fixture, "args": []string{"cue"},
		"env": map[string]string{testservers.CallLogEnv: p.callLog}, "tools": []string{"*"}, "timeout": timeoutMS}}})
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
	s := runAgent(t, p.dir, env, func(s session) {
		t.Logf("copilot --output-format json (%s):\n%s\nstderr:\n%s", s.took.Round(time.Millisecond), tail(s.stdout, 16<<10), tail(s.stderr, 8<<10))
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

// TestCopilotSmoke is phase A's check of the harness: a user hooks file runs a hook on
// preToolUse whose deny the model reads.
func TestCopilotSmoke(t *testing.T) {
	copilot := installAgent(t, "copilot")
	h := buildOurs(t)
	p := newAgentProject(t, h)
	dir := p.copilotMCPConfig(t, 0)
	script := filepath.Join(p.root, "deny.sh")
	logf := filepath.Join(p.root, "hook.log")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ncat >> "+logf+"\necho >> "+logf+"\necho '{\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"SMOKE-DENY\"}'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeJSON(t, filepath.Join(dir, "hooks", "smoke.json"), map[string]any{"version": 1, "hooks": map[string]any{
		"preToolUse": []any{map[string]any{"type": "command", "bash": script, "timeoutSec": 10}}}})
	api, _ := p.copilotSession(t, copilot, t0, [][]scriptCall{{{copilotTool("fix", "echo"), cue("upstream quota exceeded")}}})
	r, _ := api.result(1)
	b, _ := os.ReadFile(logf)
	t.Logf("output 1: %q beside %q\nhook stdin: %s", r.Text, r.Beside, b)
	if !strings.Contains(r.Text, "SMOKE-DENY") {
		t.Error("not denied")
	}
}
