package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/testservers"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/yamlfile"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

const (
	module     = "github.com/mcp-circuit-breaker/mcp-circuit-breaker"
	echoTool   = "mcp__fix__echo"
	serverKey  = "mcp__fix__*"
	quotaError = "upstream quota exceeded" // what the callerror fixture's echo answers (isError)
	claudeRun  = 90 * time.Second
)

// TestClaudeCodeGate drives the real Claude Code CLI (the native binary of
// @anthropic-ai/claude-code-<os>-<arch>, pinned by scripts/install-test-deps) against a scripted
// fake Messages API and a stdio MCP server whose echo tool always fails with a rate limit, with
// the hooks wired by the real `mcp-circuit-breaker install`. The model asks for echo four times:
// the first three calls reach the server and fail (the third trips the circuit), the fourth is
// denied by the PreToolUse gate and never reaches the server. It checks what the model reads,
// what the server saw, the ledger and the report.
func TestClaudeCodeGate(t *testing.T) {
	skipShort(t, "drives real processes end to end")
	start := time.Now()
	claude := installClaude(t)
	downloaded := time.Now()

	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	goBuild(t, bin, module+"/cmd/mcp-circuit-breaker", module+"/cmd/mcp-circuit-breaker-hook", testservers.FixturePackage)
	cli := filepath.Join(bin, "mcp-circuit-breaker")
	hookBin := filepath.Join(bin, "mcp-circuit-breaker-hook")
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
	// The environment of every process the test starts: nothing of the caller's but PATH, so
	// that no MCP_CIRCUIT_DIR, CLAUDE_* or ANTHROPIC_* variable leaks in (the hook gets its project
	// from CLAUDE_PROJECT_DIR, which Claude Code sets), and a TMPDIR of the test's own for what
	// Claude Code keeps there (session notes, its messaging socket).
	env := []string{"HOME=" + home, "CLAUDE_CONFIG_DIR=" + cfgDir, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + tmp}

	version, _ := run(t, env, root, 20*time.Second, claude, "--version")
	version = strings.TrimSpace(version)
	t.Logf("claude: %s (%s)", version, claude)

	// The hooks, wired by the real installer: local scope, the lean hook binary next to the CLI.
	out, msgs := run(t, env, proj, 20*time.Second, cli, "install", "--scope", "local", "--dir", proj)
	t.Logf("mcp-circuit-breaker install --scope local:\n%s%s", out, msgs)
	checkSettings(t, filepath.Join(proj, ".claude", "settings.local.json"), hookBin)

	// The MCP server: the fixture in callerror mode, logging every tools/call it receives.
	callLog := filepath.Join(root, "calls.log")
	mcpConfig := filepath.Join(root, "mcp.json")
	writeJSON(t, mcpConfig, map[string]any{"mcpServers": map[string]any{"fix": map[string]any{
		"type": "stdio", "command": fixture, "args": []string{"callerror"},
		"env": map[string]string{testservers.CallLogEnv: callLog},
	}}})

	const finalText = "The echo tool is unavailable; its circuit is open."
	api, srv := newFakeAPI(t, echoTool, `{}`, 4, finalText)

	claudeEnv := append(slices.Clip(env),
		"ANTHROPIC_BASE_URL="+srv.URL,
		"ANTHROPIC_API_KEY=sk-ant-fake",
		"ENABLE_TOOL_SEARCH=false",
		"DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
	)
	debugFile := filepath.Join(root, "claude-debug.txt")
	ctx, cancel := context.WithTimeout(context.Background(), claudeRun)
	defer cancel()
	cmd := exec.CommandContext(ctx, claude, "-p", "use the echo tool",
		"--output-format", "stream-json", "--verbose", "--include-hook-events",
		"--mcp-config", mcpConfig, "--strict-mcp-config",
		"--allowedTools", "mcp__fix",
		"--model", "claude-sonnet-4-5", "--max-turns", "10",
		"--debug-file", debugFile)
	cmd.Dir = proj
	cmd.Env = claudeEnv
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	claudeStart := time.Now()
	err := cmd.Run()
	claudeTime := time.Since(claudeStart)
	dump := func() {
		t.Logf("claude stream-json:\n%s", stdout.String())
		t.Logf("claude stderr:\n%s", stderr.String())
		if b, err := os.ReadFile(debugFile); err == nil {
			t.Logf("claude debug log (last 8 KB):\n%s", tail(string(b), 8<<10))
		}
		api.mu.Lock()
		t.Logf("fake API: %d messages requests; other requests: %q", api.requests, api.other)
		api.mu.Unlock()
	}
	if err != nil {
		dump()
		t.Fatalf("claude -p: %v (after %s)", err, claudeTime.Round(time.Millisecond))
	}
	defer func() {
		if t.Failed() {
			dump()
		}
	}()
	t.Logf("claude -p ran in %s", claudeTime.Round(time.Millisecond))

	// What the model read, step by step.
	texts := make([]string, 5)
	for i := 1; i <= 4; i++ {
		r, ok := api.result(i)
		if !ok {
			t.Fatalf("no tool_result came back for tool_use %d (%s)", i, toolUseID(i))
		}
		if !r.IsError {
			t.Errorf("tool_result %d: is_error is false, want true", i)
		}
		texts[i] = r.Text
		t.Logf("tool_result %d (%s):\n%s", i, toolUseID(i), r.Text)
	}
	// 1 and 2: the server's error, with the PostToolUseFailure additionalContext appended.
	wantContext := "PostToolUseFailure:" + echoTool + " hook additional context: mcp-circuit-breaker: "
	for i, want := range map[int]string{1: "failed once (RATE_LIMIT)", 2: "failed twice in a row (RATE_LIMIT"} {
		text := texts[i]
		if !strings.HasPrefix(text, quotaError) {
			t.Errorf("tool_result %d does not start with the server's error %q", i, quotaError)
		}
		if !strings.Contains(text, wantContext) || !strings.Contains(text, want) {
			t.Errorf("tool_result %d lacks the gate's context %q … %q", i, wantContext, want)
		}
		if !strings.Contains(text, "<system-reminder>") {
			t.Errorf("tool_result %d: the context is not in a <system-reminder>", i)
		}
	}
	// 3: the trip: the tool's and the server's OPEN notices (RATE_LIMIT counts on both keys,
	// docs/circuits.md, "Scope: tool or server") and the fallbacks.
	if text := texts[3]; !strings.HasPrefix(text, quotaError) ||
		!strings.Contains(text, wantContext+"⚡ CIRCUIT OPEN — mcp__fix__") ||
		!strings.Contains(text, "⚡ CIRCUIT OPEN — "+echoTool+"\n") ||
		!strings.Contains(text, "⚡ CIRCUIT OPEN — "+serverKey+"\n") ||
		!strings.Contains(text, "Failure type: RATE_LIMIT") ||
		!strings.Contains(text, "## Fallback Options for "+serverKey) {
		t.Errorf("tool_result 3 is not the server's error followed by the trip notices (⚡ CIRCUIT OPEN — %s and %s, RATE_LIMIT) and the fallbacks", echoTool, serverKey)
	}
	// 4: denied by the gate before the server: Claude Code puts "PreToolUse:TOOL hook error: " before
	// the deny reason, which starts with the OPEN notice of the server circuit.
	denyPrefix := "PreToolUse:" + echoTool + " hook error: ⚡ CIRCUIT OPEN — " + serverKey + "\n"
	if text := texts[4]; !strings.HasPrefix(text, denyPrefix) ||
		!strings.Contains(text, "Do not retry this tool") ||
		!strings.Contains(text, "1) ") {
		t.Errorf("tool_result 4 is not the gate's deny reason: want prefix %q, \"Do not retry this tool\" and the fallbacks", denyPrefix)
	}

	// The server saw three calls, the 4th never reached it.
	calls := readCallLog(t, callLog)
	want := []string{toolUseID(1), toolUseID(2), toolUseID(3)}
	if !slices.Equal(calls, want) {
		t.Errorf("the MCP server received tools/call for %q, want %q", calls, want)
	}

	checkStream(t, stdout.Bytes(), finalText)

	// The ledger, where the hook found its project (CLAUDE_PROJECT_DIR; MCP_CIRCUIT_DIR is unset).
	data, err := os.ReadFile(filepath.Join(proj, ".claude", "mcp_circuit", "circuit_log.yaml"))
	if err != nil {
		t.Fatalf("ledger: %v", err)
	}
	entries, problems := ledger.Parse(data, 1, yamlfile.Item)
	if len(problems) > 0 {
		t.Errorf("ledger problems: %v", problems)
	}
	var trips []string
	var blocked, failures int
	for _, e := range entries {
		switch e.Event {
		case ledger.EventTrip:
			trips = append(trips, e.Tool)
			if e.State != ledger.Open || e.ToolUseID != toolUseID(3) {
				t.Errorf("trip entry of %s: state %s, tool_use_id %q; want OPEN, %q", e.Tool, e.State, e.ToolUseID, toolUseID(3))
			}
		case ledger.EventBlocked:
			blocked++
			if e.ToolUseID != toolUseID(4) {
				t.Errorf("blocked entry has tool_use_id %q, want %q (the 4th call)", e.ToolUseID, toolUseID(4))
			}
		case ledger.EventFailure:
			failures++
		}
	}
	slices.Sort(trips)
	if !slices.Equal(trips, []string{serverKey, echoTool}) || blocked != 1 {
		t.Errorf("ledger has trips of %q and %d blocked entries, want trips of %q and %q, and 1 blocked:\n%s", trips, blocked, serverKey, echoTool, data)
	}
	t.Logf("ledger: %d entries (%d failure, %d trip, %d blocked)", len(entries), failures, len(trips), blocked)

	report, _ := run(t, env, proj, 20*time.Second, cli, "report", "--dir", proj)
	if !strings.Contains(report, "Calls blocked: 1") {
		t.Errorf("report lacks \"Calls blocked: 1\":\n%s", report)
	}

	t.Logf("timings: claude install %s, build+setup %s, claude -p %s, total after the download %s",
		downloaded.Sub(start).Round(time.Millisecond), claudeStart.Sub(downloaded).Round(time.Millisecond),
		claudeTime.Round(time.Millisecond), time.Since(downloaded).Round(time.Millisecond))
}

