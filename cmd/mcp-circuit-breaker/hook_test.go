package main

// Tests of the hook that need real, concurrent processes: the single half-open permit under a race
// and the bound on the ledger lock wait. They run the binary built by go build, not the test
// binary, so that each hook is an ordinary process as Claude Code starts it.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/yamlfile"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

// hookEnv is the environment of a hook process: the test's, without the variables that steer the
// command, plus extra.
func hookEnv(dir string, extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "MCP_CIRCUIT_") || strings.HasPrefix(kv, "CLAUDE_PROJECT_DIR=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, append([]string{"MCP_CIRCUIT_DIR=" + dir, "NO_COLOR=1"}, extra...)...)
}

// writeLedger creates DIR/.claude/mcp_circuit with a ledger and, when policy is not empty, a policy.
func writeLedger(t *testing.T, dir, log, policy string) string {
	t.Helper()
	sd := filepath.Join(dir, ".claude", "mcp_circuit")
	if err := os.MkdirAll(sd, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sd, ledger.FileName), []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	if policy != "" {
		if err := os.WriteFile(filepath.Join(sd, "policy.yaml"), []byte(policy), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(".claude/mcp_circuit/\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return sd
}

// events returns the events of the ledger's entries, in order.
func events(t *testing.T, sd string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(sd, ledger.FileName))
	if err != nil {
		t.Fatal(err)
	}
	entries, problems := ledger.Parse(data, 1, yamlfile.Item)
	if len(problems) > 0 {
		t.Fatalf("ledger has problems: %v", problems)
	}
	var evs []string
	for _, e := range entries {
		evs = append(evs, string(e.Event))
	}
	return evs
}

func count(evs []string, ev string) int {
	n := 0
	for _, e := range evs {
		if e == ev {
			n++
		}
	}
	return n
}

// hookAnswer is the JSON a hook prints; decoding it with unknown fields disallowed pins its shape.
type hookAnswer struct {
	HookSpecificOutput *struct {
		HookEventName            string `json:"hookEventName"`
		PermissionDecision       string `json:"permissionDecision,omitempty"`
		PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
		AdditionalContext        string `json:"additionalContext,omitempty"`
	} `json:"hookSpecificOutput,omitempty"`
	SystemMessage string `json:"systemMessage,omitempty"`
}

func decodeAnswer(t *testing.T, stdout []byte) hookAnswer {
	t.Helper()
	var a hookAnswer
	d := json.NewDecoder(bytes.NewReader(stdout))
	d.DisallowUnknownFields()
	if err := d.Decode(&a); err != nil {
		t.Fatalf("stdout is not a hook answer: %v\n%s", err, stdout)
	}
	return a
}

// A TIMEOUT circuit of one tool, OPEN until raceT.
const (
	raceT      = "2026-11-29T12:01:00Z"
	raceLedger = `- tool: mcp__slow__query
  state: OPEN
  failure_type: TIMEOUT
  failure_count: 3
  tripped_at: 2026-11-29T12:00:00.000Z
  reset_at: null
  event: trip
  at: 2026-11-29T12:00:00.000Z
  server: slow
  cause: deadline
  error: "MCP server \"slow\" tool \"query\" timed out after 30s"
  open_until: 2026-11-29T12:01:00.000Z
  source: hook
`
)

func preToolUse(tool, server, toolUseID string) string {
	return fmt.Sprintf(`{"session_id":"64f49569-race","transcript_path":"/t.jsonl","cwd":"/p","permission_mode":"default",`+
		`"hook_event_name":"PreToolUse","tool_name":%q,"tool_input":{"sql":"select 1"},"tool_use_id":%q,`+
		`"mcp_server":{"name":%q,"source":"project"}}`, tool, toolUseID, server)
}

// raceHooks runs procs hook processes made by mk at once, each fed a PreToolUse of
// mcp__slow__query with its own tool_use id (idPrefix_NN), and returns each one's stdout, stderr
// and error. A start barrier holds every process until all are ready and beforeGo has returned.
func raceHooks(procs int, idPrefix string, mk func() *exec.Cmd, beforeGo func()) (stdouts, stderrs []*bytes.Buffer, errs []error) {
	cmds := make([]*exec.Cmd, procs)
	stdouts, stderrs = make([]*bytes.Buffer, procs), make([]*bytes.Buffer, procs)
	for i := range cmds {
		c := mk()
		c.Stdin = strings.NewReader(preToolUse("mcp__slow__query", "slow", fmt.Sprintf("%s_%02d", idPrefix, i)))
		stdouts[i], stderrs[i] = new(bytes.Buffer), new(bytes.Buffer)
		c.Stdout, c.Stderr = stdouts[i], stderrs[i]
		cmds[i] = c
	}
	var ready, done sync.WaitGroup
	gate := make(chan struct{})
	errs = make([]error, procs)
	for i, c := range cmds {
		ready.Add(1)
		done.Add(1)
		go func() {
			defer done.Done()
			ready.Done()
			<-gate
			errs[i] = c.Run()
		}()
	}
	ready.Wait()
	beforeGo()
	close(gate)
	done.Wait()
	return stdouts, stderrs, errs
}

// TestHalfOpenRace starts 16 hooks at once when the cooldown of an OPEN circuit is over: exactly one
// takes the trial permit, the 15 others are denied because a trial is in flight, and the ledger
// says so with one half_open entry and 15 blocked ones.
func TestHalfOpenRace(t *testing.T) {
	skipShort(t, "a load, kill or many-process test")
	t.Parallel()
	bin := buildBinary(t)
	const procs, rounds = 16, 5
	for round := 0; round < rounds; round++ {
		dir := t.TempDir()
		sd := writeLedger(t, dir, raceLedger, "")
		if round%2 == 1 {
			// Odd rounds start from a primed snapshot, even ones rebuild it from the ledger.
			cmd := exec.Command(bin, "status")
			cmd.Env = hookEnv(dir, "MCP_CIRCUIT_NOW="+raceT)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("status: %v\n%s", err, out)
			}
		}
		stdouts, stderrs, errs := raceHooks(procs, "toolu_race", func() *exec.Cmd {
			c := exec.Command(bin, "hook")
			c.Env = hookEnv(dir, "MCP_CIRCUIT_NOW="+raceT)
			return c
		}, func() {})

		allowed, inFlight := 0, 0
		for i := range errs {
			if errs[i] != nil {
				t.Fatalf("round %d: hook %d: %v\nstderr: %s", round, i, errs[i], stderrs[i])
			}
			if stderrs[i].Len() > 0 {
				t.Errorf("round %d: hook %d wrote to stderr: %s", round, i, stderrs[i])
			}
			a := decodeAnswer(t, stdouts[i].Bytes())
			h := a.HookSpecificOutput
			switch {
			case h == nil || h.HookEventName != "PreToolUse":
				t.Errorf("round %d: hook %d: unexpected answer %s", round, i, stdouts[i])
			case h.PermissionDecision == "" && strings.Contains(h.AdditionalContext, "this call is the single HALF-OPEN trial"):
				allowed++
			case h.PermissionDecision == "deny" && strings.Contains(h.PermissionDecisionReason, "A trial call is in flight"):
				inFlight++
			default:
				t.Errorf("round %d: hook %d: neither the trial nor an in-flight deny: %s", round, i, stdouts[i])
			}
		}
		evs := events(t, sd)
		t.Logf("round %d: %d allowed, %d denied (trial in flight); ledger: %d half_open, %d blocked",
			round, allowed, inFlight, count(evs, "half_open"), count(evs, "blocked"))
		if allowed != 1 || inFlight != procs-1 {
			t.Errorf("round %d: %d allowed and %d denied, want 1 and %d", round, allowed, inFlight, procs-1)
		}
		if count(evs, "half_open") != 1 || count(evs, "blocked") != procs-1 || len(evs) != 1+procs {
			t.Errorf("round %d: ledger events %v, want trip, 1 half_open and %d blocked", round, evs, procs-1)
		}
	}
}

// TestHookLockTimeout holds the ledger lock while a hook must append (a deny records a blocked
// entry): the hook gives up after MCP_CIRCUIT_LOCK_WAIT, follows on_error and says so, and answers
// well within Claude Code's patience (3 s), also with the default wait of 2 s.
func TestHookLockTimeout(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	// At 12:01:00 the cooldown is over: the decision needs the lock (the trial permit), so the gate
	// cannot decide and follows on_error. At 12:00:30 the circuit is plainly OPEN: the gate denies
	// whatever on_error says and only the blocked entry is lost.
	cases := []struct {
		name, policy, wait, now string
		deny                    bool
		want                    string
	}{
		{"allow, 200ms", "", "200ms", "2026-11-29T12:01:00Z", false, "allowed (on_error: allow)"},
		{"deny, 200ms", "defaults:\n  on_error: deny\n", "200ms", "2026-11-29T12:01:00Z", true, "denied (on_error: deny)"},
		{"allow, default wait", "", "", "2026-11-29T12:01:00Z", false, "allowed (on_error: allow)"},
		{"open, 200ms", "", "200ms", "2026-11-29T12:00:30Z", true, "without recording the blocked call"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			sd := writeLedger(t, dir, raceLedger, c.policy)
			l := ledger.Ledger{Dir: sd, LockWait: time.Second}
			unlock, err := l.Lock()
			if err != nil {
				t.Fatal(err)
			}
			defer unlock()
			env := hookEnv(dir, "MCP_CIRCUIT_NOW="+c.now)
			if c.wait != "" {
				env = append(env, "MCP_CIRCUIT_LOCK_WAIT="+c.wait)
			}
			cmd := exec.Command(bin, "hook")
			cmd.Env = env
			cmd.Stdin = strings.NewReader(preToolUse("mcp__slow__query", "slow", "toolu_lock"))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			start := time.Now()
			err = cmd.Run()
			took := time.Since(start)
			if err != nil {
				t.Fatalf("hook: %v (exit code must be 0)\nstderr: %s", err, &stderr)
			}
			if took > 3*time.Second {
				t.Errorf("hook took %s, want at most 3s", took)
			}
			t.Logf("answered in %s", took.Round(time.Millisecond))
			if !strings.Contains(stderr.String(), "timed out waiting for the ledger lock") {
				t.Errorf("stderr does not name the lock timeout: %s", &stderr)
			}
			a := decodeAnswer(t, stdout.Bytes())
			want := c.want
			if !strings.Contains(a.SystemMessage, want) || !strings.Contains(stderr.String(), want) {
				t.Errorf("systemMessage %q and stderr %q should say %q", a.SystemMessage, &stderr, want)
			}
			h := a.HookSpecificOutput
			switch {
			case c.deny && (h == nil || h.HookEventName != "PreToolUse" || h.PermissionDecision != "deny" || h.PermissionDecisionReason == ""):
				t.Errorf("on_error deny: want a deny, got %s", &stdout)
			case !c.deny && h != nil:
				t.Errorf("on_error allow: want no decision, got %s", &stdout)
			}
			if evs := events(t, sd); len(evs) != 1 {
				t.Errorf("the ledger was appended to without the lock: %v", evs)
			}
		})
	}
}

