package e2e

import (
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/testservers"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// The same situations, driven through every agent other than Claude Code (whose scenarios are in
// scenarios_test.go): each scenario is written once against an agentDriver, and each agent's test
// runs the scenarios it can express, in parallel, each in a project and HOME of its own.

// modelResults is what the model read of each call of a script (every fake model API has it).
type modelResults interface {
	result(i int) (toolResult, bool)
	// first is the body of the session's first scripted request.
	first() string
}

// agentDriver is what a scenario needs of one agent: how the model calls an MCP tool, how the
// gate is wired, one headless session, and where our deny reason is in what the model read.
type agentDriver struct {
	name string
	// call is the call the model makes to tool of server with input.
	call func(server, tool, input string) scriptCall
	// setup wires the gate for the agent in p (install and the agent's own settings).
	setup func(t *testing.T, p *agentProject)
	// session runs one headless session in p with the hooks' clock at now.
	session func(t *testing.T, p *agentProject, now string, turns [][]scriptCall) modelResults
	// denyPrefix is what the agent puts before a deny reason in the tool's result.
	denyPrefix string
	// parallel is set when the agent runs several calls of one model turn.
	parallel bool
	// builtin, when set, is a call of the agent's own tool that reads the file at path, for
	// agents whose hook or plugin sees every tool (the others' matchers let only MCP tools in).
	builtin func(path string) scriptCall
	// restarts is set when the agent starts a stdio server again after it died (Qwen Code);
	// dropsDead when it takes the dead server's tools away from the model at once (opencode).
	restarts, dropsDead bool
	// dropsLate is what the agent answers for a dead server's tool once it has noticed the
	// server is gone and taken its tools away (Copilot CLI): on a loaded machine that may come
	// before the model's next calls, which the agent then refuses itself.
	dropsLate string
}

// reason returns our deny reason in what the model read of a call, and whether it was denied.
func (d agentDriver) reason(r toolResult) (string, bool) {
	text, ok := strings.CutPrefix(r.Text, d.denyPrefix)
	if !ok || !(strings.HasPrefix(text, "⚡ CIRCUIT OPEN — ") || strings.HasPrefix(text, "⟲ LOOP GUARD — ")) {
		return "", false
	}
	return text, true
}

// turns is one call per model turn.
func turns(calls ...scriptCall) [][]scriptCall {
	out := make([][]scriptCall, len(calls))
	for i, c := range calls {
		out[i] = []scriptCall{c}
	}
	return out
}

// repeat is n copies of c.
func repeat(n int, c scriptCall) []scriptCall {
	out := make([]scriptCall, n)
	for i := range out {
		out[i] = c
	}
	return out
}

// agentScenario is one situation, run through one agent.
type agentScenario struct {
	name string
	// needs says what the agent must support ("parallel"); "" for every agent.
	needs string
	run   func(t *testing.T, d agentDriver, p *agentProject)
}

// runAgentScenarios runs every scenario the agent d can express, in parallel, each in a new project.
func runAgentScenarios(t *testing.T, d agentDriver, h *harness) {
	start := time.Now()
	t.Cleanup(func() { t.Logf("%s scenarios: %s in all", d.name, time.Since(start).Round(time.Millisecond)) })
	for _, sc := range agentScenarios {
		if sc.needs == "parallel" && !d.parallel || sc.needs == "builtin" && d.builtin == nil {
			continue
		}
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			p := newAgentProject(t, h)
			switch sc.name {
			case "sibling tool and sibling server":
				p.more = []string{otherServer}
			case "a tool that times out":
				// Short, and long enough for the calls that do not stall on a loaded machine.
				p.toolTimeout = 2
			}
			d.setup(t, p)
			sc.run(t, d, p)
		})
	}
}

// otherServer is the second server of the scenarios that need two: its name holds both "-" and
// "_", and starts with the first server's name ("fix"), so that no agent's naming can split it
// by a first separator.
const otherServer = "fix-b_2"

