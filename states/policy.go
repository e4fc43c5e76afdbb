package states

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// Scope values of a rule: where a failure is counted (docs/circuits.md).
const (
	ScopeAuto   = "auto"   // server-wide causes count on the server key too
	ScopeTool   = "tool"   // only the tool key
	ScopeServer = "server" // every failure counts on the server key too
)

// Half-open modes.
const (
	HalfOpenPassive = "passive" // the next real call is the trial
	HalfOpenProbe   = "probe"   // the gate probes the server first
)

// On-error modes: what the gate does when it cannot decide.
const (
	OnErrorAllow = "allow"
	OnErrorDeny  = "deny"
)

// Rule is a set of settings. In a policy file every field is optional; a zero field inherits.
type Rule struct {
	// Threshold is the number of consecutive failures that trips the circuit.
	Threshold int
	// Cooldown is the first OPEN period; CooldownCap bounds its doubling.
	Cooldown, CooldownCap time.Duration
	// Jitter is the ± fraction applied to re-trip cooldowns; nil inherits.
	Jitter *float64
	// Lease is how long a half-open trial permit lives.
	Lease time.Duration
	// Scope is ScopeAuto, ScopeTool or ScopeServer.
	Scope string
	// HalfOpen is HalfOpenPassive or HalfOpenProbe.
	HalfOpen string
	// OnError is OnErrorAllow or OnErrorDeny.
	OnError string
	// LoopGuard is how many times the same call may fail the same way before its next attempt is
	// denied; 0 turns the guard off; nil inherits.
	LoopGuard *int
	// CallErrorStreak is how many calls of one tool, each with other arguments, may fail on their
	// own terms in a row before the next call is denied once; 0 turns the guard off; nil inherits.
	CallErrorStreak *int
	// SessionFailureStreak is how many MCP calls of one session, across any tools, may fail in a
	// row before its next MCP call is denied once (the runaway guard); 0 turns it off; nil inherits.
	SessionFailureStreak *int
	// EmptyStreak is how many calls of one tool in a row, each with other arguments, may come back
	// empty before the model is told once; 0 turns the notice off; nil inherits.
	EmptyStreak *int
	// HangAfter is how long a call must have run for an interrupt of it to count as a hang.
	HangAfter time.Duration
}

// Effective is a fully resolved rule.
type Effective struct {
	Threshold   int           `json:"threshold"`
	Cooldown    time.Duration `json:"-"`
	CooldownCap time.Duration `json:"-"`
	Jitter      float64       `json:"jitter"`
	Lease       time.Duration `json:"-"`
	Scope       string        `json:"scope"`
	HalfOpen    string        `json:"half_open"`
	OnError     string        `json:"on_error"`
	LoopGuard   int           `json:"loop_guard"`
	// CallErrorStreak is the streak guard's number (docs/circuits.md).
	CallErrorStreak int `json:"call_error_streak"`
	// SessionFailureStreak is the runaway guard's number (docs/circuits.md).
	SessionFailureStreak int `json:"session_failure_streak"`
	// EmptyStreak is the empty-result notice's number (docs/circuits.md).
	EmptyStreak int           `json:"empty_streak"`
	HangAfter   time.Duration `json:"-"`
}

// ToolRule is a rule for the keys matching a glob (path.Match syntax against the key).
type ToolRule struct {
	Match string
	Rule
	// Types holds per-type settings inside this glob.
	Types map[ledger.FailureType]Rule
}

// Policy is the user's policy.yaml: global defaults, per-type and per-tool-glob overrides.
type Policy struct {
	Defaults Rule
	Types    map[ledger.FailureType]Rule
	Tools    []ToolRule
	// Source is the file the policy came from, "" for the built-in one.
	Source string
}

// Built-in defaults (docs/circuits.md, docs/hook.md).
const (
	DefaultCooldown    = 60 * time.Second
	DefaultCooldownCap = 10 * time.Minute
	DefaultJitter      = 0.1
	DefaultLease       = 120 * time.Second
	// DefaultLoopGuard is how often the same call may fail the same way before the guard denies it.
	DefaultLoopGuard = 3
	// DefaultHangAfter is the skill's TIMEOUT: a call that hangs over 30 s.
	DefaultHangAfter = 30 * time.Second
	// DefaultCallErrorStreak is how many calls of one tool with other arguments may fail on their
	// own terms in a row before the streak guard denies the next one once.
	DefaultCallErrorStreak = 5
	// DefaultSessionFailureStreak is how many MCP calls of one session may fail in a row, across
	// any tools, before the runaway guard denies the next one once.
	DefaultSessionFailureStreak = 8
	// DefaultEmptyStreak is how many calls of one tool with other arguments may come back empty in
	// a row before the model is told once.
	DefaultEmptyStreak = 10
	// ServerTripTools is how many tools of one server OPEN at once open the server's circuit too.
	ServerTripTools = 2
)

// DefaultThreshold is the number of consecutive failures of type t that trips a circuit when no
// policy says otherwise: 1 for the types that never recover on retry (ADMIN_GATED, AUTH,
// NOT_FOUND), 3 for the rest and for a failure of no type. It is the one home of the built-in
// thresholds; policy.yaml's threshold key overrides it per type and per tool ([Policy.For]).
func DefaultThreshold(t ledger.FailureType) int {
	switch t {
	case ledger.AdminGated, ledger.Auth, ledger.NotFound:
		return 1
	}
	return 3
}

