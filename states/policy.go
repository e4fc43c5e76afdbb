package states

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"gopkg.in/yaml.v3"
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
)

// For resolves the rule for key and failure type t: built-ins, then the file's defaults, then its
// per-type rule, then every matching tool rule in file order (later ones win), each with its own
// per-type rule. A nil policy is the built-in one.
func (p *Policy) For(key string, t ledger.FailureType) Effective {
	e := Effective{Threshold: t.DefaultThreshold(), Cooldown: DefaultCooldown, CooldownCap: DefaultCooldownCap,
		Jitter: DefaultJitter, Lease: DefaultLease, Scope: ScopeAuto, HalfOpen: HalfOpenPassive, OnError: OnErrorAllow,
		LoopGuard: DefaultLoopGuard, HangAfter: DefaultHangAfter}
	if t == "" {
		e.Threshold = 3
	}
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

// ParsePolicy reads a policy file. The format:
//
//	defaults:            # every key optional
//	  threshold: 3
//	  cooldown: 60s
//	  cooldown_cap: 10m
//	  jitter: 0.1
//	  lease: 120s
//	  scope: auto        # auto | tool | server
//	  half_open: passive # passive | probe
//	  on_error: allow    # allow | deny
//	  loop_guard: 3      # the same call failing the same way N times is denied next; 0 = off
//	  hang_after: 30s    # an interrupted call that ran longer is a hang (TIMEOUT, cause hung)
//	types:
//	  TIMEOUT: {threshold: 5}
//	tools:
//	  - match: "mcp__github__*"
//	    cooldown: 5m
//	    types:
//	      RATE_LIMIT: {cooldown: 15m}
//
// It reports all problems at once, each as "line N: key: what is wrong".
func ParsePolicy(name string, data []byte) (*Policy, error) {
	p, err := ParsePolicyUsable(name, data)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// ParsePolicyUsable is ParsePolicy for the decisions that must go on when the file is invalid (the
// gate, record, the failure hook): alongside the *PolicyError it returns the valid parts of the
// file, where every invalid value is left out so that the built-in value applies to it. A file that
// is not YAML or not a mapping gives the built-in policy (nil).
func ParsePolicyUsable(name string, data []byte) (*Policy, error) {
	p := &Policy{Source: name}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		if !strings.HasPrefix(msg, "line ") {
			// yaml.v3 gives no line for an unterminated document: it ends at the last line.
			msg = fmt.Sprintf("line %d: %s", strings.Count(strings.TrimRight(string(data), "\n"), "\n")+1, msg)
		}
		return nil, &PolicyError{File: name, Problems: []string{msg}}
	}
	pe := &PolicyError{File: name}
	bad := func(n *yaml.Node, key, format string, args ...any) {
		pe.Problems = append(pe.Problems, fmt.Sprintf("line %d: %s: %s", n.Line, key, fmt.Sprintf(format, args...)))
	}
	if len(root.Content) == 0 {
		return p, nil
	}
	doc := root.Content[0]
	if doc.Kind != yaml.MappingNode {
		bad(doc, "(top level)", "must be a mapping with defaults, types and tools")
		return nil, pe
	}
	parseTypes := func(n *yaml.Node, where string) map[ledger.FailureType]Rule {
		if n.Kind != yaml.MappingNode {
			bad(n, where, "must be a mapping of failure type to settings")
			return nil
		}
		m := map[ledger.FailureType]Rule{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			t, ok := ledger.ParseFailureType(k.Value)
			if !ok {
				bad(k, where+"."+k.Value, "unknown failure type (want one of %s)", typeList())
				continue
			}
			m[t] = parseRule(v, where+"."+k.Value, nil, bad)
		}
		return m
	}
	for i := 0; i+1 < len(doc.Content); i += 2 {
		k, v := doc.Content[i], doc.Content[i+1]
		switch k.Value {
		case "defaults":
			p.Defaults = parseRule(v, "defaults", nil, bad)
		case "types":
			p.Types = parseTypes(v, "types")
		case "tools":
			if v.Kind != yaml.SequenceNode {
				bad(v, "tools", "must be a list of rules, each with a match glob")
				continue
			}
			for j, tn := range v.Content {
				where := fmt.Sprintf("tools[%d]", j)
				tr := ToolRule{}
				tr.Rule = parseRule(tn, where, func(key string, val *yaml.Node) bool {
					switch key {
					case "match":
						tr.Match = val.Value
						if val.Kind != yaml.ScalarNode || val.Value == "" {
							bad(val, where+".match", "must be a tool glob such as mcp__github__*")
						} else if _, err := path.Match(val.Value, ""); err != nil {
							bad(val, where+".match", "bad glob %q: %v", val.Value, err)
						}
						return true
					case "types":
						tr.Types = parseTypes(val, where+".types")
						return true
					}
					return false
				}, bad)
				if tr.Match == "" && tn.Kind == yaml.MappingNode {
					bad(tn, where, "missing match (a tool glob such as mcp__github__*)")
				}
				p.Tools = append(p.Tools, tr)
			}
		default:
			bad(k, k.Value, "unknown key (want defaults, types or tools)")
		}
	}
	if len(pe.Problems) > 0 {
		return p, pe
	}
	return p, nil
}

func typeList() string {
	s := make([]string, len(ledger.FailureTypes))
	for i, t := range ledger.FailureTypes {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}

// parseRule reads one rule mapping; extra handles keys that only some places allow.
func parseRule(n *yaml.Node, where string, extra func(string, *yaml.Node) bool, bad func(*yaml.Node, string, string, ...any)) Rule {
	var r Rule
	if n.Kind != yaml.MappingNode {
		bad(n, where, "must be a mapping of settings")
		return r
	}
	// Durations under a second are refused: a lease of 1ns lets every concurrent caller take
	// "the single" trial, and a cooldown that short is no cooldown.
	const min = time.Second
	dur := func(v *yaml.Node, key string, max time.Duration) time.Duration {
		d, err := time.ParseDuration(v.Value)
		if err != nil {
			if s, err2 := strconv.Atoi(v.Value); err2 == nil {
				d, err = time.Duration(s)*time.Second, nil
			}
		}
		if err != nil || d < min || d > max {
			bad(v, key, "%q is not a duration between %s and %s (such as 90s or 5m)", v.Value, min, max)
			return 0
		}
		return d
	}
	oneOf := func(v *yaml.Node, key string, allowed ...string) string {
		for _, a := range allowed {
			if v.Value == a {
				return a
			}
		}
		bad(v, key, "%q is not one of %s", v.Value, strings.Join(allowed, ", "))
		return ""
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := where + "." + k.Value
		if extra != nil && extra(k.Value, v) {
			continue
		}
		if v.Kind != yaml.ScalarNode {
			bad(v, key, "must be a single value")
			continue
		}
		switch k.Value {
		case "threshold":
			t, err := strconv.Atoi(v.Value)
			if err != nil || t < 1 || t > 1000 {
				bad(v, key, "%q is not a whole number from 1 to 1000", v.Value)
				continue
			}
			r.Threshold = t
		case "cooldown":
			r.Cooldown = dur(v, key, 24*time.Hour)
		case "cooldown_cap":
			r.CooldownCap = dur(v, key, 24*time.Hour)
		case "lease":
			r.Lease = dur(v, key, time.Hour)
		case "jitter":
			j, err := strconv.ParseFloat(v.Value, 64)
			if err != nil || j < 0 || j > 0.5 {
				bad(v, key, "%q is not a fraction from 0 to 0.5", v.Value)
				continue
			}
			r.Jitter = &j
		case "scope":
			r.Scope = oneOf(v, key, ScopeAuto, ScopeTool, ScopeServer)
		case "half_open":
			r.HalfOpen = oneOf(v, key, HalfOpenPassive, HalfOpenProbe)
		case "on_error":
			r.OnError = oneOf(v, key, OnErrorAllow, OnErrorDeny)
		case "loop_guard":
			g, err := strconv.Atoi(v.Value)
			if err != nil || g < 0 || g > 1000 {
				bad(v, key, "%q is not a whole number from 0 (off) to 1000", v.Value)
				continue
			}
			r.LoopGuard = &g
		case "hang_after":
			r.HangAfter = dur(v, key, 24*time.Hour)
		default:
			bad(k, key, "unknown key (want threshold, cooldown, cooldown_cap, jitter, lease, scope, half_open, on_error, loop_guard, hang_after)")
		}
	}
	if r.Cooldown > 0 && r.CooldownCap > 0 && r.CooldownCap < r.Cooldown {
		bad(n, where+".cooldown_cap", "is shorter than cooldown")
		r.CooldownCap = 0
	}
	return r
}

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