// checkReason checks a deny reason the model read: it names the circuit, says not to retry and
// offers fallbacks, in plain text: no JSON, no escapes.
func checkReason(t *testing.T, call int, reason, circuit string) {
	t.Helper()
	if !strings.HasPrefix(reason, "⚡ CIRCUIT OPEN — "+circuit+"\n") || !strings.Contains(reason, "Do not retry this tool. Use a fallback:\n1) ") {
		t.Errorf("call %d: the deny reason does not name %s, say not to retry and offer fallbacks:\n%s", call, circuit, reason)
	}
	for _, junk := range []string{`\n`, `\"`, `\u`, `{"`, "\\t"} {
		if strings.Contains(reason, junk) {
			t.Errorf("call %d: the deny reason holds %q:\n%s", call, junk, reason)
		}
	}
}

// ledgerCount counts the project's ledger entries by event and key.
func ledgerCount(t *testing.T, p *agentProject) map[string]int {
	t.Helper()
	n := map[string]int{}
	for _, e := range p.ledger(t) {
		n[string(e.Event)+" "+e.Tool]++
	}
	return n
}

// notOpen checks that status lists no circuit OPEN or HALF_OPEN.
func notOpen(t *testing.T, p *agentProject, now string) {
	t.Helper()
	if out := p.cli(t, now, "status"); strings.Contains(out, "OPEN") {
		t.Errorf("status after the recovery lists circuits that are not CLOSED:\n%s", out)
	}
}

