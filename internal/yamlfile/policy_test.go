package yamlfile_test

import (
	"errors"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/yamlfile"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
	"strings"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

const fullPolicy = `defaults:
  threshold: 4
  cooldown: 90s
  cooldown_cap: 20m
  jitter: 0.2
  lease: 30s
  scope: tool
  half_open: probe
  on_error: deny
  loop_guard: 2
  call_error_streak: 4
  session_failure_streak: 6
  empty_streak: 12
  hang_after: 45s
types:
  TIMEOUT: {threshold: 5}
  rate-limit: {cooldown: 120}
tools:
  - match: "mcp__github__*"
    cooldown: 5m
    types:
      RATE_LIMIT: {cooldown: 15m}
  - match: mcp__github__search
    cooldown: 7m
    scope: server
    jitter: 0
    loop_guard: 0
    call_error_streak: 0
    session_failure_streak: 0
    empty_streak: 0
`

func TestParsePolicyEveryKey(t *testing.T) {
	p, err := yamlfile.Policy("policy.yaml", []byte(fullPolicy))
	if err != nil {
		t.Fatal(err)
	}
	if p.Source != "policy.yaml" {
		t.Errorf("source %q", p.Source)
	}
	tests := []struct {
		key  string
		t    ledger.FailureType
		want states.Effective
	}{
		{"mcp__x__y", ledger.Unknown, states.Effective{Threshold: 4, Cooldown: 90 * time.Second, CooldownCap: 20 * time.Minute, Jitter: 0.2, Lease: 30 * time.Second, Scope: states.ScopeTool, HalfOpen: states.HalfOpenProbe, OnError: states.OnErrorDeny, LoopGuard: 2, CallErrorStreak: 4, SessionFailureStreak: 6, EmptyStreak: 12, HangAfter: 45 * time.Second}},
		{"mcp__x__y", ledger.Timeout, states.Effective{Threshold: 5, Cooldown: 90 * time.Second, CooldownCap: 20 * time.Minute, Jitter: 0.2, Lease: 30 * time.Second, Scope: states.ScopeTool, HalfOpen: states.HalfOpenProbe, OnError: states.OnErrorDeny, LoopGuard: 2, CallErrorStreak: 4, SessionFailureStreak: 6, EmptyStreak: 12, HangAfter: 45 * time.Second}},
		// A bare number is seconds; the type may be spelled in lower case with '-'.
		{"mcp__x__y", ledger.RateLimit, states.Effective{Threshold: 4, Cooldown: 2 * time.Minute, CooldownCap: 20 * time.Minute, Jitter: 0.2, Lease: 30 * time.Second, Scope: states.ScopeTool, HalfOpen: states.HalfOpenProbe, OnError: states.OnErrorDeny, LoopGuard: 2, CallErrorStreak: 4, SessionFailureStreak: 6, EmptyStreak: 12, HangAfter: 45 * time.Second}},
		// The glob's own per-type rule beats the file's per-type rule and the glob's rule.
		{"mcp__github__issues", ledger.RateLimit, states.Effective{Threshold: 4, Cooldown: 15 * time.Minute, CooldownCap: 20 * time.Minute, Jitter: 0.2, Lease: 30 * time.Second, Scope: states.ScopeTool, HalfOpen: states.HalfOpenProbe, OnError: states.OnErrorDeny, LoopGuard: 2, CallErrorStreak: 4, SessionFailureStreak: 6, EmptyStreak: 12, HangAfter: 45 * time.Second}},
		{"mcp__github__issues", ledger.Timeout, states.Effective{Threshold: 5, Cooldown: 5 * time.Minute, CooldownCap: 20 * time.Minute, Jitter: 0.2, Lease: 30 * time.Second, Scope: states.ScopeTool, HalfOpen: states.HalfOpenProbe, OnError: states.OnErrorDeny, LoopGuard: 2, CallErrorStreak: 4, SessionFailureStreak: 6, EmptyStreak: 12, HangAfter: 45 * time.Second}},
		// A later rule wins over an earlier one, including the earlier one's per-type rule.
		{"mcp__github__search", ledger.RateLimit, states.Effective{Threshold: 4, Cooldown: 7 * time.Minute, CooldownCap: 20 * time.Minute, Jitter: 0, Lease: 30 * time.Second, Scope: states.ScopeServer, HalfOpen: states.HalfOpenProbe, OnError: states.OnErrorDeny, LoopGuard: 0, CallErrorStreak: 0, SessionFailureStreak: 0, EmptyStreak: 0, HangAfter: 45 * time.Second}},
	}
	for _, tt := range tests {
		if got := p.For(tt.key, tt.t); got != tt.want {
			t.Errorf("For(%s, %s):\n got %+v\nwant %+v", tt.key, tt.t, got, tt.want)
		}
	}
}

func TestBuiltInPolicy(t *testing.T) {
	var p *states.Policy
	for _, tt := range []struct {
		t         ledger.FailureType
		threshold int
	}{{ledger.AdminGated, 1}, {ledger.Auth, 1}, {ledger.NotFound, 1}, {ledger.RateLimit, 3}, {ledger.Timeout, 3}, {ledger.Malformed, 3}, {ledger.Unknown, 3}, {"", 3}} {
		e := p.For("mcp__s__t", tt.t)
		want := states.Effective{Threshold: tt.threshold, Cooldown: time.Minute, CooldownCap: 10 * time.Minute, Jitter: 0.1, Lease: 120 * time.Second,
			Scope: states.ScopeAuto, HalfOpen: states.HalfOpenPassive, OnError: states.OnErrorAllow, LoopGuard: states.DefaultLoopGuard, CallErrorStreak: states.DefaultCallErrorStreak,
			SessionFailureStreak: states.DefaultSessionFailureStreak, EmptyStreak: states.DefaultEmptyStreak, HangAfter: 30 * time.Second}
		if e != want {
			t.Errorf("%q: %+v", tt.t, e)
		}
	}
	// An empty file is the built-in policy.
	for _, in := range []string{"", "# nothing\n"} {
		p, err := yamlfile.Policy("p.yaml", []byte(in))
		if err != nil || p.For("mcp__s__t", ledger.Timeout) != (*states.Policy)(nil).For("mcp__s__t", ledger.Timeout) {
			t.Errorf("%q: %+v %v", in, p, err)
		}
	}
}

func TestToolGlobPrecedence(t *testing.T) {
	tests := []struct {
		name string
		in   string
		key  string
		t    ledger.FailureType
		want int
	}{
		{"later specific rule wins", "tools:\n  - {match: 'mcp__gh__*', threshold: 5}\n  - {match: mcp__gh__search, threshold: 7}\n", "mcp__gh__search", ledger.Timeout, 7},
		{"later general rule wins too", "tools:\n  - {match: mcp__gh__search, threshold: 7}\n  - {match: 'mcp__gh__*', threshold: 5}\n", "mcp__gh__search", ledger.Timeout, 5},
		{"a rule that does not match is skipped", "tools:\n  - {match: 'mcp__gh__*', threshold: 5}\n  - {match: mcp__gh__search, threshold: 7}\n", "mcp__gh__issues", ledger.Timeout, 5},
		{"per-type inside a glob", "tools:\n  - match: 'mcp__gh__*'\n    types:\n      AUTH: {threshold: 2}\n", "mcp__gh__x", ledger.Auth, 2},
		{"per-type inside a glob leaves other types", "tools:\n  - match: 'mcp__gh__*'\n    types:\n      AUTH: {threshold: 2}\n", "mcp__gh__x", ledger.Timeout, 3},
		{"per-type inside a glob leaves other tools", "tools:\n  - match: 'mcp__gh__*'\n    types:\n      AUTH: {threshold: 2}\n", "mcp__other__x", ledger.Auth, 1},
		{"a glob beats the file's per-type rule", "types:\n  TIMEOUT: {threshold: 9}\ntools:\n  - {match: 'mcp__gh__*', threshold: 4}\n", "mcp__gh__x", ledger.Timeout, 4},
		{"the server key matches a server glob", "tools:\n  - {match: 'mcp__gh__*', threshold: 4}\n", "mcp__gh__*", ledger.Timeout, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := yamlfile.Policy("p.yaml", []byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if got := p.For(tt.key, tt.t).Threshold; got != tt.want {
				t.Errorf("threshold %d, want %d", got, tt.want)
			}
		})
	}
}

func TestParsePolicyProblems(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string // every problem, in order, as "line N: key" prefixes
	}{
		{
			name: "all problems at once, each with its line and key",
			in: `defaults:
  threshold: 0
  cooldown: soon
  jitter: 0.9
  scope: galaxy
  colour: red
types:
  TIMEOUTS: {threshold: 2}
  AUTH: {lease: 2h}
tools:
  - cooldown: 5m
  - match: "mcp__[x"
    half_open: maybe
    on_error: [a]
  - match: "mcp__ok__*"
    cooldown: 10m
    cooldown_cap: 5m
extra: 1
`,
			want: []string{
				"line 2: defaults.threshold: ",
				"line 3: defaults.cooldown: ",
				"line 4: defaults.jitter: ",
				"line 5: defaults.scope: ",
				"line 6: defaults.colour: unknown key",
				"line 8: types.TIMEOUTS: unknown failure type",
				"line 9: types.AUTH.lease: ",
				"line 11: tools[0]: missing match",
				"line 12: tools[1].match: bad glob",
				"line 13: tools[1].half_open: ",
				"line 14: tools[1].on_error: must be a single value",
				"line 15: tools[2].cooldown_cap: is shorter than cooldown",
				"line 18: extra: unknown key",
			},
		},
		{
			name: "wrong shapes",
			in:   "defaults: 3\ntypes: [a]\ntools: {match: x}\n",
			want: []string{"line 1: defaults: must be a mapping", "line 2: types: must be a mapping", "line 3: tools: must be a list"},
		},
		{
			name: "a rule that is not a mapping",
			in:   "tools:\n  - mcp__gh__*\n",
			want: []string{"line 2: tools[0]: must be a mapping"},
		},
		{
			name: "not a mapping at the top",
			in:   "- a\n- b\n",
			want: []string{"line 1: (top level): must be a mapping"},
		},
		{
			name: "YAML syntax error",
			in:   "defaults:\n  threshold: [1\n",
			want: []string{"line "},
		},
		{
			name: "durations out of range",
			in:   "defaults:\n  cooldown: 25h\n  lease: 0s\n  cooldown_cap: -5m\n",
			want: []string{"line 2: defaults.cooldown: ", "line 3: defaults.lease: ", "line 4: defaults.cooldown_cap: "},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := yamlfile.Policy("/x/policy.yaml", []byte(tt.in))
			if p != nil || err == nil {
				t.Fatalf("ParsePolicy: %+v, %v", p, err)
			}
			var pe *states.PolicyError
			if !errors.As(err, &pe) || !errors.Is(err, states.ErrInvalidPolicy) || pe.File != "/x/policy.yaml" {
				t.Fatalf("error %T %v", err, err)
			}
			if len(pe.Problems) != len(tt.want) {
				t.Fatalf("problems:\n  %s\nwant %d:\n  %s", strings.Join(pe.Problems, "\n  "), len(tt.want), strings.Join(tt.want, "\n  "))
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(pe.Problems[i], w) {
					t.Errorf("problem %d: %q, want prefix %q", i, pe.Problems[i], w)
				}
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "/x/policy.yaml: ") {
				t.Errorf("message %q does not name the file", msg)
			}
		})
	}
}

// TestPolicyRefusesTinyDurations: a lease of 1ns lets concurrent callers all take "the single"
// trial; cooldowns and leases under a second are refused.
func TestPolicyRefusesTinyDurations(t *testing.T) {
	for _, in := range []string{"defaults:\n  lease: 1ns\n", "defaults:\n  cooldown: 500ms\n", "types:\n  TIMEOUT: {cooldown_cap: 10ms}\n"} {
		p, err := yamlfile.Policy("p.yaml", []byte(in))
		if err == nil || !strings.Contains(err.Error(), "between 1s and") {
			t.Errorf("%q: %+v, %v; want it refused", in, p, err)
		}
		// What is invalid falls back to the built-in value.
		u, _ := yamlfile.UsablePolicy("p.yaml", []byte(in))
		if got := u.For("mcp__s__t", ledger.Timeout); got != (*states.Policy)(nil).For("mcp__s__t", ledger.Timeout) {
			t.Errorf("%q: usable policy %+v, want the built-in values", in, got)
		}
	}
}
