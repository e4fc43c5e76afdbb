//go:build unix

package proxy

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/agent"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/report"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

const (
	echoKey   = "mcp__cue__echo"
	serverKey = "mcp__cue__*"
)

// TestTripDenyTrialClose drives the proxy with the official go-sdk client in front of a real stdio
// server that fails on cue: three failures trip, the fourth call is answered by the proxy and never
// reaches the server, and after the cooldown the trial goes to the server and closes the circuit;
// the report shows all of it.
func TestTripDenyTrialClose(t *testing.T) {
	w := newWorld(t)
	r := w.start(fixtureBin, "cue")
	cs := r.client(t, nil)

	const fail = "upstream service unavailable 503"
	for i := 1; i <= 3; i++ {
		text, isErr := callText(t, cs, "echo", map[string]any{"fail": fail})
		if !isErr || text != fail {
			t.Fatalf("call %d: got %q (isError %v), want the server's own %q", i, text, isErr, fail)
		}
	}
	// The outcome is queued before the answer reaches the client, and written just after.
	r.stderr.waitFor(t, "CIRCUIT OPEN — "+echoKey)
	if got := w.state(echoKey); got != ledger.Open {
		t.Fatalf("after 3 failures %s is %s, want OPEN", echoKey, got)
	}
	if got := w.serverCalls(); got != 3 {
		t.Fatalf("the server saw %d calls, want 3", got)
	}

	text, isErr := callText(t, cs, "echo", nil)
	if !isErr || !strings.Contains(text, "CIRCUIT OPEN") || !strings.Contains(text, "Do not retry this tool") {
		t.Fatalf("the fourth call: got %q (isError %v), want the hook's deny text", text, isErr)
	}
	if got := w.serverCalls(); got != 3 {
		t.Fatalf("the denied call reached the server (%d calls)", got)
	}
	// Another tool of the server is blocked too: the 503 is server-wide.
	if text, isErr := callText(t, cs, "other", nil); !isErr || !strings.Contains(text, serverKey) {
		t.Fatalf("other tool: got %q (isError %v), want a deny naming %s", text, isErr, serverKey)
	}

	w.advance(2 * time.Minute)
	text, isErr = callText(t, cs, "echo", nil)
	if isErr || text != "ok" {
		t.Fatalf("the trial: got %q (isError %v), want the server's answer", text, isErr)
	}
	if got := w.serverCalls(); got != 4 {
		t.Fatalf("the trial did not reach the server (%d calls)", got)
	}
	r.stderr.waitFor(t, "circuit CLOSED for")
	for _, k := range []string{echoKey, serverKey} {
		if got := w.state(k); got != ledger.Closed {
			t.Errorf("after the trial %s is %s, want CLOSED", k, got)
		}
	}

	es := w.entries()
	events := map[ledger.Event]int{}
	for _, e := range es {
		events[e.Event]++
		if e.Source != ledger.SourceProxy {
			t.Errorf("entry %s %s has source %q, want proxy", e.Tool, e.Event, e.Source)
		}
		if !e.Verified && e.Event != ledger.EventBlocked { // counters are not checked (ledger.CheckAll)
			t.Errorf("entry %s %s does not carry this user's provenance", e.Tool, e.Event)
		}
	}
	if events[ledger.EventBlocked] < 2 || events[ledger.EventHalfOpen] == 0 || events[ledger.EventSuccess] == 0 {
		t.Errorf("ledger events %v: want blocked calls, a half-open trial and its success", events)
	}
	rep := report.Build(es, report.Options{Now: w.now})
	md := rep.Markdown()
	if rep.Trips == 0 || !strings.Contains(md, echoKey) || !strings.Contains(md, "CLOSED") {
		t.Errorf("the report does not show the trip and the close:\n%s", md)
	}
}

