package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/testservers"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/yamlfile"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

const (
	otherTool = "mcp__fix__other"
	t0        = "2026-11-29T12:00:00Z"
)

// harness is what every scenario shares: the Claude Code binary and our binaries, built once.
type harness struct {
	claude, cli, hookBin, fixture string
}

// scenarioProject is one project directory with the hooks installed and the cue fixture as MCP
// server "fix" (tools echo and other, which fail, stall or succeed as their arguments say).
type scenarioProject struct {
	h                  *harness
	root, dir          string
	env                []string
	callLog, mcpConfig string
	// stream is the stream-json of the last session run.
	stream []byte
}

// cue is the input of a cue tool call: fail with text, or sleep, or succeed with {}.
func cue(fail string) string {
	if fail == "" {
		return `{}`
	}
	b, _ := json.Marshal(testservers.CueInput{Fail: fail})
	return string(b)
}

// TestClaudeCodeScenarios drives the real Claude Code client through what users meet, one
// scenario per subtest, run in parallel: each its own project, HOME, fake Messages API and
// fixture server. The model's turns are scripted; the fixture fails on cue, as each call's
// arguments say; MCP_CIRCUIT_NOW moves the hooks' clock between sessions.
func TestClaudeCodeScenarios(t *testing.T) {
	skipShort(t, "drives real processes end to end")
	start := time.Now()
	claude := installClaude(t)
	bin := filepath.Join(t.TempDir(), "bin")
	goBuild(t, bin, module+"/cmd/mcp-circuit-breaker", module+"/cmd/mcp-circuit-breaker-hook", testservers.FixturePackage)
	h := &harness{claude: claude, cli: filepath.Join(bin, "mcp-circuit-breaker"),
		hookBin: filepath.Join(bin, "mcp-circuit-breaker-hook"), fixture: filepath.Join(bin, "mcpfixture")}
	t.Cleanup(func() {
		t.Logf("scenarios: %s in all, the download and build included", time.Since(start).Round(time.Millisecond))
	})

	t.Run("401 denies every tool of the server", func(t *testing.T) {
		t.Parallel()
		p := h.newProject(t, "", 0)
		api := p.run(t, t0, [][]scriptCall{{{echoTool, cue("HTTP 401 Unauthorized: invalid_token")}}, {{otherTool, `{}`}}})
		if r := mustResult(t, api, 1); !strings.Contains(r.Text, "⚡ CIRCUIT OPEN — "+serverKey) || !strings.Contains(r.Text, "Failure type: AUTH") {
			t.Errorf("result 1 lacks the AUTH trip of the server circuit:\n%s", r.Text)
		}
		if r := mustResult(t, api, 2); !strings.HasPrefix(r.Text, "PreToolUse:"+otherTool+" hook error: ⚡ CIRCUIT OPEN — "+serverKey+"\n") {
			t.Errorf("result 2 (another tool of the server) was not denied by the server circuit:\n%s", r.Text)
		}
		if calls := p.calls(t); !slices.Equal(calls, []string{"echo"}) {
			t.Errorf("the server received %q, want only the first echo", calls)
		}
	})

	t.Run("ADMIN_GATED waits for a person, offers 1b, and the next session is told", func(t *testing.T) {
		t.Parallel()
		p := h.newProject(t, "", 0)
		api := p.run(t, t0, [][]scriptCall{{{echoTool, cue("This action requires admin approval: pending org enablement")}}, {{echoTool, `{}`}}})
		r := mustResult(t, api, 2)
		for _, want := range []string{"PreToolUse:" + echoTool + " hook error: ⚡ CIRCUIT OPEN", "Failure type: ADMIN_GATED", "An admin must act", "No automatic trial", "\n1b) "} {
			if !strings.Contains(r.Text, want) {
				t.Errorf("the deny lacks %q:\n%s", want, r.Text)
			}
		}
		// A new session an hour later: SessionStart re-tells the model, and the call is still denied.
		api = p.run(t, "2026-11-29T13:00:00Z", [][]scriptCall{{{echoTool, `{}`}}})
		first := api.first()
		for _, want := range []string{"these MCP circuits are not CLOSED", echoTool + ": OPEN (ADMIN_GATED, admin_approval, 1 consecutive failure)", "An admin must act"} {
			if !strings.Contains(first, want) {
				t.Errorf("the new session's first request lacks SessionStart's %q", want)
			}
		}
		if r := mustResult(t, api, 1); !strings.HasPrefix(r.Text, "PreToolUse:"+echoTool+" hook error: ⚡ CIRCUIT OPEN") {
			t.Errorf("the new session's call was not denied:\n%s", r.Text)
		}
		if calls := p.calls(t); !slices.Equal(calls, []string{"echo"}) {
			t.Errorf("the server received %q, want only the first echo", calls)
		}
	})

	t.Run("429 retry hint is honoured", func(t *testing.T) {
		t.Parallel()
		// A 1 s cooldown: only the server's hint (120 s) can hold the circuit open longer.
		p := h.newProject(t, "defaults:\n  cooldown: 1s\n  jitter: 0\n", 0)
		fail := cue("HTTP 429 Too Many Requests; Retry-After: 120")
		api := p.run(t, t0, [][]scriptCall{{{echoTool, fail}}, {{echoTool, fail}}, {{echoTool, fail}}, {{echoTool, `{}`}}})
		if r := mustResult(t, api, 4); !strings.HasPrefix(r.Text, "PreToolUse:"+echoTool+" hook error: ⚡ CIRCUIT OPEN") || !strings.Contains(r.Text, "2026-11-29T12:02:00Z (in 2m0s)") {
			t.Errorf("result 4 is not a deny until the hint (12:02:00, in 2m0s):\n%s", r.Text)
		}
		trips := 0
		for _, e := range p.ledger(t) {
			if e.Event == ledger.EventTrip {
				trips++
				if e.OpenUntil.Sub(e.At) < 120*time.Second {
					t.Errorf("%s: open_until %s is before the 120 s hint", e.Tool, e.OpenUntil)
				}
			}
		}
		if trips != 2 {
			t.Errorf("%d trips, want the tool's and the server's", trips)
		}
	})

	trip := [][]scriptCall{{{echoTool, cue("Connection closed")}}, {{echoTool, cue("Connection closed")}}, {{echoTool, cue("Connection closed")}}}
	t.Run("half-open trial succeeds", func(t *testing.T) {
		t.Parallel()
		p := h.newProject(t, "", 0)
		p.run(t, t0, trip)
		api := p.run(t, "2026-11-29T12:02:00Z", [][]scriptCall{{{echoTool, `{}`}}})
		r := mustResult(t, api, 1)
		if r.IsError || !strings.HasPrefix(r.Text, "ok") || !strings.Contains(r.read(), "circuit CLOSED for") {
			t.Errorf("the trial did not go through and close the circuits:\n%s", r.read())
		}
		if out := p.cli(t, "2026-11-29T12:02:00Z", "status"); !strings.Contains(out, "All circuits CLOSED") {
			t.Errorf("status after the trial:\n%s", out)
		}
	})

	t.Run("half-open trial fails and re-opens with a doubled cooldown", func(t *testing.T) {
		t.Parallel()
		p := h.newProject(t, "", 0)
		p.run(t, t0, trip)
		api := p.run(t, "2026-11-29T12:02:00Z", [][]scriptCall{{{echoTool, cue("Connection closed")}}, {{echoTool, `{}`}}})
		if r := mustResult(t, api, 1); !strings.Contains(r.read(), "⚡ CIRCUIT OPEN — ") {
			t.Errorf("the failed trial did not re-open the circuit:\n%s", r.read())
		}
		if r := mustResult(t, api, 2); !strings.HasPrefix(r.Text, "PreToolUse:"+echoTool+" hook error: ⚡ CIRCUIT OPEN") {
			t.Errorf("the call after the failed trial was not denied:\n%s", r.Text)
		}
		var reopen *ledger.Entry
		entries := p.ledger(t)
		for i, e := range entries {
			if e.Event == ledger.EventTrip && e.Tool == serverKey && e.At.Format(time.RFC3339) == "2026-11-29T12:02:00Z" {
				reopen = &entries[i]
			}
		}
		if reopen == nil {
			t.Fatal("no trip entry of the server circuit at the trial")
		}
		if d := reopen.OpenUntil.Sub(reopen.At); d < 108*time.Second || d > 132*time.Second {
			t.Errorf("the re-opened cooldown is %s, want 120 s ± 10 %%", d)
		}
		if calls := p.calls(t); len(calls) != 4 {
			t.Errorf("the server received %d calls, want 4 (3 failures and the trial)", len(calls))
		}
	})

	t.Run("parallel calls in one turn", func(t *testing.T) {
		t.Parallel()
		p := h.newProject(t, "", 0)
		fail := cue("Connection closed")
		api := p.run(t, t0, [][]scriptCall{{{echoTool, fail}, {echoTool, fail}, {echoTool, fail}}, {{echoTool, `{}`}}})
		if r := mustResult(t, api, 4); !strings.HasPrefix(r.Text, "PreToolUse:"+echoTool+" hook error: ⚡ CIRCUIT OPEN") {
			t.Errorf("the call after three parallel failures was not denied:\n%s", r.Text)
		}
		var counts []int
		trips := 0
		for _, e := range p.ledger(t) {
			if e.Tool != echoTool {
				continue
			}
			switch e.Event {
			case ledger.EventFailure, ledger.EventTrip:
				counts = append(counts, e.FailureCount)
				if e.Event == ledger.EventTrip {
					trips++
				}
			}
		}
		slices.Sort(counts)
		if !slices.Equal(counts, []int{1, 2, 3}) || trips != 1 {
			t.Errorf("the tool's failure counts are %v with %d trips, want 1, 2, 3 and one trip (no update lost to concurrency)", counts, trips)
		}
	})

	t.Run("tool timeout classified from Claude Code's text", func(t *testing.T) {
		t.Parallel()
		p := h.newProject(t, "", 2000)
		api := p.run(t, t0, [][]scriptCall{{{echoTool, `{"sleep_ms":8000}`}}})
		r := mustResult(t, api, 1)
		if !strings.Contains(r.Text, `MCP server "fix" tool "echo" timed out after`) || !strings.Contains(r.Text, "failed once (TIMEOUT)") {
			t.Errorf("result 1 is not Claude Code's timeout text with our step-2 context:\n%s", r.Text)
		}
		var got []string
		for _, e := range p.ledger(t) {
			got = append(got, fmt.Sprintf("%s %s %s %s", e.Tool, e.Event, e.FailureType, e.Cause))
		}
		if !slices.Equal(got, []string{echoTool + " failure TIMEOUT tool_deadline"}) {
			t.Errorf("ledger %q, want one TIMEOUT tool_deadline failure on the tool key only (a per-call deadline)", got)
		}
	})
}

