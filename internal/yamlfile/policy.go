package yamlfile

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// Policy reads a policy file. The format:
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
//	  call_error_streak: 5 # N different calls failing on their own terms in a row: the next is denied once; 0 = off
//	  session_failure_streak: 8 # N MCP calls of one session failing in a row, across tools: the next is denied once; 0 = off
//	  empty_streak: 10   # N calls of one tool in a row coming back empty, with other arguments: the model is told once; 0 = off
//	  hang_after: 30s    # an interrupted call that ran longer is a hang (TIMEOUT, cause hung)
//	  deadline: 2m       # the MCP proxy answers a call still running after this with a timeout error (TIMEOUT); none by default
//	types:
//	  TIMEOUT: {threshold: 5}
//	tools:
//	  - match: "mcp__github__*"
//	    cooldown: 5m
//	    types:
//	      RATE_LIMIT: {cooldown: 15m}
//
// It reports all problems at once, each as "line N: key: what is wrong".
func Policy(name string, data []byte) (*states.Policy, error) {
	p, err := UsablePolicy(name, data)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// UsablePolicy is Policy for the decisions that must go on when the file is invalid (the
// gate, record, the failure hook): alongside the *states.PolicyError it returns the valid parts of the
// file, where every invalid value is left out so that the built-in value applies to it. A file that
// is not YAML or not a mapping gives the built-in policy (nil).
func UsablePolicy(name string, data []byte) (*states.Policy, error) {
	p := &states.Policy{Source: name}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		if !strings.HasPrefix(msg, "line ") {
			// yaml.v3 gives no line for an unterminated document: it ends at the last line.
			msg = fmt.Sprintf("line %d: %s", strings.Count(strings.TrimRight(string(data), "\n"), "\n")+1, msg)
		}
		return nil, &states.PolicyError{File: name, Problems: []string{msg}}
	}
	pe := &states.PolicyError{File: name}
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
	parseTypes := func(n *yaml.Node, where string) map[ledger.FailureType]states.Rule {
		if n.Kind != yaml.MappingNode {
			bad(n, where, "must be a mapping of failure type to settings")
			return nil
		}
		m := map[ledger.FailureType]states.Rule{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			t, ok := ledger.ParseFailureType(k.Value)
			if !ok {
				bad(k, where+"."+k.Value, "unknown failure type (want one of %s)", typeNames())
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
				tr := states.ToolRule{}
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

// parseRule reads one rule mapping; extra handles keys that only some places allow.
func parseRule(n *yaml.Node, where string, extra func(string, *yaml.Node) bool, bad func(*yaml.Node, string, string, ...any)) states.Rule {
	var r states.Rule
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
			r.Scope = oneOf(v, key, states.ScopeAuto, states.ScopeTool, states.ScopeServer)
		case "half_open":
			r.HalfOpen = oneOf(v, key, states.HalfOpenPassive, states.HalfOpenProbe)
		case "on_error":
			r.OnError = oneOf(v, key, states.OnErrorAllow, states.OnErrorDeny)
		case "loop_guard":
			g, err := strconv.Atoi(v.Value)
			if err != nil || g < 0 || g > 1000 {
				bad(v, key, "%q is not a whole number from 0 (off) to 1000", v.Value)
				continue
			}
			r.LoopGuard = &g
		case "call_error_streak":
			g, err := strconv.Atoi(v.Value)
			if err != nil || g < 0 || g > 1000 {
				bad(v, key, "%q is not a whole number from 0 (off) to 1000", v.Value)
				continue
			}
			r.CallErrorStreak = &g
		case "session_failure_streak", "empty_streak":
			g, err := strconv.Atoi(v.Value)
			if err != nil || g < 0 || g > 1000 {
				bad(v, key, "%q is not a whole number from 0 (off) to 1000", v.Value)
				continue
			}
			if k.Value == "empty_streak" {
				r.EmptyStreak = &g
			} else {
				r.SessionFailureStreak = &g
			}
		case "hang_after":
			r.HangAfter = dur(v, key, 24*time.Hour)
		case "deadline":
			r.Deadline = dur(v, key, 24*time.Hour)
		default:
			bad(k, key, "unknown key (want threshold, cooldown, cooldown_cap, jitter, lease, scope, half_open, on_error, loop_guard, call_error_streak, session_failure_streak, empty_streak, hang_after, deadline)")
		}
	}
	if r.Cooldown > 0 && r.CooldownCap > 0 && r.CooldownCap < r.Cooldown {
		bad(n, where+".cooldown_cap", "is shorter than cooldown")
		r.CooldownCap = 0
	}
	return r
}
