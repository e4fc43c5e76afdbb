package gate_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/agent"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/yamlfile"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// codexPre is a Codex CLI PreToolUse event (the shape 0.169.0 sends) for tool, whose transcript is
// path.
func codexPre(tool, id, path string) string {
	return fmt.Sprintf(`{"session_id":"s1","turn_id":"t","transcript_path":%q,"cwd":"/p","hook_event_name":"PreToolUse",`+
		`"model":"gpt-5","permission_mode":"bypassPermissions","tool_name":%q,"tool_input":{},"tool_use_id":%q}`, path, tool, id)
}

func runCodexHook(t *testing.T, dir, stdin string) (string, string) {
	t.Helper()
	getenv := func(k string) string {
		if k == "MCP_CIRCUIT_NOW" {
			return "2026-11-29T12:00:00Z"
		}
		return ""
	}
	var stdout, stderr bytes.Buffer
	p := project.New(dir, getenv, &stderr, testDecoder)
	gate.Run(gate.Config{Project: p, Wire: agent.Codex, Getenv: getenv, Stdin: strings.NewReader(stdin),
		Stdout: &stdout, Stderr: &stderr, Exit: func(int) {}})
	return stdout.String(), stderr.String()
}

// failureIDs returns the tool_use_ids of the failure and trip entries of tool in the ledger.
func failureIDs(t *testing.T, dir, tool string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, ".claude", "mcp_circuit", "circuit_log.yaml"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	entries, problems := ledger.Parse(data, 1, yamlfile.Item)
	if len(problems) > 0 {
		t.Fatalf("ledger problems: %v", problems)
	}
	var ids []string
	for _, e := range entries {
		if e.Tool == tool && (e.Event == ledger.EventFailure || e.Event == ledger.EventTrip) {
			ids = append(ids, e.ToolUseID)
		}
	}
	slices.Sort(ids)
	return ids
}

