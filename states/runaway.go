package states

import (
	"slices"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// Run is the runaway guard's memory of one session: how many of its MCP calls failed in a row,
// across every tool, with no success of any MCP tool between (docs/circuits.md, "The runaway
// guard"). It is this ledger's alone: never a circuit, never shared on the fleet board.
type Run struct {
	Count int `json:"count"`
	// Tools are the tool keys that failed in the run, each once, the one that failed last at the
	// end; at most MaxRunTools (the latest ones).
	Tools []string `json:"tools,omitempty"`
	// Type is how the last failure of the run failed, At when.
	Type ledger.FailureType `json:"type,omitempty"`
	At   time.Time          `json:"at"`
}

// MaxRunTools bounds the tools a Run names: enough for a deny reason, flat in the snapshot.
const MaxRunTools = 6

// MaxRuns bounds the sessions whose runs the board keeps: sessions running at once in one
// project are few, and the snapshot's header, which every call reads, stays small whatever the
// history. The run whose last failure is oldest is forgotten first.
const MaxRuns = 8

// CauseRunaway is the cause of a blocked entry written by the runaway guard.
const CauseRunaway = "session_failure_streak"

// BlockRunaway is the runaway guard's block: the session's MCP calls failed too often in a row,
// across tools.
const BlockRunaway = "runaway"

// Run returns the runaway guard's memory of the session id at now, or nil when the session has no
// failure in a row (or its last one is CallMemoryAge old).
func (b *Board) Run(id string, now time.Time) *Run {
	if id == "" || b.Runs == nil {
		return nil
	}
	r := b.Runs[id]
	if r == nil || r.Count == 0 || now.Sub(r.At) > CallMemoryAge {
		return nil
	}
	return r
}

// HoldsCall is Holds for one call, with the runaway guard's memory of its session: without either
// the call is allowed and records nothing, and the hot path reads no policy. The extra cost is one
// lookup in a map of at most MaxRuns sessions.
func (b *Board) HoldsCall(call Call) bool {
	if b.Holds(call.Tool) {
		return true
	}
	if call.SessionID == "" || b.Runs == nil || ledger.Key(call.Tool).IsServer() {
		return false
	}
	r := b.Runs[call.SessionID]
	return r != nil && r.Count > 0
}

// noteRun moves the runaway guard's memory of e's session: a failure of an MCP tool that the
// session's own call made (source hook) adds to its run; a success of any MCP tool of the session,
// and the guard's own deny, end it. Entries of the fleet board, of probes and of commands, and
// entries on server keys (a failure's tool entry is the one that counts), move nothing.
func (b *Board) noteRun(e ledger.Entry) {
	if e.SessionID == "" || e.Source != ledger.SourceHook || ledger.Key(e.Tool).IsServer() || !ledger.Key(e.Tool).IsMCP() {
		return
	}
	switch e.Event {
	case ledger.EventFailure, ledger.EventTrip:
	case ledger.EventSuccess:
		delete(b.Runs, e.SessionID)
		return
	case ledger.EventBlocked, ledger.EventWouldBlock:
		if e.Cause == CauseRunaway {
			delete(b.Runs, e.SessionID) // denied once: the run starts over
		}
		return
	default:
		return
	}
	if b.Runs == nil {
		b.Runs = make(map[string]*Run)
	}
	r := b.Runs[e.SessionID]
	if r == nil || e.At.Sub(r.At) > CallMemoryAge {
		r = &Run{}
		b.Runs[e.SessionID] = r
	}
	r.Count++
	r.Type, r.At = e.FailureType, e.At
	if i := slices.Index(r.Tools, e.Tool); i >= 0 {
		r.Tools = slices.Delete(r.Tools, i, i+1)
	}
	r.Tools = append(r.Tools, e.Tool)
	if len(r.Tools) > MaxRunTools {
		r.Tools = r.Tools[len(r.Tools)-MaxRunTools:]
	}
	for len(b.Runs) > MaxRuns {
		oldest := ""
		for id, o := range b.Runs {
			if oldest == "" || o.At.Before(b.Runs[oldest].At) || o.At.Equal(b.Runs[oldest].At) && id < oldest {
				oldest = id
			}
		}
		delete(b.Runs, oldest)
	}
}

// cloneRuns returns a copy of runs that shares nothing with it.
func cloneRuns(runs map[string]*Run) map[string]*Run {
	if runs == nil {
		return nil
	}
	out := make(map[string]*Run, len(runs))
	for id, r := range runs {
		rr := *r
		rr.Tools = slices.Clone(r.Tools)
		out[id] = &rr
	}
	return out
}

// runawayGuard denies the call, once, when session_failure_streak MCP calls of its session failed
// in a row, across any tools, with no success of an MCP tool between (docs/circuits.md): a model
// that hops from one failing tool to the next trips no circuit of its own, so it is stopped here
// and told what to do instead. Its blocked entry starts the run over; nil lets the call go.
func (b *Board) runawayGuard(call Call, now time.Time, p *Policy, shadow bool) *Decision {
	r := b.Run(call.SessionID, now)
	if r == nil || ledger.Key(call.Tool).IsServer() {
		return nil
	}
	if n := p.For(call.Tool, r.Type).SessionFailureStreak; n <= 0 || r.Count < n {
		return nil
	}
	ev := ledger.EventBlocked
	if shadow {
		ev = ledger.EventWouldBlock
	}
	c := b.Get(call.Tool)
	if c == nil {
		// The call's tool may never have failed: the deny is about the session, not a circuit.
		c = &Circuit{Key: call.Tool, State: ledger.Closed}
	}
	e := call.entry(call.Tool, now, ev)
	e.State, e.FailureType, e.FailureCount, e.TrippedAt = c.State, r.Type, c.FailureCount, c.TrippedAt
	e.Cause, e.CallHash = CauseRunaway, call.Hash
	rr := *r
	rr.Tools = slices.Clone(r.Tools)
	// The next call may go at once: the deny is the one notice.
	d := &Decision{Circuit: c, Block: BlockRunaway, RetryAt: now, Entries: []ledger.Entry{e}, Run: &rr}
	if shadow {
		d.Allowed, d.Shadow = true, true
	}
	return d
}
