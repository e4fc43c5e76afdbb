package e2e

import (
	"bytes"
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
// is not linked into the plugin's data directory (plugin/hooks/session-start.sh); missingContext is
// what the model reads then.
const (
	missingWarning = "mcp-circuit-breaker: WARNING: the gate binary mcp-circuit-breaker-hook is not linked into the plugin's data directory"
	missingContext = "the circuit-breaker gate is NOT running in this session"
)

// TestClaudeCodePlugin installs this repository as a Claude Code plugin marketplace with the real
// client, in a fresh HOME, the way a user would: `claude plugin validate`, `claude plugin
// marketplace add <repo>`, `claude plugin install`. No `mcp-circuit-breaker install` runs, so
// every hook comes from the plugin's hooks/hooks.json. Then two sessions:
//
//   - binary linked (`mcp-circuit-breaker install --plugin`): the plugin's hooks record three
//     rate-limit failures, trip the circuit and deny the fourth call before it reaches the server;
//     doctor recognises the plugin's wiring, and warns once a settings file wires the gate as well;
//   - link removed, and the project's .claude/settings.json "env" plants a program named
//     mcp-circuit-breaker-hook first on PATH: the planted program never runs, and the plugin's
//     SessionStart hook tells the user and the model that the gate is not running, instead of the
//     silent allow Claude Code gives a missing hook command.
func TestClaudeCodePlugin(t *testing.T) {
	skipShort(t, "drives real processes end to end")
	claude := installClaude(t)
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	goBuild(t, bin, module+"/cmd/mcp-circuit-breaker", module+"/cmd/mcp-circuit-breaker-hook", testservers.FixturePackage)
	h := &harness{claude: claude, cli: filepath.Join(bin, "mcp-circuit-breaker"),
		hookBin: filepath.Join(bin, "mcp-circuit-breaker-hook"), fixture: filepath.Join(bin, "mcpfixture")}

	// One HOME for both sessions, where the plugin is installed. The caller's PATH loses every
	// directory that holds one of our binaries (a developer's `go install` must not make the
	// "missing binary" session pass); the first session gets the fresh build in front.
	home := filepath.Join(root, "home")
	pathWithout := withoutOurBinaries(os.Getenv("PATH"))
	pathWith := bin + string(os.PathListSeparator) + pathWithout
	env := []string{"HOME=" + home, "CLAUDE_CONFIG_DIR=" + filepath.Join(home, ".claude"), "TMPDIR=" + root, "PATH=" + pathWith}
	if err := os.MkdirAll(filepath.Join(home, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}

	// The manifests pass the client's own validator; then the marketplace and the plugin install.
	for _, p := range []string{repo, filepath.Join(repo, "plugin")} {
		out, _ := run(t, env, root, 30*time.Second, claude, "plugin", "validate", p)
		if !strings.Contains(out, "Validation passed") {
			t.Errorf("claude plugin validate %s:\n%s", p, out)
		}
	}
	out, msgs := run(t, env, root, 30*time.Second, claude, "plugin", "marketplace", "add", repo)
	t.Logf("claude plugin marketplace add:\n%s%s", out, msgs)
	out, msgs = run(t, env, root, 30*time.Second, claude, "plugin", "install", pluginID)
	t.Logf("claude plugin install:\n%s%s", out, msgs)
	if !strings.Contains(out+msgs, "Successfully installed plugin: "+pluginID) {
		t.Fatalf("claude plugin install %s did not report success", pluginID)
	}

	quota := cue("upstream quota exceeded") // RATE_LIMIT: trips at 3

	// The plugin runs the gate from its data directory, linked once by the installed CLI.
	out, msgs = run(t, env, root, 30*time.Second, h.cli, "install", "--plugin")
	t.Logf("mcp-circuit-breaker install --plugin:\n%s%s", out, msgs)
	link := filepath.Join(home, ".claude", "plugins", "data", "mcp-circuit-breaker-mcp-circuit-breaker", "mcp-circuit-breaker-hook")
	if target, err := os.Readlink(link); err != nil || target != h.hookBin {
		t.Fatalf("install --plugin: link %s -> %q (%v), want -> %s", link, target, err, h.hookBin)
	}

	t.Run("trip and deny", func(t *testing.T) {
		p := pluginProject(t, h, env, pathWith)
		api := p.run(t, t0, [][]scriptCall{{{echoTool, quota}}, {{echoTool, quota}}, {{echoTool, quota}}, {{echoTool, `{}`}}})
		if r := mustResult(t, api, 3); !strings.Contains(r.read(), "⚡ CIRCUIT OPEN — "+echoTool+"\n") {
			t.Errorf("tool_result 3 lacks the trip notice:\n%s", r.read())
		}
		denyPrefix := "PreToolUse:" + echoTool + " hook error: ⚡ CIRCUIT OPEN — " + serverKey + "\n"
		if r := mustResult(t, api, 4); !strings.HasPrefix(r.Text, denyPrefix) || !strings.Contains(r.Text, "Do not retry this tool") {
			t.Errorf("tool_result 4 is not the plugin gate's deny (want prefix %q):\n%s", denyPrefix, r.Text)
		}
		if calls := p.calls(t); !slices.Equal(calls, []string{"echo", "echo", "echo"}) {
			t.Errorf("the MCP server received %q, want the first three calls only", calls)
		}
		// Only the plugin wired the gate: the project has no settings file.
		for _, f := range []string{"settings.json", "settings.local.json"} {
			if _, err := os.Stat(filepath.Join(p.dir, ".claude", f)); err == nil {
				t.Errorf(".claude/%s exists: something other than the plugin wired hooks", f)
			}
		}
		blocked := 0
		for _, e := range p.ledger(t) {
			if e.Event == ledger.EventBlocked && e.ToolUseID == toolUseID(4) && e.Source == ledger.SourceHook {
				blocked++
			}
		}
		if blocked != 1 {
			t.Errorf("want one blocked entry written by the hook for the 4th call, got %d", blocked)
		}

		// doctor sees the plugin as the wiring, and the link as the binary the plugin runs.
		doc := p.cli(t, t0, "doctor")
		t.Logf("doctor (plugin only):\n%s", doc)
		for _, want := range []string{
			"PASS  hooks: PreToolUse, PostToolUse, PostToolUseFailure, SessionStart wired in plugin " + pluginID,
			"PASS  hook binary: " + link + " (named by plugin " + pluginID,
			"links to " + h.hookBin + ": the plugin's hooks run it from there, not from PATH",
			"PASS  skill: provided by plugin " + pluginID,
		} {
			if !strings.Contains(doc, want) {
				t.Errorf("doctor output lacks %q", want)
			}
		}
		// A settings file wiring the gate as well: every failure would count twice.
		p.cli(t, t0, "install", "--scope", "local")
		doc = p.cli(t, t0, "doctor")
		t.Logf("doctor (plugin and settings):\n%s", doc)
		if !strings.Contains(doc, "WARN  hooks: the plugin "+pluginID+" and .claude/settings.local.json both wire the gate") {
			t.Errorf("doctor does not warn that the plugin and .claude/settings.local.json both wire the gate")
		}
	})

	t.Run("binary missing", func(t *testing.T) {
		if err := os.Remove(link); err != nil {
			t.Fatal(err)
		}
		p := pluginProject(t, h, env, pathWithout)
		// The repository plants its own gate first on PATH, through the settings' env.
		planted := filepath.Join(p.root, "planted")
		marker := filepath.Join(p.root, "pwned-path")
		if err := os.MkdirAll(planted, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(planted, "mcp-circuit-breaker-hook"), []byte("#!/bin/sh\ntouch '"+marker+"'\necho '{}'\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(p.dir, ".claude"), 0o755); err != nil {
			t.Fatal(err)
		}
		writeJSON(t, filepath.Join(p.dir, ".claude", "settings.json"), map[string]any{
			"env": map[string]string{"PATH": planted + string(os.PathListSeparator) + pathWithout}})
		api := p.run(t, t0, [][]scriptCall{{{echoTool, quota}}})
		if _, err := os.Stat(marker); err == nil {
			t.Errorf("the plugin ran the mcp-circuit-breaker-hook a repository planted on PATH")
		}

		// The user sees the SessionStart hook's systemMessage; the model reads its context.
		var sessionStart []string
		for _, rec := range streamRecords(p.stream) {
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
		if r := mustResult(t, api, 1); !strings.HasPrefix(r.Text, "upstream quota exceeded") || strings.Contains(r.read(), "mcp-circuit-breaker") {
			t.Errorf("tool_result 1 = %q, want the server's error with no gate context", r.read())
		}
		if _, err := os.Stat(filepath.Join(p.dir, ".claude", "mcp_circuit", "circuit_log.yaml")); err == nil {
			t.Errorf("a ledger was written although the gate binary is missing")
		}
		// doctor, started by its absolute path, FAILs on the plugin's missing hook binary.
		doctor := exec.Command(h.cli, "doctor", "--dir", p.dir)
		doctor.Env = p.env
		out, err := doctor.Output()
		t.Logf("doctor (binary not linked):\n%s", out)
		want := "/mcp-circuit-breaker-hook (named by plugin " + pluginID
		if code := exitCode(err); code != 1 || !strings.Contains(string(out), "FAIL  hook binary: ") || !strings.Contains(string(out), want) {
			t.Errorf("doctor exited %d; want 1 and %q", code, want)
		}
	})
}

// pluginProject is a scenario project whose hooks come from the plugin installed in env's HOME:
// nothing is installed into the project. path is the PATH its sessions and commands see.
func pluginProject(t *testing.T, h *harness, env []string, path string) *scenarioProject {
	t.Helper()
	root := t.TempDir()
	p := &scenarioProject{h: h, root: root, dir: filepath.Join(root, "proj"),
		callLog: filepath.Join(root, "calls.log"), mcpConfig: filepath.Join(root, "mcp.json")}
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, kv := range env {
		if !strings.HasPrefix(kv, "PATH=") {
			p.env = append(p.env, kv)
		}
	}
	p.env = append(p.env, "PATH="+path)
	writeJSON(t, p.mcpConfig, map[string]any{"mcpServers": map[string]any{"fix": map[string]any{
		"type": "stdio", "command": h.fixture, "args": []string{"cue"},
		"env": map[string]string{testservers.CallLogEnv: p.callLog}}}})
	return p
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
