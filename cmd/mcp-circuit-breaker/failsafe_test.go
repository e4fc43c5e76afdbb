package main

// Fail safe on what is known (docs/hook.md): a circuit the gate can see is OPEN stays denied whatever
// else fails. Each test breaks one thing under a real hook process and checks the deny.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// openAt is a time at which raceLedger's circuit is plainly OPEN (its cooldown runs to raceT).
const openAt = "2026-11-29T12:00:30Z"

// runHook runs the hook with stdin and returns its answer and stderr.
func runHookProc(t *testing.T, cmd *exec.Cmd, stdin io.Reader) (hookAnswer, string) {
	t.Helper()
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("hook: %v (exit status must be 0)\nstderr: %s", err, &stderr)
	}
	return decodeAnswer(t, stdout.Bytes()), stderr.String()
}

func wantDeny(t *testing.T, a hookAnswer, stderr string) {
	t.Helper()
	h := a.HookSpecificOutput
	if h == nil || h.PermissionDecision != "deny" || !strings.Contains(h.PermissionDecisionReason, "CIRCUIT OPEN — mcp__slow__query") {
		t.Fatalf("want a deny of the OPEN circuit, got %+v\nstderr: %s", a, stderr)
	}
}

// TestHookDeniesWhenBlockedAppendFails: the blocked entry cannot be written (a file size limit
// makes the append fail as a full disk does: EFBIG instead of ENOSPC, same path), and the known-OPEN
// call is denied anyway, saying the blocked call was not recorded.
func TestHookDeniesWhenBlockedAppendFails(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skipf("skipping: no sh to set the file size limit: %v", err)
	}
	dir := t.TempDir()
	sd := writeLedger(t, dir, raceLedger, "")
	// ulimit -f counts 512- or 1024-byte blocks; the ledger is already larger than 1 block, so
	// any append fails at once.
	cmd := exec.Command(sh, "-c", `ulimit -f 1 && exec "$0" hook`, bin)
	cmd.Env = hookEnv(dir, "MCP_CIRCUIT_NOW="+openAt)
	a, stderr := runHookProc(t, cmd, strings.NewReader(preToolUse("mcp__slow__query", "slow", "toolu_fsize")))
	wantDeny(t, a, stderr)
	if !strings.Contains(a.SystemMessage, "without recording the blocked call") || !strings.Contains(stderr, "append to ledger") {
		t.Errorf("the lost blocked entry is not said: systemMessage %q, stderr %q", a.SystemMessage, stderr)
	}
	if evs := events(t, sd); len(evs) != 1 {
		t.Errorf("ledger events %v, want the trip only", evs)
	}
}

// TestHookDeniesUnderInvalidPolicy: a typo in policy.yaml does not switch the gate off: the known-OPEN
// call is denied and recorded, and the warning is in systemMessage and on stderr.
func TestHookDeniesUnderInvalidPolicy(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	dir := t.TempDir()
	sd := writeLedger(t, dir, raceLedger, "defaults:\n  on_error: alow\n  lease: 1ns\n")
	cmd := exec.Command(bin, "hook")
	cmd.Env = hookEnv(dir, "MCP_CIRCUIT_NOW="+openAt)
	a, stderr := runHookProc(t, cmd, strings.NewReader(preToolUse("mcp__slow__query", "slow", "toolu_policy")))
	wantDeny(t, a, stderr)
	for _, w := range []string{"policy.yaml is not valid", "defaults.on_error", "defaults.lease"} {
		if !strings.Contains(a.SystemMessage, w) || !strings.Contains(stderr, w) {
			t.Errorf("systemMessage %q and stderr %q should say %q", a.SystemMessage, stderr, w)
		}
	}
	if evs := events(t, sd); count(evs, "blocked") != 1 {
		t.Errorf("ledger events %v, want the blocked call recorded", evs)
	}
	// The failure hook keeps recording under the invalid policy.
	cmd = exec.Command(bin, "hook")
	cmd.Env = hookEnv(dir, "MCP_CIRCUIT_NOW="+openAt)
	runHookProc(t, cmd, strings.NewReader(`{"session_id":"s","hook_event_name":"PostToolUseFailure","tool_name":"mcp__other__t","tool_input":{},"tool_use_id":"toolu_f","error":"connection refused"}`))
	if evs := events(t, sd); count(evs, "failure") == 0 {
		t.Errorf("ledger events %v, want the failure recorded", evs)
	}
}

