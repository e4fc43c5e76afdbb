package ledger

import (
	"time"
)

// State is a circuit state as the skill spells it.
type State string

// The three circuit states of the skill.
const (
	Closed   State = "CLOSED"
	Open     State = "OPEN"
	HalfOpen State = "HALF-OPEN"
)

// Valid reports whether s is one of the three states.
func (s State) Valid() bool { return s == Closed || s == Open || s == HalfOpen }

// Event says what happened in an entry (docs/ledger.md).
type Event string

// The events of docs/ledger.md. Entries written by hand following the skill have no event.
const (
	EventFailure    Event = "failure"
	EventTrip       Event = "trip"
	EventBlocked    Event = "blocked"
	EventHalfOpen   Event = "half_open"
	EventSuccess    Event = "success"
	EventReset      Event = "reset"
	EventProbe      Event = "probe"
	EventWouldBlock Event = "would_block"
)

// Valid reports whether e is one of the events of docs/ledger.md.
func (e Event) Valid() bool {
	switch e {
	case EventFailure, EventTrip, EventBlocked, EventHalfOpen, EventSuccess, EventReset, EventProbe, EventWouldBlock:
		return true
	}
	return false
}

// Reset methods written on closing entries.
const (
	ResetProbeSuccess = "probe_success"
	ResetUserForced   = "user_forced"
)

// Sources of an entry.
const (
	SourceHook  = "hook"
	SourceCLI   = "cli"
	SourceProbe = "probe"
	// SourceProxy marks entries the MCP proxy (internal/proxy) wrote from what it saw on the wire:
	// the JSON-RPC of a call, not an agent's hook event.
	SourceProxy = "proxy"
	// SourceShared marks entries that record what the fleet-shared board (internal/fleet) said of a
	// circuit (another session's failures, trip, trial or close): state this session learned and
	// decided on, not a call it made.
	SourceShared = "shared"
)

// Entry is one item of the ledger. Zero values stand for YAML null (times, failure type) or for an
// absent key (strings, durations); FailureCount is always written.
type Entry struct {
	Tool         string
	State        State
	FailureType  FailureType
	FailureCount int
	TrippedAt    time.Time
	ResetAt      time.Time
	ResetMethod  string
	Event        Event
	At           time.Time
	Server       string
	Cause        string
	Error        string
	OpenUntil    time.Time
	RetryAfter   time.Duration
	LeaseUntil   time.Time
	SessionID    string
	ToolUseID    string
	Source       string
	// Fingerprint is the server configuration fingerprint at trip time (key config_fingerprint), so
	// that fixed credentials can make an AUTH or ADMIN_GATED circuit eligible for a trial (docs/circuits.md).
	Fingerprint string
	// Fault is whose fault a failure is (key fault); FaultCall entries count toward nothing.
	// Empty on entries written before faults existed, which count as they always did.
	Fault Fault
	// CallHash identifies the call's arguments (key call_hash): the loop guard counts the same
	// call failing the same way (docs/circuits.md).
	CallHash string
	// HeldShape marks a failure held rather than counted (key held_shape), the shape of its text:
	// a failure on weak evidence only, of a tool that had worked since its last counted failure,
	// counts only when the next one reads the same for other arguments
	// (docs/classification.md, "Evidence over calls").
	HeldShape string
	// Extra holds the keys this version does not know, in file order, as written; they are kept so
	// that repair and compact do not lose them.
	Extra []Field
	// Line is the 1-based line of the item's "- " in the file it was read from; 0 for new entries.
	Line int
	// Provenance (key provenance, written last) is the keyed hash this user's gate signs its
	// entries with (Provenance.Sign); empty on entries written by hand, by another user or by a
	// version before provenance existed.
	Provenance string
	// Verified is set on an entry this process made, or read and found to carry this user's
	// provenance for exactly its content (Provenance.Check). It is never written: a file cannot
	// claim it.
	Verified bool `json:"-"`
}

// Field is an unknown key of an entry and its raw YAML value text.
type Field struct {
	Key   string
	Value string
}