// TestDenyReasonBudget checks every deny reason the scripts pin (testdata/hook_*.txtar) and the
// reasons of circuits built to make them long: at most 1,500 characters, and each holds the OPEN
// notice, the type, the cause, when a trial is possible or who must act, "Do not retry this tool"
// and fallbacks.
func TestDenyReasonBudget(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, where, reason, typ, cause string) {
		t.Helper()
		if n := utf8.RuneCountInString(reason); n > gate.MaxDenyReason {
			t.Errorf("%s: reason of %d characters, budget %d", where, n, gate.MaxDenyReason)
		}
		for _, want := range []string{"⚡ CIRCUIT OPEN — ", "Failure type: " + typ, "Cause: " + cause, "Do not retry this tool", "\n1) "} {
			if !strings.Contains(reason, want) {
				t.Errorf("%s: reason lacks %q:\n%s", where, want, reason)
			}
		}
		if !strings.Contains(reason, "A trial call becomes possible at ") && !strings.Contains(reason, "A trial call is in flight") &&
			!strings.Contains(reason, "must act") && !strings.Contains(reason, "A person must close it") {
			t.Errorf("%s: reason says neither when a trial is possible nor who must act:\n%s", where, reason)
		}
	}

	t.Run("goldens", func(t *testing.T) {
		files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "hook_*.txtar"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no scripts: %v", err)
		}
		n := 0
		for _, f := range files {
			ar, err := txtar.ParseFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, af := range ar.Files {
				if !strings.HasPrefix(af.Name, "want") || !bytes.Contains(af.Data, []byte(`"permissionDecision":"deny"`)) ||
					bytes.Contains(af.Data, []byte("could not decide")) {
					continue
				}
				a := decodeAnswer(t, af.Data)
				r := a.HookSpecificOutput.PermissionDecisionReason
				typ, cause := between(r, "Failure type: ", " "), between(r, "Cause: ", " ")
				check(t, filepath.Base(f)+":"+af.Name, r, typ, cause)
				n++
			}
		}
		if n < 4 {
			t.Errorf("found %d deny goldens, want at least 4", n)
		}
	})

	bin := buildBinary(t)
	long := strings.Repeat("x", 300)
	longTool := "mcp__" + strings.Repeat("s", 60) + "__" + strings.Repeat("t", 60)
	var catalog strings.Builder
	catalog.WriteString("fallbacks:\n")
	for i := 0; i < 8; i++ {
		fmt.Fprintf(&catalog, "  - match: \"mcp__*\"\n    substitutes:\n      - tool: \"mcp__other%d__%s\"\n        command: \"run %s\"\n        gap: \"%s\"\n        when: \"%s\"\n",
			i, strings.Repeat("q", 40), long, long, long)
	}
	cases := []struct {
		name, tool, server, log, typ, cause string
	}{
		{"TIMEOUT, long names, long error, long catalog", longTool, strings.Repeat("s", 60), fmt.Sprintf(`- tool: %s
  state: OPEN
  failure_type: TIMEOUT
  failure_count: 3
  tripped_at: 2026-11-29T12:00:00.000Z
  reset_at: null
  event: trip
  at: 2026-11-29T12:00:00.000Z
  cause: deadline
  error: "%s"
  open_until: 2026-11-29T12:01:00.000Z
  source: hook
`, longTool, strings.Repeat("timed out ", 50)), "TIMEOUT", "deadline"},
		{"ADMIN_GATED: an admin must act", "mcp__corp__deploy", "corp", `- tool: mcp__corp__*
  state: OPEN
  failure_type: ADMIN_GATED
  failure_count: 1
  tripped_at: 2026-11-29T12:00:00.000Z
  reset_at: null
  event: trip
  at: 2026-11-29T12:00:00.000Z
  cause: admin_approval
  error: "This MCP server requires admin approval before members can use it"
  source: hook
`, "ADMIN_GATED", "admin_approval"},
		{"RATE_LIMIT with a retry hint", "mcp__api__search", "api", `- tool: mcp__api__*
  state: OPEN
  failure_type: RATE_LIMIT
  failure_count: 3
  tripped_at: 2026-11-29T12:00:00.000Z
  reset_at: null
  event: trip
  at: 2026-11-29T12:00:00.000Z
  cause: http_429
  error: "HTTP 429 Too Many Requests; Retry-After: 900"
  open_until: 2026-11-29T12:15:00.000Z
  retry_after: 15m0s
  source: hook
`, "RATE_LIMIT", "http_429"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			sd := writeLedger(t, dir, c.log, "")
			if err := os.WriteFile(filepath.Join(sd, "fallbacks.yaml"), []byte(catalog.String()), 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(bin, "hook")
			cmd.Env = hookEnv(dir, "MCP_CIRCUIT_NOW=2026-11-29T12:00:30Z")
			cmd.Stdin = strings.NewReader(preToolUse(c.tool, c.server, "toolu_budget"))
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("hook: %v\n%s", err, &stderr)
			}
			a := decodeAnswer(t, stdout.Bytes())
			if a.HookSpecificOutput == nil || a.HookSpecificOutput.PermissionDecision != "deny" {
				t.Fatalf("want a deny, got %s\nstderr: %s", &stdout, &stderr)
			}
			r := a.HookSpecificOutput.PermissionDecisionReason
			t.Logf("reason: %d characters", utf8.RuneCountInString(r))
			if testing.Verbose() {
				t.Log(r)
			}
			check(t, c.name, r, c.typ, c.cause)
		})
	}
}

