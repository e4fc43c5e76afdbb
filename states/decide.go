package states

import (
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// Call identifies one MCP tool call and who reports on it.
type Call struct {
	// Tool is the tool key, mcp__<server>__<tool>, or a server key for server-wide commands.
	Tool string
	// Server is the real server name when known (Claude Code's mcp_server.name), for display.
	Server    string
	SessionID string
	ToolUseID string
	Source    string
	// Fingerprint is the server's current configuration fingerprint, "" when unknown.
	Fingerprint string
	// Hash identifies the call's arguments (a hash of Claude Code's tool_input), "" when unknown:
	// the loop guard tells the same call from another call of the same tool by it.
	Hash string
}

// Failure is one failed call as the circuits weigh it: what kind of failure, whose fault, how far
// it reaches and the text to keep. The classifier's result maps onto it field by field.
type Failure struct {
	// Type is the failure type; an invalid one counts as UNKNOWN.
	Type ledger.FailureType
	// Cause is the finer cause (connection_refused, http_401, hung, …).
	Cause string
	// Fault is whose fault the failure is. A ledger.FaultCall failure is recorded but counts
	// toward no trip and resets nothing; "" counts, as failures always did.
	Fault ledger.Fault
	// RetryAfter is the upstream's retry hint, 0 when none.
	RetryAfter time.Duration
	// ServerWide reports that the cause affects every tool of the server (docs/circuits.md).
	ServerWide bool
	// Error is the failure text as stored: secrets redacted, clipped.
	Error string
	// Weak reports that whose fault it is rests on weak evidence only (an unknown text, a generic
	// internal error or deadline); Shape identifies its text without what varies from call to
	// call. Together they are the evidence over calls: see Board.Failure.
	Weak  bool
	Shape string
}

// entry is a new entry of this process's decision: verified, since this gate made it (the store
// signs it when it appends it, and unmarks it when no key can sign it).
func (c Call) entry(key string, now time.Time, ev ledger.Event) ledger.Entry {
	return ledger.Entry{Tool: key, Event: ev, At: now, Server: c.Server, SessionID: c.SessionID,
		ToolUseID: c.ToolUseID, Source: c.Source, Verified: true}
}

// closing is the entry that brings c to CLOSED with nothing counted; a circuit that was not CLOSED
// is closed with reset_method probe_success, keeping its type and trip time in the record.
func (call Call) closing(c *Circuit, now time.Time, ev ledger.Event) ledger.Entry {
	e := call.entry(c.Key, now, ev)
	e.State = ledger.Closed
	if c.State != ledger.Closed {
		e.ResetAt, e.ResetMethod = now, ledger.ResetProbeSuccess
		e.FailureType, e.TrippedAt = c.FailureType, c.TrippedAt
	}
	return e
}

// Outcome is the result of recording a failure or a success.
type Outcome struct {
	// Entries are to be appended, in order.
	Entries []ledger.Entry
	// Tool and ServerCircuit are the circuits after the entries (ServerCircuit nil when the server
	// key was not touched).
	Tool, ServerCircuit *Circuit
	// Tripped lists the keys that this event opened.
	Tripped []string
	// CallError is set when the failure was the call's own: recorded, and counted toward nothing.
	CallError bool
	// Held is set when the failure was held rather than counted (weak evidence, and the tool had
	// worked since its last counted failure); Confirmed when it counted together with the failure
	// held before it, whose text read the same for other arguments.
	Held, Confirmed bool
	// EmptyStreak, set by EmptyResult, is how many different calls of the tool in a row came back
	// empty when that is the policy's empty_streak: the model is to be told, once.
	EmptyStreak int
}

// keysFor returns the keys a failure counts on: the tool key, and the server key when the cause is
// server-wide (or the policy scope says so).
func keysFor(tool string, r Failure, pol Effective) []string {
	if ledger.Key(tool).IsServer() {
		return []string{tool}
	}
	switch pol.Scope {
	case ScopeTool:
		return []string{tool}
	case ScopeServer:
		return []string{tool, string(ledger.Key(tool).ServerKey())}
	}
	if r.ServerWide {
		return []string{tool, string(ledger.Key(tool).ServerKey())}
	}
	return []string{tool}
}

// Failure records a failed call. A failure that is the call's own fault is recorded on the tool's
// key with the circuit as it stands: it opens nothing, adds nothing to the consecutive count and
// resets nothing; only the loop guard counts it.
//
// The evidence over calls (docs/classification.md) weighs a failure whose fault rests on weak
// evidence only (r.Weak) of a tool that worked since its last counted failure (its circuit CLOSED
// with nothing counted, Circuit.Worked): a success of the tool outweighs weak evidence, so the
// failure is held, recorded with the circuit as it stands, and counts nothing yet. The next such
// failure of the tool settles it: the same shape for another call (not the same arguments again)
// points at the tool, and both count; another shape points at the calls, and it is held in the
// first one's place. A tool that has not worked since its last counted failure, down from its
// first call included, counts weak evidence at once, as always.
func (b *Board) Failure(call Call, r Failure, now time.Time, p *Policy) Outcome {
	t := r.Type
	if !t.Valid() {
		t = ledger.Unknown
	}
	text := r.Error
	work := b.Clone()
	var out Outcome
	if r.Fault == ledger.FaultCall {
		e := call.callError(work.Get(call.Tool), t, r, now)
		work.Apply(e)
		return Outcome{Entries: []ledger.Entry{e}, Tool: work.Get(call.Tool), CallError: true}
	}
	held := 0 // the failure held before this one, when this one confirms it
	if c := work.Get(call.Tool); r.Weak && r.Shape != "" && c != nil && c.Worked && c.State == ledger.Closed &&
		c.FailureCount == 0 && !ledger.Key(call.Tool).IsServer() {
		if h := c.heldAt(now); h.Shape == r.Shape && (call.Hash == "" || call.Hash != h.Hash) {
			held, out.Confirmed = 1, true
		} else {
			e := call.heldFailure(c, t, r, now)
			work.Apply(e)
			return Outcome{Entries: []ledger.Entry{e}, Tool: work.Get(call.Tool), Held: true}
		}
	}
	pol := p.For(call.Tool, t)
	for _, key := range keysFor(call.Tool, r, pol) {
		e, tripped := work.failureEntry(call, key, t, r, now, p, held)
		out.Entries = append(out.Entries, e)
		work.Apply(e)
		if tripped {
			out.Tripped = append(out.Tripped, key)
		}
	}
	// ServerTripTools tools of one server OPEN at once open the server circuit too (docs/circuits.md).
	sk := string(ledger.Key(call.Tool).ServerKey())
	if !ledger.Key(call.Tool).IsServer() && len(out.Tripped) > 0 && !work.isOpen(sk) {
		open := 0
		for k, c := range work.Circuits {
			if !ledger.Key(k).IsServer() && ledger.Key(k).Server() == ledger.Key(call.Tool).Server() && c.State != ledger.Closed {
				open++
			}
		}
		if open >= ServerTripTools {
			sc := work.Get(sk)
			count := 1
			if sc != nil {
				count = sc.FailureCount + 1
			}
			e := call.entry(sk, now, ledger.EventTrip)
			e.State, e.FailureType, e.FailureCount, e.TrippedAt = ledger.Open, t, count, now
			e.Cause = "multi_tool_failure"
			e.Error = text
			e.OpenUntil = work.openUntil(sk, t, 0, now, r.RetryAfter, p)
			e.Fingerprint = call.Fingerprint
			out.Entries = append(out.Entries, e)
			work.Apply(e)
			out.Tripped = append(out.Tripped, sk)
		}
	}
	out.Tool = work.Get(call.Tool)
	if c := work.Get(sk); c != nil && !ledger.Key(call.Tool).IsServer() {
		for _, e := range out.Entries {
			if e.Tool == sk {
				out.ServerCircuit = c
			}
		}
	}
	return out
}

func (b *Board) isOpen(key string) bool {
	c := b.Get(key)
	return c != nil && c.State != ledger.Closed
}

// openUntil is when a trial becomes allowed after a trip at level; zero for ADMIN_GATED, which
// only a person closes.
func (b *Board) openUntil(key string, t ledger.FailureType, level int, now time.Time, hint time.Duration, p *Policy) time.Time {
	if t == ledger.AdminGated {
		return time.Time{}
	}
	return now.Add(cooldown(p.For(key, t), key, level, now, hint))
}

// callError is the entry of a failure that is the call's own: the circuit's state, count and
// trip time as they stand, the failure's type, cause and text, and the call's hash for the loop
// guard.
func (call Call) callError(c *Circuit, t ledger.FailureType, r Failure, now time.Time) ledger.Entry {
	e := call.entry(call.Tool, now, ledger.EventFailure)
	e.State = ledger.Closed
	if c != nil {
		e.State, e.FailureCount, e.TrippedAt = c.State, c.FailureCount, c.TrippedAt
		if c.State == ledger.HalfOpen {
			// A trial that failed on its own terms proves nothing either way: its permit is
			// released, and the next call is the trial.
			e.LeaseUntil = now
		}
	}
	e.FailureType, e.Cause, e.Error, e.Fault, e.CallHash = t, r.Cause, r.Error, ledger.FaultCall, call.Hash
	return e
}

// heldFailure is the entry of a failure held rather than counted: like a call error's, the circuit
// as it stands, with the failure's type, cause, fault, text and call hash, and its shape.
func (call Call) heldFailure(c *Circuit, t ledger.FailureType, r Failure, now time.Time) ledger.Entry {
	e := call.entry(call.Tool, now, ledger.EventFailure)
	e.State, e.FailureCount, e.TrippedAt = c.State, c.FailureCount, c.TrippedAt
	e.FailureType, e.Cause, e.Error, e.Fault, e.CallHash, e.HeldShape = t, r.Cause, r.Error, r.Fault, call.Hash, r.Shape
	return e
}

// failureEntry is the entry of a failure counted on key, with held more counted along with it (the
// failure held before it, which this one confirms).
func (b *Board) failureEntry(call Call, key string, t ledger.FailureType, r Failure, now time.Time, p *Policy, held int) (ledger.Entry, bool) {
	c := b.Get(key)
	if c == nil {
		c = &Circuit{Key: key, State: ledger.Closed}
	}
	e := call.entry(key, now, ledger.EventFailure)
	e.FailureType, e.FailureCount, e.Cause, e.Error, e.RetryAfter = t, c.FailureCount+1+held, r.Cause, r.Error, r.RetryAfter
	e.Fault = r.Fault
	if key == call.Tool {
		e.CallHash = call.Hash
	}
	e.TrippedAt = c.TrippedAt
	switch c.State {
	case ledger.HalfOpen:
		// The trial failed: re-open with the grown cooldown.
		e.Event, e.State, e.TrippedAt = ledger.EventTrip, ledger.Open, now
		e.OpenUntil = b.openUntil(key, t, c.Level+1, now, r.RetryAfter, p)
		e.Fingerprint = call.Fingerprint
		return e, true
	case ledger.Open:
		// A call that got through while OPEN (no gate, shadow mode): counted, open_until kept.
		e.State = ledger.Open
		return e, false
	}
	e.State = ledger.Closed
	if e.FailureCount >= p.For(key, t).Threshold {
		e.Event, e.State, e.TrippedAt = ledger.EventTrip, ledger.Open, now
		e.OpenUntil = b.openUntil(key, t, 0, now, r.RetryAfter, p)
		e.Fingerprint = call.Fingerprint
		return e, true
	}
	return e, false
}

// Success records a successful call: it resets counts and closes open or half-open circuits of the
// tool and of its server. It returns no entries when nothing changes (the hot path writes nothing).
func (b *Board) Success(call Call, now time.Time) Outcome {
	var out Outcome
	keys := []string{call.Tool}
	if !ledger.Key(call.Tool).IsServer() {
		keys = append(keys, string(ledger.Key(call.Tool).ServerKey()))
	}
	for _, key := range keys {
		c := b.Get(key)
		if c.Idle() {
			continue
		}
		if c.State == ledger.Closed && c.FailureCount == 0 {
			// Nothing counted, only a guard's memory or a failure held: any success of the tool
			// ends its streak of call errors and settles the failure held, and this call worked,
			// so the loop guard forgets it; a success that changes none of them writes nothing.
			if key != call.Tool || c.Streak.Count == 0 && c.Held.Shape == "" && c.Empty.Count == 0 && (call.Hash == "" || c.repeat(call.Hash) == nil) {
				continue
			}
		}
		e := call.closing(c, now, ledger.EventSuccess)
		if key == call.Tool {
			e.CallHash = call.Hash
		}
		out.Entries = append(out.Entries, e)
	}
	if !ledger.Key(call.Tool).IsServer() && b.Run(call.SessionID, now) != nil &&
		(len(out.Entries) == 0 || out.Entries[0].Tool != call.Tool) {
		// The session's failures in a row end here (the runaway guard): a tool with nothing
		// counted says so with a success of its own.
		e := call.entry(call.Tool, now, ledger.EventSuccess)
		e.State, e.CallHash = ledger.Closed, call.Hash
		out.Entries = append([]ledger.Entry{e}, out.Entries...)
	}
	return out
}

// Reset closes key by hand (reset_method user_forced).
func (b *Board) Reset(call Call, now time.Time) []ledger.Entry {
	c := b.Get(call.Tool)
	if c.Idle() || c.OnlyWorked() {
		return nil
	}
	e := call.entry(call.Tool, now, ledger.EventReset)
	e.State, e.ResetAt, e.ResetMethod = ledger.Closed, now, ledger.ResetUserForced
	e.FailureType, e.TrippedAt = c.FailureType, c.TrippedAt
	return []ledger.Entry{e}
}

// CauseManualTrip is the cause of a trip by hand (Trip).
const CauseManualTrip = "manual_trip"

// Trip opens key by hand, for maintenance: no open_until is written, so only a person (reset) or a
// successful probe closes it.
func (b *Board) Trip(call Call, t ledger.FailureType, now time.Time) []ledger.Entry {
	count := 1
	if c := b.Get(call.Tool); c != nil {
		count = c.FailureCount + 1
	}
	e := call.entry(call.Tool, now, ledger.EventTrip)
	e.State, e.FailureType, e.FailureCount, e.TrippedAt = ledger.Open, t, count, now
	e.Cause = CauseManualTrip
	e.Fingerprint = call.Fingerprint
	return []ledger.Entry{e}
}

// Probe records the outcome of a probe of the server of call.Tool (or of the server key). A healthy
// probe closes the server key and every open tool key of that server, except NOT_FOUND tools that
// the server's tool list (when given) still lacks. A failed probe counts a failure on the keys
// concerned; it re-opens OPEN and HALF-OPEN circuits with the grown cooldown.
func (b *Board) Probe(call Call, healthy bool, r Failure, tools []string, now time.Time, p *Policy) Outcome {
	var out Outcome
	server := ledger.Key(call.Tool).Server()
	sk := string(ledger.Key(call.Tool).ServerKey())
	if healthy {
		has := map[string]bool{}
		for _, t := range tools {
			has[t] = true
		}
		for _, key := range b.Keys() {
			c := b.Circuits[key]
			if ledger.Key(key).Server() != server || c.Idle() || c.OnlyWorked() {
				continue
			}
			if !ledger.Key(key).IsServer() && key != call.Tool && !ledger.Key(call.Tool).IsServer() {
				continue // probing one tool says nothing of the server's other tools
			}
			if c.FailureType == ledger.NotFound && tools != nil && !ledger.Key(key).IsServer() && !has[ledger.Key(key).Tool()] {
				continue
			}
			e := call.closing(c, now, ledger.EventProbe)
			e.Source = ledger.SourceProbe
			out.Entries = append(out.Entries, e)
		}
		return out
	}
	t := r.Type
	if !t.Valid() {
		t = ledger.Unknown
	}
	keys := []string{call.Tool}
	if !ledger.Key(call.Tool).IsServer() && r.ServerWide {
		keys = append(keys, sk)
	}
	work := b.Clone()
	for _, key := range keys {
		c := work.Get(key)
		var e ledger.Entry
		tripped := false
		if c != nil && c.State != ledger.Closed {
			e = call.entry(key, now, ledger.EventProbe)
			e.State, e.FailureType, e.FailureCount, e.TrippedAt = ledger.Open, t, c.FailureCount+1, now
			e.Cause, e.Error, e.RetryAfter = r.Cause, r.Error, r.RetryAfter
			e.OpenUntil = work.openUntil(key, t, c.Level+1, now, r.RetryAfter, p)
			e.Fingerprint = call.Fingerprint
			tripped = true
		} else {
			e, tripped = work.failureEntry(call, key, t, r, now, p, 0)
			e.Event = ledger.EventProbe
		}
		e.Source = ledger.SourceProbe
		out.Entries = append(out.Entries, e)
		work.Apply(e)
		if tripped {
			out.Tripped = append(out.Tripped, key)
		}
	}
	out.Tool = work.Get(call.Tool)
	out.ServerCircuit = work.Get(sk)
	return out
}
