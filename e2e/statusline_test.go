package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/testservers"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// Claude Code runs the status-line command only in its interactive terminal interface, never
// under -p: this test drives that interface in a pseudo-terminal (util-linux script(1)), types
// the prompt and waits for the scripted model to finish, as a user would.

// fakeAPIKey is the key the interactive sessions use; its last 20 characters are approved in the
// configuration, as Claude Code records a user's "yes, use this key".
const fakeAPIKey = "sk-ant-fake-0123456789abcdefghijklmn"

// TestClaudeCodeStatusLine wires our status line with the real `install --statusline` and drives
// the real client interactively: a session whose echo tool trips (three rate-limit failures) and
// is denied once shows the open circuit under the prompt; a session two minutes later whose
// trial call succeeds ends with the line empty. The command install wrote runs behind a wrapper
// that logs each line it printed.
func TestClaudeCodeStatusLine(t *testing.T) {
	skipShort(t, "drives the real client in a terminal")
	if runtime.GOOS != "linux" {
		t.Skip("skipped: the pseudo-terminal comes from util-linux script(1)")
	}
	scriptBin, err := exec.LookPath("script")
	if err != nil {
		t.Skip("skipped: script(1) (util-linux) is not on PATH")
	}
	claude := installClaude(t)
	bin := filepath.Join(t.TempDir(), "bin")
	goBuild(t, bin, module+"/cmd/mcp-circuit-breaker", module+"/cmd/mcp-circuit-breaker-hook", testservers.FixturePackage)
	h := &harness{claude: claude, cli: filepath.Join(bin, "mcp-circuit-breaker"),
		hookBin: filepath.Join(bin, "mcp-circuit-breaker-hook"), fixture: filepath.Join(bin, "mcpfixture")}
	p := h.newProject(t, "", 0)
	out, _ := run(t, p.env, p.dir, 20*time.Second, h.cli, "install", "--scope", "local", "--statusline", "--dir", p.dir)
	want := "status line: " + h.hookBin + " statusline"
	if !strings.Contains(out, want+"\n") {
		t.Fatalf("install --statusline did not say %q:\n%s", want, out)
	}
	logFile := p.wrapStatusLine(t, h.hookBin+" statusline")
	p.trustInteractive(t)

	// Session 1: the trip and a denied call; the line under the prompt names the open circuit.
	fail := cue(quotaError)
	s1 := p.interactive(t, scriptBin, t0, [][]scriptCall{{{echoTool, fail}}, {{echoTool, fail}}, {{echoTool, fail}}, {{echoTool, `{}`}}}, logFile)
	if r := mustResult(t, s1.api, 4); !strings.HasPrefix(r.Text, "PreToolUse:"+echoTool+" hook error: ⚡ CIRCUIT OPEN") {
		t.Fatalf("call 4 was not denied:\n%s", r.read())
	}
	t.Logf("session 1's status lines, one per run: %q", s1.lines)
	const open = "⚡ MCP circuit open: fix/* RATE_LIMIT · trial in 1m0s (+1 tool)"
	if got := s1.after; len(got) == 0 || got[len(got)-1] != open {
		t.Errorf("the status lines after the session's last answer are %q, want them to end with %q", got, open)
	}
	// The terminal draws blanks as cursor moves: the text is compared without them.
	if !strings.Contains(strings.ReplaceAll(s1.screen, " ", ""), strings.ReplaceAll(open, " ", "")) {
		t.Errorf("the terminal never showed %q:\n%s", open, tail(s1.screen, 4<<10))
	}
	if !slices.Contains(s1.lines, "") {
		t.Errorf("no status line was empty before the trip: %q", s1.lines)
	}

	// Session 2, after the cooldown: the first call is the trial, it succeeds and closes the
	// circuits; the line is empty again.
	s2 := p.interactive(t, scriptBin, "2026-11-29T12:02:00Z", [][]scriptCall{{{echoTool, `{}`}}}, logFile)
	t.Logf("session 2's status lines, one per run: %q", s2.lines)
	if r := mustResult(t, s2.api, 1); r.IsError || !strings.Contains(r.read(), "circuit CLOSED for") {
		t.Fatalf("the trial did not close the circuits:\n%s", r.read())
	}
	closed := false
	for _, e := range p.ledger(t) {
		closed = closed || e.Tool == serverKey && e.ResetMethod == ledger.ResetProbeSuccess
	}
	if !closed {
		t.Error("the ledger has no close of the server circuit")
	}
	if got := s2.after; len(got) == 0 || slices.ContainsFunc(got, func(l string) bool { return l != "" }) {
		t.Errorf("the status lines after the close are %q, want only empty ones", got)
	}
	if !slices.ContainsFunc(s2.lines, func(l string) bool { return strings.Contains(l, "trial due") }) {
		t.Errorf("before the trial the line did not say it was due: %q", s2.lines)
	}
}