// TestHookDeniesWhileStdinTrickles: the event's tool_name arrives at once, and the rest of the
// payload never does (the pipe stays open, as a very large or slow tool_input keeps it): the
// watchdog denies the known-OPEN call by name instead of letting it through.
func TestHookDeniesWhileStdinTrickles(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	dir := t.TempDir()
	writeLedger(t, dir, raceLedger, "")
	cmd := exec.Command(bin, "hook")
	cmd.Env = hookEnv(dir, "MCP_CIRCUIT_NOW="+openAt)
	pr, pw := io.Pipe()
	go func() {
		pw.Write([]byte(`{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"mcp__slow__query","tool_input":{"rows":[`))
		for i := 0; i < 40; i++ {
			if _, err := pw.Write([]byte(strings.Repeat("1,", 1000))); err != nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		pw.Close()
	}()
	a, stderr := runHookProc(t, cmd, pr)
	pw.CloseWithError(io.ErrClosedPipe)
	wantDeny(t, a, stderr)
	if !strings.Contains(a.SystemMessage, "mcp__slow__query") || !strings.Contains(stderr, "mcp__slow__query") {
		t.Errorf("the watchdog's deny does not name the tool: systemMessage %q, stderr %q", a.SystemMessage, stderr)
	}
}

// TestHookBudgetStartsAtToolName: the event stalls for 3 s before its tool_name arrives (longer
// than the 2.5 s budget, shorter than the hook's 5 s timeout). The budget starts when the tool is
// known, so the known-OPEN call is denied and recorded, not let through by a watchdog that ran
// out before the gate knew what to decide. The answer still comes within the hook's timeout.
func TestHookBudgetStartsAtToolName(t *testing.T) {
	skipShort(t, "the event stalls for 3 s")
	t.Parallel()
	bin := buildBinary(t)
	dir := t.TempDir()
	sd := writeLedger(t, dir, raceLedger, "")
	cmd := exec.Command(bin, "hook")
	cmd.Env = hookEnv(dir, "MCP_CIRCUIT_NOW="+openAt)
	pr, pw := io.Pipe()
	go func() {
		pw.Write([]byte(`{"session_id":"s","hook_event_name":"PreToolUse",`))
		time.Sleep(3 * time.Second)
		pw.Write([]byte(`"tool_name":"mcp__slow__query","tool_input":{},"tool_use_id":"toolu_stall"}`))
		pw.Close()
	}()
	start := time.Now()
	a, stderr := runHookProc(t, cmd, pr)
	took := time.Since(start)
	wantDeny(t, a, stderr)
	if took >= 5*time.Second {
		t.Errorf("the answer took %s, past the hook's 5 s timeout", took)
	}
	if evs := events(t, sd); count(evs, "blocked") != 1 {
		t.Errorf("ledger events %v, want the blocked call recorded", evs)
	}
}

// TestHookProbeLeavesNoProcess: with half_open: probe the hook probes a server that hangs for good
// (it ignores stdin closing and SIGTERM). The probe's own deadlines end it, its process group is
// killed, the circuit re-opens and the call is denied, and no process of the probe outlives the
// hook.
func TestHookProbeLeavesNoProcess(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/cmdline"); err != nil {
		t.Skipf("skipping: no /proc to look for leftover processes (%v)", err)
	}
	bin := buildBinary(t)
	fixture := buildPackage(t, "mcpfixture", "../../internal/testservers/cmd/mcpfixture")
	dir := t.TempDir()
	hangLedger := strings.ReplaceAll(raceLedger, "mcp__slow__query", "mcp__hang__*")
	hangLedger = strings.ReplaceAll(hangLedger, "server: slow", "server: hang")
	sd := writeLedger(t, dir, hangLedger, "defaults:\n  half_open: probe\n")
	home := filepath.Join(dir, "home")
	marker := fmt.Sprintf("marker-%d-%d", os.Getpid(), time.Now().UnixNano())
	cfg, _ := json.Marshal(map[string]any{"projects": map[string]any{dir: map[string]any{"mcpServers": map[string]any{
		"hang": map[string]any{"command": fixture, "args": []string{"hang", marker}}}}}})
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "hook")
	cmd.Env = append(hookEnv(dir, "MCP_CIRCUIT_NOW="+raceT), "HOME="+home)
	a, stderr := runHookProc(t, cmd, strings.NewReader(preToolUse("mcp__hang__q", "hang", "toolu_probe")))
	if h := a.HookSpecificOutput; h == nil || h.PermissionDecision != "deny" {
		t.Errorf("want a deny after the failed probe, got %+v\nstderr: %s", a, stderr)
	}
	if evs := events(t, sd); count(evs, "probe") != 1 {
		t.Errorf("ledger events %v, want the probe's outcome recorded", evs)
	}
	if left := processesWith(t, marker); len(left) > 0 {
		for _, pid := range left {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Fatalf("processes left after the hook: %v", left)
	}
}

