package gate_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/agent"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/yamlfile"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// hook runs one Claude Code event through the gate in dir at the instant now and returns its
// stdout and how many times Board.Gate decided.
func hook(t *testing.T, dir, now, event string) (string, int) {
	t.Helper()
	return hookFrom(t, dir, now, strings.NewReader(event))
}

// stalled is a PreToolUse whose stdin stops after tool_name for longer than the gate waits for a
// whole payload, so that the gate decides from the tool's name while the rest is still to come.
func stalled(event string) io.Reader {
	// The decoder reports the tool when it reads the key after tool_name.
	head, tail, _ := strings.Cut(event, `"tool_input":`)
	pr, pw := io.Pipe()
	go func() {
		pw.Write([]byte(head + `"tool_input":`))
		time.Sleep(300 * time.Millisecond)
		pw.Write([]byte(tail))
		pw.Close()
	}()
	return pr
}

func hookFrom(t *testing.T, dir, now string, stdin io.Reader) (string, int) {
	t.Helper()
	getenv := func(k string) string {
		switch k {
		case "MCP_CIRCUIT_NOW":
			return now
		case "HOME":
			return dir
		}
		return ""
	}
	var out, errOut bytes.Buffer
	n := 0
	code := gate.RunCounting(gate.Config{Project: project.New(dir, getenv, &errOut, testDecoder), Wire: agent.Claude, Getenv: getenv,
		Stdin: stdin, Stdout: &out, Stderr: &errOut,
		Exit: func(c int) { panic(fmt.Sprintf("the watchdog fired (exit %d): %s", c, errOut.String())) }}, &n)
	if code != 0 || errOut.Len() > 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
	return out.String(), n
}