// wrapStatusLine puts a wrapper around the status line install wrote (command, which the test
// checks it is): the wrapper runs it with the same stdin and logs each line it printed, one per
// run, and asks Claude Code to run it every second besides its own updates.
func (p *scenarioProject) wrapStatusLine(t *testing.T, command string) string {
	t.Helper()
	settings := filepath.Join(p.dir, ".claude", "settings.local.json")
	var doc map[string]any
	b, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	line, _ := doc["statusLine"].(map[string]any)
	if line["type"] != "command" || line["command"] != command {
		t.Fatalf("install wrote the status line %v, want the command %q", line, command)
	}
	logFile := filepath.Join(p.root, "statusline.log")
	wrapper := filepath.Join(p.root, "statusline.sh")
	script := fmt.Sprintf("#!/bin/sh\nout=$(%s)\nprintf '[%%s]\\n' \"$out\" >> %s\nprintf '%%s\\n' \"$out\"\n", command, shellQuoted(logFile))
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	doc["statusLine"] = map[string]any{"type": "command", "command": shellQuoted(wrapper), "refreshInterval": 1}
	writeJSON(t, settings, doc)
	return logFile
}

// trustInteractive writes what a user's first interactive session would have recorded: onboarding
// done, this project trusted, the API key approved.
func (p *scenarioProject) trustInteractive(t *testing.T) {
	t.Helper()
	writeJSON(t, filepath.Join(p.root, "home", ".claude", ".claude.json"), map[string]any{
		"hasCompletedOnboarding": true, "theme": "dark", "numStartups": 5,
		"customApiKeyResponses": map[string]any{"approved": []string{fakeAPIKey[len(fakeAPIKey)-20:]}, "rejected": []string{}},
		"projects":              map[string]any{p.dir: map[string]any{"hasTrustDialogAccepted": true, "hasCompletedProjectOnboarding": true, "allowedTools": []string{}}},
	})
}

// tuiSession is what one interactive session showed.
type tuiSession struct {
	api *fakeAPI
	// screen is the terminal's output without its escape sequences.
	screen string
	// lines are the status lines printed during the session, after those printed after the
	// model's last answer was served.
	lines, after []string
}