// For resolves the rule for key and failure type t: built-ins, then the file's defaults, then its
// per-type rule, then every matching tool rule in file order (later ones win), each with its own
// per-type rule. A nil policy is the built-in one.
func (p *Policy) For(key string, t ledger.FailureType) Effective {
	e := Effective{Threshold: DefaultThreshold(t), Cooldown: DefaultCooldown, CooldownCap: DefaultCooldownCap,
		Jitter: DefaultJitter, Lease: DefaultLease, Scope: ScopeAuto, HalfOpen: HalfOpenPassive, OnError: OnErrorAllow,
		LoopGuard: DefaultLoopGuard, CallErrorStreak: DefaultCallErrorStreak,
		SessionFailureStreak: DefaultSessionFailureStreak, EmptyStreak: DefaultEmptyStreak, HangAfter: DefaultHangAfter}
	if p == nil {
		return e
	}
	e.merge(p.Defaults)
	if r, ok := p.Types[t]; ok {
		e.merge(r)
	}
	for _, tr := range p.Tools {
		if ok, _ := path.Match(tr.Match, key); !ok {
			continue
		}
		e.merge(tr.Rule)
		if r, ok := tr.Types[t]; ok {
			e.merge(r)
		}
	}
	return e
}

func (e *Effective) merge(r Rule) {
	if r.Threshold > 0 {
		e.Threshold = r.Threshold
	}
	if r.Cooldown > 0 {
		e.Cooldown = r.Cooldown
	}
	if r.CooldownCap > 0 {
		e.CooldownCap = r.CooldownCap
	}
	if r.Jitter != nil {
		e.Jitter = *r.Jitter
	}
	if r.Lease > 0 {
		e.Lease = r.Lease
	}
	if r.Scope != "" {
		e.Scope = r.Scope
	}
	if r.HalfOpen != "" {
		e.HalfOpen = r.HalfOpen
	}
	if r.OnError != "" {
		e.OnError = r.OnError
	}
	if r.LoopGuard != nil {
		e.LoopGuard = *r.LoopGuard
	}
	if r.CallErrorStreak != nil {
		e.CallErrorStreak = *r.CallErrorStreak
	}
	if r.SessionFailureStreak != nil {
		e.SessionFailureStreak = *r.SessionFailureStreak
	}
	if r.EmptyStreak != nil {
		e.EmptyStreak = *r.EmptyStreak
	}
	if r.HangAfter > 0 {
		e.HangAfter = r.HangAfter
	}
}

// ErrInvalidPolicy is returned when policy.yaml has problems; the error lists all of them.
var ErrInvalidPolicy = errors.New("invalid policy")

// PolicyError lists every problem of a policy file, each with its line and key.
type PolicyError struct {
	File     string
	Problems []string
}

// Error lists every problem, one per line.
func (e *PolicyError) Error() string {
	return fmt.Sprintf("%s: %d problem(s):\n  %s", e.File, len(e.Problems), strings.Join(e.Problems, "\n  "))
}

// Unwrap makes errors.Is(err, ErrInvalidPolicy) hold.
func (e *PolicyError) Unwrap() error { return ErrInvalidPolicy }

// CapWarnings names every place where the policy sets a cooldown above the cooldown_cap that
// applies there, with the value that takes effect: a circuit opens for at most its cap, so
// "RATE_LIMIT: {cooldown: 15m}" under the built-in 10m cap opens it for 10m, which the file does
// not say. The places are the keys no tool rule matches and each tool rule's glob; a tool rule is
// named only where it changes what applies.
func (p *Policy) CapWarnings() []string {
	if p == nil {
		return nil
	}
	var out []string
	base := map[ledger.FailureType]Effective{}
	for _, t := range ledger.FailureTypes {
		base[t] = p.For(string(ledger.ToolKey("*", "*")), t)
	}
	out = append(out, capWarnings("", base, nil)...)
	seen := map[string]bool{}
	for _, tr := range p.Tools {
		if seen[tr.Match] {
			continue
		}
		seen[tr.Match] = true
		eff := map[ledger.FailureType]Effective{}
		for _, t := range ledger.FailureTypes {
			eff[t] = p.For(tr.Match, t)
		}
		out = append(out, capWarnings(tr.Match, eff, base)...)
	}
	return out
}

// capWarnings says, once per cooldown and cap, which failure types of eff have a cooldown above
// their cap, leaving out those equal to base (already said).
func capWarnings(match string, eff, base map[ledger.FailureType]Effective) []string {
	type pair struct{ cooldown, cap time.Duration }
	var order []pair
	types := map[pair][]string{}
	for _, t := range ledger.FailureTypes {
		e := eff[t]
		if e.Cooldown <= e.CooldownCap {
			continue
		}
		if b, ok := base[t]; ok && b.Cooldown == e.Cooldown && b.CooldownCap == e.CooldownCap {
			continue
		}
		k := pair{e.Cooldown, e.CooldownCap}
		if types[k] == nil {
			order = append(order, k)
		}
		types[k] = append(types[k], string(t))
	}
	var out []string
	for _, k := range order {
		where := strings.Join(types[k], ", ")
		if len(types[k]) == len(ledger.FailureTypes) {
			where = "every failure type"
		}
		if match != "" {
			where = match + ": " + where
		}
		out = append(out, fmt.Sprintf("%s: cooldown %s is above cooldown_cap %s, so circuits open for %s; set cooldown_cap: %s beside it, or a cooldown of at most %s",
			where, shortDur(k.cooldown), shortDur(k.cap), shortDur(k.cap), shortDur(k.cooldown), shortDur(k.cap)))
	}
	return out
}

// shortDur writes d as a policy file would: 15m, not 15m0s.
func shortDur(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
