package report

import (
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// Span is a stretch of time a circuit spent in one state, within the report's window.
type Span struct {
	From, To time.Time
	State    ledger.State
	// Type and Cause are those of the failure that opened the circuit (empty while CLOSED).
	Type  ledger.FailureType
	Cause string
}

// MarkKind names what happened at a point of a circuit's lane.
type MarkKind string

// The kinds of marks a lane shows.
const (
	MarkTrip       MarkKind = "trip"
	MarkTrial      MarkKind = "trial"
	MarkFailure    MarkKind = "failure"
	MarkBlocked    MarkKind = "blocked"
	MarkWouldBlock MarkKind = "would_block"
	MarkClose      MarkKind = "close"
	// MarkCallError is a call that failed on its own terms: recorded, never counted.
	MarkCallError MarkKind = "call_error"
	// MarkLoopGuard is a call the loop guard denied: the same call failing the same way again.
	MarkLoopGuard MarkKind = "loop_guard"
)

// Mark is one thing that happened to a circuit: a trip, a trial, a failure, a blocked call.
type Mark struct {
	At   time.Time
	Kind MarkKind
	// Type and Cause describe the failure behind a trip or a failure mark.
	Type  ledger.FailureType
	Cause string
}

// timeline is what Build gathers for a lane when Options.Timeline is set.
type timeline struct {
	start ledger.State // the circuit's state when the window opened
	spans []Span       // closed spans, in order; the last one is still open at Report.Now
	marks []Mark
	open  Span // the span in progress
	began bool
}

// note records one entry of the window for the lane: the state after it, and a mark for what the
// entry was.
func (tl *timeline) note(e ledger.Entry, at time.Time, prevState ledger.State, c *states.Circuit) {
	if !tl.began {
		tl.began = true
		tl.open = Span{From: at, State: prevState}
		tl.start = prevState
	}
	if c.State != tl.open.State {
		tl.open.To = at
		tl.spans = appendSpan(tl.spans, tl.open)
		tl.open = Span{From: at, State: c.State}
		if c.State != ledger.Closed {
			tl.open.Type, tl.open.Cause = c.FailureType, c.Cause
		}
		// A state held for no time at all (a trial that failed the instant it was granted)
		// leaves the span before it open: OPEN, trial, OPEN is one OPEN span with a trial mark.
		if n := len(tl.spans); n > 0 && tl.spans[n-1].State == c.State && tl.spans[n-1].To.Equal(at) {
			tl.open = tl.spans[n-1]
			tl.spans = tl.spans[:n-1]
		}
	}
	switch {
	case e.Event == ledger.EventBlocked && e.Cause == states.CauseLoopGuard:
		tl.marks = append(tl.marks, Mark{At: at, Kind: MarkLoopGuard})
	case e.Event == ledger.EventBlocked:
		tl.marks = append(tl.marks, Mark{At: at, Kind: MarkBlocked})
	case e.Event == ledger.EventWouldBlock:
		tl.marks = append(tl.marks, Mark{At: at, Kind: MarkWouldBlock})
	case states.Opens(prevState, e):
		tl.marks = append(tl.marks, Mark{At: at, Kind: MarkTrip, Type: c.FailureType, Cause: c.Cause})
	case e.Event == ledger.EventHalfOpen || c.State == ledger.HalfOpen && prevState != ledger.HalfOpen:
		tl.marks = append(tl.marks, Mark{At: at, Kind: MarkTrial})
	case states.IsFailure(prevState, e):
		tl.marks = append(tl.marks, Mark{At: at, Kind: MarkFailure, Type: e.FailureType, Cause: e.Cause})
	case c.State == ledger.Closed && prevState != ledger.Closed:
		tl.marks = append(tl.marks, Mark{At: at, Kind: MarkClose})
	}
}

// finish closes the span in progress at end and returns every span of the lane from the window's
// start: before the lane's first entry in the window it stood as it was when the window opened.
func (tl *timeline) finish(from, end time.Time) []Span {
	last := tl.open
	last.To = end
	out := appendSpan(append([]Span(nil), tl.spans...), last)
	if len(out) > 0 && out[0].From.After(from) {
		out = append([]Span{{From: from, To: out[0].From, State: tl.start}}, out...)
	}
	return out
}

// appendSpan appends s unless it lasted no time at all.
func appendSpan(spans []Span, s Span) []Span {
	if !s.To.After(s.From) {
		return spans
	}
	return append(spans, s)
}

// entryTime is the instant an entry stands for: its `at`, or for entries written by hand following
// the skill's prose, the reset or trip time.
func entryTime(e ledger.Entry) time.Time {
	at := e.At
	if at.IsZero() {
		at = e.ResetAt
		if at.IsZero() {
			at = e.TrippedAt
		}
	}
	return at
}
