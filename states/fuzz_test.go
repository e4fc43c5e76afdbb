package states

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// FuzzProvisionalSnapshot: whatever bytes sit in state.provisional.json (planted, damaged, cut,
// or a valid one changed), a bounded read never panics and says of its circuits what the ledger
// says: a file it cannot trust is ignored, never half used.
func FuzzProvisionalSnapshot(f *testing.F) {
	s := newStore(f)
	writeRandomLedger(f, s, 21, 12000)
	want := replayFile(f, s)
	const key = "mcp__a__x"
	view(f, hookStore(s.Ledger.Dir, key, nil))
	valid, err := os.ReadFile(s.provisionalPath())
	if err != nil {
		f.Fatal(err)
	}
	head, body, _ := bytes.Cut(valid, []byte("\n"))
	f.Add(valid)
	f.Add(head)
	f.Add(append(append([]byte(nil), head...), '\n'))
	f.Add(bytes.Replace(valid, []byte(`"state":"CLOSED"`), []byte(`"state":"OPEN"`), 1))
	f.Add(append(bytes.Replace(head, []byte(`"unresolved"`), []byte(`"x"`), 1), body...))
	f.Add([]byte("{}\n"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(s.provisionalPath(), data, 0o600); err != nil {
			t.Fatal(err)
		}
		r := hookStore(s.Ledger.Dir, key, nil)
		r.Bound.IndexBy = time.Time{} // read it, never write one
		b, err := r.View()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range ledger.Key(key).Circuits() {
			if got, w := circuitJSON(b.Get(k)), circuitJSON(want.Get(k)); got != w {
				t.Fatalf("%s:\n got %s\nwant %s", k, got, w)
			}
		}
	})
}