// interactive runs one interactive Claude Code session in a pseudo-terminal with the hooks' clock
// at now: it types the prompt once the input box is drawn, waits until the model's last answer
// was served and the status line ran again after it, then quits with Ctrl-C twice.
func (p *scenarioProject) interactive(t *testing.T, scriptBin, now string, turns [][]scriptCall, logFile string) tuiSession {
	t.Helper()
	const final = "Done."
	api, srv := newScriptAPI(t, turns, final)
	env := append(slices.Clip(p.env), "ANTHROPIC_BASE_URL="+srv.URL, "ANTHROPIC_API_KEY="+fakeAPIKey,
		"ENABLE_TOOL_SEARCH=false", "DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1", "MCP_CIRCUIT_NOW="+now, "TERM=xterm-256color")
	before := readLog(t, logFile)
	ctx, cancel := context.WithTimeout(context.Background(), 3*claudeRun)
	defer cancel()
	debug := filepath.Join(p.root, fmt.Sprintf("claude-tui-debug-%d.txt", time.Now().UnixNano()))
	line := "stty cols 160 rows 40; exec " + strings.Join([]string{shellQuoted(p.h.claude), "--mcp-config", shellQuoted(p.mcpConfig),
		"--strict-mcp-config", "--allowedTools", "mcp__fix", "--model", "claude-sonnet-4-5", "--debug-file", shellQuoted(debug)}, " ")
	cmd := exec.CommandContext(ctx, scriptBin, "-qfec", line, "/dev/null")
	cmd.Dir, cmd.Env, cmd.WaitDelay = p.dir, env, 5*time.Second
	in, keys := io.Pipe()
	cmd.Stdin = in
	var mu sync.Mutex
	var raw bytes.Buffer
	cmd.Stdout = lockedWriter{&mu, &raw}
	cmd.Stderr = cmd.Stdout
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	screen := func() string {
		mu.Lock()
		defer mu.Unlock()
		return stripANSI(raw.String())
	}
	debugText := func() string { b, _ := os.ReadFile(debug); return string(b) }
	dump := func() {
		t.Logf("terminal (last 6 KB):\n%s", tail(screen(), 6<<10))
		t.Logf("claude debug log (last 8 KB):\n%s", tail(debugText(), 8<<10))
	}
	waitFor := func(what string, d time.Duration, ok func() bool) {
		t.Helper()
		for end := time.Now().Add(d); !ok(); time.Sleep(100 * time.Millisecond) {
			if time.Now().After(end) {
				dump()
				keys.Close()
				t.Fatalf("interactive session: %s not within %s", what, d)
			}
		}
	}
	// The prompt must not go before the MCP server's tools are listed: an interactive session
	// connects its servers after it draws the input box.
	waitFor("the input box", claudeRun, func() bool { return strings.Contains(screen(), "❯") })
	waitFor("the MCP server's connection", claudeRun, func() bool { return strings.Contains(debugText(), "Successfully connected") })
	keys.Write([]byte("use the fix tools"))
	time.Sleep(500 * time.Millisecond)
	keys.Write([]byte("\r"))
	waitFor("the model's last answer", claudeRun, api.served)
	served := len(readLog(t, logFile))
	// Claude Code runs the line after each message and every second (refreshInterval): wait for
	// two runs after the last answer, so that the last one saw the end of the session.
	waitFor("two status lines after the last answer", 30*time.Second, func() bool { return len(readLog(t, logFile)) >= served+2 })
	keys.Write([]byte("\x03"))
	time.Sleep(300 * time.Millisecond)
	keys.Write([]byte("\x03"))
	keys.Close()
	err := cmd.Wait()
	t.Logf("interactive claude (%d turns, MCP_CIRCUIT_NOW=%s): %s, exit %v", len(turns), now, time.Since(start).Round(time.Millisecond), err)
	t.Cleanup(func() {
		if t.Failed() {
			dump()
		}
	})
	all := readLog(t, logFile)
	return tuiSession{api: api, screen: screen(), lines: all[len(before):], after: all[served:]}
}

// readLog returns the status lines the wrapper logged, one per run.
func readLog(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if strings.HasPrefix(l, "[") && strings.HasSuffix(l, "]") {
			out = append(out, l[1:len(l)-1])
		}
	}
	return out
}

// lockedWriter serializes the writes of the terminal's output with the test's reads of it.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// ansi matches the terminal's control sequences: CSI (with private parameters), OSC, and the
// two-byte escapes.
var ansi = regexp.MustCompile("\x1b\\[[0-9;?<>=]*[ -/]*[@-~]|\x1b\\][^\x07\x1b]*(\x07|\x1b\\\\)|\x1b[()][0-9A-B]|\x1b[=>78]")

func stripANSI(s string) string { return ansi.ReplaceAllString(s, "") }

// shellQuoted quotes s for a POSIX shell.
func shellQuoted(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