// TestHangTripsTimeout: a call still unanswered at hang_after is recorded as a TIMEOUT (hung) at
// that moment; three of them trip the tool, and the next call is denied without reaching the server.
func TestHangTripsTimeout(t *testing.T) {
	w := newWorld(t)
	w.policy("defaults:\n  hang_after: 1s\n")
	r := w.start(fixtureBin, "cue")
	cs := r.client(t, nil)
	for i := 1; i <= 3; i++ {
		// Each call hangs until the server is stopped; only its recording is waited for.
		go cs.CallTool(t.Context(), callParams("echo", map[string]any{"sleep_ms": 600000 + i}))
	}
	r.stderr.waitFor(t, "CIRCUIT OPEN — "+echoKey)
	if got := w.state(echoKey); got != ledger.Open {
		t.Fatalf("%s is %s after three hung calls, want OPEN", echoKey, got)
	}
	var hung int
	for _, e := range w.entries() {
		if e.Tool == echoKey && e.Event == ledger.EventFailure || e.Event == ledger.EventTrip {
			if e.FailureType != ledger.Timeout || e.Cause != "hung" {
				t.Errorf("entry %s %s: %s %s, want TIMEOUT hung", e.Tool, e.Event, e.FailureType, e.Cause)
			}
			hung++
		}
	}
	if hung < 3 {
		t.Errorf("%d hung failures recorded, want 3", hung)
	}
	before := w.serverCalls()
	if text, isErr := callText(t, cs, "echo", nil); !isErr || !strings.Contains(text, "CIRCUIT OPEN") {
		t.Fatalf("the call after the hangs: got %q (isError %v), want the deny", text, isErr)
	}
	if got := w.serverCalls(); got != before {
		t.Fatalf("the denied call reached the server")
	}
}

// TestExitTripsServer: a server that dies on a call fails it toward the client with a JSON-RPC
// error and in the ledger as the server's; three such exits (the client restarts the proxy each
// time) open the server circuit, and the next run answers the call itself.
func TestExitTripsServer(t *testing.T) {
	w := newWorld(t)
	for i := 1; i <= 3; i++ {
		r := w.start(fixtureBin, "cue")
		cs := r.client(t, nil)
		tool := []string{"echo", "other", "echo"}[i-1]
		_, err := cs.CallTool(t.Context(), callParams(tool, map[string]any{"exit": true}))
		if err == nil || !strings.Contains(err.Error(), "Connection closed") {
			t.Fatalf("run %d: a call the server died on: err %v, want the proxy's Connection closed error", i, err)
		}
		if err := <-r.done; err == nil || !strings.Contains(err.Error(), "exit status 3") {
			t.Fatalf("run %d: the proxy ended with %v, want the server's exit", i, err)
		}
		r.done <- nil // for the cleanup
		cs.Close()
	}
	if got := w.state(serverKey); got != ledger.Open {
		t.Fatalf("%s is %s after three exits across two tools, want OPEN", serverKey, got)
	}
	for _, e := range w.entries() {
		if e.Event == ledger.EventFailure && e.Cause != "process_exited" {
			t.Errorf("entry %s: cause %q, want process_exited", e.Tool, e.Cause)
		}
	}
	r := w.start(fixtureBin, "cue")
	cs := r.client(t, nil)
	before := w.serverCalls()
	if text, isErr := callText(t, cs, "other", nil); !isErr || !strings.Contains(text, serverKey) {
		t.Fatalf("a call after the server tripped: got %q (isError %v)", text, isErr)
	}
	if w.serverCalls() != before {
		t.Fatal("the denied call reached the server")
	}
}

// TestErrorCodes: a JSON-RPC error is classified by its code: an unknown tool (-32602 from the
// go-sdk, "unknown tool") is NOT_FOUND of that tool, and trips it at once.
func TestErrorCodes(t *testing.T) {
	w := newWorld(t)
	r := w.start(fixtureBin, "cue")
	cs := r.client(t, nil)
	if _, err := cs.CallTool(t.Context(), callParams("nosuch", nil)); err == nil {
		t.Fatal("a call of a tool the server lacks succeeded")
	}
	r.stderr.waitFor(t, "mcp__cue__nosuch")
	got := w.entries()
	if len(got) == 0 || got[0].Tool != "mcp__cue__nosuch" || got[0].FailureType != ledger.NotFound {
		t.Fatalf("entries %+v: want NOT_FOUND of mcp__cue__nosuch", got)
	}
}

