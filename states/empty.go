package states

import (
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// Empty counts the calls of one tool that came back empty (no content, [], {}, "No results") in a
// row, each with other arguments than the one before it, with no other result of the tool between
// (docs/circuits.md, "Empty results"). A call that repeats the arguments of the one before it
// neither adds nor breaks the row, and neither does a call whose arguments are unknown.
type Empty struct {
	Count int `json:"count"`
	// Hash identifies the arguments of the last call counted, At is when it was.
	Hash string    `json:"hash,omitempty"`
	At   time.Time `json:"at,omitzero"`
}

// Causes of a success entry whose result was empty: counted, or counted and told to the model
// (the row starts over after it).
const (
	CauseEmptyResult = "empty_result"
	CauseEmptyStreak = "empty_streak"
)

// noteEmpty moves the tool's row of empty results by the success e.
func (c *Circuit) noteEmpty(e ledger.Entry) {
	switch e.Cause {
	case CauseEmptyResult:
	case CauseEmptyStreak:
		c.Empty = Empty{} // told once: the row starts over
		return
	default:
		c.Empty = Empty{} // a result that was not empty ends the row
		return
	}
	if c.Empty.Count > 0 && e.At.Sub(c.Empty.At) > CallMemoryAge {
		c.Empty = Empty{}
	}
	if e.CallHash == "" || e.CallHash == c.Empty.Hash {
		return
	}
	c.Empty = Empty{Count: c.Empty.Count + 1, Hash: e.CallHash, At: e.At}
}

// EmptyResult records a successful call whose result was empty: a success (it closes what a
// success closes, and ends the session's failures in a row) with cause empty_result on the tool's
// entry. When it makes empty_streak different calls in a row, out.EmptyStreak is that number and
// the entry's cause is empty_streak: the model is told once, and the row starts over. Never a
// failure, never a trip.
func (b *Board) EmptyResult(call Call, now time.Time, p *Policy) Outcome {
	out := b.Success(call, now)
	i := -1
	for j, e := range out.Entries {
		if e.Tool == call.Tool {
			i = j
		}
	}
	if i < 0 {
		e := call.entry(call.Tool, now, ledger.EventSuccess)
		e.State, e.CallHash = ledger.Closed, call.Hash
		out.Entries = append([]ledger.Entry{e}, out.Entries...)
		i = 0
	}
	e := &out.Entries[i]
	e.Cause = CauseEmptyResult
	var c Circuit
	if cur := b.Get(call.Tool); cur != nil {
		c = *cur
	}
	c.noteEmpty(*e)
	if n := p.For(call.Tool, "").EmptyStreak; n > 0 && c.Empty.Count >= n && c.Empty.Hash == call.Hash {
		e.Cause = CauseEmptyStreak
		out.EmptyStreak = c.Empty.Count
	}
	return out
}
