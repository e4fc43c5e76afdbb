package e2e

import (
	"bytes"
	"context"
	"encoding/json"
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

// TestClaudeCodeProxy drives the real Claude Code CLI against the scripted fake Messages API with
// no hook at all: the project's .mcp.json server runs through `mcp-circuit-breaker proxy`, as the
// real `install --proxy` rewrote it, and the proxy alone keeps the circuits. The model asks for echo four times; the cue fixture fails the first
// three (the third trips the tool and, the failure being a quota's, the server), and the fourth is
// answered by the proxy with the deny text as an isError result, so the server sees three calls.
// A second session, its clock past the cooldown, makes the trial: it reaches the server, succeeds
// and closes both circuits; the report shows the trip, the blocked call and the close.
func TestClaudeCodeProxy(t *testing.T) {
	skipShort(t, "drives real processes end to end")
	claude := installClaude(t)

	root, proj, cfgDir, env := claudeProxyProject(t, testservers.FixturePackage)
	cli := filepath.Join(root, "bin", "mcp-circuit-breaker")
	fixture := filepath.Join(root, "bin", "mcpfixture")
	callLog := filepath.Join(root, "calls.log")

	// The project's .mcp.json names the fixture, approved in Claude Code's own configuration, and
	// the real installer routes it through the proxy.
	writeJSON(t, filepath.Join(cfgDir, ".claude.json"), map[string]any{"projects": map[string]any{
		proj: map[string]any{"hasTrustDialogAccepted": true, "enabledMcpjsonServers": []string{"fix"}}}})
	mcpFile := filepath.Join(proj, ".mcp.json")
	writeJSON(t, mcpFile, map[string]any{"mcpServers": map[string]any{"fix": map[string]any{
		"type": "stdio", "command": fixture, "args": []string{"cue"}, "env": map[string]string{testservers.CallLogEnv: callLog}}}})
	original, err := os.ReadFile(mcpFile)
	if err != nil {
		t.Fatal(err)
	}
	out, msgs := run(t, env, proj, 20*time.Second, cli, "install", "--proxy", "--dir", proj, "--command", cli)
	t.Logf("install --proxy:\n%s%s", out, msgs)
	proxied, err := os.ReadFile(mcpFile)
	var entry struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err != nil || json.Unmarshal(proxied, &entry) != nil || entry.MCPServers["fix"].Command != cli ||
		!slices.Equal(entry.MCPServers["fix"].Args, []string{"proxy", "--name", "fix", "--", fixture, "cue"}) {
		t.Fatalf("install --proxy did not route fix through the proxy:\n%s", proxied)
	}

	// session runs claude -p once in the project; serverEnv, when set, replaces the proxied entry's
	// env for it (the trial's clock).
	session := func(api *fakeAPI, url string, serverEnv map[string]string) {
		t.Helper()
		data := proxied
		if serverEnv != nil {
			var doc map[string]map[string]map[string]any
			if err := json.Unmarshal(proxied, &doc); err != nil {
				t.Fatal(err)
			}
			serverEnv[testservers.CallLogEnv] = callLog
			doc["mcpServers"]["fix"]["env"] = serverEnv
			if data, err = json.Marshal(doc); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(mcpFile, data, 0o644); err != nil {
			t.Fatal(err)
		}
		runClaudeEcho(t, claude, proj, env, url)
	}

	const quota = "upstream quota exceeded"
	api, srv := newFakeAPI(t, echoTool, `{"fail":"`+quota+`"}`, 4, "The echo tool is unavailable; its circuit is open.")
	session(api, srv.URL, nil)
	for i := 1; i <= 3; i++ {
		r, ok := api.result(i)
		if !ok || !r.IsError || !strings.HasPrefix(r.Text, quota) {
			t.Fatalf("tool_result %d: %+v, want the server's own isError text %q", i, r, quota)
		}
	}
	r, ok := api.result(4)
	if !ok || !r.IsError || !strings.HasPrefix(r.Text, "⚡ CIRCUIT OPEN — "+serverKey+"\n") || !strings.Contains(r.Text, "Do not retry this tool") {
		t.Fatalf("tool_result 4: %+v, want the proxy's deny text", r)
	}
	if calls := readCallLog(t, callLog); !slices.Equal(calls, []string{toolUseID(1), toolUseID(2), toolUseID(3)}) {
		t.Fatalf("the server received %q, want the first three calls only", calls)
	}

	// The trial, in a session whose clock is past the cooldown (the proxy reads MCP_CIRCUIT_NOW from
	// the environment the client gives the server).
	later := time.Now().Add(3 * time.Minute).UTC().Format(time.RFC3339)
	api2, srv2 := newFakeAPI(t, echoTool, `{}`, 1, "The echo tool works again.")
	session(api2, srv2.URL, map[string]string{"MCP_CIRCUIT_NOW": later})
	if r, ok := api2.result(1); !ok || r.IsError || !strings.HasPrefix(r.Text, "ok") {
		t.Fatalf("the trial's tool_result: %+v, want the server's ok", r)
	}
	if calls := readCallLog(t, callLog); len(calls) != 4 {
		t.Fatalf("the trial did not reach the server: %q", calls)
	}

	data, err := os.ReadFile(filepath.Join(proj, ".claude", "mcp_circuit", "circuit_log.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	entries, problems := ledger.Parse(data, 1, yamlfile.Item)
	if len(problems) > 0 {
		t.Errorf("ledger problems: %v", problems)
	}
	events := map[ledger.Event]int{}
	for _, e := range entries {
		events[e.Event]++
		if e.Source != ledger.SourceProxy {
			t.Errorf("entry %s %s: source %q, want proxy", e.Tool, e.Event, e.Source)
		}
		if e.Event == ledger.EventBlocked && e.ToolUseID != toolUseID(4) {
			t.Errorf("blocked entry: tool_use_id %q, want %q (Claude Code's _meta)", e.ToolUseID, toolUseID(4))
		}
	}
	if events[ledger.EventTrip] != 2 || events[ledger.EventBlocked] == 0 || events[ledger.EventSuccess] == 0 {
		t.Errorf("ledger events %v: want 2 trips, the blocked call and the trial's success\n%s", events, data)
	}
	report, _ := run(t, append(slices.Clip(env), "MCP_CIRCUIT_NOW="+later), proj, 20*time.Second, cli, "report", "--dir", proj)
	if !strings.Contains(report, "Calls blocked: 1") || !strings.Contains(report, "| "+echoTool+" | CLOSED |") {
		t.Errorf("the report does not show the blocked call and the close:\n%s", report)
	}

	// uninstall --proxy gives .mcp.json back as it was before install --proxy.
	if err := os.WriteFile(mcpFile, proxied, 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, env, proj, 20*time.Second, cli, "uninstall", "--proxy", "--dir", proj)
	if back, err := os.ReadFile(mcpFile); err != nil || !bytes.Equal(back, original) {
		t.Errorf("uninstall --proxy did not restore .mcp.json byte for byte:\n%s", back)
	}
}

// TestInspectorProxy drives the official MCP Inspector's CLI mode (npm
// @modelcontextprotocol/inspector-cli, pinned by scripts/install-test-deps inspector) against the
// cue fixture through `mcp-circuit-breaker proxy`: each Inspector run is one client session that
// starts the proxy, which starts the server. Three failing calls trip the circuits, the fourth is
// the proxy's deny and never reaches the server, and a call after the cooldown is the trial that
// closes them.
func TestInspectorProxy(t *testing.T) {
	skipShort(t, "drives real processes end to end")
	entry := installAgent(t, "inspector")
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	goBuild(t, bin, module+"/cmd/mcp-circuit-breaker", testservers.FixturePackage)
	cli := filepath.Join(bin, "mcp-circuit-breaker")
	fixture := filepath.Join(bin, "mcpfixture")
	proj := filepath.Join(root, "proj")
	home := filepath.Join(root, "home")
	for _, d := range []string{filepath.Join(proj, ".git"), home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	callLog := filepath.Join(root, "calls.log")
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}

	// inspect runs one Inspector session calling echo with args (KEY=VALUE); the Inspector hands
	// the server (our proxy) only the variables -e names. It reads its own package.json by a path
	// relative to the working directory, so it runs in the directory of its entry point.
	inspect := func(now string, args ...string) string {
		t.Helper()
		cmdArgs := []string{entry, "--cli", "-e", testservers.CallLogEnv + "=" + callLog}
		if now != "" {
			cmdArgs = append(cmdArgs, "-e", "MCP_CIRCUIT_NOW="+now)
		}
		cmdArgs = append(cmdArgs, cli, "proxy", "--dir", proj, "--name", "fix", "--", fixture, "cue",
			"--method", "tools/call", "--tool-name", "echo")
		for _, a := range args {
			cmdArgs = append(cmdArgs, "--tool-arg", a)
		}
		out, _ := run(t, env, filepath.Dir(entry), agentRun, "node", cmdArgs...)
		return out
	}
	const quota = "upstream quota exceeded"
	for i := 1; i <= 3; i++ {
		if out := inspect("", "fail="+quota); !strings.Contains(out, `"text": "`+quota+`"`) || !strings.Contains(out, `"isError": true`) {
			t.Fatalf("call %d: the Inspector got\n%s\nwant the server's own isError result", i, out)
		}
	}
	if out := inspect("", "fail="+quota); !strings.Contains(out, `"text": "⚡ CIRCUIT OPEN — `+serverKey+`\n`) || !strings.Contains(out, `"isError": true`) {
		t.Fatalf("call 4: the Inspector got\n%s\nwant the proxy's deny", out)
	}
	if n := len(loggedCalls(t, callLog)); n != 3 {
		t.Fatalf("the server received %d calls, want 3: the fourth was answered by the proxy", n)
	}
	later := time.Now().Add(3 * time.Minute).UTC().Format(time.RFC3339)
	if out := inspect(later); !strings.Contains(out, `"text": "ok"`) || strings.Contains(out, `"isError": true`) {
		t.Fatalf("the trial: the Inspector got\n%s\nwant the server's ok", out)
	}
	if n := len(loggedCalls(t, callLog)); n != 4 {
		t.Fatalf("the trial did not reach the server (%d calls)", n)
	}
	out, _ := run(t, append(slices.Clip(env), "MCP_CIRCUIT_NOW="+later), proj, 20*time.Second, cli, "status", "--dir", proj)
	if strings.Contains(out, "OPEN") {
		t.Errorf("after the trial some circuit is still open:\n%s", out)
	}
}

// runClaudeEcho runs the real Claude Code client once in proj against the fake model API at url,
// asked to use the fix server's echo tool (the proxied server of these tests).
func runClaudeEcho(t *testing.T, claude, proj string, env []string, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), claudeRun)
	defer cancel()
	cmd := exec.CommandContext(ctx, claude, "-p", "use the echo tool",
		"--output-format", "stream-json", "--verbose",
		"--allowedTools", "mcp__fix",
		"--model", "claude-sonnet-4-5", "--max-turns", "10")
	cmd.Dir = proj
	cmd.Env = append(slices.Clip(env), "ANTHROPIC_BASE_URL="+url, "ANTHROPIC_API_KEY=sk-ant-fake", "ENABLE_TOOL_SEARCH=false",
		"DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_TELEMETRY=1")
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("claude -p: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	if t.Failed() {
		t.Logf("claude stream-json:\n%s", stdout.String())
	}
}

// claudeProxyProject is what the Claude Code proxy tests start from: the CLI (and pkgs) built into
// root/bin, a git project, and the environment of a HOME whose Claude Code config directory is
// cfgDir.
func claudeProxyProject(t *testing.T, pkgs ...string) (root, proj, cfgDir string, env []string) {
	t.Helper()
	root = t.TempDir()
	goBuild(t, filepath.Join(root, "bin"), append([]string{module + "/cmd/mcp-circuit-breaker"}, pkgs...)...)
	proj = filepath.Join(root, "proj")
	home := filepath.Join(root, "home")
	cfgDir = filepath.Join(home, ".claude")
	tmp := filepath.Join(root, "tmp")
	for _, d := range []string{filepath.Join(proj, ".git"), cfgDir, tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return root, proj, cfgDir, []string{"HOME=" + home, "CLAUDE_CONFIG_DIR=" + cfgDir, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + tmp}
}
