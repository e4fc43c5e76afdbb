package e2e

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/testservers"
)

// opencodeSettings writes the project's opencode.json: a provider "fake" on
// @ai-sdk/openai-compatible pointed at the fake API, and the cue fixture as local MCP server "fix".
func (p *agentProject) opencodeSettings(t *testing.T, apiURL string) {
	t.Helper()
	p.opencodeConfig(t, "opencode.json", apiURL)
}

// opencodeConfig writes that configuration into the project's file name (Kilo Code, opencode's
// fork, reads the same shape from kilo.json).
func (p *agentProject) opencodeConfig(t *testing.T, name, apiURL string) {
	t.Helper()
	mcp := map[string]any{}
	for _, srv := range p.servers() {
		mcp[srv] = map[string]any{"type": "local", "command": []string{p.h.fixture, "cue"}, "enabled": true, "timeout": p.timeoutMS(10000),
			"environment": map[string]string{testservers.CallLogEnv: p.callLogOf(srv)}}
	}
	writeJSON(t, filepath.Join(p.dir, name), map[string]any{"$schema": "https://opencode.ai/config.json",
		"model": "fake/fake-model", "autoupdate": false, "share": "disabled",
		"provider": map[string]any{"fake": map[string]any{"npm": "@ai-sdk/openai-compatible", "name": "Fake",
			"options": map[string]any{"baseURL": apiURL + "/v1", "apiKey": "sk-fake"},
			"models":  map[string]any{"fake-model": map[string]any{"name": "fake-model", "tool_call": true, "limit": map[string]any{"context": 128000, "output": 4096}}}}},
		"mcp": mcp})
}

// opencodeSession runs `opencode run` in the project against a fake Chat Completions API that
// plays turns, with the hooks' clock at now; sdk is opencode's plugin SDK, installed.
func (p *agentProject) opencodeSession(t *testing.T, opencode, sdk, now string, turns [][]scriptCall) (*fakeOpenAI, session) {
	t.Helper()
	const final = "Done."
	api, srv := newFakeOpenAI(t, turns, final)
	p.opencodeSettings(t, srv.URL)
	// At every start opencode installs its plugin SDK with npm into the configuration directory that
	// holds a plugin, unless it is there already (15 s and a network fetch per session): it is put
	// there from the cache (scripts/install-test-deps opencode-sdk), laid out as opencode lays it out.
	cfg := filepath.Join(p.home, ".config", "opencode")
	for _, name := range []string{"node_modules", "package.json", "package-lock.json"} {
		if out, err := exec.Command("cp", "-R", filepath.Join(sdk, name), filepath.Join(cfg, name)).CombinedOutput(); err != nil {
			t.Fatalf("seeding opencode's plugin SDK: %v\n%s", err, out)
		}
	}
	env := append(slices.Clip(p.env), "TERM=dumb", "OPENCODE_DISABLE_MODELS_FETCH=1", "OPENCODE_DISABLE_AUTOUPDATE=1",
		"OPENCODE_DISABLE_SHARE=1", "MCP_CIRCUIT_NOW="+now)
	s := runAgent(t, p.dir, env, "opencode run --format json", func() { t.Log(api.dump()) },
		opencode, "run", "--format", "json", "-m", "fake/fake-model", "use the fix tools")
	t.Logf("opencode run (%d turns, MCP_CIRCUIT_NOW=%s): %s", len(turns), now, s.took.Round(time.Millisecond))
	if !strings.Contains(s.stdout, `"text":"`+final+`"`) {
		t.Errorf("the run did not end with the scripted answer %q", final)
	}
	return api, s
}

// TestOpencodeGate drives the real opencode CLI (npm opencode-<os>-<arch>, pinned by
// scripts/install-test-deps) offline against a scripted fake Chat Completions API and the cue
// fixture, with the gate's opencode plugin. The model calls echo four times: three calls fail with
// a rate limit (opencode reports a failure only on its event bus, which the plugin forwards; the
// third trips the circuits), the fourth is refused by the plugin's tool.execute.before with our
// reason and never reaches the server. What the gate says after a failure reaches the model in the
// next request's system prompt, the one channel opencode gives after a failed call.
func TestOpencodeGate(t *testing.T) {
	start := time.Now()
	opencode, p := newAgentTest(t, "opencode")
	sdk := installAgent(t, "opencode-sdk")
	p.install(t, "opencode", "--scope", "user")
	p.checkPlugin(t, "opencode", filepath.Join(p.home, ".config", "opencode", "plugin", "mcp-circuit-breaker.js"))
	call := scriptCall{"fix_echo", quotaFail}
	api, _ := p.opencodeSession(t, opencode, sdk, t0, [][]scriptCall{{call}, {call}, {call}, {{"fix_echo", `{}`}}})

	for i := 1; i <= 3; i++ {
		r, ok := api.result(i)
		if !ok {
			t.Fatalf("no tool message came back for call %d", i)
		}
		if r.Text != "upstream quota exceeded" {
			t.Errorf("tool message %d is %q, want the server's error", i, r.Text)
		}
	}
	r, ok := api.result(4)
	if !ok {
		t.Fatal("no tool message came back for call 4")
	}
	t.Logf("tool message 4:\n%s", r.Text)
	if !strings.HasPrefix(r.Text, "⚡ CIRCUIT OPEN — "+serverKey+"\n") || !strings.Contains(r.Text, "Do not retry this tool") {
		t.Errorf("tool message 4 is not the gate's deny reason")
	}
	// The step-2 message and the trip, in the system prompt of the requests after calls 1 and 3.
	bodies := api.requestBodies()
	var sawStep2, sawTrip bool
	for _, b := range bodies {
		sawStep2 = sawStep2 || strings.Contains(b, "failed once (RATE_LIMIT)")
		sawTrip = sawTrip || strings.Contains(b, "⚡ CIRCUIT OPEN — mcp__fix__echo")
	}
	if !sawStep2 || !sawTrip {
		t.Errorf("the model was not told after the failures (step 2: %v, trip: %v)", sawStep2, sawTrip)
	}
	if calls := p.calls(t); !slices.Equal(calls, []string{"echo", "echo", "echo"}) {
		t.Errorf("the server received %q, want three echo calls", calls)
	}

	// The refused call's error on the bus is our own deny: it is not a failure of the tool.
	p.checkFourthBlocked(t)

	// A new session: the plugin puts the open circuits into the system prompt of its first request
	// (from session.created), and the call is refused again.
	api, _ = p.opencodeSession(t, opencode, sdk, "2026-11-29T12:00:10Z", [][]scriptCall{{{"fix_echo", `{}`}}})
	bodies = api.requestBodies()
	told := -1
	for i, b := range bodies {
		if told < 0 && strings.Contains(b, "these MCP circuits are not CLOSED") {
			told = i
		}
	}
	t.Logf("the circuits from session.created reached request %d of %d", told+1, len(bodies))
	if told != 0 {
		t.Errorf("the new session's first request lacks the circuits from session.created")
	}
	if r, _ := api.result(1); !strings.HasPrefix(r.Text, "⚡ CIRCUIT OPEN — "+serverKey) {
		t.Errorf("the new session's call was not refused: %s", r.Text)
	}
	if calls := p.calls(t); len(calls) != 3 {
		t.Errorf("the server received %d calls, want 3", len(calls))
	}
	t.Logf("TestOpencodeGate: %s in all", time.Since(start).Round(time.Millisecond))
}