func mustResult(t *testing.T, api *fakeAPI, i int) toolResult {
	t.Helper()
	r, ok := api.result(i)
	if !ok {
		t.Fatalf("no tool_result for tool_use %d", i)
	}
	return r
}

func (h *harness) newProject(t *testing.T, policy string, timeoutMS int) *scenarioProject {
	t.Helper()
	root := t.TempDir()
	p := &scenarioProject{h: h, root: root, dir: filepath.Join(root, "proj"),
		callLog: filepath.Join(root, "calls.log"), mcpConfig: filepath.Join(root, "mcp.json")}
	home := filepath.Join(root, "home")
	for _, d := range []string{p.dir, filepath.Join(home, ".claude"), filepath.Join(root, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	p.env = []string{"HOME=" + home, "CLAUDE_CONFIG_DIR=" + filepath.Join(home, ".claude"), "PATH=" + os.Getenv("PATH"), "TMPDIR=" + filepath.Join(root, "tmp")}
	run(t, p.env, p.dir, 20*time.Second, h.cli, "install", "--scope", "local", "--dir", p.dir)
	if policy != "" {
		if err := os.WriteFile(filepath.Join(p.dir, ".claude", "mcp_circuit", "policy.yaml"), []byte(policy), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	srv := map[string]any{"type": "stdio", "command": h.fixture, "args": []string{"cue"},
		"env": map[string]string{testservers.CallLogEnv: p.callLog}}
	if timeoutMS > 0 {
		srv["timeout"] = timeoutMS
	}
	writeJSON(t, p.mcpConfig, map[string]any{"mcpServers": map[string]any{"fix": srv}})
	return p
}

// run runs one Claude Code session (claude -p) in the project with the hooks' clock at now.
func (p *scenarioProject) run(t *testing.T, now string, turns [][]scriptCall) *fakeAPI {
	t.Helper()
	return p.runUsage(t, now, turns, nil)
}

// runUsage is run with the token usage the fake model reports for each answer (nil: the same small
// figures for every one).
func (p *scenarioProject) runUsage(t *testing.T, now string, turns [][]scriptCall, usage func(answered int) apiUsage) *fakeAPI {
	t.Helper()
	const final = "Done."
	api, srv := newScriptAPI(t, turns, final)
	// The server is already up: a request may be read while usage is set.
	api.mu.Lock()
	api.usage = usage
	api.mu.Unlock()
	env := append(slices.Clip(p.env), "ANTHROPIC_BASE_URL="+srv.URL, "ANTHROPIC_API_KEY=sk-ant-fake",
		"ENABLE_TOOL_SEARCH=false", "DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1", "MCP_CIRCUIT_NOW="+now)
	ctx, cancel := context.WithTimeout(context.Background(), claudeRun)
	defer cancel()
	debug := filepath.Join(p.root, fmt.Sprintf("claude-debug-%d.txt", time.Now().UnixNano()))
	cmd := exec.CommandContext(ctx, p.h.claude, "-p", "use the fix tools",
		"--output-format", "stream-json", "--verbose", "--include-hook-events",
		"--mcp-config", p.mcpConfig, "--strict-mcp-config", "--allowedTools", "mcp__fix",
		"--model", "claude-sonnet-4-5", "--max-turns", "10", "--debug-file", debug)
	cmd.Dir, cmd.Env, cmd.WaitDelay = p.dir, env, 5*time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	p.stream = stdout.Bytes()
	t.Logf("claude -p (%d turns, MCP_CIRCUIT_NOW=%s): %s", len(turns), now, time.Since(start).Round(time.Millisecond))
	dump := func() {
		t.Logf("claude stream-json:\n%s\nstderr:\n%s", tail(stdout.String(), 16<<10), stderr.String())
		if b, err := os.ReadFile(debug); err == nil {
			t.Logf("claude debug log (last 8 KB):\n%s", tail(string(b), 8<<10))
		}
	}
	if err != nil {
		dump()
		t.Fatalf("claude -p: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			dump()
		}
	})
	if !strings.Contains(stdout.String(), `"result":"`+final+`"`) {
		dump()
		t.Errorf("the session did not end with the scripted answer %q", final)
	}
	return api
}

// cli runs our CLI in the project at now.
func (p *scenarioProject) cli(t *testing.T, now string, args ...string) string {
	t.Helper()
	out, _ := run(t, append(slices.Clip(p.env), "MCP_CIRCUIT_NOW="+now), p.dir, 20*time.Second, p.h.cli, append(args, "--dir", p.dir)...)
	return out
}

// ledger parses the project's ledger strictly.
func (p *scenarioProject) ledger(t *testing.T) []ledger.Entry {
	t.Helper()
	return strictLedger(t, p.dir)
}

// calls returns the tools the fixture received tools/call for, in order.
func (p *scenarioProject) calls(t *testing.T) []string {
	t.Helper()
	return calledTools(t, p.callLog)
}

// strictLedger parses the ledger of the project in dir, failing the test on any problem in it.
func strictLedger(t *testing.T, dir string) []ledger.Entry {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, ".claude", "mcp_circuit", "circuit_log.yaml"))
	if err != nil {
		t.Fatalf("ledger: %v", err)
	}
	entries, problems := ledger.Parse(data, 1, yamlfile.Item)
	if len(problems) > 0 {
		t.Fatalf("ledger problems: %v\n%s", problems, data)
	}
	return entries
}

// calledTools returns the tools the fixture logging to callLog received tools/call for, in order.
func calledTools(t *testing.T, callLog string) []string {
	t.Helper()
	var tools []string
	for _, c := range loggedCalls(t, callLog) {
		tools = append(tools, c.Tool)
	}
	return tools
}
