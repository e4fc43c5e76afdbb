// Package failure owns what a failed MCP call is: its type (SPEC §4), its finer cause, whether it is
// transient, the retry hint it carries, and the redaction of secrets from its text (SPEC §9).
//
// [Classify] weighs the evidence of one failure in the order of trust of SPEC §4 (an explicit type, the
// HTTP status, the JSON-RPC code, the text) and matches words, not substrings, so that ENOTFOUND is a DNS
// failure and "4010 items" is not a 401. [RetryHint] reads the upstream's retry hint from a text.
// [Redact] and [StoredText] make a failure text safe to keep in the ledger.
//
// Nothing here is computed at package initialisation: the hook runs in a short-lived process whose
// start-up time is budgeted (SPEC §10), so the matchers are plain code, not compiled patterns.
package failure

import "time"

// Type is the class of a failure, as the skill names it. The zero value is not a valid type.
type Type string

// The failure types of SPEC §4, in precedence order (highest first).
const (
	AdminGated Type = "ADMIN_GATED"
	Auth       Type = "AUTH"
	RateLimit  Type = "RATE_LIMIT"
	NotFound   Type = "NOT_FOUND"
	Timeout    Type = "TIMEOUT"
	Malformed  Type = "MALFORMED"
	Unknown    Type = "UNKNOWN"
)

// Types lists every valid type in precedence order, highest first.
var Types = []Type{AdminGated, Auth, RateLimit, NotFound, Timeout, Malformed, Unknown}

// Valid reports whether t is one of [Types].
func (t Type) Valid() bool {
	for _, v := range Types {
		if v == t {
			return true
		}
	}
	return false
}

// numTypes is len(Types); it sizes the per-type arrays of the classifier.
const numTypes = 7

// rank returns the precedence rank of t (0 is the highest), or -1 when t is not valid.
func rank(t Type) int {
	switch t {
	case AdminGated:
		return 0
	case Auth:
		return 1
	case RateLimit:
		return 2
	case NotFound:
		return 3
	case Timeout:
		return 4
	case Malformed:
		return 5
	case Unknown:
		return 6
	}
	return -1
}

// Transient reports whether a later call of the same tool may succeed without anyone acting.
func (t Type) Transient() bool { return t == Timeout || t == RateLimit }

// DefaultThreshold is the number of consecutive failures that trips a circuit when no policy says
// otherwise: 1 for the types that never recover on retry, 3 for the rest.
func (t Type) DefaultThreshold() int {
	switch t {
	case AdminGated, Auth, NotFound:
		return 1
	}
	return 3
}

// ParseType returns the Type spelled s (case-insensitive, "-" accepted for "_").
func ParseType(s string) (Type, bool) {
	u := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' {
			c -= 'a' - 'A'
		}
		if c == '-' {
			c = '_'
		}
		u = append(u, c)
	}
	t := Type(u)
	return t, t.Valid()
}

// Evidence is what is known about one failure, in the order of trust of SPEC §4.
type Evidence struct {
	// Type is an explicit type given by the caller; when valid it wins over everything else.
	Type Type
	// Status is an HTTP status code, 0 when unknown.
	Status int
	// Code is a JSON-RPC error code, 0 when unknown.
	Code int
	// Text is the failure text: Claude Code's error field, a tool's error content, a probe outcome.
	Text string
	// Interrupt is Claude Code's is_interrupt: the user cancelled the call, which is not a failure.
	Interrupt bool
}

// Result is a classified failure.
type Result struct {
	// Type is the failure type; empty when Interrupt is true.
	Type Type
	// Cause is the finer cause (connection_refused, http_401, deadline, tool_missing, …); may be empty.
	Cause string
	// Transient is Type.Transient(), kept for output.
	Transient bool
	// RetryAfter is the upstream retry hint, 0 when none was found.
	RetryAfter time.Duration
	// ServerWide reports whether the cause affects every tool of the server (SPEC §5.3).
	ServerWide bool
	// Interrupt reports a user cancellation: nothing must be counted.
	Interrupt bool
}