// between returns the text of s after the first prefix up to sep or the end of the line.
func between(s, prefix, sep string) string {
	_, rest, ok := strings.Cut(s, prefix)
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, sep+"\n"); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// TestHalfOpenRaceRealClock is TestHalfOpenRace on the real clock (no MCP_CIRCUIT_NOW): 64 hook
// processes at once, at the end of a cooldown, 20 rounds. Each hook reads the clock before it waits
// for the ledger lock; a time read then is older than the lease a hook that held the lock meanwhile
// wrote, and must not make that lease look like one from a clock running ahead. Exactly one trial
// per round, every other call denied.
func TestHalfOpenRaceRealClock(t *testing.T) {
	skipShort(t, "20 rounds of 64 concurrent hook processes")
	t.Parallel()
	bin := buildHookBinary(t)
	const procs, rounds = 64, 20
	for round := range rounds {
		dir := t.TempDir()
		// The cooldown ends as the processes start: every one of them is past it when it decides.
		openUntil := time.Now().UTC().Add(5 * time.Millisecond)
		trip := openUntil.Add(-time.Minute)
		log := strings.NewReplacer(
			"2026-11-29T12:00:00.000Z", trip.Format(ledger.TimeFormat),
			"2026-11-29T12:01:00.000Z", openUntil.Format(ledger.TimeFormat)).Replace(raceLedger)
		sd := writeLedger(t, dir, log, "")
		stdouts, stderrs, errs := raceHooks(procs, "toolu_real", func() *exec.Cmd {
			c := exec.Command(bin)
			c.Env = hookEnv(dir)
			return c
		}, func() { time.Sleep(time.Until(openUntil)) })

		trials, denied := 0, 0
		for i := range errs {
			if errs[i] != nil {
				t.Fatalf("round %d: hook %d: %v\nstderr: %s", round, i, errs[i], stderrs[i])
			}
			a := decodeAnswer(t, stdouts[i].Bytes())
			h := a.HookSpecificOutput
			switch {
			case h != nil && h.PermissionDecision == "" && strings.Contains(h.AdditionalContext, "this call is the single HALF-OPEN trial"):
				trials++
			case h != nil && h.PermissionDecision == "deny":
				denied++
			default:
				t.Errorf("round %d: hook %d: neither the trial nor a deny: %s\nstderr: %s", round, i, stdouts[i], stderrs[i])
			}
		}
		evs := events(t, sd)
		if trials != 1 || denied != procs-1 || count(evs, "half_open") != 1 {
			t.Errorf("round %d: %d trials and %d denied, ledger %d half_open; want exactly 1 trial and %d denied",
				round, trials, denied, count(evs, "half_open"), procs-1)
		}
	}
}

