package gate

import (
	"strings"
	"testing"
)

// TestAmbiguousName: a tool name that stands for tools of two configured servers (Copilot CLI's
// ctx-resolve-library-id: tool resolve-library-id of your ctx, or tool library-id of a
// repository's ctx-resolve) is denied, with a reason that says so, when either reading's circuit
// is not CLOSED; not when both are. A reading whose trial is due is denied too, without taking
// the trial's permit: its own unambiguous call still gets it.
func TestAmbiguousName(t *testing.T) {
	const (
		name = "ctx-resolve-library-id"
		mine = "mcp__ctx__resolve-library-id"
		repo = "mcp__ctx-resolve__library-id"
	)
	at := func(now string) func(*Config) {
		return func(c *Config) {
			env := c.Getenv
			c.Getenv = func(k string) string {
				if k == "MCP_CIRCUIT_NOW" {
					return now
				}
				return env(k)
			}
		}
	}
	before := Event{Kind: Before, Key: mine, Tool: name, Readings: []string{repo}, SessionID: "s"}
	dir := testProject(t)
	if a, stderr := runEvent(t, dir, before); !a.IsZero() {
		t.Fatalf("both readings CLOSED: %+v (stderr %q), want the call allowed, nothing said", a, stderr)
	}
	for i := 0; i < 3; i++ {
		runEvent(t, dir, Event{Kind: Failure, Key: repo, Tool: name, Server: "ctx-resolve", Error: "HTTP 503 Service Unavailable"})
	}
	a, stderr := runEvent(t, dir, before)
	if !a.Deny || !strings.HasPrefix(a.Reason, "⚡ CIRCUIT OPEN — mcp__ctx-resolve__") ||
		!strings.Contains(a.Reason, "The name "+name+" stands for more than one tool of the servers configured here ("+mine+", "+repo+")") {
		t.Fatalf("the other reading OPEN: %+v (stderr %q), want a deny that names both readings", a, stderr)
	}
	if a, _ := runEvent(t, dir, Event{Kind: Before, Key: mine, Tool: name, SessionID: "s"}); a.Deny {
		t.Fatalf("the same name with one reading was denied: %+v", a)
	}
	// Five minutes on, the repository's circuit has its trial due: the ambiguous name is still
	// denied, and takes no permit, so the unambiguous call of that tool is the trial.
	a, _ = runEventWith(t, dir, before, at("2026-11-29T12:05:00Z"))
	if !a.Deny || !strings.Contains(a.Reason, "stands for more than one tool") {
		t.Fatalf("the other reading's trial due: %+v, want a deny", a)
	}
	a, _ = runEventWith(t, dir, Event{Kind: Before, Key: repo, Tool: name, SessionID: "s"}, at("2026-11-29T12:05:01Z"))
	if a.Deny || !strings.Contains(a.Context, "trial") {
		t.Fatalf("the repository's tool called unambiguously after the denied ambiguous call: %+v, want its trial", a)
	}

	// Your own reading OPEN: the usual deny, of your circuit.
	dir = testProject(t)
	for i := 0; i < 3; i++ {
		runEvent(t, dir, Event{Kind: Failure, Key: mine, Tool: name, Server: "ctx", Error: "HTTP 503 Service Unavailable"})
	}
	if a, _ := runEvent(t, dir, before); !a.Deny || !strings.HasPrefix(a.Reason, "⚡ CIRCUIT OPEN — mcp__ctx__") {
		t.Fatalf("your reading OPEN: %+v, want its deny", a)
	}
}
