package project

import (
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// FailureMessage is what record prints and the PostToolUseFailure hook tells the model: the texts
// of the decision (states.FailureText) and, on a trip, the fallbacks for the widest circuit that
// opened (the server's when it opened), which need the project's catalog and tools cache.
func (p *Project) FailureMessage(b *states.Board, out states.Outcome, pol *states.Policy, now time.Time) string {
	msg := states.FailureText(b, out, pol, now)
	if len(out.Tripped) == 0 {
		return msg
	}
	widest := b.Get(out.Tripped[len(out.Tripped)-1])
	return msg + "\n\n" + p.FallbackMarkdown(b, widest, pol, now)
}