// The one-decision rule: a PreToolUse is decided once on the unlocked view (while stdin still
// streams, when tool_name comes before tool_input) and, when it records something (a blocked
// entry, a trial permit), once more under the lock; the deny reason and its fallbacks take the
// figures of that decision and decide nothing again.
func TestPreToolUseDecidesAtMostTwice(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(".claude/mcp_circuit/\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const t0 = "2026-11-29T12:00:00Z"
	failure := func(id string) string {
		return `{"session_id":"s","hook_event_name":"PostToolUseFailure","tool_name":"mcp__docs__search","tool_input":{"q":"x"},"tool_use_id":"` + id +
			`","error":"MCP error -32000: Connection closed","is_interrupt":false,"mcp_server":{"name":"docs","source":"project"}}`
	}
	early := `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"mcp__docs__search","tool_input":{"q":"` + strings.Repeat("x", 1<<20) + `"},"tool_use_id":"u1"}`
	late := `{"session_id":"s","tool_input":{"q":"x"},"tool_use_id":"u2","hook_event_name":"PreToolUse","tool_name":"mcp__docs__search"}`

	// CLOSED with one failure counted: decided once, nothing recorded.
	hook(t, dir, t0, failure("f1"))
	for _, in := range []string{early, late} {
		if out, n := hook(t, dir, t0, in); out != "" || n != 1 {
			t.Errorf("CLOSED with a failure counted: answer %q, %d decisions; want none, 1", out, n)
		}
	}
	// OPEN: denied, with the blocked entry recorded under the lock.
	hook(t, dir, t0, failure("f2"))
	hook(t, dir, t0, failure("f3"))
	for _, in := range []string{early, late} {
		out, n := hook(t, dir, t0, in)
		if !strings.Contains(out, `"permissionDecision":"deny"`) || !strings.Contains(out, "Use a fallback") || n > 2 {
			t.Errorf("OPEN: answer %.120q, %d decisions; want a deny with fallbacks, at most 2", out, n)
		}
	}
	// Decided from the tool's name while stdin stalls: the locked step reuses that decision.
	out, n := hookFrom(t, dir, t0, stalled(early))
	if !strings.Contains(out, `"permissionDecision":"deny"`) || !strings.Contains(out, "Use a fallback") || n > 2 {
		t.Errorf("OPEN, stdin stalled: answer %.120q, %d decisions; want a deny with fallbacks, at most 2", out, n)
	}
	// After the cooldown: the trial permit is taken under the lock.
	out, n = hook(t, dir, "2026-11-29T12:05:00Z", early)
	if !strings.Contains(out, "HALF-OPEN trial") || n > 2 {
		t.Errorf("trial: answer %.120q, %d decisions; want a trial, at most 2", out, n)
	}
	// A call while the trial is in flight is denied the same way.
	out, n = hook(t, dir, "2026-11-29T12:05:01Z", late)
	if !strings.Contains(out, "A trial call is in flight") || n > 2 {
		t.Errorf("trial in flight: answer %.120q, %d decisions; want a deny, at most 2", out, n)
	}
}

// hookAs is hook with another agent's codec.
func hookAs(t *testing.T, w gate.Wire, dir, now, event string) (string, int) {
	t.Helper()
	getenv := func(k string) string {
		switch k {
		case "MCP_CIRCUIT_NOW":
			return now
		case "HOME":
			return dir
		}
		return ""
	}
	var out, errOut bytes.Buffer
	n := 0
	gate.RunCounting(gate.Config{Project: project.New(dir, getenv, &errOut, testDecoder), Wire: w, Getenv: getenv,
		Stdin: strings.NewReader(event), Stdout: &out, Stderr: &errOut,
		Exit: func(c int) { panic(fmt.Sprintf("the watchdog fired (exit %d): %s", c, errOut.String())) }}, &n)
	return out.String() + errOut.String(), n
}

// VS Code runs the hooks of .claude/settings.json for every tool, whatever the matcher: a tool that
// is not an MCP tool is let through at once, with nothing decided or read, even while a circuit is
// OPEN. Cursor reports our own deny back as a postToolUseFailure with failure_type
// permission_denied: however many arrive, nothing is counted.
func TestForeignEventsNeverDenyOrCount(t *testing.T) {
	dir := t.TempDir()
	// Cursor's own MCP configuration names the server; Claude Code's has it too: one server.
	for name, data := range map[string]string{
		".gitignore":       ".claude/mcp_circuit/\n",
		".cursor/mcp.json": `{"mcpServers":{"docs":{"url":"https://docs.example.com/mcp/"}}}`,
		".mcp.json":        `{"mcpServers":{"docs":{"type":"http","url":"https://docs.example.com/mcp"}}}`,
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o700)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	const t0 = "2026-11-29T12:00:00Z"
	denied := `{"hook_event_name":"postToolUseFailure","tool_name":"MCP:docs:search","error_message":"blocked by hook","failure_type":"permission_denied"}`
	before := `{"conversation_id":"c1","hook_event_name":"beforeMCPExecution","tool_name":"search","tool_input":"{}","url":"https://docs.example.com/mcp"}`
	for i := 0; i < 5; i++ {
		if out, n := hookAs(t, agent.Cursor, dir, t0, denied); out != "" || n != 0 {
			t.Fatalf("Cursor permission_denied: %q, %d decisions; want nothing", out, n)
		}
	}
	if out, _ := hookAs(t, agent.Cursor, dir, t0, before); out != "" {
		t.Fatalf("Cursor after its own denies: %q, want the call allowed silently", out)
	}
	// Three real failures trip the server; Cursor's next call is denied with the reason for the model.
	for i := 0; i < 3; i++ {
		hookAs(t, agent.Cursor, dir, t0, `{"hook_event_name":"postToolUseFailure","tool_name":"MCP:docs:search","error_message":"MCP error -32000: Connection closed","failure_type":"error"}`)
	}
	out, n := hookAs(t, agent.Cursor, dir, t0, before)
	if !strings.Contains(out, `"permission":"deny"`) || !strings.Contains(out, `"agent_message":"⚡ CIRCUIT OPEN`) || n > 2 {
		t.Fatalf("Cursor on an OPEN circuit: %.200q, %d decisions", out, n)
	}
	// The circuit Cursor tripped is the one Claude Code's call meets.
	out, _ = hook(t, dir, t0, `{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"mcp__docs__search","tool_input":{}}`)
	if !strings.Contains(out, `"permissionDecision":"deny"`) {
		t.Fatalf("Claude Code after Cursor tripped the circuit: %.200q", out)
	}
	vscode := `{"timestamp":"2026-11-29T12:00:00.000Z","hookEventName":"PreToolUse","sessionId":"s-1","cwd":"` + dir + `","tool_name":"editFiles","tool_input":{"files":["src/main.ts"]},"tool_use_id":"tool-123"}`
	if out, n := hook(t, dir, t0, vscode); out != "" || n != 0 {
		t.Fatalf("VS Code editFiles while a circuit is OPEN: %q, %d decisions; want nothing", out, n)
	}
	// A name that only starts like an MCP tool's names no server, so no circuit decides it: nothing
	// is read (a read would write the snapshot again).
	snapshot := filepath.Join(dir, ".claude", "mcp_circuit", states.SnapshotName)
	if err := os.Remove(snapshot); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"mcp__", "mcp____search", "mcp_docs_search", "docs-search"} {
		ev := strings.Replace(vscode, `"editFiles"`, `"`+tool+`"`, 1)
		if out, n := hook(t, dir, t0, ev); out != "" || n != 0 {
			t.Fatalf("VS Code %s while a circuit is OPEN: %q, %d decisions; want nothing", tool, out, n)
		}
		if _, err := os.Stat(snapshot); err == nil {
			t.Fatalf("VS Code %s: the state was read (%s written)", tool, states.SnapshotName)
		}
	}
}

