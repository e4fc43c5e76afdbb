package gate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/yamlfile"
)

// jsonWire is a wire whose events are gate.Event as JSON and whose answers are gate.Answer as
// JSON: the gate's own flow, with no agent's format in the way (the agents' codecs are tested in
// internal/agent, and the whole hook with Claude Code's in the CLI's scripts).
type jsonWire struct{}

func (jsonWire) Decode(r io.Reader, _ Servers, seen func(Event)) (Event, error) {
	var ev Event
	err := json.NewDecoder(r).Decode(&ev)
	return ev, err
}

func (jsonWire) Encode(_ Event, a Answer) Reply {
	if a.IsZero() {
		return Reply{}
	}
	b, _ := json.Marshal(a)
	return Reply{Stdout: b}
}

// project makes a project directory with its state directory git-ignored.
func testProject(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(".claude/mcp_circuit/\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runEvent runs the gate on ev in dir at a fixed time and returns its answer and stderr.
func runEvent(t *testing.T, dir string, ev Event) (Answer, string) {
	t.Helper()
	return runEventWith(t, dir, ev, nil)
}

// runEventWith is runEvent with the configuration changed by change first (when not nil).
func runEventWith(t *testing.T, dir string, ev Event, change func(*Config)) (Answer, string) {
	t.Helper()
	in, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string {
		switch k {
		case "MCP_CIRCUIT_NOW":
			return "2026-11-29T12:00:00Z"
		case "HOME":
			return dir
		}
		return ""
	}
	var out, errOut bytes.Buffer
	p := project.New(dir, getenv, &errOut, testDecoder)
	cfg := Config{Project: p, Wire: jsonWire{}, Getenv: getenv, Stdin: bytes.NewReader(in), Stdout: &out, Stderr: &errOut,
		Exit: func(c int) { panic(fmt.Sprintf("the watchdog fired (exit %d): %s", c, errOut.String())) }}
	if change != nil {
		change(&cfg)
	}
	code := Run(cfg)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var a Answer
	if out.Len() > 0 {
		if err := json.Unmarshal(out.Bytes(), &a); err != nil {
			t.Fatalf("answer %q: %v", out.String(), err)
		}
	}
	return a, errOut.String()
}

// An agent without a failure event reports the failures it finds at the next call (Event.Missed):
// they count before that call is decided, so the call that meets the tripped circuit is denied, and
// while the circuit is still CLOSED the model reads the step-2 message with the allowed call.
func TestMissedFailuresCountBeforeTheCall(t *testing.T) {
	dir := testProject(t)
	const key = "mcp__docs__search"
	failed := func(id string) Event {
		return Event{Kind: Failure, Key: key, Tool: key, Server: "docs", Error: "MCP error -32000: Connection closed", ToolUseID: id}
	}
	a, stderr := runEvent(t, dir, Event{Kind: Before, Key: key, Tool: key, SessionID: "s", Missed: []Event{failed("t1")}})
	if a.Deny || !strings.Contains(a.Context, "docs") {
		t.Fatalf("after one missed failure: %+v (stderr %q), want an allowed call with the step-2 message", a, stderr)
	}
	a, stderr = runEvent(t, dir, Event{Kind: Before, Key: key, Tool: key, SessionID: "s", Missed: []Event{failed("t2"), failed("t3")}})
	if !a.Deny || !strings.Contains(a.Reason, "CIRCUIT OPEN") || a.Context != "" {
		t.Fatalf("after three missed failures: %+v (stderr %q), want a deny without context", a, stderr)
	}
	// An interrupt, or an event that names no MCP tool, never counts.
	dir = testProject(t)
	a, _ = runEvent(t, dir, Event{Kind: Before, Key: key, Tool: key, Missed: []Event{
		{Kind: Failure, Key: key, Error: "Connection closed", Interrupt: true},
		{Kind: Failure, Key: "Bash", Error: "Connection closed"},
		{Kind: Success, Key: key},
	}})
	if !a.IsZero() {
		t.Fatalf("missed events that are not failures of MCP tools: %+v, want nothing said", a)
	}
}

// testDecoder reads YAML as the full CLI does (the lean binary asks it).
var testDecoder = project.Decoder{Policy: yamlfile.UsablePolicy, Catalog: yamlfile.Catalog, Item: yamlfile.Item}
