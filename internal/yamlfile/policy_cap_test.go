package yamlfile_test

import (
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/yamlfile"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
	"slices"
	"testing"
)

// TestCapWarnings: a cooldown above the cap that applies where it is set is named, with the value
// that takes effect (issue 11: the README's own RATE_LIMIT: {cooldown: 15m} was silently 10m).
func TestCapWarnings(t *testing.T) {
	for _, tt := range []struct {
		name, policy string
		want         []string
	}{
		{"README example", `
types:
  TIMEOUT: {threshold: 5, cooldown: 30s}
tools:
  - match: "mcp__github__*"
    scope: server
    types:
      RATE_LIMIT: {cooldown: 15m}
`, []string{"mcp__github__*: RATE_LIMIT: cooldown 15m is above cooldown_cap 10m, so circuits open for 10m; set cooldown_cap: 15m beside it, or a cooldown of at most 10m"}},
		{"cap raised beside it", `
types:
  RATE_LIMIT: {cooldown: 15m, cooldown_cap: 30m}
`, nil},
		{"cap raised in defaults", `
defaults: {cooldown_cap: 1h}
types:
  RATE_LIMIT: {cooldown: 15m}
`, nil},
		{"every type, said once", `
defaults: {cooldown: 11m}
`, []string{"every failure type: cooldown 11m is above cooldown_cap 10m, so circuits open for 10m; set cooldown_cap: 11m beside it, or a cooldown of at most 10m"}},
		{"a tool rule lowers the cap", `
types:
  AUTH: {cooldown: 5m}
tools:
  - match: "mcp__slow__*"
    cooldown_cap: 2m
`, []string{"mcp__slow__*: AUTH: cooldown 5m is above cooldown_cap 2m, so circuits open for 2m; set cooldown_cap: 5m beside it, or a cooldown of at most 2m"}},
		{"inherited problem not repeated per tool rule", `
types:
  RATE_LIMIT: {cooldown: 2h}
tools:
  - match: "mcp__a__*"
    scope: tool
`, []string{"RATE_LIMIT: cooldown 2h is above cooldown_cap 10m, so circuits open for 10m; set cooldown_cap: 2h beside it, or a cooldown of at most 10m"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := yamlfile.Policy("policy.yaml", []byte(tt.policy))
			if err != nil {
				t.Fatal(err)
			}
			if got := p.CapWarnings(); !slices.Equal(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
	if w := (*states.Policy)(nil).CapWarnings(); w != nil {
		t.Errorf("built-in policy: %q", w)
	}
}