// TestHookCountsOnce: Claude Code with our hook and its server through the proxy sees each call
// twice, under one tool-use id. The proxy records the failure before the client reads it, so the
// hook's PostToolUseFailure for the same id records nothing; one for another call still counts.
func TestHookCountsOnce(t *testing.T) {
	w := newWorld(t)
	r := w.start(fixtureBin, "cue")
	cs := r.client(t, nil)
	const fail = "upstream service unavailable 503"
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"fail": fail},
		Meta: mcp.Meta{"claudecode/toolUseId": "toolu_seen"}}); err != nil {
		t.Fatal(err)
	}
	failures := func() int {
		n := 0
		for _, e := range w.entries() {
			if e.Tool == echoKey && (e.Event == ledger.EventFailure || e.Event == ledger.EventTrip) {
				n++
			}
		}
		return n
	}
	if got := failures(); got != 1 {
		t.Fatalf("the proxy recorded %d failures of %s, want 1", got, echoKey)
	}
	wire, err := agent.Wire("claude")
	if err != nil {
		t.Fatal(err)
	}
	hook := func(id string) {
		t.Helper()
		ev, _ := json.Marshal(map[string]any{"session_id": "s1", "hook_event_name": "PostToolUseFailure", "cwd": w.dir,
			"tool_name": echoKey, "tool_input": map[string]any{"fail": fail}, "tool_use_id": id, "error": fail})
		var out, errb bytes.Buffer
		gate.Run(gate.Config{Project: w.project(&errb), Wire: wire, Getenv: w.getenv, Stdin: bytes.NewReader(ev),
			Stdout: &out, Stderr: &errb, Exit: func(int) {}})
	}
	hook("toolu_seen")
	if got := failures(); got != 1 {
		t.Fatalf("after the hook's event of the same call %s has %d failures, want 1: counted twice", echoKey, got)
	}
	hook("toolu_other")
	if got := failures(); got != 2 {
		t.Fatalf("the hook's event of another call was not counted (%d failures, want 2)", got)
	}
}

// TestHookTrialGoes: when the hook took a circuit's trial permit for a call (PreToolUse), the same
// call reaching the proxy is that trial, not a second one refused as in flight; its success closes
// the circuit, and the hook's PostToolUse for it records nothing more.
func TestHookTrialGoes(t *testing.T) {
	w := newWorld(t)
	r := w.start(fixtureBin, "cue")
	cs := r.client(t, nil)
	for range 3 {
		callText(t, cs, "echo", map[string]any{"fail": "upstream service unavailable 503"})
	}
	if got := w.state(echoKey); got != ledger.Open {
		t.Fatalf("%s is %s, want OPEN", echoKey, got)
	}
	w.advance(2 * time.Minute)
	wire, err := agent.Wire("claude")
	if err != nil {
		t.Fatal(err)
	}
	hook := func(event string) string {
		t.Helper()
		ev, _ := json.Marshal(map[string]any{"session_id": "s1", "hook_event_name": event, "cwd": w.dir,
			"tool_name": echoKey, "tool_input": map[string]any{}, "tool_use_id": "toolu_trial", "tool_response": "ok"})
		var out, errb bytes.Buffer
		gate.Run(gate.Config{Project: w.project(&errb), Wire: wire, Getenv: w.getenv, Stdin: bytes.NewReader(ev),
			Stdout: &out, Stderr: &errb, Exit: func(int) {}})
		return out.String()
	}
	if out := hook("PreToolUse"); !strings.Contains(out, "HALF-OPEN trial") {
		t.Fatalf("the hook did not grant the trial: %s", out)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{},
		Meta: mcp.Meta{"claudecode/toolUseId": "toolu_trial"}})
	if err != nil || res.IsError {
		t.Fatalf("the hook's trial call through the proxy: %v %+v, want the server's answer", err, res)
	}
	before := len(w.entries())
	hook("PostToolUse")
	if got := len(w.entries()); got != before {
		t.Errorf("the hook's PostToolUse of the trial the proxy recorded added %d entries", got-before)
	}
	for _, k := range []string{echoKey, serverKey} {
		if got := w.state(k); got != ledger.Closed {
			t.Errorf("after the trial %s is %s, want CLOSED", k, got)
		}
	}
}

// TestDeadline: with a deadline, a call still unanswered then gets -32001 "Request timed out"
// from the proxy and a TIMEOUT is recorded before it; the session goes on, the next call answered
// as usual. (That the server is told the call is cancelled is checked over HTTP, where the test
// sees the server.)
func TestDeadline(t *testing.T) {
	w := newWorld(t)
	w.deadline = 200 * time.Millisecond
	r := w.start(fixtureBin, "cue")
	cs := r.client(t, nil)
	_, err := cs.CallTool(t.Context(), callParams("echo", map[string]any{"sleep_ms": 600000}))
	if err == nil || !strings.Contains(err.Error(), timeoutMessage) {
		t.Fatalf("a call past its deadline: err %v, want %q", err, timeoutMessage)
	}
	es := w.entries()
	if len(es) != 1 || es[0].FailureType != ledger.Timeout || es[0].Tool != echoKey {
		t.Fatalf("entries %+v: want one TIMEOUT of %s, recorded before the client's answer", es, echoKey)
	}
	if text, isErr := callText(t, cs, "echo", nil); isErr || text != "ok" {
		t.Fatalf("the call after the deadline: %q %v", text, isErr)
	}
}