// processesWith returns the PIDs whose command line holds s.
func processesWith(t *testing.T, s string) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && bytes.Contains(b, []byte(s)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestLeanHookAnswersWhenStdinSendsNothing: the agent starts the lean hook and sends nothing,
// keeping the pipe open. The hook does not wait for an event that never comes beyond its
// watchdog: it answers within the hook's 5 s timeout, saying it could not decide.
func TestLeanHookAnswersWhenStdinSendsNothing(t *testing.T) {
	skipShort(t, "the watchdog runs out after 2.5 s")
	t.Parallel()
	bin := buildPackage(t, "mcp-circuit-breaker-hook", "../mcp-circuit-breaker-hook")
	dir := t.TempDir()
	writeLedger(t, dir, raceLedger, "")
	cmd := exec.Command(bin, "hook")
	cmd.Env = hookEnv(dir, "MCP_CIRCUIT_NOW="+openAt)
	// An *os.File, so that nothing copies it: the pipe stays open and silent until the end.
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	defer pr.Close()
	start := time.Now()
	a, stderr := runHookProc(t, cmd, pr)
	if took := time.Since(start); took >= 5*time.Second {
		t.Fatalf("the answer took %s, past the hook's 5 s timeout", took)
	}
	if !strings.Contains(a.SystemMessage+stderr, "on_error") {
		t.Errorf("the answer does not say the gate could not decide: systemMessage %q, stderr %q", a.SystemMessage, stderr)
	}
}

// TestHookDeniesWhenStdinStallsAfterToolName: the event stops right after the tool_name's value,
// before the next key, and the pipe stays open (issue 27: the full CLI let the OPEN circuit
// through). Both binaries deny the known-OPEN call by name: the codec tells the gate as soon as
// the value is read, not when the next key starts.
func TestHookDeniesWhenStdinStallsAfterToolName(t *testing.T) {
	skipShort(t, "the watchdog runs out after 2.5 s")
	t.Parallel()
	bins := map[string][]string{
		"lean": {buildPackage(t, "mcp-circuit-breaker-hook", "../mcp-circuit-breaker-hook"), "hook"},
		"cli":  {buildBinary(t), "hook"},
	}
	for name, argv := range bins {
		for _, stall := range []string{`"tool_name":"mcp__slow__query"`, `"tool_name":"mcp__slow__query",`, `"tool_name":"mcp__slow__query" `} {
			t.Run(name+"/"+stall, func(t *testing.T) {
				t.Parallel()
				dir := t.TempDir()
				writeLedger(t, dir, raceLedger, "")
				cmd := exec.Command(argv[0], argv[1:]...)
				cmd.Env = hookEnv(dir, "MCP_CIRCUIT_NOW="+openAt)
				pr, pw, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				defer pw.Close()
				defer pr.Close()
				if _, err := pw.WriteString(`{"session_id":"s","hook_event_name":"PreToolUse",` + stall); err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				a, stderr := runHookProc(t, cmd, pr)
				if took := time.Since(start); took >= 5*time.Second {
					t.Fatalf("the answer took %s, past the hook's 5 s timeout", took)
				}
				wantDeny(t, a, stderr)
			})
		}
	}
}
