package yamlfile_test

import (
	"errors"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/yamlfile"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
	"strings"
	"testing"

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
		p, err := yamlfile.Policy("policy.yaml", []byte(data))
		if err != nil {
			var pe *states.PolicyError
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
