package failure

import (
	"strings"
	"testing"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// firedRules returns the positions of the rules that fire on text, in word order.
func firedRules(text string) []int {
	s := textScan{text: lowerASCII(text), rules: rules(), index: ruleIndex()}
	s.words = splitWords(s.text)
	var out []int
	for i := range s.words {
		if n := s.match(s.index[s.w(i)], i); n >= 0 {
			out = append(out, n)
		}
	}
	return out
}

// TestRuleExamples checks every rule of the table against the real texts it was written for: the
// rule fires on each of them, and the whole text classifies to the rule's type, cause and scope.
func TestRuleExamples(t *testing.T) {
	for n, r := range rules() {
		if len(r.Words) == 0 || !r.Type.Valid() || r.Cause == "" || (r.Spec != specGeneric && r.Spec != specExact && !(r.Spec == specTarget && r.Fault == ledger.FaultCall)) {
			t.Errorf("rule %d %v: incomplete: %+v", n, r.Words, r)
		}
		if len(r.Examples) == 0 {
			t.Errorf("rule %d %v (%s %s) has no example", n, r.Words, r.Type, r.Cause)
		}
		for _, ex := range r.Examples {
			fired := false
			for _, m := range firedRules(ex) {
				fired = fired || m == n
			}
			if !fired {
				t.Errorf("rule %d %v (%s %s) does not fire on its example %q (fired: %v)", n, r.Words, r.Type, r.Cause, ex, firedRules(ex))
			}
			got := Classify(Evidence{Text: ex}, testNow)
			if r.Fault == ledger.FaultCall {
				// Call evidence says whose fault it is; a status of its type may name the cause.
				// A target rule keeps the type of what failed upstream.
				typeOK := got.Type == r.Type && (got.Cause == r.Cause || strings.HasPrefix(got.Cause, "http_")) || r.Spec == specTarget
				if got.Fault != ledger.FaultCall || !typeOK {
					t.Errorf("rule %d %v: example %q classifies as %s %s (fault %s), want %s %s (fault call)",
						n, r.Words, ex, got.Type, got.Cause, got.Fault, r.Type, r.Cause)
				}
				continue
			}
			if got.Type != r.Type || got.Cause != r.Cause || got.ServerWide != (r.Scope == serverWide) {
				t.Errorf("rule %d %v: example %q classifies as %s %s (server-wide %v), want %s %s (server-wide %v)",
					n, r.Words, ex, got.Type, got.Cause, got.ServerWide, r.Type, r.Cause, r.Scope == serverWide)
			}
		}
	}
}

// TestRuleWords checks that the table's words are what the scanner can see: one lower-case word each
// (no space, no capital, no punctuation a word ends at).
func TestRuleWords(t *testing.T) {
	for n, r := range rules() {
		for _, w := range r.Words {
			if w == "" || lowerASCII(w) != w || len(splitWords(w)) != 1 || len(w) != splitWords(w)[0].end {
				t.Errorf("rule %d: %q is not one lower-case word", n, w)
			}
		}
	}
}