var agentScenarios = []agentScenario{
	{name: "trip, retry after the deny, recover", run: func(t *testing.T, d agentDriver, p *agentProject) {
		// Session 1: "Connection closed" three times trips the tool and its server; the model
		// calls again, is denied, and tries once more: neither deny is a failure of the tool.
		dead := d.call("fix", "echo", cue("Connection closed"))
		ok := d.call("fix", "echo", `{}`)
		api := d.session(t, p, t0, turns(dead, dead, dead, ok, ok))
		for i := 4; i <= 5; i++ {
			r, _ := api.result(i)
			reason, denied := d.reason(r)
			if !denied {
				t.Fatalf("call %d after the trip was not denied: %q", i, r.Text)
			}
			checkReason(t, i, reason, serverKey)
		}
		if calls := p.calls(t); len(calls) != 3 {
			t.Errorf("the server received %d calls, want 3", len(calls))
		}
		n := ledgerCount(t, p)
		if got := n["failure "+echoTool] + n["trip "+echoTool]; got != 3 || n["blocked "+serverKey] != 2 {
			t.Errorf("ledger: %d failures of %s and %d blocked calls, want 3 and 2 (a denied call is never a failure): %v", got, echoTool, n["blocked "+serverKey], n)
		}
		// Session 2, ten minutes later: the cooldown is over, the trial succeeds and closes the
		// circuits, and the calls after it go through.
		later := "2026-11-29T12:10:00Z"
		api = d.session(t, p, later, turns(ok, ok, d.call("fix", "other", `{}`)))
		// The session started with the circuits that are not CLOSED in the model's context.
		if first := api.first(); !strings.Contains(first, "these MCP circuits are not CLOSED") || !strings.Contains(first, serverKey+": OPEN") {
			t.Errorf("the second session's first request lacks the open circuits from its start:\n%s", tail(first, 3000))
		}
		for i := 1; i <= 3; i++ {
			if r, _ := api.result(i); strings.Contains(r.Text, "CIRCUIT OPEN") {
				t.Errorf("call %d after the cooldown was denied: %q", i, r.Text)
			}
		}
		if calls := p.calls(t); !slices.Equal(calls, []string{"echo", "echo", "echo", "echo", "echo", "other"}) {
			t.Errorf("the server received %q, want 3 echo, then the trial, echo and other", calls)
		}
		n = ledgerCount(t, p)
		if n["success "+echoTool] == 0 || n["success "+serverKey] == 0 {
			t.Errorf("no success closed %s and %s: %v", echoTool, serverKey, n)
		}
		notOpen(t, p, later)
	}},

	{name: "the trial fails", run: func(t *testing.T, d agentDriver, p *agentProject) {
		// The circuits tripped before (recorded with the CLI: the agents' own trips are the other
		// scenarios'); two minutes later the trial call fails again: the circuit re-opens with a
		// doubled cooldown there and then, and the next call is denied (for Codex, which reports no
		// failure, once the transcript is read at that call).
		for i := 0; i < 3; i++ {
			p.cli(t, t0, "record", echoTool, "--error", "Connection closed")
		}
		at := "2026-11-29T12:02:00Z"
		api := d.session(t, p, at, turns(d.call("fix", "echo", cue("Connection closed")), d.call("fix", "echo", `{}`)))
		if r, _ := api.result(1); func() bool { _, denied := d.reason(r); return denied }() {
			t.Errorf("the trial call was denied: %q", r.Text)
		}
		r, _ := api.result(2)
		reason, denied := d.reason(r)
		if !denied {
			t.Fatalf("the call after the failed trial was not denied: %q", r.Text)
		}
		checkReason(t, 2, reason, serverKey)
		var reopen *ledger.Entry
		entries := p.ledger(t)
		for i, e := range entries {
			if e.Event == ledger.EventTrip && e.Tool == serverKey && e.At.Format(time.RFC3339) == at {
				reopen = &entries[i]
			}
		}
		if reopen == nil {
			t.Fatalf("no trip of %s at the failed trial: %v", serverKey, ledgerCount(t, p))
		}
		if d := reopen.OpenUntil.Sub(reopen.At); d < 108*time.Second || d > 132*time.Second {
			t.Errorf("the re-opened cooldown is %s, want 120 s ± 10 %%", d)
		}
		if calls := p.calls(t); len(calls) != 1 {
			t.Errorf("the server received %q, want only the trial", calls)
		}
	}},

	{name: "a tool that times out", run: func(t *testing.T, d agentDriver, p *agentProject) {
		// The agent's own timeout on an MCP call (2 s) ends three calls that stall: each agent's
		// timeout text is a TIMEOUT of the tool, not of the server, so the fourth call to the tool
		// is denied and the server's other tool still goes.
		stall, _ := json.Marshal(testservers.CueInput{SleepMS: 8000})
		slow := d.call("fix", "echo", string(stall))
		api := d.session(t, p, t0, turns(slow, slow, slow, d.call("fix", "echo", `{}`), d.call("fix", "other", `{}`)))
		for i := 1; i <= 3; i++ {
			r, _ := api.result(i)
			t.Logf("call %d: the model read %q", i, tail(r.Text, 300))
		}
		r, _ := api.result(4)
		reason, denied := d.reason(r)
		if !denied {
			t.Fatalf("the call after three timeouts was not denied: %q", r.Text)
		}
		checkReason(t, 4, reason, echoTool)
		if r, _ := api.result(5); func() bool { _, denied := d.reason(r); return denied }() {
			t.Errorf("the server's other tool was denied after the tool's timeouts: %q", r.Text)
		}
		for _, e := range p.ledger(t) {
			if e.Event == ledger.EventTrip && (e.Tool != echoTool || e.FailureType != ledger.Timeout) {
				t.Errorf("a trip of %s (%s); want only %s's, TIMEOUT", e.Tool, e.FailureType, echoTool)
			}
		}
	}},

	{name: "401 blocks every tool of the server", run: func(t *testing.T, d agentDriver, p *agentProject) {
		// One 401 opens the server's circuit (AUTH): the next call, to another tool of the server,
		// is denied and never reaches it.
		api := d.session(t, p, t0, turns(d.call("fix", "echo", cue("HTTP 401 Unauthorized: invalid_token")), d.call("fix", "other", `{}`)))
		r, _ := api.result(2)
		reason, denied := d.reason(r)
		if !denied {
			t.Fatalf("the call after the 401 was not denied: %q", r.Text)
		}
		checkReason(t, 2, reason, serverKey)
		if !strings.Contains(reason, "Failure type: AUTH") {
			t.Errorf("the deny does not say AUTH:\n%s", reason)
		}
		if calls := p.calls(t); !slices.Equal(calls, []string{"echo"}) {
			t.Errorf("the server received %q, want only the first echo", calls)
		}
	}},

	{name: "sibling tool and sibling server", run: func(t *testing.T, d agentDriver, p *agentProject) {
		// A tool-level failure (HTTP 500) trips echo alone: other of the same server goes on. A
		// server-level one (connection closed) on the second server blocks its every tool, and
		// not the first server's.
		bad := d.call("fix", "echo", cue("HTTP 500 Internal Server Error"))
		dead := d.call(otherServer, "echo", cue("Connection closed"))
		other := d.call("fix", "other", `{}`)
		calls := append(repeat(3, bad), other, d.call("fix", "echo", `{}`))
		calls = append(append(calls, repeat(3, dead)...), d.call(otherServer, "other", `{}`), other)
		api := d.session(t, p, t0, turns(calls...))
		want := map[int]string{5: echoTool, 9: "mcp__" + otherServer + "__*"}
		for i := 1; i <= len(calls); i++ {
			r, _ := api.result(i)
			reason, denied := d.reason(r)
			switch circuit, deny := want[i]; {
			case deny && !denied:
				t.Errorf("call %d was not denied by %s: %q", i, circuit, r.Text)
			case deny:
				checkReason(t, i, reason, circuit)
			case denied:
				t.Errorf("call %d was denied: %s", i, reason)
			}
		}
		if got := p.callsOf(t, "fix"); !slices.Equal(got, []string{"echo", "echo", "echo", "other", "other"}) {
			t.Errorf("server fix received %q, want 3 echo and 2 other", got)
		}
		if got := p.callsOf(t, otherServer); !slices.Equal(got, []string{"echo", "echo", "echo"}) {
			t.Errorf("server %s received %q, want 3 echo", otherServer, got)
		}
		var trips []string
		keys := map[string]bool{}
		for _, e := range p.ledger(t) {
			keys[e.Tool] = true
			if e.Event == ledger.EventTrip {
				trips = append(trips, e.Tool)
			}
		}
		slices.Sort(trips)
		wantTrips := []string{echoTool, "mcp__" + otherServer + "__*", "mcp__" + otherServer + "__echo"}
		slices.Sort(wantTrips)
		if !slices.Equal(trips, wantTrips) {
			t.Errorf("trips of %q, want %q (the canonical keys Claude Code's calls meet)", trips, wantTrips)
		}
		for k := range keys {
			if k != echoTool && k != otherTool && !strings.HasPrefix(k, "mcp__"+otherServer+"__") {
				t.Errorf("the ledger has entries of %s, which is no canonical key of the servers", k)
			}
		}
	}},

	{name: "call errors never trip, the loop guard holds", run: func(t *testing.T, d agentDriver, p *agentProject) {
		// "file not found" on three inputs is the calls' fault: nothing trips. The same call
		// failing three times the same way is refused the fourth time; other arguments go.
		var calls []scriptCall
		for _, f := range []string{"a", "b", "c"} {
			calls = append(calls, d.call("fix", "echo", cue("file not found: /data/"+f+".txt")))
		}
		same := d.call("fix", "echo", cue("file not found: /data/x.txt"))
		calls = append(append(calls, repeat(4, same)...), d.call("fix", "echo", `{}`))
		api := d.session(t, p, t0, turns(calls...))
		for i := 1; i <= len(calls); i++ {
			r, _ := api.result(i)
			reason, denied := d.reason(r)
			if i == 7 {
				if !denied || !strings.HasPrefix(reason, "⟲ LOOP GUARD — "+echoTool+"\n") {
					t.Errorf("call 7, the 4th identical failing call, was not refused by the loop guard: %q", r.Text)
				}
				continue
			}
			if denied {
				t.Errorf("call %d was denied: %s", i, reason)
			}
		}
		if got := p.calls(t); len(got) != 7 {
			t.Errorf("the server received %d calls, want 7 (all but the loop guard's)", len(got))
		}
		n := ledgerCount(t, p)
		for k, v := range n {
			if strings.HasPrefix(k, "trip ") {
				t.Errorf("a call error tripped a circuit: %d × %s", v, k)
			}
		}
		if n["blocked "+echoTool] != 1 {
			t.Errorf("want 1 blocked call of %s: %v", echoTool, n)
		}
	}},

	{name: "built-in tools are not ours", needs: "builtin", run: func(t *testing.T, d agentDriver, p *agentProject) {
		// The agent's own file tool, on a file that does not exist three times and then on one
		// that does: the gate never denies or records it (for agents that run our hook on every
		// tool, or whose plugin sees every call). The MCP call after it is recorded as usual.
		missing, present := filepath.Join(p.dir, "missing.txt"), filepath.Join(p.dir, "present.txt")
		if err := os.WriteFile(present, []byte("hello\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		calls := append(repeat(3, d.builtin(missing)), d.builtin(present), d.call("fix", "echo", quotaFail))
		api := d.session(t, p, t0, turns(calls...))
		for i := 1; i <= 4; i++ {
			r, _ := api.result(i)
			t.Logf("built-in call %d: the model read %q", i, tail(r.Text, 200))
			if strings.Contains(r.Text, "CIRCUIT OPEN") || strings.Contains(r.Text, "LOOP GUARD") || strings.Contains(r.Text, "mcp-circuit-breaker") {
				t.Errorf("built-in call %d: the gate spoke: %q", i, r.Text)
			}
		}
		for _, e := range p.ledger(t) {
			if e.Tool != echoTool && e.Tool != serverKey {
				t.Errorf("the ledger has a %s entry of %s, which is no MCP tool", e.Event, e.Tool)
			}
		}
		if got := p.calls(t); len(got) != 1 {
			t.Errorf("the server received %q, want the one MCP call", got)
		}
	}},

	{name: "the server dies", run: func(t *testing.T, d agentDriver, p *agentProject) {
		// The server exits on a call; no agent restarts it, and each reports every later call its
		// own way (transport closed, not connected, …): every one of them is the server's failure,
		// so at the third its circuit opens and blocks its other tools too.
		b, _ := json.Marshal(testservers.CueInput{Exit: true})
		echo, other := d.call("fix", "echo", `{}`), d.call("fix", "other", `{}`)
		api := d.session(t, p, t0, turns(d.call("fix", "echo", string(b)), other, echo, other))
		if d.dropsDead {
			// The agent takes the dead server's tools away: the model's calls to them are refused
			// by the agent itself, and never reach the gate or the server.
			for i := 2; i <= 4; i++ {
				if r, _ := api.result(i); !strings.Contains(r.Text, "unavailable tool") {
					t.Errorf("call %d to the dead server's tool: the model read %q, want the agent's unavailable tool", i, r.Text)
				}
			}
			if calls := p.calls(t); len(calls) != 1 {
				t.Errorf("the server received %q, want only the call it died on", calls)
			}
			return
		}
		if d.restarts {
			// The agent starts the server again for the next call: the calls after the crash go.
			for i := 2; i <= 4; i++ {
				if r, _ := api.result(i); r.Text != "ok" {
					t.Errorf("call %d to the restarted server: the model read %q, want ok", i, r.Text)
				}
			}
			if calls := p.calls(t); len(calls) != 4 {
				t.Errorf("the restarted server received %q, want the crash and the 3 calls after it", calls)
			}
			notOpen(t, p, t0)
			return
		}
		dropped := 0 // the first call the agent refused itself, having taken the tools away
		for i := 1; i <= 4 && d.dropsLate != ""; i++ {
			if r, _ := api.result(i); dropped == 0 && strings.Contains(r.Text, d.dropsLate) {
				dropped = i
			}
		}
		for i := 1; i <= 3; i++ {
			r, _ := api.result(i)
			t.Logf("call %d: the model read %q", i, tail(r.Text, 300))
			if _, denied := d.reason(r); denied {
				t.Errorf("call %d was denied before the server's circuit had three failures", i)
			}
		}
		if dropped > 1 {
			// The agent noticed the death first: every later call is its own refusal ("does not
			// exist", which the gate reads as a missing tool: NOT_FOUND trips that tool at once,
			// so a repeat of it is our deny), and none reaches the server.
			for i := dropped; i <= 4; i++ {
				r, _ := api.result(i)
				if _, denied := d.reason(r); !denied && !strings.Contains(r.Text, d.dropsLate) {
					t.Errorf("call %d, after %s took the dead server's tools away at call %d: the model read %q", i, d.name, dropped, r.Text)
				}
			}
			if calls := p.calls(t); len(calls) != 1 {
				t.Errorf("the server received %q, want only the call it died on", calls)
			}
			return
		}
		r, _ := api.result(4)
		reason, denied := d.reason(r)
		if !denied {
			t.Fatalf("call 4, after three failures of the dead server, was not denied: %q", r.Text)
		}
		checkReason(t, 4, reason, serverKey)
		if calls := p.calls(t); len(calls) != 1 {
			t.Errorf("the server received %q, want only the call it died on", calls)
		}
	}},

	{name: "parallel failing calls", needs: "parallel", run: func(t *testing.T, d agentDriver, p *agentProject) {
		// Three failing calls in one model turn: each is counted once, and the next call is denied.
		// Their arguments differ (opencode refuses three identical calls in one turn as a loop).
		var turn []scriptCall
		for i := 1; i <= 3; i++ {
			turn = append(turn, d.call("fix", "echo", cue(fmt.Sprintf("upstream quota exceeded (request %d)", i))))
		}
		api := d.session(t, p, t0, [][]scriptCall{turn, {d.call("fix", "echo", `{}`)}})
		r, _ := api.result(4)
		reason, denied := d.reason(r)
		if !denied {
			t.Fatalf("the call after three parallel failures was not denied: %q", r.Text)
		}
		checkReason(t, 4, reason, serverKey)
		n := ledgerCount(t, p)
		if got := n["failure "+echoTool] + n["trip "+echoTool]; got != 3 {
			t.Errorf("%d failures of %s recorded, want each of the 3 parallel calls once: %v", got, echoTool, n)
		}
		if calls := p.calls(t); len(calls) != 3 {
			t.Errorf("the server received %d calls, want 3", len(calls))
		}
	}},
}

// --- the drivers ---

func codexDriver(codex string) agentDriver {
	return agentDriver{name: "codex", denyPrefix: "Tool call blocked by PreToolUse hook: ", parallel: true,
		call: func(server, tool, input string) scriptCall {
			return scriptCall{"mcp__" + codexSanitizeName(server) + "__" + tool, input}
		},
		setup: func(t *testing.T, p *agentProject) { p.codexHooks(t) },
		session: func(t *testing.T, p *agentProject, now string, turns [][]scriptCall) modelResults {
			api, _ := p.codexSession(t, codex, now, turns)
			return api
		}}
}

// sanitizeName is a server's name as Cline and opencode write it in tool names: every character
// but letters, digits, '_' and '-' becomes '_'.
func sanitizeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, s)
}

