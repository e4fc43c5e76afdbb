package gate_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/agent"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
)

// hook runs one Claude Code event through the gate in dir at the instant now and returns its
// stdout and how many times Board.Gate decided.
func hook(t *testing.T, dir, now, event string) (string, int) {
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
	code := gate.RunCounting(gate.Config{Project: project.New(dir, getenv, &errOut), Wire: agent.Claude, Getenv: getenv,
		Stdin: strings.NewReader(event), Stdout: &out, Stderr: &errOut,
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
	// After the cooldown: the trial permit is taken under the lock.
	out, n := hook(t, dir, "2026-11-29T12:05:00Z", early)
	if !strings.Contains(out, "HALF-OPEN trial") || n > 2 {
		t.Errorf("trial: answer %.120q, %d decisions; want a trial, at most 2", out, n)
	}
	// A call while the trial is in flight is denied the same way.
	out, n = hook(t, dir, "2026-11-29T12:05:01Z", late)
	if !strings.Contains(out, "A trial call is in flight") || n > 2 {
		t.Errorf("trial in flight: answer %.120q, %d decisions; want a deny, at most 2", out, n)
	}
}
