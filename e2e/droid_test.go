package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// droidConfig writes Droid's configuration for a session against the fake Chat Completions API at
// apiURL: a custom model "fake-model" (Factory's bring-your-own-key models: provider
// generic-chat-completion-api, which needs no Factory login) in ~/.factory/settings.json, and the cue
// fixture as the project's MCP servers in .factory/mcp.json.
func (p *agentProject) droidConfig(t *testing.T, apiURL string) {
	t.Helper()
	for _, d := range []string{filepath.Join(p.home, ".factory"), filepath.Join(p.dir, ".factory")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeJSON(t, filepath.Join(p.home, ".factory", "settings.json"), map[string]any{
		"customModels": []any{map[string]any{"model": "fake-model", "displayName": "Fake", "baseUrl": apiURL + "/v1",
			"apiKey": "sk-fake", "provider": "generic-chat-completion-api", "maxOutputTokens": 4096}},
	})
	// Droid's timeout on an MCP call is the server's "timeout", in ms (180000 when absent).
	writeJSON(t, filepath.Join(p.dir, ".factory", "mcp.json"), map[string]any{"mcpServers": p.mcpServers(map[string]any{"type": "stdio", "timeout": p.timeoutMS(180000)})})
}

// droidSession runs `droid exec` in the project against a fake Chat Completions API that plays
// turns, with the hooks' clock at now.
func (p *agentProject) droidSession(t *testing.T, droid, now string, turns [][]scriptCall) (*fakeOpenAI, session) {
	t.Helper()
	const final = "Done."
	api, srv := newFakeOpenAI(t, turns, final)
	p.droidConfig(t, srv.URL)
	env := append(slices.Clip(p.env), "TERM=dumb", "FACTORY_DROID_AUTO_UPDATE_ENABLED=false", "MCP_CIRCUIT_NOW="+now)
	s := runAgent(t, p.dir, env, "droid exec", func() { t.Log(api.dump()) },
		droid, "exec", "--auto", "high", "-o", "json", "-m", "custom:fake-model", "use the fix tools")
	t.Logf("droid exec (%d turns, MCP_CIRCUIT_NOW=%s): %s", len(turns), now, s.took.Round(time.Millisecond))
	if !strings.Contains(s.stdout, final) {
		t.Errorf("the run did not end with the scripted answer %q", final)
	}
	return api, s
}

// droidDriver drives Factory Droid through the scenarios: its hooks in the project's
// .factory/settings.json, MCP tools named <server>___<tool>.
func droidDriver(droid string) agentDriver {
	return agentDriver{name: "droid", denyPrefix: "Error: ", parallel: true,
		call:  func(server, tool, input string) scriptCall { return scriptCall{server + "___" + tool, input} },
		setup: func(t *testing.T, p *agentProject) { p.install(t, "droid") },
		session: func(t *testing.T, p *agentProject, now string, turns [][]scriptCall) modelResults {
			api, _ := p.droidSession(t, droid, now, turns)
			return api
		}}
}