// qwenToolName is the name Qwen Code 0.24.4 gives tool of server: mcp__<server>__<tool>, or, when
// that is not [A-Za-z][A-Za-z0-9_-]*, sanitized and followed by "_" and its FNV-1a hash in base 36.
func qwenToolName(server, tool string) string {
	name := "mcp__" + server + "__" + tool
	if sanitizeName(name) == name && len(name) <= 63 {
		return name
	}
	h := uint32(2166136261)
	for _, u := range utf16.Encode([]rune(name)) {
		h = (h ^ uint32(u)) * 16777619
	}
	sum := strconv.FormatUint(uint64(h), 36)
	sum = strings.Repeat("0", 7-len(sum)) + sum
	return strings.Map(func(r rune) rune {
		if sanitizeName(string(r)) != string(r) {
			return '_'
		}
		return r
	}, name) + "_" + sum
}

// clineToolName is the name Cline 3.0.65 gives tool of server: <server>__<tool>, or, when that is
// not [A-Za-z0-9_-]*, sanitized and followed by "_" and 8 hex digits of its sha1.
func clineToolName(server, tool string) string {
	name := server + "__" + tool
	if sanitizeName(name) == name && len(name) <= 64 {
		return name
	}
	sum := sha1.Sum([]byte(name))
	return sanitizeName(name) + "_" + hex.EncodeToString(sum[:4])
}