// Codex's hooks run concurrently: however many read the transcript at once, each failed call in
// it is recorded exactly once, and lines appended later are read on from where the last read
// stopped.
func TestBacklogRecordsEachFailureOnce(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("CODEX_HOME", filepath.Join(t.TempDir(), "codex"))
	fixture, err := os.ReadFile(filepath.Join("..", "agent", "testdata", "codex-rollout.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	transcript := filepath.Join(t.TempDir(), "rollout.jsonl")
	if err := os.WriteFile(transcript, fixture, 0o600); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runCodexHook(t, dir, codexPre("mcp__fix__other", fmt.Sprintf("call_other_%d", i), transcript))
		}()
	}
	wg.Wait()
	if ids := failureIDs(t, dir, "mcp__fix__echo"); !slices.Equal(ids, []string{"call_e2e_01"}) {
		t.Errorf("after 8 concurrent hooks the ledger has failures %q of mcp__fix__echo, want call_e2e_01 once", ids)
	}
	if ids := failureIDs(t, dir, "mcp__my_srv_v2__echo"); !slices.Equal(ids, []string{"call_e2e_04"}) {
		t.Errorf("the timed-out call of my-srv.v2 is recorded as %q, want call_e2e_04 once", ids)
	}

	// Two more failures of echo: the next hook records them, and with the first they trip it;
	// that hook's own call to echo then meets the open circuit.
	more := strings.ReplaceAll(strings.Split(string(fixture), "\n")[3], "call_e2e_01", "call_e2e_06") + "\n" +
		strings.ReplaceAll(strings.Split(string(fixture), "\n")[3], "call_e2e_01", "call_e2e_07") + "\n"
	f, err := os.OpenFile(transcript, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(more)
	f.Close()
	out, _ := runCodexHook(t, dir, codexPre("mcp__fix__echo", "call_e2e_08", transcript))
	if !strings.Contains(out, `"permissionDecision":"deny"`) || !strings.Contains(out, "CIRCUIT OPEN") {
		t.Errorf("the call after the third failure was not denied: %s", out)
	}
	if ids := failureIDs(t, dir, "mcp__fix__echo"); !slices.Equal(ids, []string{"call_e2e_01", "call_e2e_06", "call_e2e_07"}) {
		t.Errorf("failures of mcp__fix__echo: %q, want 01, 06 and 07 (the trip)", ids)
	}
	before := failureIDs(t, dir, "mcp__fix__echo")
	runCodexHook(t, dir, codexPre("mcp__fix__other", "call_other_9", transcript))
	if after := failureIDs(t, dir, "mcp__fix__echo"); !slices.Equal(after, before) {
		t.Errorf("a hook with nothing new in the transcript recorded %q", after)
	}
}

// A transcript with no failure costs no write of the ledger or the cursors: the call is only kept
// until its result comes (the hang pairing, hangs.go), in the pairs' file alone.
func TestBacklogNothingToRecordWritesNothing(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOME", t.TempDir())
	transcript := filepath.Join(t.TempDir(), "rollout.jsonl")
	line := `{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}` + "\n"
	if err := os.WriteFile(transcript, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errs := runCodexHook(t, dir, codexPre("mcp__fix__echo", "c1", transcript))
	if out != "" || errs != "" {
		t.Errorf("stdout %q stderr %q, want nothing", out, errs)
	}
	ents, err := os.ReadDir(filepath.Join(dir, ".claude", "mcp_circuit"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() != gate.PendingFile && e.Name() != gate.PendingLock {
			t.Errorf("the hook wrote %s", e.Name())
		}
	}
}

// A resumed session's transcript already holds its failures: the hook at its start moves to the
// end without counting them, and only what comes after is read.
func TestBacklogSessionStartSkipsThePast(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("CODEX_HOME", filepath.Join(t.TempDir(), "codex"))
	fixture, err := os.ReadFile(filepath.Join("..", "agent", "testdata", "codex-rollout.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	transcript := filepath.Join(t.TempDir(), "rollout.jsonl")
	if err := os.WriteFile(transcript, fixture, 0o600); err != nil {
		t.Fatal(err)
	}
	start := fmt.Sprintf(`{"session_id":"s1","transcript_path":%q,"cwd":"/p","hook_event_name":"SessionStart","model":"gpt-5","permission_mode":"bypassPermissions","source":"resume"}`, transcript)
	runCodexHook(t, dir, start)
	runCodexHook(t, dir, codexPre("mcp__fix__other", "c1", transcript))
	if ids := failureIDs(t, dir, "mcp__fix__echo"); len(ids) != 0 {
		t.Errorf("the past of a resumed session was counted: %q", ids)
	}
	f, err := os.OpenFile(transcript, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(strings.ReplaceAll(strings.Split(string(fixture), "\n")[3], "call_e2e_01", "call_e2e_09") + "\n")
	f.Close()
	runCodexHook(t, dir, codexPre("mcp__fix__other", "c2", transcript))
	if ids := failureIDs(t, dir, "mcp__fix__echo"); !slices.Equal(ids, []string{"call_e2e_09"}) {
		t.Errorf("after the start: %q, want the new failure only", ids)
	}
}

// A failed call whose output is huge (a 10 MB transcript line) is counted like any other: three of
// them trip the tool, read one per hook (no read starts a line after 8 MiB), and the third hook's
// own call meets the open circuit.
func TestBacklogHugeFailureLines(t *testing.T) {
	// Reading three 10 MB records under the race detector on a loaded machine can take longer
	// than the product's 2.5 s, and the watchdog would answer before the deny: this test checks
	// what is recorded and decided, not how fast (failsafe_test.go tests the budget itself).
	gate.TestOnlyBudget = time.Minute
	t.Cleanup(func() { gate.TestOnlyBudget = 0 })
	dir := t.TempDir()
	transcript := filepath.Join(t.TempDir(), "rollout.jsonl")
	var b strings.Builder
	for i := range 3 {
		fmt.Fprintf(&b, `{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"McpToolCall","id":"call_big_%d","server":"fix","tool":"echo","arguments":{},"status":"failed","result":{"content":[{"type":"text","text":"upstream quota exceeded: %s"}],"isError":true}}}}`+"\n",
			i, strings.Repeat("x", 10<<20))
	}
	if err := os.WriteFile(transcript, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	var out string
	for i := range 3 {
		out, _ = runCodexHook(t, dir, codexPre("mcp__fix__echo", fmt.Sprintf("call_next_%d", i), transcript))
	}
	if ids := failureIDs(t, dir, "mcp__fix__echo"); !slices.Equal(ids, []string{"call_big_0", "call_big_1", "call_big_2"}) {
		t.Errorf("failures of mcp__fix__echo: %q, want the three huge ones", ids)
	}
	if !strings.Contains(out, `"permissionDecision":"deny"`) || !strings.Contains(out, "CIRCUIT OPEN") {
		t.Errorf("the call after the third huge failure was not denied: %.300s", out)
	}
}
