// Package failure owns what a failed MCP call is: its type (docs/classification.md), its finer cause, whose
// fault it is (the call's own, the tool's, the server's, its credentials', its quota's or an admin's), whether
// it is transient and the retry hint it carries. It classifies only: what of a text may be kept or
// shown (secrets redacted, quoted as data) is internal/redact's.
//
// [Classify] weighs the evidence of one failure in the order of trust of docs/classification.md (an explicit type, the
// HTTP status, the JSON-RPC code, the text) and matches words, not substrings, so that ENOTFOUND is a DNS
// failure and "4010 items" is not a 401. [RetryHint] reads the upstream's retry hint from a text.
// The text is matched against a table of rules (rules.go): each names its words, the context they
// need, the type, cause, specificity and scope they mean, and the real texts it was written for.
// Nothing here is computed at package initialisation: the hook runs in a short-lived process whose
// start-up time is budgeted (the README's Performance section), so the table is built on first use and holds no compiled
// patterns.
package failure

import (
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// Evidence is what is known about one failure, in the order of trust of docs/classification.md.
type Evidence struct {
	// Type is an explicit type given by the caller; when valid it wins over everything else.
	Type ledger.FailureType
	// Status is an HTTP status code, 0 when unknown.
	Status int
	// Code is a JSON-RPC error code, 0 when unknown.
	Code int
	// Text is the failure text: Claude Code's error field, a tool's error content, a probe outcome.
	Text string
	// Interrupt is Claude Code's is_interrupt: the user cancelled the call, which is not a failure
	// unless it had hung (Duration over HangAfter).
	Interrupt bool
	// Duration is how long the call ran (Claude Code's duration_ms), 0 when unknown.
	Duration time.Duration
	// HangAfter is how long a call may run before an interrupt counts as a hang; 0 never does.
	HangAfter time.Duration
	// Fault is an explicit fault given by the caller; when valid it wins over the evidence.
	Fault ledger.Fault
	// Probe marks a probe's outcome: it sent no arguments of a call, so it is never the call's fault.
	Probe bool
	// Tool is the call's tool, its canonical key (mcp__<server>__<tool>) or its bare name; "" when
	// unknown. Its words say what kind of tool it is (a fetch, browser or shell tool names its
	// targets in its arguments).
	Tool string
	// Args are the values the call passed (see [ArgsFromJSON]); nil when unknown. A text that names
	// one of them is about the call's own target.
	Args []Arg
}

// Arg is one value a call passed: a string, number or boolean leaf of its arguments, with the
// object key it stood under ("" for an element of a top-level array).
type Arg struct {
	Key   string
	Value string
}

// Bounds of the arguments kept for classification: a tool_input can hold a whole file, and only
// the values a failure text can name are needed.
const (
	// MaxArgs is how many argument values are kept, in the order they appear.
	MaxArgs = 32
	// MaxArgValue is how many bytes of one value are kept.
	MaxArgValue = 512
)

// Result is a classified failure.
type Result struct {
	// Type is the failure type; empty when Interrupt is true.
	Type ledger.FailureType
	// Cause is the finer cause (connection_refused, http_401, deadline, tool_missing, …); may be empty.
	Cause string
	// Fault is whose fault the failure is; a FaultCall failure counts toward no trip.
	Fault ledger.Fault
	// Transient is ledger.FailureType.Transient(), kept for output.
	Transient bool
	// RetryAfter is the upstream retry hint, 0 when none was found.
	RetryAfter time.Duration
	// ServerWide reports whether the cause affects every tool of the server (docs/circuits.md);
	// never for a call's own fault.
	ServerWide bool
	// Interrupt reports a user cancellation: nothing must be counted.
	Interrupt bool
	// Weak reports that the fault rests on no specific evidence (an unknown text, a generic
	// internal error or deadline): the pattern over calls may still show it is the call's
	// (docs/classification.md, "Evidence over calls").
	Weak bool
	// Shape identifies the text with the values the call passed, numbers, quoted strings and ids
	// taken out: the same shape for different arguments points at the tool, different shapes at the
	// calls. "" when there is no text.
	Shape string
}

// numTypes is len(ledger.FailureTypes); it sizes the per-type arrays of the classifier.
const numTypes = 7
