package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// quotaFail is the cue fixture's input that fails a call as a rate limit (RATE_LIMIT trips the
// tool's and the server's circuits at the third failure).
var quotaFail = cue("upstream quota exceeded")

// geminiSettings writes Gemini CLI's user settings.json in the project's HOME: the API key auth
// type (GOOGLE_GEMINI_BASE_URL alone selects a "gateway" auth that headless mode rejects), no
// update check, no telemetry, and the cue fixture as the trusted MCP server "fix" (an untrusted
// server is invisible headless).
func (p *agentProject) geminiSettings(t *testing.T) {
	t.Helper()
	dir := filepath.Join(p.home, ".gemini")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeJSON(t, filepath.Join(dir, "settings.json"), map[string]any{
		"general":    map[string]any{"disableAutoUpdate": true, "disableUpdateNag": true},
		"privacy":    map[string]any{"usageStatisticsEnabled": false},
		"security":   map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"telemetry":  map[string]any{"enabled": false},
		"mcpServers": p.mcpServers(map[string]any{"timeout": p.timeoutMS(10000), "trust": true}),
	})
}

// checkGeminiHooks checks what install --agent gemini wrote in the project's .gemini/settings.json:
// BeforeTool and AfterTool on every MCP tool and SessionStart, each running the hook binary as a
// shell command line (Gemini CLI's "command" is one), with a timeout in milliseconds.
func (p *agentProject) checkGeminiHooks(t *testing.T) {
	t.Helper()
	name := filepath.Join(p.dir, ".gemini", "settings.json")
	hooks, data := readHookGroups(t, name)
	for ev, matcher := range map[string]string{"BeforeTool": "mcp_.*", "AfterTool": "mcp_.*", "SessionStart": ""} {
		g := hooks[ev]
		if len(g) != 1 || len(g[0].Hooks) != 1 || g[0].Matcher != matcher {
			t.Fatalf("%s: %s: want one handler under matcher %q:\n%s", name, ev, matcher, data)
		}
		// The binary is quoted for the shell only when its path needs it.
		h := g[0].Hooks[0]
		var timeout int
		if len(h.Timeout) > 0 {
			if err := json.Unmarshal(h.Timeout, &timeout); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		if cmd := h.Command; h.Type != "command" || (cmd != p.h.hookBin+" hook --agent gemini" && cmd != shellQuote(p.h.hookBin)+" hook --agent gemini") || timeout < 3000 {
			t.Errorf("%s: %s runs %q (timeout %d ms), want the hook binary with --agent gemini and a timeout in ms", name, ev, h.Command, timeout)
		}
	}
}

// geminiSession runs Gemini CLI headless (-p, stream-json) in the project against a fake Gemini
// API that plays turns, with the hooks' clock at now.
func (p *agentProject) geminiSession(t *testing.T, gemini, now string, turns [][]scriptCall) (*fakeGemini, session) {
	t.Helper()
	return p.geminiSessionIn(t, gemini, p.dir, now, turns)
}

// geminiSessionIn is geminiSession with Gemini CLI started in the folder dir.
func (p *agentProject) geminiSessionIn(t *testing.T, gemini, dir, now string, turns [][]scriptCall) (*fakeGemini, session) {
	t.Helper()
	const final = "Done."
	api, srv := newFakeGemini(t, turns, final)
	env := append(slices.Clip(p.env), "TERM=dumb", "GOOGLE_GEMINI_BASE_URL="+srv.URL, "GEMINI_API_KEY=fake-key",
		"GEMINI_CLI_TRUST_WORKSPACE=true", "MCP_CIRCUIT_NOW="+now)
	s := runAgent(t, dir, env, "gemini stream-json", func() { t.Log(api.log()) },
		"node", gemini, "-p", "use the fix tools", "-m", "gemini-2.5-flash", "--output-format", "stream-json")
	t.Logf("gemini -p (%d turns, MCP_CIRCUIT_NOW=%s): %s", len(turns), now, s.took.Round(time.Millisecond))
	if !strings.Contains(s.stdout, `"content":"`+final+`"`) {
		t.Errorf("the session did not end with the scripted answer %q", final)
	}
	return api, s
}

// TestGeminiCLIGate drives the real Gemini CLI (npm @google/gemini-cli, pinned by
// scripts/install-test-deps) offline against a scripted fake Gemini API and the cue fixture, with
// the gate's BeforeTool, AfterTool and SessionStart hooks. The model calls echo four times: three
// calls fail with a rate limit (the third trips the circuits), the fourth is denied by the
// BeforeTool gate and never reaches the server. Gemini CLI honours only a top-level "decision", and
// drops a failed call's additionalContext, so what the model reads of each call is checked.
func TestGeminiCLIGate(t *testing.T) {
	start := time.Now()
	gemini, p := newAgentTest(t, "gemini")
	p.geminiSettings(t)
	p.install(t, "gemini")
	p.checkGeminiHooks(t)
	call := scriptCall{"mcp_fix_echo", quotaFail}
	api, s := p.geminiSession(t, gemini, t0, [][]scriptCall{{call}, {call}, {call}, {{"mcp_fix_echo", `{}`}}})

	texts := make([]string, 5)
	for i := 1; i <= 4; i++ {
		r, ok := api.result(i)
		if !ok {
			t.Fatalf("no functionResponse came back for call %d", i)
		}
		if !r.IsError {
			t.Errorf("functionResponse %d is not an error: %q", i, r.Text)
		}
		texts[i] = r.Text
		t.Logf("functionResponse %d:\n%s", i, r.Text)
	}
	// 1 and 2: the server's error, then the gate's step-2 message (an AfterTool "deny" replaces
	// the failed result, because Gemini CLI would drop additionalContext there).
	for i, want := range map[int]string{1: "failed once (RATE_LIMIT)", 2: "failed twice in a row (RATE_LIMIT"} {
		if !strings.HasPrefix(texts[i], `The tool failed. Its error, quoted from the server: "upstream quota exceeded"`+"\n\nmcp-circuit-breaker: ") || !strings.Contains(texts[i], want) {
			t.Errorf("functionResponse %d is not the server's error followed by %q", i, want)
		}
	}
	if !strings.Contains(texts[3], "⚡ CIRCUIT OPEN — mcp__fix__echo\n") || !strings.Contains(texts[3], "⚡ CIRCUIT OPEN — "+serverKey+"\n") {
		t.Errorf("functionResponse 3 lacks the trips of the tool's and the server's circuits")
	}
	// 4: blocked before the server; Gemini CLI puts "Tool execution blocked: " before our reason.
	if !strings.HasPrefix(texts[4], "Tool execution blocked: ⚡ CIRCUIT OPEN — "+serverKey+"\n") || !strings.Contains(texts[4], "Do not retry this tool") {
		t.Errorf("functionResponse 4 is not the gate's deny")
	}
	if calls := p.calls(t); !slices.Equal(calls, []string{"echo", "echo", "echo"}) {
		t.Errorf("the server received %q, want three echo calls", calls)
	}
	// stream-json: the fourth call is reported as blocked by policy.
	if !strings.Contains(s.stdout, `"error":{"type":"policy_violation","message":"Tool execution blocked: ⚡ CIRCUIT OPEN`) {
		t.Errorf("the stream does not report the fourth call as blocked")
	}

	var trips []string
	blocked := 0
	for _, e := range p.ledger(t) {
		switch e.Event {
		case ledger.EventTrip:
			trips = append(trips, e.Tool)
		case ledger.EventBlocked:
			blocked++
		}
	}
	slices.Sort(trips)
	if !slices.Equal(trips, []string{serverKey, echoTool}) || blocked != 1 {
		t.Errorf("ledger: trips of %q and %d blocked, want trips of %s and %s and 1 blocked", trips, blocked, serverKey, echoTool)
	}
	if out := p.cli(t, t0, "report"); !strings.Contains(out, "Calls blocked: 1") {
		t.Errorf("report lacks \"Calls blocked: 1\":\n%s", out)
	}

	// A new session: SessionStart puts the open circuits before the prompt.
	api, _ = p.geminiSession(t, gemini, "2026-11-29T12:00:10Z", [][]scriptCall{{{"mcp_fix_echo", `{}`}}})
	var first struct {
		Contents []struct {
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"contents"`
	}
	if err := json.Unmarshal([]byte(api.first()), &first); err != nil {
		t.Fatalf("the new session's first request: %v", err)
	}
	var prompt string
	for _, c := range first.Contents {
		for _, part := range c.Parts {
			if strings.Contains(part.Text, "use the fix tools") {
				prompt = part.Text
			}
		}
	}
	if !strings.HasPrefix(prompt, "<hook_context>mcp-circuit-breaker: ") || !strings.Contains(prompt, "these MCP circuits are not CLOSED") ||
		!strings.Contains(prompt, echoTool+": OPEN (RATE_LIMIT") {
		t.Errorf("the new session's prompt does not start with SessionStart's context:\n%s", prompt)
	}
	if r, _ := api.result(1); !strings.HasPrefix(r.Text, "Tool execution blocked: ⚡ CIRCUIT OPEN") {
		t.Errorf("the new session's call was not denied: %q", r.Text)
	}
	t.Logf("TestGeminiCLIGate: %s in all", time.Since(start).Round(time.Millisecond))
}
