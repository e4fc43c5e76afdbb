package project

import (
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/message"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// FailureMessage is message.Failure with this project's fallbacks for the widest circuit that
// opened.
func (p *Project) FailureMessage(b *states.Board, out states.Outcome, pol *states.Policy, now time.Time) string {
	return message.Failure(b, out, pol, now, func(widest *states.Circuit) string {
		return p.FallbackMarkdown(b, widest, pol, now)
	})
}