// codexSanitizeName is a server's name as Codex writes it in tool names: '-' and '.' become '_'.
func codexSanitizeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, s)
}

func geminiDriver(gemini string) agentDriver {
	return agentDriver{name: "gemini", denyPrefix: "Tool execution blocked: ", parallel: true,
		call: func(server, tool, input string) scriptCall { return scriptCall{"mcp_" + server + "_" + tool, input} },
		setup: func(t *testing.T, p *agentProject) {
			p.geminiSettings(t)
			p.install(t, "gemini")
		},
		session: func(t *testing.T, p *agentProject, now string, turns [][]scriptCall) modelResults {
			api, _ := p.geminiSession(t, gemini, now, turns)
			return api
		}}
}

func qwenDriver(qwen string) agentDriver {
	return agentDriver{name: "qwen", parallel: true, restarts: true,
		call: func(server, tool, input string) scriptCall { return qwenCall(qwenToolName(server, tool), input) },
		setup: func(t *testing.T, p *agentProject) {
			p.install(t, "qwen", "--scope", "user")
			p.qwenSettings(t, nil, 0)
		},
		session: func(t *testing.T, p *agentProject, now string, turns [][]scriptCall) modelResults {
			api, _ := p.qwenSession(t, qwen, now, turns)
			return api
		}}
}

