package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/testservers"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// pluginID is the plugin as `claude plugin install` names it: plugin@marketplace.
const pluginID = "mcp-circuit-breaker@mcp-circuit-breaker"

// missingWarning is the start of what the plugin's SessionStart hook prints when the gate binary
// is not on PATH (plugin/hooks/session-start.sh); missingContext is what the model reads then.
const (
	missingWarning = "mcp-circuit-breaker: WARNING: the gate binary mcp-circuit-breaker-hook is not on PATH"
	missingContext = "the circuit-breaker gate is NOT running in this session"
)

// TestClaudeCodePlugin installs this repository as a Claude Code plugin marketplace with the real
// client, in a fresh HOME, the way a user would: `claude plugin validate`, `claude plugin
// marketplace add <repo>`, `claude plugin install`. No `mcp-circuit-breaker install` runs, so
// every hook comes from the plugin's hooks/hooks.json. Then two sessions:
//
//   - binaries on PATH: the plugin's hooks record three rate-limit failures, trip the circuit and
//     deny the fourth call before it reaches the server; doctor recognises the plugin's wiring,
//     and warns once a settings file wires the gate as well;
//   - binaries not on PATH: the plugin's SessionStart hook tells the user and the model that the
//     gate is not running, instead of the silent allow Claude Code gives a missing hook command.
func TestClaudeCodePlugin(t *testing.T) {
	claude := installClaude(t)
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}

	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	goBuild(t, bin, module+"/cmd/mcp-circuit-breaker", module+"/cmd/mcp-circuit-breaker-hook", testservers.FixturePackage)
	cli := filepath.Join(bin, "mcp-circuit-breaker")
	fixture := filepath.Join(bin, "mcpfixture")

	proj := filepath.Join(root, "proj")
	home := filepath.Join(root, "home")
	cfgDir := filepath.Join(home, ".claude")
	tmp := filepath.Join(root, "tmp")
	for _, d := range []string{proj, cfgDir, tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The caller's PATH without any directory that holds one of our binaries (a developer's
	// `go install` must not make the "missing binary" session pass), then with the fresh build.
	pathWithout := withoutOurBinaries(os.Getenv("PATH"))
	base := []string{"HOME=" + home, "CLAUDE_CONFIG_DIR=" + cfgDir, "TMPDIR=" + tmp}
	envWith := append(slices.Clip(base), "PATH="+bin+string(os.PathListSeparator)+pathWithout)
	envWithout := append(slices.Clip(base), "PATH="+pathWithout)

	// The manifests pass the client's own validator.
	for _, p := range []string{repo, filepath.Join(repo, "plugin")} {
		out, _ := run(t, envWith, root, 30*time.Second, claude, "plugin", "validate", p)
		if !strings.Contains(out, "Validation passed") {
			t.Errorf("claude plugin validate %s:\n%s", p, out)
		}
	}
	out, msgs := run(t, envWith, root, 30*time.Second, claude, "plugin", "marketplace", "add", repo)
	t.Logf("claude plugin marketplace add:\n%s%s", out, msgs)
	out, msgs = run(t, envWith, root, 30*time.Second, claude, "plugin", "install", pluginID)
	t.Logf("claude plugin install:\n%s%s", out, msgs)
	if !strings.Contains(out+msgs, "Successfully installed plugin: "+pluginID) {
		t.Fatalf("claude plugin install %s did not report success", pluginID)
	}

	// The failing server, logging the calls that reach it.
	callLog := filepath.Join(root, "calls.log")
	mcpConfig := filepath.Join(root, "mcp.json")
	writeJSON(t, mcpConfig, map[string]any{"mcpServers": map[string]any{"fix": map[string]any{
		"type": "stdio", "command": fixture, "args": []string{"callerror"},
		"env": map[string]string{testservers.CallLogEnv: callLog},
	}}})

	t.Run("trip and deny", func(t *testing.T) {
		const finalText = "The echo tool is unavailable; its circuit is open."
		api, srv := newFakeAPI(t, echoTool, `{}`, 4, finalText)
		stream := session(t, claude, envWith, proj, mcpConfig, srv.URL, api)
		checkStream(t, stream, finalText)

		denyPrefix := "PreToolUse:" + echoTool + " hook error: ⚡ CIRCUIT OPEN — " + serverKey + "\n"
		if r, ok := api.result(4); !ok || !strings.HasPrefix(r.Text, denyPrefix) || !strings.Contains(r.Text, "Do not retry this tool") {
			t.Errorf("tool_result 4 is not the plugin gate's deny (want prefix %q): %q", denyPrefix, r.Text)
		}
		if r, ok := api.result(3); !ok || !strings.Contains(r.Text, "⚡ CIRCUIT OPEN — "+echoTool+"\n") {
			t.Errorf("tool_result 3 lacks the trip notice: %q", r.Text)
		}
		if calls := readCallLog(t, callLog); !slices.Equal(calls, []string{toolUseID(1), toolUseID(2), toolUseID(3)}) {
			t.Errorf("the MCP server received tools/call for %q, want the first three only", calls)
		}
		// Only the plugin wired the gate: no settings file of the project has hooks.
		for _, f := range []string{"settings.json", "settings.local.json"} {
			if _, err := os.Stat(filepath.Join(proj, ".claude", f)); err == nil {
				t.Errorf(".claude/%s exists: something other than the plugin wired hooks", f)
			}
		}
		data, err := os.ReadFile(filepath.Join(proj, ".claude", "mcp_circuit", "circuit_log.yaml"))
		if err != nil {
			t.Fatalf("ledger: %v", err)
		}
		entries, problems := ledger.Parse(data, 1)
		if len(problems) > 0 {
			t.Errorf("ledger problems: %v", problems)
		}
		blocked := 0
		for _, e := range entries {
			if e.Event == ledger.EventBlocked && e.ToolUseID == toolUseID(4) && e.Source == "hook" {
				blocked++
			}
		}
		if blocked != 1 {
			t.Errorf("want one blocked entry for the 4th call written by the hook, got %d:\n%s", blocked, data)
		}

		// doctor sees the plugin as the wiring, and the binary on PATH as the plugin runs it.
		doc, _ := run(t, envWith, proj, 20*time.Second, cli, "doctor", "--dir", proj)
		t.Logf("doctor (plugin only):\n%s", doc)
		for _, want := range []string{
			"PASS  hooks: PreToolUse, PostToolUse, PostToolUseFailure, SessionStart wired in plugin " + pluginID,
			"PASS  hook binary: mcp-circuit-breaker-hook (named by plugin " + pluginID,
			"PASS  skill: provided by plugin " + pluginID,
		} {
			if !strings.Contains(doc, want) {
				t.Errorf("doctor output lacks %q", want)
			}
		}
		// A settings file wiring the gate as well: every failure would count twice.
		run(t, envWith, proj, 20*time.Second, cli, "install", "--scope", "local", "--dir", proj)
		doc, _ = run(t, envWith, proj, 20*time.Second, cli, "doctor", "--dir", proj)
		t.Logf("doctor (plugin and settings):\n%s", doc)
		if !strings.Contains(doc, "WARN  hooks: the plugin "+pluginID+" and .claude/settings.local.json both wire the gate") {
			t.Errorf("doctor does not warn that the plugin and .claude/settings.local.json both wire the gate")
		}
		run(t, envWith, proj, 20*time.Second, cli, "uninstall", "--scope", "local", "--dir", proj)
	})

	t.Run("binary missing", func(t *testing.T) {
		proj := filepath.Join(root, "proj2")
		if err := os.MkdirAll(proj, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(callLog); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		const finalText = "The gate is not running."
		api, srv := newFakeAPI(t, echoTool, `{}`, 1, finalText)
		stream := session(t, claude, envWithout, proj, mcpConfig, srv.URL, api)

		// The user sees the SessionStart hook's systemMessage; the model reads its context.
		var sessionStart []string
		for _, rec := range streamRecords(stream) {
			if rec["type"] == "system" && rec["subtype"] == "hook_response" && strings.HasPrefix(str(rec["hook_name"]), "SessionStart") {
				sessionStart = append(sessionStart, str(rec["stdout"]))
			}
		}
		if len(sessionStart) != 1 || !strings.Contains(sessionStart[0], `"systemMessage": "`+missingWarning) {
			t.Errorf("SessionStart hook responses %q, want one whose stdout carries the systemMessage %q", sessionStart, missingWarning)
		}
		if !strings.Contains(api.first(), missingContext) {
			t.Errorf("the model was not told %q", missingContext)
		}
		// And it is not a pretence: the call went through unrecorded, as Claude Code allows when a
		// hook command is missing. That is why the warning exists.
		if r, ok := api.result(1); !ok || !strings.HasPrefix(r.Text, quotaError) || strings.Contains(r.Text, "mcp-circuit-breaker") {
			t.Errorf("tool_result 1 = %q, want the server's error with no gate context", r.Text)
		}
		if _, err := os.Stat(filepath.Join(proj, ".claude", "mcp_circuit", "circuit_log.yaml")); err == nil {
			t.Errorf("a ledger was written although the gate binary is missing")
		}
		// doctor, started by its absolute path, FAILs on the plugin's missing hook binary.
		doctor := exec.Command(cli, "doctor", "--dir", proj)
		doctor.Env = envWithout
		out, err := doctor.Output()
		t.Logf("doctor (binary not on PATH):\n%s", out)
		want := "FAIL  hook binary: mcp-circuit-breaker-hook (named by plugin " + pluginID
		if code := exitCode(err); code != 1 || !strings.Contains(string(out), want) {
			t.Errorf("doctor exited %d; want 1 and %q", code, want)
		}
	})
}

// session runs one `claude -p` session in proj against the fake API and returns its stream-json.
func session(t *testing.T, claude string, env []string, proj, mcpConfig, apiURL string, api *fakeAPI) []byte {
	t.Helper()
	claudeEnv := append(slices.Clip(env),
		"ANTHROPIC_BASE_URL="+apiURL,
		"ANTHROPIC_API_KEY=sk-ant-fake",
		"ENABLE_TOOL_SEARCH=false",
		"DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
	)
	debugFile := filepath.Join(t.TempDir(), "claude-debug.txt")
	ctx, cancel := context.WithTimeout(context.Background(), claudeRun)
	defer cancel()
	cmd := exec.CommandContext(ctx, claude, "-p", "use the echo tool",
		"--output-format", "stream-json", "--verbose", "--include-hook-events",
		"--mcp-config", mcpConfig, "--strict-mcp-config",
		"--allowedTools", "mcp__fix",
		"--model", "claude-sonnet-4-5", "--max-turns", "10",
		"--debug-file", debugFile)
	cmd.Dir, cmd.Env = proj, claudeEnv
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		t.Logf("claude stream-json:\n%s", stdout.String())
		t.Logf("claude stderr:\n%s", stderr.String())
		if b, err := os.ReadFile(debugFile); err == nil {
			t.Logf("claude debug log (last 8 KB):\n%s", tail(string(b), 8<<10))
		}
		api.mu.Lock()
		t.Logf("fake API: %d messages requests; other requests: %q", api.requests, api.other)
		api.mu.Unlock()
	})
	if err != nil {
		t.Fatalf("claude -p: %v (after %s)", err, time.Since(start).Round(time.Millisecond))
	}
	t.Logf("claude -p ran in %s", time.Since(start).Round(time.Millisecond))
	return stdout.Bytes()
}

// withoutOurBinaries returns path without the directories that hold mcp-circuit-breaker or
// mcp-circuit-breaker-hook.
func withoutOurBinaries(path string) string {
	var keep []string
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			continue
		}
		_, err1 := os.Stat(filepath.Join(dir, "mcp-circuit-breaker"))
		_, err2 := os.Stat(filepath.Join(dir, "mcp-circuit-breaker-hook"))
		if err1 != nil && err2 != nil {
			keep = append(keep, dir)
		}
	}
	return strings.Join(keep, string(os.PathListSeparator))
}

// exitCode is the exit status in err from exec, 0 for nil and -1 when the program did not run.
func exitCode(err error) int {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	return -1
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// streamRecords decodes the stream-json records, skipping lines that are not JSON objects.
func streamRecords(stream []byte) []map[string]any {
	var out []map[string]any
	for _, line := range bytes.Split(stream, []byte("\n")) {
		var rec map[string]any
		if json.Unmarshal(line, &rec) == nil {
			out = append(out, rec)
		}
	}
	return out
}
