package gate

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// TestUndecidedCircuits: when the read of a large ledger ran out of time for some of a call's
// circuits, what is known decides: a circuit known OPEN denies, a circuit the ledger was seen to
// trip denies (fail safe on what is known), and otherwise nothing is known (on_error).
func TestUndecidedCircuits(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	open := &states.Circuit{Key: "mcp__a__*", State: ledger.Open, FailureType: ledger.Timeout, FailureCount: 3, TrippedAt: now.Add(-time.Second), OpenUntil: now.Add(time.Minute)}
	for _, tc := range []struct {
		name      string
		board     *states.Board
		wantDeny  bool
		wantWords string
	}{
		{"the server tripped, its state not read", &states.Board{Undecided: []states.Undecided{{Key: "mcp__a__x"}, {Key: "mcp__a__*", Tripped: true}}},
			true, "has opened the circuit mcp__a__*"},
		{"the server known OPEN, the tool not read", &states.Board{Circuits: map[string]*states.Circuit{open.Key: open}, Undecided: []states.Undecided{{Key: "mcp__a__x"}}},
			true, "CIRCUIT OPEN — mcp__a__*"},
		{"nothing known", &states.Board{Undecided: []states.Undecided{{Key: "mcp__a__x"}, {Key: "mcp__a__*"}}}, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := testProject(t)
			getenv := func(k string) string {
				if k == "HOME" {
					return dir
				}
				return ""
			}
			var errOut bytes.Buffer
			h := &hookRun{cfg: Config{Getenv: getenv, Stderr: &errOut}, p: project.New(dir, getenv, &errOut, testDecoder), now: now,
				ev: Event{Kind: Before, Key: "mcp__a__x", Tool: "mcp__a__x", Server: "a"}}
			h.decideEarly(nil, tc.board, nil, false)
			switch {
			case tc.wantDeny && (h.known == nil || !h.known.Deny || !strings.Contains(h.known.Reason, tc.wantWords)):
				t.Fatalf("known %+v, want a deny saying %q", h.known, tc.wantWords)
			case tc.wantDeny && !strings.Contains(h.known.Notice, "without recording"):
				t.Errorf("the notice does not say the blocked call is not recorded: %q", h.known.Notice)
			case !tc.wantDeny && h.known != nil:
				t.Fatalf("known %+v, want nothing known", h.known)
			}
		})
	}
}
