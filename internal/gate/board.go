package gate

import (
	"context"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// Board is the fleet-shared board bound to one hook run, as the gate meets it. The full CLI wires
// internal/fleet's; the gate does not import it, so that the lean binary links neither the Redis
// client nor the network and TLS stacks, whose start-up alone costs more than a CLOSED call.
type Board interface {
	// Shared is what every store of the run decides through.
	states.Shared
	// SetSession sets the session id on the entries that record the board's state.
	SetSession(id string)
	// SetLatest sets the latest an exchange with the board may end when the run first waited for
	// the ledger lock, which does not count against the run's bound for the board.
	SetLatest(t time.Time)
	// Origin says which session or machine decided key's circuit on the board ("" for this one).
	Origin(key string) string
	// Redacted is the board's URL without its password, for messages.
	Redacted() string
	// Outcome is how the last exchange with the board went.
	Outcome() BoardOutcome
	// List returns the circuits the board holds for the project's servers and those of keys
	// (SessionStart's listing); it updates Outcome.
	List(ctx context.Context, keys []string, now time.Time) ([]*states.Circuit, error)
	// Close ends the run's connection.
	Close()
}

// BoardOutcome is how the last exchange with the board went.
type BoardOutcome struct {
	// Shared is set when the decision was made on, and written to, the board.
	Shared bool
	// Away is why the board could not be used, nil when it was.
	Away error
	// Refused counts board records that could not be used; RefusedWhy says why the first was.
	Refused    int
	RefusedWhy string
}

// BindBoard binds project p to the board the user configured, for one run about tool ("" at
// SessionStart); nil, nil without a configured board. Every store p returns afterwards decides
// through it.
type BindBoard func(ctx context.Context, p *project.Project, tool string, now time.Time, sessionID string) (Board, error)
