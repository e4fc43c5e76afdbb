// Package failure owns what a failed MCP call is: its type (docs/classification.md), its finer cause, whose
// fault it is (the call's own, the tool's, the server's, its credentials', its quota's or an admin's), whether
// it is transient, the retry hint it carries, and the redaction of secrets from its text (docs/security.md).
//
// [Classify] weighs the evidence of one failure in the order of trust of docs/classification.md (an explicit type, the
// HTTP status, the JSON-RPC code, the text) and matches words, not substrings, so that ENOTFOUND is a DNS
// failure and "4010 items" is not a 401. [RetryHint] reads the upstream's retry hint from a text.
// [Redact] and [StoredText] make a failure text safe to keep in the ledger.
//
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
}

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
}

// numTypes is len(ledger.FailureTypes); it sizes the per-type arrays of the classifier.
const numTypes = 7