// TestHookCatchesUpLargeLedger: on a ledger far too large to read within one call (400,000
// entries, about 130 MB) and no snapshot, a SessionStart says the circuits are not listed yet, one
// PreToolUse of a tool whose circuit is OPEN is denied from the ledger's end, and after them the
// snapshot becomes complete with no further call: the hook starts a detached catch-up instead of leaving the work to the next calls (each of
// which would otherwise spend its budget reading forwards). The next call is answered from it.
func TestHookCatchesUpLargeLedger(t *testing.T) {
	skipShort(t, "writes a 130 MB ledger")
	t.Parallel()
	bin := buildHookBinary(t)
	dir := t.TempDir()
	sd := filepath.Join(dir, ".claude", "mcp_circuit")
	if err := os.MkdirAll(sd, 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(sd, ledger.FileName), os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	var buf []byte
	const n = 400000
	for i := range n {
		e := ledger.Entry{Tool: fmt.Sprintf("mcp__s%d__t%d", i%97, i%13), State: ledger.Closed, FailureType: ledger.Timeout,
			FailureCount: 1, Event: ledger.EventFailure, At: t0.Add(time.Duration(i) * 100 * time.Millisecond),
			Server: fmt.Sprintf("s%d", i%97), Cause: "deadline", Error: "MCP error -32001: Request timed out after 60000 ms",
			SessionID: "64f49569-large", ToolUseID: fmt.Sprintf("toolu_%08d", i), Source: ledger.SourceHook}
		if i%13 == 0 {
			e.Event, e.FailureCount = ledger.EventSuccess, 0
		}
		buf = ledger.AppendEncoded(buf, e)
		if len(buf) > 1<<20 {
			if _, err := f.Write(buf); err != nil {
				t.Fatal(err)
			}
			buf = buf[:0]
		}
	}
	buf = append(buf, raceLedger...)
	if _, err := f.Write(buf); err != nil {
		t.Fatal(err)
	}
	f.Close()
	fi, _ := os.Stat(filepath.Join(sd, ledger.FileName))
	t.Logf("ledger: %d entries, %.1f MB", n+1, float64(fi.Size())/1e6)

	call := func(id string) hookAnswer {
		cmd := exec.Command(bin)
		cmd.Env = hookEnv(dir, "MCP_CIRCUIT_NOW="+openAt)
		a, stderr := runHookProc(t, cmd, strings.NewReader(preToolUse("mcp__slow__query", "slow", id)))
		wantDeny(t, a, stderr)
		return a
	}
	start := time.Now()
	// A session starting first lists no circuit it has not read, and says so instead of
	// answering as if every circuit were CLOSED; it starts the catch-up. When the catch-up's
	// provisional snapshot is saved within its budget (a quiet machine), it lists the open
	// circuit from it instead: either way it never answers as if all were CLOSED.
	cmd := exec.Command(bin)
	cmd.Env = hookEnv(dir, "MCP_CIRCUIT_NOW="+openAt)
	a, stderr := runHookProc(t, cmd, strings.NewReader(`{"session_id":"s","hook_event_name":"SessionStart","source":"startup"}`))
	if h := a.HookSpecificOutput; h == nil || !strings.Contains(h.AdditionalContext, "snapshot is being rebuilt") &&
		!strings.Contains(h.AdditionalContext, "mcp__slow__query") {
		var text string
		if h != nil {
			text = h.AdditionalContext
		}
		t.Errorf("SessionStart on the large ledger neither lists the open circuit nor says the snapshot is being rebuilt:\n%s\nstderr: %s", text, stderr)
	} else {
		t.Logf("SessionStart said: %.200s", h.AdditionalContext)
	}
	t.Logf("SessionStart: %s", time.Since(start))
	call("toolu_first")
	t.Logf("first PreToolUse: %s", time.Since(start))
	// snapshot returns the offset the snapshot reaches and whether that is the ledger's end.
	snapshot := func() (int64, bool) {
		data, err := os.ReadFile(filepath.Join(sd, states.SnapshotName))
		if err != nil {
			return 0, false
		}
		head, _, _ := bytes.Cut(data, []byte("\n"))
		var h struct {
			Offset  int64 `json:"offset"`
			MtimeNS int64 `json:"mtime_ns"`
		}
		fi, err := os.Stat(filepath.Join(sd, ledger.FileName))
		ok := json.Unmarshal(head, &h) == nil && err == nil && h.MtimeNS != 0 && h.Offset == fi.Size()
		return h.Offset, ok
	}
	complete := func() bool { _, ok := snapshot(); return ok }
	for !complete() {
		if time.Since(start) > 90*time.Second {
			t.Fatalf("the snapshot is not complete 90 s after the first call, and no other call came")
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("snapshot complete %s after the first call's start", time.Since(start))
	off, _ := snapshot()
	call("toolu_second")
	// A deny appends a blocked entry and leaves the snapshot where it was (readers replay the few
	// bytes after it): it must still reach the end as it was before that call.
	if after, _ := snapshot(); after < off {
		t.Errorf("the second call moved the snapshot back from byte %d to %d", off, after)
	}
	data, err := os.ReadFile(filepath.Join(sd, ledger.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(data, []byte("\n  event: blocked\n")); n != 2 {
		t.Errorf("%d blocked entries, want the 2 denied calls", n)
	}
}
