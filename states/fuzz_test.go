package states

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// FuzzParsePolicy checks that any policy file either parses into a policy whose effective rules
// are sane, or fails with a *PolicyError whose every problem names a line; it never panics.
func FuzzParsePolicy(f *testing.F) {
	for _, s := range []string{
		"", "defaults:\n  threshold: 3\n", "defaults: {cooldown: 5m, cooldown_cap: 1m}\n",
		"types:\n  TIMEOUT: {threshold: 5}\n  bogus: {}\n",
		"tools:\n  - match: \"mcp__gh__*\"\n    half_open: probe\n    types:\n      AUTH: {lease: 30s}\n",
		"tools:\n  - match: \"[\"\n", "tools: 3\n", "- a\n- b\n", "defaults:\n  jitter: 0.7\n  on_error: maybe\n",
		"defaults: &a {threshold: 2}\ntypes:\n  AUTH: *a\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		p, err := ParsePolicy("policy.yaml", []byte(data))
		if err != nil {
			var pe *PolicyError
			if !errors.As(err, &pe) || len(pe.Problems) == 0 {
				t.Fatalf("error %v is not a *PolicyError with problems", err)
			}
			for _, prob := range pe.Problems {
				if !strings.HasPrefix(prob, "line ") {
					t.Errorf("problem without a line: %q", prob)
				}
			}
			return
		}
		for _, ty := range ledger.FailureTypes {
			e := p.For("mcp__gh__search", ty)
			if e.Threshold < 1 || e.Cooldown <= 0 || e.CooldownCap <= 0 || e.Lease <= 0 || e.Jitter < 0 || e.Jitter > 0.5 {
				t.Fatalf("effective rule out of range for %s: %+v", ty, e)
			}
		}
	})
}

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