func copilotDriver(copilot string) agentDriver {
	return agentDriver{name: "copilot", denyPrefix: "Denied by preToolUse hook: ", parallel: true,
		dropsLate: "' does not exist. Available tools that can be called are ",
		builtin:   func(path string) scriptCall { return scriptCall{"view", fmt.Sprintf(`{"path":%q}`, path)} },
		call: func(server, tool, input string) scriptCall {
			// Copilot CLI writes every character of the server's name but [A-Za-z0-9_-] as "-".
			return scriptCall{copilotTool(strings.Map(func(r rune) rune {
				if sanitizeName(string(r)) != string(r) {
					return '-'
				}
				return r
			}, server), tool), input}
		},
		setup: func(t *testing.T, p *agentProject) {
			p.copilotMCPConfig(t, 0)
			p.copilotHooks(t)
		},
		session: func(t *testing.T, p *agentProject, now string, turns [][]scriptCall) modelResults {
			api, _ := p.copilotSession(t, copilot, now, turns)
			return api
		}}
}

func clineDriver(cline string) agentDriver {
	// Cline runs the calls of one turn one after another: no parallel scenario.
	return agentDriver{name: "cline",
		call:  func(server, tool, input string) scriptCall { return scriptCall{clineToolName(server, tool), input} },
		setup: func(t *testing.T, p *agentProject) { p.install(t, "cline", "--scope", "user") },
		session: func(t *testing.T, p *agentProject, now string, turns [][]scriptCall) modelResults {
			api, _ := p.clineSession(t, cline, now, turns)
			return api
		}}
}

