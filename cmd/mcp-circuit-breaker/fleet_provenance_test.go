package main

// The done-when test of provenance (issue 27): a cloned repository that commits a ledger acts on
// its own user's project at most, never on a teammate's. Real hook processes, two HOMEs, a real
// redis-server.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/testservers"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// committedTrip is the clone's ledger item: github's server circuit OPEN and ADMIN_GATED at at,
// in the gate's own shape, with a provenance of the right form that no user's key made, and
// source shared (as if it came from the board).
func committedTrip(at time.Time) string {
	ts := at.UTC().Format(ledger.TimeFormat)
	return fmt.Sprintf(`- tool: mcp__github__*
  state: OPEN
  failure_type: ADMIN_GATED
  failure_count: 1
  tripped_at: %s
  reset_at: null
  event: trip
  at: %s
  server: github
  cause: admin_approval
  error: "MCP server github requires administrator approval"
  source: shared
  provenance: h1-0123456789abcdef0123456789abcdef
`, ts, ts)
}

func TestFleetCommittedLedgerStaysLocal(t *testing.T) {
	skipShort(t, "a real redis-server and hook processes")
	r := testservers.StartRedis(t, "team-pw")
	bin := buildHookBinary(t)
	cli := filepath.Join(filepath.Dir(bin), "mcp-circuit-breaker")
	const ghURL = "https://api.github.example/mcp"
	const ns = "clone"
	// A cloned the repository, which commits a ledger; B, a teammate on the same endpoint, did not.
	a := newFleetUser(t, r.URL(), ns, "laptop-a", "", userServers("github", ghURL, "tok-A"))
	b := newFleetUser(t, r.URL(), ns, "laptop-b", "", userServers("github", ghURL, "tok-B"))
	now := fleetT0
	if err := os.WriteFile(filepath.Join(a.sd, ledger.FileName), []byte(committedTrip(now.Add(-10*time.Second))), 0o644); err != nil {
		t.Fatal(err)
	}
	board := rawClient(t, r.URL())
	boardEmpty := func(when string) {
		t.Helper()
		if keys := boardKeys(t, board, ns); len(keys) > 0 {
			t.Fatalf("%s: the board holds %v, want nothing from the committed item", when, keys)
		}
	}
	teammateAllowed := func(when string) {
		t.Helper()
		now = now.Add(time.Second)
		if res := b.run(t, bin, preToolUse("mcp__github__search", "github", "toolu_b"), now); res.denied() {
			t.Fatalf("%s: the teammate was denied: %s %s", when, res.stdout, res.stderr)
		}
	}

	// The user's own call within the committed trip's cooldown is denied: it is their project.
	now = now.Add(time.Second)
	first := a.run(t, bin, preToolUse("mcp__github__search", "github", "toolu_a1"), now)
	if !first.denied() {
		t.Fatalf("the clone's own call within the cooldown was not denied: %s %s", first.stdout, first.stderr)
	}
	if strings.Contains(first.answer.HookSpecificOutput.PermissionDecisionReason, "person") {
		t.Errorf("a committed ADMIN_GATED trip is held for a person: %s", first.answer.HookSpecificOutput.PermissionDecisionReason)
	}
	boardEmpty("after the deny")
	teammateAllowed("after the clone's deny")

	// status names it unverified.
	st := exec.Command(cli, "status")
	st.Env = append(slices.Clip(a.env), "MCP_CIRCUIT_NOW="+now.Format(time.RFC3339))
	out, err := st.CombinedOutput()
	if err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "unverified: 1 circuit(s) rest on ledger entries this user's gate did not write") ||
		!strings.Contains(string(out), "OPEN (unverified)") {
		t.Fatalf("status does not name the committed circuit unverified:\n%s", out)
	}

	// 30 days later it is no longer held: the next call is a trial, and the trial's permit is
	// not shared either.
	now = now.Add(30 * 24 * time.Hour)
	trial := a.run(t, bin, preToolUse("mcp__github__search", "github", "toolu_a2"), now)
	if trial.denied() || !strings.Contains(trial.stdout, "trial") {
		t.Fatalf("30 days on, the clone's call is not a trial: %s %s", trial.stdout, trial.stderr)
	}
	boardEmpty("after the trial permit")
	teammateAllowed("during the clone's trial")
	// The trial works: the circuit closes, the board learns nothing but a close (it has no
	// record to close), and the teammate's ledger never holds the committed trip.
	now = now.Add(time.Second)
	a.run(t, bin, postToolUse("mcp__github__search", "github", "toolu_a2"), now)
	boardEmpty("after the close")
	teammateAllowed("after the close")
	if _, err := os.Stat(filepath.Join(b.sd, ledger.FileName)); os.IsNotExist(err) {
		return // every call of the teammate's was allowed with nothing to record
	}
	for _, e := range ledgerEntries(t, b.sd) {
		if e.State != ledger.Closed || e.Source == ledger.SourceShared {
			t.Errorf("the teammate's ledger holds %+v", e)
		}
	}
}

func postToolUse(tool, server, toolUseID string) string {
	return fmt.Sprintf(`{"session_id":"64f49569-race","transcript_path":"/t.jsonl","cwd":"/p","permission_mode":"default",`+
		`"hook_event_name":"PostToolUse","tool_name":%q,"tool_input":{"sql":"select 1"},"tool_response":{"ok":true},"tool_use_id":%q,`+
		`"mcp_server":{"name":%q,"source":"project"}}`, tool, toolUseID, server)
}
