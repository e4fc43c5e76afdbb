package states

import (
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// Why a call is blocked.
const (
	BlockOpen     = "open"      // OPEN, cooldown not over
	BlockPerson   = "person"    // OPEN until a person acts (ADMIN_GATED, a manual trip)
	BlockInFlight = "in_flight" // HALF-OPEN and another caller holds the trial permit
	BlockLoop     = "loop"      // the loop guard: this exact call failed the same way too often
	BlockStreak   = "streak"    // the streak guard: the tool refused calls with other arguments in a row
)

// Decision is the gate's answer for one call.
type Decision struct {
	// Allowed is false when the call must not go.
	Allowed bool
	// Trial is set when the call is a half-open trial (the permit was taken by this decision).
	Trial bool
	// Probe is set when the policy wants a probe before the trial (half_open: probe): the caller
	// probes, then records the outcome with Board.Probe instead of letting the call be the trial.
	Probe bool
	// Circuit is the circuit that decided: the blocking one, or the one whose permit was taken.
	Circuit *Circuit
	// Block is BlockOpen, BlockPerson or BlockInFlight when not allowed.
	Block string
	// RetryAt is when a trial may become possible; zero when only a person can act.
	RetryAt time.Time
	// Entries are to be appended: half_open permits, or one blocked / would_block entry.
	Entries []ledger.Entry
	// Shadow is set when the call would have been blocked but shadow mode let it go.
	Shadow bool
	// TrialConfigChanged says why a trial is due when Trial is set: the server's configuration
	// changed since the trip (else its cooldown is over); internal/message words it.
	TrialConfigChanged bool
	// Loop is the loop guard's memory of this call when Block is BlockLoop: how it failed, how
	// often, and when.
	Loop *Repeat
	// Streak is the streak guard's memory of the tool when Block is BlockStreak: how many calls
	// in a row failed on their own terms, and how the last one did.
	Streak *Streak
	// Run is the runaway guard's memory of the session when Block is BlockRunaway: how many of its
	// MCP calls failed in a row, and of which tools.
	Run *Run
}

// eligibleAt returns when a trial becomes allowed for an OPEN circuit, and whether one ever becomes
// allowed without a person.
func (c *Circuit) eligibleAt(call Call, p *Policy, now time.Time) (time.Time, bool) {
	if c.FailureType == ledger.Auth || c.FailureType == ledger.AdminGated {
		// Fixed credentials should not wait for a timer (docs/circuits.md).
		if c.Fingerprint != "" && call.Fingerprint != "" && c.Fingerprint != call.Fingerprint {
			return c.TrippedAt, true
		}
	}
	at := c.TrialAtNow(p, now)
	return at, !at.IsZero()
}

// MaxRetryHint caps how long an upstream retry hint (Retry-After) may hold a circuit OPEN.
const MaxRetryHint = time.Hour

// maxOpen is the longest a trip may keep c OPEN from the moment it is written: the cooldown cap,
// or the retry hint's cap when that is longer.
func (c *Circuit) maxOpen(p *Policy) time.Duration {
	return max(p.For(c.Key, c.FailureType).CooldownCap, MaxRetryHint)
}

// TrialAtNow is TrialAt seen from now: a trial time further ahead than any trip can set (the
// cooldown cap, or the retry hint's cap) was written by a clock running ahead, so its cooldown is
// taken as over and the next call is the trial, which re-trips with times from today's clock if the
// tool is still broken. Without this a trip dated years ahead would block the tool for years.
func (c *Circuit) TrialAtNow(p *Policy, now time.Time) time.Time {
	at := c.TrialAt(p)
	if !at.IsZero() && at.After(now.Add(c.maxOpen(p))) {
		return now
	}
	return at
}

// LeaseLive reports whether a HALF-OPEN circuit's trial permit is still running at now. A lease
// ending further ahead than the policy's lease (plus ClockSlack) from now was written by a clock
// running ahead and is over.
func (c *Circuit) LeaseLive(p *Policy, now time.Time) bool {
	return now.Before(c.LeaseUntil) && !c.LeaseUntil.After(now.Add(p.For(c.Key, c.FailureType).Lease+ClockSlack))
}

// ClockSlack is how far apart the clocks of two processes that share a ledger (or a fleet board)
// may be before one's lease is taken for a clock running ahead: a few seconds of drift, or a time
// read a little before another process wrote its lease, must never free a second trial.
const ClockSlack = 5 * time.Second

// TrialAt is when an OPEN circuit's cooldown ends and a trial call may go: its open_until, or for a
// state written by hand in the skill's format (no open_until) tripped_at plus the policy's
// cooldown. It is zero when only a person can close the circuit (ADMIN_GATED, a manual trip), unless
// the circuit is Unverified.
func (c *Circuit) TrialAt(p *Policy) time.Time {
	if c.Unverified && (c.FailureType == ledger.AdminGated || c.OpenUntil.IsZero()) {
		// Only this user's own gate (or the user, by hand) may hold a circuit until a person
		// acts: a committed or merged-in trip gets the ordinary cooldown from its trip time.
		return c.TrippedAt.Add(p.For(c.Key, c.FailureType).Cooldown)
	}
	if c.FailureType == ledger.AdminGated {
		// Also when an ADMIN_GATED failure came in while the circuit was already OPEN with a
		// cooldown (a call let through by shadow mode): no automatic trial (docs/circuits.md).
		return time.Time{}
	}
	if !c.OpenUntil.IsZero() {
		return c.OpenUntil
	}
	if c.HandWritten && c.FailureType != ledger.AdminGated {
		return c.TrippedAt.Add(p.For(c.Key, c.FailureType).Cooldown)
	}
	return time.Time{}
}

// later returns the block that says most: a call blocked by its server circuit and its tool
// circuit may go only when both allow it, so the decision names the one a person must close, else
// an OPEN one before a trial in flight (whose permit may belong to this very call), else the one
// whose retry time is later (the server's on a tie).
func later(cur, d *Decision) *Decision {
	rank := func(block string) int {
		switch block {
		case BlockPerson:
			return 2
		case BlockOpen:
			return 1
		}
		return 0
	}
	switch {
	case cur == nil:
		return d
	case rank(d.Block) != rank(cur.Block):
		if rank(d.Block) > rank(cur.Block) {
			return d
		}
		return cur
	case d.RetryAt.After(cur.RetryAt):
		return d
	}
	return cur
}

// NextCall is when a call of call.Tool may go, its server circuit included: now when it may go now
// (as the trial, perhaps), else the retry time of the decision that blocks it; person is set when
// only a person can let it go. Every view that names "the next trial" of a tool takes it from here.
func (b *Board) NextCall(call Call, now time.Time, p *Policy) (at time.Time, person bool) {
	return b.gate(call, now, p, false, false).Next(now)
}

// Next is when the call d was decided for may go, as NextCall says it: now when d allows it, else
// its retry time; person is set when only a person can let it go. A text about a decision takes
// its time from here rather than deciding again.
func (d Decision) Next(now time.Time) (at time.Time, person bool) {
	switch {
	case d.Allowed:
		return now, false
	case d.Block == BlockPerson:
		return time.Time{}, true
	}
	return d.RetryAt, false
}

// Holds reports whether the board has a circuit for key or for its server. Without one a call of
// key is allowed and records nothing, whatever the policy says: the hot path reads nothing more.
// A circuit that only knows its tool worked is none for the gate.
func (b *Board) Holds(key string) bool {
	for _, k := range ledger.Key(key).Circuits() {
		if c := b.Get(k); c != nil && !c.OnlyWorked() {
			return true
		}
	}
	return false
}

// Quiet reports whether neither key nor its server has anything counted or remembered (no
// circuit, or CLOSED with nothing but that its tool worked): a success of key then changes
// nothing.
func (b *Board) Quiet(key string) bool {
	for _, k := range ledger.Key(key).Circuits() {
		if c := b.Get(k); !c.Idle() && !c.OnlyWorked() {
			return false
		}
	}
	return true
}

// Decisions is how many times Gate decided on this board. The hook decides a call once on its
// unlocked view and once more under the lock when it records; this count is how that is checked.
func (b *Board) Decisions() int { return b.decisions }

// Gate decides whether call may go now. The server key is checked before the tool key. When a
// cooldown is over, the first caller takes the trial permit (a half_open entry with a lease);
// callers while the lease lives are blocked. With shadow set nothing is blocked, but what would
// have been is recorded as would_block.
func (b *Board) Gate(call Call, now time.Time, p *Policy, shadow bool) Decision {
	return b.gate(call, now, p, shadow, true)
}

// gate is Gate; a question (a view's next call, check) sets calls false: the streak and runaway
// guards judge the call an agent is about to make, and deny it once, so they answer no question.
func (b *Board) gate(call Call, now time.Time, p *Policy, shadow, calls bool) Decision {
	b.decisions++
	keys := []string{call.Tool}
	if !ledger.Key(call.Tool).IsServer() {
		keys = []string{string(ledger.Key(call.Tool).ServerKey()), call.Tool}
	}
	var blocked *Decision
	var permits []ledger.Entry
	var trial *Circuit
	var changed bool
	probe := false
	for _, key := range keys {
		c := b.Get(key)
		if c == nil || c.State == ledger.Closed {
			continue
		}
		switch c.State {
		case ledger.Open:
			at, auto := c.eligibleAt(call, p, now)
			if !auto {
				blocked = later(blocked, &Decision{Circuit: c, Block: BlockPerson})
				continue
			}
			if now.Before(at) {
				blocked = later(blocked, &Decision{Circuit: c, Block: BlockOpen, RetryAt: at})
				continue
			}
		case ledger.HalfOpen:
			if c.LeaseLive(p, now) {
				blocked = later(blocked, &Decision{Circuit: c, Block: BlockInFlight, RetryAt: c.LeaseUntil})
				continue
			}
		}
		pol := p.For(key, c.FailureType)
		e := call.entry(key, now, ledger.EventHalfOpen)
		e.State, e.FailureType, e.FailureCount, e.TrippedAt = ledger.HalfOpen, c.FailureType, c.FailureCount, c.TrippedAt
		e.LeaseUntil = now.Add(pol.Lease)
		permits = append(permits, e)
		if trial == nil {
			trial = c
			changed = c.StandingAt(now, p, call.Fingerprint).ConfigChanged
		}
		if pol.HalfOpen == HalfOpenProbe {
			probe = true
		}
	}
	if blocked != nil {
		c := blocked.Circuit
		ev := ledger.EventBlocked
		if shadow {
			ev = ledger.EventWouldBlock
		}
		e := call.entry(c.Key, now, ev)
		e.State, e.FailureType, e.FailureCount, e.TrippedAt = c.State, c.FailureType, c.FailureCount, c.TrippedAt
		blocked.Entries = []ledger.Entry{e}
		if shadow {
			blocked.Allowed, blocked.Shadow = true, true
		}
		return *blocked
	}
	if d := b.loopGuard(call, now, p, shadow); d != nil {
		return *d
	}
	if calls {
		if d := b.streakGuard(call, now, p, shadow); d != nil {
			return *d
		}
		if d := b.runawayGuard(call, now, p, shadow); d != nil {
			return *d
		}
	}
	if trial != nil {
		return Decision{Allowed: true, Trial: true, Probe: probe, Circuit: trial, Entries: permits, TrialConfigChanged: changed}
	}
	return Decision{Allowed: true}
}

// loopGuard denies the call when this exact call (same tool, same arguments) failed the same way
// loop_guard times in a row and the last of them is not a cooldown old (docs/circuits.md); nil
// lets it go. Other arguments of the same tool are never held back by it.
func (b *Board) loopGuard(call Call, now time.Time, p *Policy, shadow bool) *Decision {
	c := b.Get(call.Tool)
	r := c.repeat(call.Hash)
	if r == nil {
		return nil
	}
	pol := p.For(call.Tool, r.Type)
	until := r.At.Add(pol.Cooldown)
	if pol.LoopGuard <= 0 || r.Count < pol.LoopGuard || !now.Before(until) || until.After(now.Add(pol.CooldownCap)) {
		// Off, not yet, expired, or dated by a clock running ahead.
		return nil
	}
	ev := ledger.EventBlocked
	if shadow {
		ev = ledger.EventWouldBlock
	}
	e := call.entry(c.Key, now, ev)
	e.State, e.FailureType, e.FailureCount, e.TrippedAt = c.State, c.FailureType, c.FailureCount, c.TrippedAt
	e.Cause, e.CallHash = CauseLoopGuard, call.Hash
	rr := *r
	d := &Decision{Circuit: c, Block: BlockLoop, RetryAt: until, Entries: []ledger.Entry{e}, Loop: &rr}
	if shadow {
		d.Allowed, d.Shadow = true, true
	}
	return d
}

// CauseLoopGuard is the cause of a blocked entry written by the loop guard.
const CauseLoopGuard = "loop_guard"

// streakGuard denies the call, once, when call_error_streak calls of its tool in a row, each with
// other arguments than the one before, failed on their own terms with no success of the tool
// between (docs/circuits.md): a tool that refuses every call never trips, since a call's own
// failure counts toward nothing, so the model is told to check its calls against the tool's
// schema, or the server. Its blocked entry starts the streak over; nil lets the call go.
func (b *Board) streakGuard(call Call, now time.Time, p *Policy, shadow bool) *Decision {
	c := b.Get(call.Tool)
	if c == nil || c.Streak.Count == 0 || ledger.Key(call.Tool).IsServer() || now.Sub(c.Streak.At) > CallMemoryAge {
		return nil
	}
	if n := p.For(call.Tool, c.Streak.Type).CallErrorStreak; n <= 0 || c.Streak.Count < n {
		return nil
	}
	ev := ledger.EventBlocked
	if shadow {
		ev = ledger.EventWouldBlock
	}
	e := call.entry(c.Key, now, ev)
	e.State, e.FailureType, e.FailureCount, e.TrippedAt = c.State, c.Streak.Type, c.FailureCount, c.TrippedAt
	e.Cause, e.CallHash = CauseStreakGuard, call.Hash
	s := c.Streak
	// The next call may go at once: the deny is the one notice.
	d := &Decision{Circuit: c, Block: BlockStreak, RetryAt: now, Entries: []ledger.Entry{e}, Streak: &s}
	if shadow {
		d.Allowed, d.Shadow = true, true
	}
	return d
}

// CauseStreakGuard is the cause of a blocked entry written by the streak guard.
const CauseStreakGuard = "call_error_streak"

// GateRequest is one call to decide with Store.Gate.
type GateRequest struct {
	Call Call
	// Now is the time of the unlocked decision.
	Now time.Time
	// Clock, when set, reads the time again once the lock is held: the permit is decided with a
	// time no earlier than the one the previous holder wrote its lease with (a now taken before a
	// wait for the lock is older than the lease of whoever held it meanwhile). Nil keeps Now.
	Clock  func() time.Time
	Shadow bool
	// Policy reads the policy. It is called only when the board holds a circuit for the call's tool
	// or server, so the hot path (nothing recorded) reads no policy file.
	Policy func() (*Policy, error)
	// Refine, when set, completes the call from the board before deciding (the configuration
	// fingerprint of an AUTH or ADMIN_GATED circuit).
	Refine func(*Board, Call) Call
	// PermitsOnly records trial permits but no blocked entries: a question (check) is not a call.
	PermitsOnly bool
	// First, when set, is the decision the caller already took on the view passed to GateOn, for
	// the same call (refined), time, policy and shadow: it is not decided again.
	First *Decision
}

// GateResult is the decision Store.Gate took and what it was taken on.
type GateResult struct {
	Decision
	// Board is the board the decision was taken on, with its entries applied when they were
	// recorded.
	Board *Board
	// Policy is the policy read for the decision; nil (the built-in policy) on the hot path.
	Policy *Policy
	// Unrecorded is why the decision's entries could not be recorded when the decision stands
	// anyway: a circuit known to be OPEN stays denied when its blocked entry cannot be appended
	// (lock timeout, full disk, read-only file system).
	Unrecorded error
}

// record returns the entries of d that req records.
func (req GateRequest) record(d Decision) []ledger.Entry {
	if req.PermitsOnly && !d.Trial {
		return nil
	}
	return d.Entries
}

// Gate is the one decision path of the PreToolUse hook, check and the probe trial: an unlocked
// early-out (nothing recorded for the call, or nothing to record), then, only when the decision
// takes a half-open permit or records a blocked call, the same decision again under the ledger lock,
// where only one caller can take a permit. The decision itself is Board.Gate, a pure function of
// the board view, so another view of the circuits can be decided on the same way.
//
// A circuit seen OPEN by the unlocked read stays denied when the locked step fails (the lock timed
// out, the append failed): the error is returned in GateResult.Unrecorded, not as the error.
func (s *Store) Gate(req GateRequest) (GateResult, error) {
	board, err := s.View()
	if err != nil {
		return GateResult{}, err
	}
	return s.GateOn(board, req)
}

// GateOn is Gate with the unlocked view already read.
func (s *Store) GateOn(board *Board, req GateRequest) (GateResult, error) {
	if !board.HoldsCall(req.Call) {
		return GateResult{Decision: Decision{Allowed: true}, Board: board}, nil
	}
	pol, err := req.Policy()
	if err != nil {
		return GateResult{Board: board}, err
	}
	call := req.Call
	if req.Refine != nil {
		call = req.Refine(board, call)
	}
	var first Decision
	if req.First != nil {
		first = *req.First
	} else {
		first = board.gate(call, req.Now, pol, req.Shadow, !req.PermitsOnly)
	}
	res := GateResult{Decision: first, Board: board, Policy: pol}
	if len(req.record(first)) == 0 {
		if req.PermitsOnly {
			// Nothing to record: a question is answered from the view.
			return res, nil
		}
		if first.Allowed && !first.Trial {
			return res, nil
		}
	}
	var d Decision
	decided := false
	after, err := s.Update(func(b *Board) ([]ledger.Entry, error) {
		now := req.Now
		if req.Clock != nil {
			if t := req.Clock(); t.After(now) {
				now = t
			}
		}
		d, decided = b.gate(call, now, pol, req.Shadow, !req.PermitsOnly), true
		return req.record(d), nil
	})
	if err != nil {
		// Fail safe on what is known: a block seen before or under the lock stands.
		switch {
		case decided && !d.Allowed:
			res.Decision = d
		case !first.Allowed:
		default:
			return res, err
		}
		res.Entries = nil
		res.Unrecorded = err
		return res, nil
	}
	res.Decision, res.Board = d, after
	return res, nil
}
