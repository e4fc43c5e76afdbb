package states

import (
	"bytes"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// mergedTrip is a trip of mcp__gh__issues followed by a failure appended by hand as bare indented
// keys, the mistake the skill warns of: one item whose keys repeat.
const mergedTrip = `- tool: mcp__gh__issues
  state: OPEN
  failure_type: TIMEOUT
  failure_count: 3
  tripped_at: 2026-11-29T12:00:00.000Z
  event: trip
  at: 2026-11-29T12:00:00.000Z
  open_until: 2026-11-29T12:30:00.000Z
  state: OPEN
  failure_type: TIMEOUT
  failure_count: 4
  event: failure
  at: 2026-11-29T12:01:00.000Z
`

// TestMergedTripStaysOpen: a trip glued to bare indented keys is read as the entries ledger repair
// splits it into, by the full read and by the bounded backward read of a large ledger alike, at the
// end of the ledger or before other items: the circuit stays OPEN, and the damage is said.
func TestMergedTripStaysOpen(t *testing.T) {
	var filler bytes.Buffer
	for i := 0; filler.Len() < 2<<20; i++ {
		fmt.Fprintf(&filler, "- tool: mcp__f%d__t\n  state: CLOSED\n  failure_type: TIMEOUT\n  failure_count: 1\n  event: failure\n  at: 2026-11-29T11:00:00.000Z\n  error: %q\n", i%500, "x")
	}
	after := "- tool: mcp__other__x\n  state: CLOSED\n  failure_count: 1\n  failure_type: TIMEOUT\n  event: failure\n  at: 2026-11-29T12:02:00.000Z\n"
	for _, c := range []struct {
		name, text string
	}{
		{"last item", filler.String() + mergedTrip},
		{"before another item", filler.String() + mergedTrip + after},
	} {
		for _, bounded := range []bool{false, true} {
			s := newStore(t)
			if err := os.WriteFile(s.Ledger.Path(), []byte(c.text), 0o600); err != nil {
				t.Fatal(err)
			}
			if bounded {
				s.Bound = &Bound{Keys: []string{"mcp__gh__issues", "mcp__gh__*"}, Deadline: time.Now().Add(-time.Second)}
			}
			b, err := s.View()
			if err != nil {
				t.Fatalf("%s, bounded %v: %v", c.name, bounded, err)
			}
			got := b.Get("mcp__gh__issues")
			if got == nil || got.State != ledger.Open || got.FailureCount != 4 {
				t.Errorf("%s, bounded %v: circuit %+v, want OPEN with 4 failures", c.name, bounded, got)
			}
			if b.Damage.Count == 0 {
				t.Errorf("%s, bounded %v: the merged item is not said as damage", c.name, bounded)
			}
		}
	}
}