// Cursor's servers come from its own MCP configuration even when Claude Code's names none.
func TestCursorServersFromItsOwnConfig(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ".cursor"), 0o700)
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(".claude/mcp_circuit/\n"), 0o600)
	os.WriteFile(filepath.Join(dir, ".cursor", "mcp.json"), []byte(`{"mcpServers":{"fs":{"command":"npx","args":["-y","server-fs","/srv"]}}}`), 0o600)
	const t0 = "2026-11-29T12:00:00Z"
	for i := 0; i < 3; i++ {
		hookAs(t, agent.Cursor, dir, t0, `{"hook_event_name":"postToolUseFailure","tool_name":"MCP:read","error_message":"MCP error -32000: Connection closed","failure_type":"error"}`)
	}
	out, _ := hookAs(t, agent.Cursor, dir, t0, `{"hook_event_name":"beforeMCPExecution","tool_name":"read","tool_input":"{}","command":"npx -y server-fs /srv"}`)
	if !strings.Contains(out, `"permission":"deny"`) || !strings.Contains(out, "mcp__fs__") {
		t.Fatalf("Cursor with its own mcp.json: %.200q, want the fs server's circuit denied", out)
	}
	// A remote server in Cursor's own format: "url" alone, no "type".
	os.WriteFile(filepath.Join(dir, ".cursor", "mcp.json"), []byte(`{"mcpServers":{"docs":{"url":"https://docs.example.com/mcp","headers":{"Authorization":"Bearer x"}}}}`), 0o600)
	for i := 0; i < 3; i++ {
		hookAs(t, agent.Cursor, dir, t0, `{"hook_event_name":"postToolUseFailure","tool_name":"MCP:search","error_message":"HTTP 503 Service Unavailable","failure_type":"error"}`)
	}
	out, _ = hookAs(t, agent.Cursor, dir, t0, `{"hook_event_name":"beforeMCPExecution","tool_name":"search","tool_input":"{}","url":"https://docs.example.com/mcp"}`)
	if !strings.Contains(out, `"permission":"deny"`) || !strings.Contains(out, "mcp__docs__") {
		t.Fatalf("Cursor with a url-only server in its mcp.json: %.200q, want the docs server's circuit denied", out)
	}
}

// testDecoder reads YAML as the full CLI does (the lean binary asks it).
var testDecoder = project.Decoder{Policy: yamlfile.UsablePolicy, Catalog: yamlfile.Catalog, Item: yamlfile.Item}
