package project

import (
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/failure"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/message"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// FailureOf is the failure r, as the classifier saw it, in the circuits' terms, with text as stored
// (redacted and clipped by the caller).
func FailureOf(r failure.Result, text string) states.Failure {
	return states.Failure{Type: r.Type, Cause: r.Cause, Fault: r.Fault, RetryAfter: r.RetryAfter,
		ServerWide: r.ServerWide, Error: text, Weak: r.Weak, Shape: r.Shape}
}

// FailureMessage is message.Failure with this project's fallbacks for the widest circuit that
// opened.
func (p *Project) FailureMessage(b *states.Board, out states.Outcome, pol *states.Policy, now time.Time) string {
	return message.Failure(b, out, pol, now, func(widest *states.Circuit) string {
		return p.FallbackMarkdown(b, widest, pol, now)
	})
}