func opencodeDriver(opencode, sdk string) agentDriver {
	return agentDriver{name: "opencode", parallel: true, dropsDead: true,
		builtin: func(path string) scriptCall { return scriptCall{"read", fmt.Sprintf(`{"filePath":%q}`, path)} },
		call: func(server, tool, input string) scriptCall {
			return scriptCall{sanitizeName(server) + "_" + tool, input}
		},
		setup: func(t *testing.T, p *agentProject) { p.install(t, "opencode", "--scope", "user") },
		session: func(t *testing.T, p *agentProject, now string, turns [][]scriptCall) modelResults {
			api, _ := p.opencodeSession(t, opencode, sdk, now, turns)
			return api
		}}
}

// driverOf installs the client of agent name and returns its driver.
func driverOf(t *testing.T, name string) agentDriver {
	t.Helper()
	switch name {
	case "codex":
		return codexDriver(installAgent(t, "codex"))
	case "gemini":
		return geminiDriver(installAgent(t, "gemini"))
	case "qwen":
		return qwenDriver(installAgent(t, "qwen"))
	case "copilot":
		return copilotDriver(installAgent(t, "copilot"))
	case "cline":
		return clineDriver(installAgent(t, "cline"))
	case "opencode":
		return opencodeDriver(installAgent(t, "opencode"), installAgent(t, "opencode-sdk"))
	case "kilo":
		return kiloDriver(installAgent(t, "kilo"))
	case "droid":
		return droidDriver(installAgent(t, "droid"))
	}
	t.Fatalf("no driver for agent %q", name)
	return agentDriver{}
}

