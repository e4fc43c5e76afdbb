// Package states owns the circuits: one per tool key (mcp__<server>__<tool>) or server key
// (mcp__<server>__*), how ledger entries move them (Apply), and the decisions that produce new
// entries (Failure, Success, Gate, Reset, Trip, Probe). Decisions are pure functions of the board,
// the event, the policy and a now value: they read no clock and touch no file.
package states

import (
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// Circuit is the current state of one key, as derived from the ledger.
type Circuit struct {
	Key          string             `json:"key"`
	Server       string             `json:"server,omitempty"`
	State        ledger.State       `json:"state"`
	FailureType  ledger.FailureType `json:"failure_type,omitempty"`
	FailureCount int                `json:"failure_count"`
	Cause        string             `json:"cause,omitempty"`
	Error        string             `json:"error,omitempty"`
	TrippedAt    time.Time          `json:"tripped_at,omitzero"`
	OpenUntil    time.Time          `json:"open_until,omitzero"`
	LeaseUntil   time.Time          `json:"lease_until,omitzero"`
	ResetAt      time.Time          `json:"reset_at,omitzero"`
	ResetMethod  string             `json:"reset_method,omitempty"`
	RetryAfter   time.Duration      `json:"retry_after,omitempty"`
	// Level counts re-trips out of HALF-OPEN since the last close; the cooldown doubles per level.
	Level int `json:"level,omitempty"`
	// Blocked counts calls denied (or, in shadow mode, that would have been) since the last trip.
	Blocked int `json:"blocked,omitempty"`
	// Fingerprint is the server configuration fingerprint recorded at the trip.
	Fingerprint string `json:"fingerprint,omitempty"`
	// HandWritten marks a state that came from an entry without an event (the skill's own format):
	// its cooldown is derived from tripped_at since no open_until was written.
	HandWritten bool `json:"hand_written,omitempty"`
	// Unverified marks a circuit whose state since it last was at rest rests on an entry without
	// this user's provenance (hand-written, committed, merged in: ledger.Provenance): it counts
	// here, but it is never shared with other sessions and never held until a person acts.
	Unverified bool      `json:"unverified,omitempty"`
	LastAt     time.Time `json:"last_at,omitzero"`
	// Repeats are the loop guard's memory: the calls of this key that failed lately, by the hash
	// of their arguments, oldest first, at most MaxRepeats.
	Repeats []Repeat `json:"repeats,omitempty"`
	// Streak is the streak guard's memory: the calls of this tool that failed on their own terms
	// in a row, each with other arguments than the one before it.
	Streak Streak `json:"streak,omitzero"`
	// Worked records a success of this tool since its last counted failure: then a failure on
	// weak evidence only is held rather than counted (docs/classification.md, "Evidence over
	// calls").
	Worked bool `json:"worked,omitempty"`
	// Held is the failure held, when one is: recorded, not counted, until the next failure on
	// weak evidence says whether it was the tool's.
	Held Held `json:"held,omitzero"`
	// Empty is the tool's row of empty results (Empty).
	Empty Empty `json:"empty,omitzero"`
}

// Held is a failure of a tool held rather than counted: its text's shape, the hash of its call's
// arguments, how it failed, and when.
type Held struct {
	Shape string             `json:"shape"`
	Hash  string             `json:"hash,omitempty"`
	Type  ledger.FailureType `json:"type,omitempty"`
	Cause string             `json:"cause,omitempty"`
	At    time.Time          `json:"at,omitzero"`
}

// heldAt is the failure held as it stands at now: none once it is CallMemoryAge old.
func (c *Circuit) heldAt(now time.Time) Held {
	if c.Held.Shape == "" || now.Sub(c.Held.At) > CallMemoryAge {
		return Held{}
	}
	return c.Held
}

// Streak counts the calls of one tool that failed on their own terms (fault: call) in a row, with
// no success of the tool and no failure that counts between them (docs/circuits.md). A call that
// repeats the arguments of the one before it is the loop guard's: it neither adds to the streak
// nor breaks it, and neither does a call whose arguments are unknown.
type Streak struct {
	Count int `json:"count"`
	// Hash identifies the arguments of the last call counted.
	Hash string `json:"hash,omitempty"`
	// Type and Cause are how the last call counted failed, At when.
	Type  ledger.FailureType `json:"type,omitempty"`
	Cause string             `json:"cause,omitempty"`
	At    time.Time          `json:"at,omitzero"`
}

// CallMemoryAge is how long a streak of call errors and a failure held are remembered after the
// last call that made them: calls a day apart are not in a row, and compaction may then forget
// them.
const CallMemoryAge = 24 * time.Hour

// noteStreak counts the call error e on the streak, when its arguments are known and differ from
// the last call's; a streak whose last call is CallMemoryAge old starts over.
func (c *Circuit) noteStreak(e ledger.Entry) {
	if c.Streak.Count > 0 && e.At.Sub(c.Streak.At) > CallMemoryAge {
		c.Streak = Streak{}
	}
	if e.CallHash == "" || e.CallHash == c.Streak.Hash {
		return
	}
	c.Streak = Streak{Count: c.Streak.Count + 1, Hash: e.CallHash, Type: e.FailureType, Cause: e.Cause, At: e.At}
}

// Repeat is one call (one tool, one set of arguments) and how often in a row it failed the same way.
type Repeat struct {
	Hash  string             `json:"hash"`
	Type  ledger.FailureType `json:"type"`
	Cause string             `json:"cause,omitempty"`
	Count int                `json:"count"`
	// At is when it last failed: the guard's state expires a cooldown after it.
	At time.Time `json:"at"`
}

// MaxRepeats bounds the loop guard's memory per tool: a model retrying one bad call among a few
// others is caught, and the snapshot line of a circuit stays small whatever the history.
const MaxRepeats = 4

// repeat returns the loop guard's memory of the call with hash h, or nil.
func (c *Circuit) repeat(h string) *Repeat {
	if c == nil || h == "" {
		return nil
	}
	for i := range c.Repeats {
		if c.Repeats[i].Hash == h {
			return &c.Repeats[i]
		}
	}
	return nil
}

// noteRepeat counts a failure of the call with e's hash: once more when it failed the same way
// (type and cause) as before, else from one. The oldest call is forgotten past MaxRepeats.
func (c *Circuit) noteRepeat(e ledger.Entry) {
	r := Repeat{Hash: e.CallHash, Type: e.FailureType, Cause: e.Cause, Count: 1, At: e.At}
	kept := c.Repeats[:0:0]
	for _, old := range c.Repeats {
		if old.Hash == e.CallHash {
			if old.Type == r.Type && old.Cause == r.Cause {
				r.Count = old.Count + 1
			}
			continue
		}
		kept = append(kept, old)
	}
	if len(kept) >= MaxRepeats {
		kept = kept[len(kept)-MaxRepeats+1:]
	}
	c.Repeats = append(kept, r)
}

// dropRepeat forgets the call with hash h: it worked.
func (c *Circuit) dropRepeat(h string) {
	kept := c.Repeats[:0:0]
	for _, r := range c.Repeats {
		if r.Hash != h {
			kept = append(kept, r)
		}
	}
	if len(kept) == 0 {
		kept = nil
	}
	c.Repeats = kept
}

// AtRest reports whether the circuit is closed with nothing counted: what views list as no
// circuit at all, though the loop guard may still remember a call of it.
func (c *Circuit) AtRest() bool {
	return c == nil || (c.State == ledger.Closed && c.FailureCount == 0)
}

// Idle reports whether the circuit is closed with nothing counted, nothing in the guards' memory
// and nothing known of its calls: the same as no circuit at all.
func (c *Circuit) Idle() bool {
	return c == nil || (c.quiet() && !c.Worked)
}

// quiet reports whether c is closed with nothing counted, nothing in the guards' memory and no
// failure held: what it may still know is only that its tool worked.
func (c *Circuit) quiet() bool {
	return c.State == ledger.Closed && c.FailureCount == 0 && len(c.Repeats) == 0 && c.Streak.Count == 0 && c.Held.Shape == "" &&
		c.Empty.Count == 0
}

// OnlyWorked reports whether all c knows is that its tool worked since its last counted failure:
// kept (in the snapshot, for the next failure's weight), but nothing for the gate to decide, a
// person to reset or a probe to close, so those treat it as no circuit.
func (c *Circuit) OnlyWorked() bool {
	return c != nil && c.quiet() && c.Worked
}

// Shared is c as the fleet board may hold it: without what only this ledger knows of the calls
// (the guards' memory, the evidence over calls), which the board never shares.
func (c Circuit) Shared() Circuit {
	c.Repeats, c.Streak, c.Worked, c.Held, c.Empty = nil, Streak{}, false, Held{}, Empty{}
	return c
}

// KeepCalls gives c what l, the local circuit of the same key, knows of the calls: a circuit the
// fleet board decides still has this ledger's memory of them.
func (c *Circuit) KeepCalls(l *Circuit) {
	c.Repeats, c.Streak, c.Worked, c.Held, c.Empty = nil, Streak{}, false, Held{}, Empty{}
	if l != nil {
		c.Repeats, c.Streak, c.Worked, c.Held, c.Empty = l.Repeats, l.Streak, l.Worked, l.Held, l.Empty
	}
}

// Board is the set of circuits. The zero value is empty and ready to use.
type Board struct {
	Circuits map[string]*Circuit `json:"circuits"`
	// Runs are the runaway guard's memory, by session id (Run): kept in the snapshot's header,
	// at most MaxRuns of them.
	Runs map[string]*Run `json:"-"`

	// decisions counts Gate's decisions on this board (Decisions).
	decisions int
	// Damage is what the ledger reader could not read: each damaged item is left out and every
	// other item counts.
	Damage Damage `json:"-"`
	// Partial marks a board read backwards from a large ledger's end without a usable snapshot:
	// it holds only the circuits a Bound asked for (none for a reader that asked for none).
	Partial bool `json:"-"`
	// Undecided are the asked-for circuits whose state a bounded read could not establish
	// before Bound.StopBy (a huge ledger on a loaded machine): the board does not hold them.
	Undecided []Undecided `json:"-"`
	// IndexNote, beside Undecided, says why the trip index could not tell whether they were
	// tripped, when it could not be relied on ("" when it covers the whole ledger): what the
	// answer that follows on_error says.
	IndexNote string `json:"-"`
}

// Undecided is a circuit a bounded read ran out of time for.
type Undecided struct {
	Key string
	// Tripped says the ledger has opened it at some point (an OPEN or HALF-OPEN entry, or a
	// call blocked on it, was seen): "fail safe on what is known" denies its calls.
	Tripped bool
}

// UndecidedOf returns the undecided circuits among the circuits of tool (its own and its
// server's), the tripped ones first; nil when the board decides them all.
func (b *Board) UndecidedOf(tool string) []Undecided {
	var out []Undecided
	for _, u := range b.Undecided {
		if slices.Contains(ledger.Key(tool).Circuits(), u.Key) {
			out = append(out, u)
		}
	}
	slices.SortStableFunc(out, func(a, b Undecided) int {
		if a.Tripped == b.Tripped {
			return 0
		}
		if a.Tripped {
			return -1
		}
		return 1
	})
	return out
}

// UndecidedError is returned by a locked update whose board left some circuits undecided: nothing
// is appended on what is not known.
type UndecidedError struct {
	Keys []Undecided
	// Note says why the trip index could not tell (Board.IndexNote), "" when it could be relied on.
	Note string
}

func (e *UndecidedError) Error() string {
	keys := make([]string, len(e.Keys))
	for i, u := range e.Keys {
		keys[i] = u.Key
	}
	msg := fmt.Sprintf("the state of %s could not be read from the ledger within the hook's budget (a large ledger without a usable snapshot)", strings.Join(keys, ", "))
	if e.Note != "" {
		msg += "; " + e.Note
	}
	return msg
}

// Damage is the ledger text a reader left out, item by item.
type Damage struct {
	// Count is the number of problems found; Problems holds the first MaxDamageKept of them.
	Count    int              `json:"count,omitempty"`
	Problems []ledger.Problem `json:"problems,omitempty"`
	// Entries counts the entries read, so that a ledger of which nothing at all could be read is
	// told from one with a damaged item among good ones.
	Entries int `json:"entries,omitempty"`
}

// MaxDamageKept bounds the problems a board keeps: enough to point at the lines, flat in memory.
const MaxDamageKept = 5

// Add records problems (those that leave text unread) and n entries read.
func (d *Damage) Add(problems []ledger.Problem, n int) {
	d.Entries += n
	for _, p := range problems {
		if !p.Damage() {
			continue
		}
		d.Count++
		if len(d.Problems) < MaxDamageKept {
			d.Problems = append(d.Problems, p)
		}
	}
}

// Unreadable reports whether problems were found and not one entry could be read: then nothing is
// known, and the gate follows on_error.
func (d Damage) Unreadable() bool { return d.Count > 0 && d.Entries == 0 }

// Summary says what was left out and how to repair it, in one line: "" when nothing was.
func (d Damage) Summary(path string) string {
	if d.Count == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d damaged item(s) left out, every other entry counts (", path, d.Count)
	for i, p := range d.Problems {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.String())
	}
	if d.Count > len(d.Problems) {
		b.WriteString("; …")
	}
	b.WriteString("); run 'mcp-circuit-breaker ledger verify', then 'mcp-circuit-breaker ledger repair'")
	return b.String()
}

// Get returns the circuit of key, or nil when it has no history.
func (b *Board) Get(key string) *Circuit {
	if b.Circuits == nil {
		return nil
	}
	return b.Circuits[key]
}

// Keys returns every key with a circuit, sorted.
func (b *Board) Keys() []string {
	keys := make([]string, 0, len(b.Circuits))
	for k := range b.Circuits {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Clone returns a deep copy, so that decisions can try entries out without changing b.
func (b *Board) Clone() *Board {
	n := &Board{Circuits: make(map[string]*Circuit, len(b.Circuits)), Runs: cloneRuns(b.Runs), Damage: b.Damage, Partial: b.Partial, Undecided: b.Undecided}
	for k, c := range b.Circuits {
		cc := *c
		cc.Repeats = append([]Repeat(nil), c.Repeats...)
		n.Circuits[k] = &cc
	}
	return n
}

// Apply moves the board by one ledger entry. Entries written by hand following the skill (no event)
// are understood: OPEN is a trip at tripped_at, CLOSED with reset_at is a reset.
func (b *Board) Apply(e ledger.Entry) {
	if b.Circuits == nil {
		b.Circuits = make(map[string]*Circuit)
	}
	c := b.Circuits[e.Tool]
	if c == nil {
		c = &Circuit{Key: e.Tool, State: ledger.Closed}
		b.Circuits[e.Tool] = c
	}
	prev := c.State
	b.noteRun(e)
	// A server name is shown in texts for the model: only one that is a server name of this key
	// is kept (a hand-written entry's server: may hold words meant to speak as us).
	if e.Server != "" && ledger.ServerName(e.Server, ledger.Key(e.Tool)) == e.Server {
		c.Server = e.Server
	}
	if !e.At.IsZero() {
		c.LastAt = e.At
	}
	switch e.Event {
	case ledger.EventBlocked, ledger.EventWouldBlock:
		if e.Cause == CauseStreakGuard {
			c.Streak = Streak{} // denied once: the streak starts over
		}
		c.Blocked++
		return
	}
	switch e.Event {
	case ledger.EventFailure, ledger.EventTrip:
		c.Empty = Empty{} // a failure is not an empty result: the row of them ends
	}
	// A circuit at rest that knows nothing but that its tool worked is, for what follows, no
	// circuit at all but that: its past may go (compaction forgets it), so nothing of it is kept.
	wasIdle := c.Idle() || c.OnlyWorked()
	defer c.vouch(prev, e)
	if e.CallHash != "" {
		switch e.Event {
		case ledger.EventFailure, ledger.EventTrip:
			c.noteRepeat(e)
		case ledger.EventSuccess:
			c.dropRepeat(e.CallHash)
		}
	}
	if IsHeld(e) {
		// A failure held, not counted: the circuit stands as it was (its count kept, as for a
		// call error), with the failure in its memory until the next one weighs it. Only a tool
		// that worked holds one, so the entry says that too: a reader that replays from it (a
		// backward read) knows it.
		if wasIdle {
			*c = Circuit{Key: c.Key, Server: c.Server, State: ledger.Closed, LastAt: c.LastAt, Repeats: c.Repeats}
		}
		c.Held = Held{Shape: e.HeldShape, Hash: e.CallHash, Type: e.FailureType, Cause: e.Cause, At: e.At}
		c.FailureCount, c.Worked = e.FailureCount, true
		return
	}
	if e.Fault == ledger.FaultCall && e.Event == ledger.EventFailure {
		// The call's own failure moves no circuit. Its count is the circuit's as it stood, kept
		// so that a reader replaying from this entry (a bounded read) has it.
		if wasIdle {
			// An idle circuit is no circuit at all (the snapshot drops it): its past is not kept.
			*c = Circuit{Key: c.Key, Server: c.Server, State: ledger.Closed, LastAt: c.LastAt, Repeats: c.Repeats, Worked: c.Worked}
		}
		if e.Source != ledger.SourceShared {
			c.noteStreak(e)
		}
		c.FailureCount = e.FailureCount
		if c.State == ledger.HalfOpen && e.State == ledger.HalfOpen && !e.LeaseUntil.IsZero() {
			c.LeaseUntil = e.LeaseUntil
		}
		return
	}
	if e.Event == ledger.EventSuccess && c.Idle() {
		// A success of a tool with nothing counted (written to end its session's failures in a
		// row, the runaway guard) starts from no circuit at all, as a reader of the snapshot,
		// which leaves idle circuits out, starts from.
		*c = Circuit{Key: c.Key, Server: c.Server, State: ledger.Closed, LastAt: c.LastAt}
	}
	cause := e.Cause
	if e.Event == ledger.EventSuccess {
		if !ledger.Key(e.Tool).IsServer() && e.Source != ledger.SourceShared {
			c.noteEmpty(e)
		}
		cause = "" // a success's cause says how its result was (empty_result), not why a circuit failed
	}
	switch {
	case e.Event == ledger.EventSuccess || e.Event == ledger.EventReset || IsFailure(prev, e):
		// A success of the tool, a person's reset, or a failure that counts ends a streak of
		// calls failing on their own terms (they are no longer in a row), and settles the
		// failure held: it was about its call, or it counted with this one.
		c.Streak, c.Held = Streak{}, Held{}
		// Whether the tool worked since its last counted failure: a success says so; a counted
		// failure, or a reset by a person who knows nothing of the calls, says no more.
		c.Worked = e.Event == ledger.EventSuccess && !ledger.Key(e.Tool).IsServer()
	}
	c.FailureCount = e.FailureCount
	if e.FailureType != "" {
		c.FailureType = e.FailureType
	}
	if cause != "" {
		c.Cause = cause
	}
	if e.Error != "" {
		c.Error = e.Error
	}
	if e.RetryAfter > 0 {
		c.RetryAfter = e.RetryAfter
	}
	c.State = e.State
	switch e.State {
	case ledger.Open:
		if Opens(prev, e) {
			switch prev {
			case ledger.HalfOpen, ledger.Open:
				c.Level++
			default:
				c.Level = 0
			}
			c.TrippedAt = e.TrippedAt
			if c.TrippedAt.IsZero() {
				c.TrippedAt = e.At
			}
			c.OpenUntil = e.OpenUntil
			c.Blocked = 0
			c.Fingerprint = e.Fingerprint
			c.HandWritten = e.Event == ""
			c.LeaseUntil = time.Time{}
			c.ResetAt, c.ResetMethod = time.Time{}, ""
		}
	case ledger.HalfOpen:
		c.LeaseUntil = e.LeaseUntil
	case ledger.Closed:
		if prev != ledger.Closed || !e.ResetAt.IsZero() {
			c.ResetAt = e.ResetAt
			if c.ResetAt.IsZero() {
				c.ResetAt = e.At
			}
			c.ResetMethod = e.ResetMethod
			c.Level = 0
			// The blocked calls belong to the episode that ends here: an idle circuit must equal
			// no circuit at all (the snapshot leaves idle ones out, compaction drops their past).
			c.Blocked = 0
			c.OpenUntil, c.LeaseUntil = time.Time{}, time.Time{}
			c.RetryAfter = 0
			c.HandWritten = false
			// The calls that failed while it was not CLOSED failed with the tool: after its
			// recovery they may well work, so the loop guard forgets them.
			if prev != ledger.Closed {
				c.Repeats = nil
			}
		}
		if e.FailureCount == 0 && prev == ledger.Closed && e.Event == ledger.EventSuccess {
			c.Cause, c.Error = "", ""
		}
	}
}

// vouch updates c.Unverified after e moved c from prev. A circuit at rest owes nothing to its
// past. Otherwise an entry without this user's provenance makes what follows rest on it, until
// this user's gate itself observed what the state is: a trip out of HALF-OPEN or OPEN (a trial or
// probe failed here), a trip by hand (the user's own), or the fleet board's record (source:
// shared, written by this gate from what the board holds).
func (c *Circuit) vouch(prev ledger.State, e ledger.Entry) {
	switch {
	case c.AtRest():
		c.Unverified = false
	case !e.Verified:
		c.Unverified = true
	case Opens(prev, e) && (prev != ledger.Closed || e.Cause == CauseManualTrip || e.Source == ledger.SourceShared):
		c.Unverified = false
	}
}

// Replay applies entries in order.
func (b *Board) Replay(entries []ledger.Entry) {
	for _, e := range entries {
		b.Apply(e)
	}
}

// jitter returns a factor in [1-j, 1+j] that depends only on the key and the trip time, so the
// same ledger and the same clock give the same open_until.
func jitter(key string, at time.Time, j float64) float64 {
	if j <= 0 {
		return 1
	}
	h := fnv.New64a()
	h.Write([]byte(key))
	var buf [8]byte
	n := uint64(at.UnixNano())
	for i := range buf {
		buf[i] = byte(n >> (8 * i))
	}
	h.Write(buf[:])
	u := float64(h.Sum64()>>11) / float64(1<<53) // [0,1)
	return 1 + j*(2*u-1)
}

// cooldown is how long a trip at level stays OPEN before a trial: base doubled per re-trip, capped,
// with jitter on re-trips only (so the first cooldown is exactly the base the skill promises), and
// never shorter than an upstream retry hint (itself capped at 1 h).
func cooldown(r Effective, key string, level int, at time.Time, hint time.Duration) time.Duration {
	d := r.Cooldown
	for i := 0; i < level && d < r.CooldownCap; i++ {
		d *= 2
	}
	if d > r.CooldownCap {
		d = r.CooldownCap
	}
	if level > 0 {
		d = time.Duration(float64(d) * jitter(key, at, r.Jitter)).Round(time.Millisecond)
		// Jitter spreads re-trials below the cap, never past it: open_until stays within now + cap.
		d = min(d, r.CooldownCap)
	}
	if hint > MaxRetryHint {
		hint = MaxRetryHint
	}
	if hint > d {
		d = hint
	}
	return d
}