// installClaude runs scripts/install-test-deps claude and returns the binary's path. Without node
// or npm the test is skipped; any other failure fails it with the script's output.
func installClaude(t *testing.T) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("skipped: scripts/install-test-deps is a bash script; the e2e test runs on Linux and macOS")
	}
	for _, tool := range []string{"node", "npm", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipped: %s is not on PATH; scripts/install-test-deps needs node and npm to fetch Claude Code", tool)
		}
	}
	script, err := filepath.Abs(filepath.Join("..", "scripts", "install-test-deps"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	cmd := exec.Command("bash", script, "claude")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s claude: %v\nstdout:\n%s\nstderr:\n%s", script, err, stdout.String(), stderr.String())
	}
	path := strings.TrimSpace(stdout.String())
	if msg := strings.TrimSpace(stderr.String()); msg != "" {
		t.Log(msg)
	}
	t.Logf("install-test-deps claude: %s in %s", path, time.Since(start).Round(time.Millisecond))
	return path
}

// goBuild builds the packages into dir.
func goBuild(t *testing.T, dir string, pkgs ...string) {
	t.Helper()
	start := time.Now()
	cmd := exec.Command("go", append([]string{"build", "-o", dir + string(filepath.Separator)}, pkgs...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	t.Logf("go build: %s", time.Since(start).Round(time.Millisecond))
}

// run runs name with args in dir and returns its stdout and stderr; it fails the test on a
// non-zero exit.
func run(t *testing.T, env []string, dir string, timeout time.Duration, name string, args ...string) (string, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", filepath.Base(name), strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), stderr.String()
}

func writeJSON(t *testing.T, name string, v any) {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// hookGroups is the "hooks" of a settings file with matcher groups (Claude Code's, Gemini CLI's):
// event → matcher groups → handlers.
type hookGroups map[string][]struct {
	Matcher string `json:"matcher"`
	Hooks   []struct {
		Type    string   `json:"type"`
		Command string   `json:"command"`
		Args    []string `json:"args"`
		// Timeout is read by each check as its agent writes it (seconds, milliseconds).
		Timeout json.RawMessage `json:"timeout"`
	} `json:"hooks"`
}

// readHookGroups reads the "hooks" of the settings file install wrote at name, and its text.
func readHookGroups(t *testing.T, name string) (hookGroups, []byte) {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("settings written by install: %v", err)
	}
	var s struct {
		Hooks hookGroups `json:"hooks"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return s.Hooks, data
}

// checkSettings checks that every event install wires runs the lean hook binary in exec form.
func checkSettings(t *testing.T, name, hookBin string) {
	t.Helper()
	hooks, data := readHookGroups(t, name)
	for _, ev := range []string{"PreToolUse", "PostToolUse", "PostToolUseFailure", "SessionStart"} {
		groups := hooks[ev]
		if len(groups) != 1 || len(groups[0].Hooks) != 1 {
			t.Fatalf("%s: %s: want one handler, got %+v\n%s", name, ev, groups, data)
		}
		h := groups[0].Hooks[0]
		if h.Type != "command" || h.Command != hookBin || !slices.Equal(h.Args, []string{"hook"}) {
			t.Fatalf("%s: %s runs %q %q (type %s), want %q [hook]", name, ev, h.Command, h.Args, h.Type, hookBin)
		}
		if ev != "SessionStart" && groups[0].Matcher != "mcp__.*" {
			t.Errorf("%s: %s matcher %q, want mcp__.*", name, ev, groups[0].Matcher)
		}
	}
}

// loggedCall is one tools/call the fixture logged.
type loggedCall struct {
	Tool      string `json:"tool"`
	ToolUseID string `json:"tool_use_id"`
}

// readCallLog returns the tool_use ids of the tools/call requests the fixture logged.
func readCallLog(t *testing.T, name string) []string {
	t.Helper()
	var ids []string
	for _, c := range loggedCalls(t, name) {
		if c.Tool != "echo" {
			t.Errorf("call log: the server received a call of %q", c.Tool)
		}
		ids = append(ids, c.ToolUseID)
	}
	return ids
}

// loggedCalls returns the tools/call requests the fixture logged in name, in order.
func loggedCalls(t *testing.T, name string) []loggedCall {
	t.Helper()
	f, err := os.Open(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var calls []loggedCall
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var c loggedCall
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("call log line %q: %v", sc.Text(), err)
		}
		calls = append(calls, c)
	}
	return calls
}

// checkStream checks the stream-json records: every PreToolUse hook answered with exit code 0,
// every MCP hook event fired, and the session ended with the scripted final answer.
func checkStream(t *testing.T, stream []byte, finalText string) {
	t.Helper()
	hookResponses := map[string]int{} // by event
	var preStdout []string            // the PreToolUse hooks' stdout, in order
	var result map[string]any
	sc := bufio.NewScanner(bytes.NewReader(stream))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var rec map[string]any
		if json.Unmarshal(sc.Bytes(), &rec) != nil {
			continue
		}
		switch {
		case rec["type"] == "system" && rec["subtype"] == "hook_response":
			ev, _ := rec["hook_event"].(string)
			name, _ := rec["hook_name"].(string)
			if ev == "" {
				ev, _, _ = strings.Cut(name, ":")
			}
			hookResponses[ev]++
			if ev == "PreToolUse" {
				out, _ := rec["stdout"].(string)
				preStdout = append(preStdout, out)
			}
			code, ok := rec["exit_code"].(float64)
			if !ok || code != 0 {
				t.Errorf("hook_response %s: exit_code %v, want 0 (stderr %q)", name, rec["exit_code"], rec["stderr"])
			}
		case rec["type"] == "result":
			result = rec
		}
	}
	t.Logf("hook_response records by event: %v", hookResponses)
	for ev, want := range map[string]int{"PreToolUse": 4, "PostToolUseFailure": 3} {
		if hookResponses[ev] != want {
			t.Errorf("%d hook_response records for %s, want %d", hookResponses[ev], ev, want)
		}
	}
	// CLOSED: allowed with no output; OPEN: a JSON deny on stdout, exit code 0.
	for i, out := range preStdout {
		var a struct {
			HookSpecificOutput struct {
				HookEventName      string `json:"hookEventName"`
				PermissionDecision string `json:"permissionDecision"`
			} `json:"hookSpecificOutput"`
		}
		switch {
		case i < 3 && strings.TrimSpace(out) != "":
			t.Errorf("PreToolUse %d on a CLOSED circuit printed %q, want nothing", i+1, out)
		case i == 3 && (json.Unmarshal([]byte(out), &a) != nil || a.HookSpecificOutput.PermissionDecision != "deny" || a.HookSpecificOutput.HookEventName != "PreToolUse"):
			t.Errorf("PreToolUse 4 printed %q, want a PreToolUse deny", out)
		}
	}
	if hookResponses["PostToolUse"] != 0 {
		t.Errorf("%d hook_response records for PostToolUse, want 0 (no call succeeded)", hookResponses["PostToolUse"])
	}
	if result == nil {
		t.Fatal("no result record in the stream")
	}
	if result["subtype"] != "success" || result["result"] != finalText {
		t.Errorf("result record: subtype %v, result %q; want success, %q", result["subtype"], result["result"], finalText)
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// skipShort skips a slow test under -short, the quick loop (go test -short ./...); CI runs every test.
func skipShort(t *testing.T, what string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("-short: skipped, %s", what)
	}
}