// runnableAgents are the agents other than Claude Code whose real clients the e2e tests drive.
var runnableAgents = []string{"codex", "gemini", "qwen", "copilot", "cline", "opencode", "kilo", "droid"}

// TestAgentScenarios drives each runnable agent through the scenarios above: one subtest per
// agent (run one with -run 'TestAgentScenarios/codex'), its scenarios in parallel.
func TestAgentScenarios(t *testing.T) {
	skipShort(t, "drives real agent clients end to end")
	h := buildOurs(t)
	for _, name := range runnableAgents {
		t.Run(name, func(t *testing.T) {
			runAgentScenarios(t, driverOf(t, name), h)
		})
	}
}

// ringServer is the server of TestAgentsShareCircuits: its name holds ".", "-" and "_", which
// every agent writes its own way in its tools' names (Copilot CLI fix-v2-b_2-echo, Cline and Qwen
// Code with a hash after the tool, …).
const ringServer = "fix.v2-b_2"

// TestAgentsShareCircuits: in one project, one agent's failures open the circuit that another
// agent's call meets (three pairs, every runnable agent in one), on ringServer: one canonical key
// per tool, whatever the agent's naming.
func TestAgentsShareCircuits(t *testing.T) {
	skipShort(t, "drives real agent clients end to end")
	h := buildOurs(t)
	drivers := map[string]agentDriver{}
	for _, name := range runnableAgents {
		drivers[name] = driverOf(t, name)
	}
	// Each agent once, as the one that trips or the one denied: a codec maps a name the same way
	// for the failure and for the call, and every agent's own scenarios cover both.
	for _, pair := range [][2]string{{"opencode", "codex"}, {"qwen", "copilot"}, {"cline", "gemini"}} {
		a, b := drivers[pair[0]], drivers[pair[1]]
		t.Run(a.name+" trips, "+b.name+" is denied", func(t *testing.T) {
			t.Parallel()
			p := newAgentProject(t, h)
			p.server = ringServer
			a.setup(t, p)
			b.setup(t, p)
			fail := a.call(p.server, "echo", quotaFail)
			a.session(t, p, t0, turns(fail, fail, fail))
			api := b.session(t, p, "2026-11-29T12:00:20Z", turns(b.call(p.server, "other", `{}`)))
			r, _ := api.result(1)
			reason, denied := b.reason(r)
			if !denied {
				t.Fatalf("%s's call after %s's three failures was not denied: %q", b.name, a.name, r.Text)
			}
			checkReason(t, 1, reason, string(ledger.NameKey(ringServer, "echo").ServerKey()))
			if calls := p.calls(t); len(calls) != 3 {
				t.Errorf("the server received %q, want %s's 3 calls and not %s's", calls, a.name, b.name)
			}
		})
	}
}
