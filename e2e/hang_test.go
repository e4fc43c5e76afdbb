package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/testservers"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// TestHungServer drives the real Codex CLI and Copilot CLI, the two agents that send no failure
// event of their own for a call that never answers, against a server that hangs: the model calls
// echo three times, each call stalls a minute, far past the client's own MCP timeout (3 s), and
// then calls echo once more. The three hung calls are three TIMEOUTs of the tool, whichever way
// the client lets the gate see them (its transcript, a failure hook, or no post event at all, which
// the pairing of calls with their results counts as hung once the session's next call comes
// hang_after, 1 s here, after it started); the third trips the tool, and the fourth call is denied
// with our reason and never reaches the server. The hooks run on the real clock (no
// MCP_CIRCUIT_NOW): the pairing measures how long a call has been open. One client runs at a time.
func TestHungServer(t *testing.T) {
	skipShort(t, "drives the real Codex and Copilot clients end to end")
	h := buildOurs(t)
	for _, c := range []struct {
		name, agent string
		flags       []string
		// cause is the cause of each TIMEOUT: deadline when the client reports the timeout
		// itself, hung when only the pairing sees it.
		cause string
	}{
		// Codex writes the timeout in its transcript (no PostToolUse), read at the next call.
		{"codex", "codex", nil, "deadline"},
		// --ephemeral writes no transcript: the pairing is all the gate has.
		{"codex --ephemeral", "codex", []string{"--ephemeral"}, "hung"},
		// Copilot runs postToolUseFailure for its MCP timeout (-32001 Request timed out).
		{"copilot", "copilot", nil, "deadline"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := driverOf(t, c.agent)
			p := newAgentProject(t, h)
			p.toolTimeout = 3
			p.codexFlags = c.flags
			d.setup(t, p)
			state := filepath.Join(p.dir, ".claude", "mcp_circuit")
			if err := os.MkdirAll(state, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(state, "policy.yaml"), []byte("defaults:\n  hang_after: 1s\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			var calls []scriptCall
			for i := range 3 {
				// Each call's arguments differ, so that the loop guard has no part in the deny.
				in, _ := json.Marshal(testservers.CueInput{SleepMS: 60000 + i})
				calls = append(calls, d.call("fix", "echo", string(in)))
			}
			api := d.session(t, p, "", turns(append(calls, d.call("fix", "echo", `{}`))...))
			for i := 1; i <= 3; i++ {
				r, _ := api.result(i)
				t.Logf("hung call %d: the model read %q; beside it %q", i, tail(r.Text, 300), tail(r.Beside, 300))
			}
			r, _ := api.result(4)
			reason, denied := d.reason(r)
			if !denied {
				t.Fatalf("the call after three hung calls was not denied: %q", r.Text)
			}
			checkReason(t, 4, reason, echoTool)
			if got := p.calls(t); !slices.Equal(got, []string{"echo", "echo", "echo"}) {
				t.Errorf("the server received %q, want the three hung calls and not the denied one", got)
			}
			var timeouts, blocked int
			causes := map[string]int{}
			for _, e := range p.ledger(t) {
				t.Logf("ledger: %s %s %s cause %q id %q: %s", e.Event, e.Tool, e.FailureType, e.Cause, e.ToolUseID, tail(e.Error, 200))
				switch e.Event {
				case ledger.EventFailure, ledger.EventTrip:
					if e.Tool != echoTool || e.FailureType != ledger.Timeout {
						t.Errorf("a %s of %s (%s); want only TIMEOUTs of %s", e.Event, e.Tool, e.FailureType, echoTool)
						continue
					}
					timeouts++
					causes[e.Cause]++
				case ledger.EventBlocked:
					blocked++
				}
			}
			if timeouts != 3 || blocked != 1 {
				t.Errorf("the ledger has %d TIMEOUTs of %s and %d blocked calls, want each hung call once (3) and the fourth blocked", timeouts, echoTool, blocked)
			}
			if causes[c.cause] != 3 {
				t.Errorf("the TIMEOUTs' causes are %v, want 3 × %s", causes, c.cause)
			}
			if out := p.cli(t, "", "status"); !hasOpenLine(out, echoTool) {
				t.Errorf("status does not list %s OPEN:\n%s", echoTool, out)
			}
		})
	}
}

// hasOpenLine says whether status output has a line naming key as OPEN.
func hasOpenLine(out, key string) bool {
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, key) && strings.Contains(line, "OPEN") && !strings.Contains(line, "HALF_OPEN") {
			return true
		}
	}
	return false
}
