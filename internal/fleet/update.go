package fleet

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// maxAttempts bounds the read-decide-write rounds of one Update when other sessions keep winning
// the race (each round is two round trips, and the caller's context bounds them all); after them
// the decision is made on local state.
const maxAttempts = 16

// callFault reports whether e is a failure of the call itself (fault: call), or one held until
// the next failure says whose it is: it says nothing yet of the server or the credential, so it is
// never shared.
func callFault(e ledger.Entry) bool { return states.IsCallError(e) || states.IsHeld(e) }

// rank orders circuits by how much they block: a circuit only a person can close, then an OPEN one
// (the later trial first), then a trial in flight.
func rank(c *states.Circuit, now time.Time) (int, time.Time) {
	switch c.State {
	case ledger.Open:
		if c.OpenUntil.IsZero() || c.FailureType == ledger.AdminGated {
			return 3, time.Time{}
		}
		return 2, c.OpenUntil
	case ledger.HalfOpen:
		if now.Before(c.LeaseUntil) {
			return 1, c.LeaseUntil
		}
	}
	return 0, time.Time{}
}

// stronger reports whether a blocks more than b.
func stronger(a, b *states.Circuit, now time.Time) bool {
	ra, ta := rank(a, now)
	rb, tb := rank(b, now)
	if ra != rb {
		return ra > rb
	}
	if !ta.Equal(tb) {
		return ta.After(tb)
	}
	return a.TrippedAt.After(b.TrippedAt)
}

// inForce is the record that decides a local key among its records when the board decides: the
// one that blocks most when any is not CLOSED, else the one of scope prefer (an idle one when the
// board has none there), else the highest count. Nil when the board has no usable record.
func inForce(recs []Record, prefer string, now time.Time) *Record {
	var best *Record
	for i := range recs {
		r := &recs[i]
		if r.Circuit == nil || r.Circuit.State == ledger.Closed {
			continue
		}
		if best == nil || stronger(r.Circuit, best.Circuit, now) {
			best = r
		}
	}
	if best != nil {
		return best
	}
	any := false
	for i := range recs {
		r := &recs[i]
		if r.Circuit == nil {
			continue
		}
		any = true
		if prefer == "" && (best == nil || r.Circuit.FailureCount > best.Circuit.FailureCount) {
			best = r
		}
		if prefer != "" && r.Scope == prefer {
			best = r
		}
	}
	if best == nil && prefer != "" && any {
		for i := range recs {
			if recs[i].Scope == prefer {
				r := recs[i]
				r.Circuit = nil
				return &r // the failure's own scope has no count yet
			}
		}
	}
	return best
}

// recordAt returns the record of scope among recs, nil when there is none.
func recordAt(recs []Record, scope string) *Record {
	for i := range recs {
		if recs[i].Scope == scope {
			return &recs[i]
		}
	}
	return nil
}

// localWins reports whether the local circuit decides over the board: a trip this session made
// while the board was away, that the board has not seen (no record of that trip in its scope) and
// that no later change in that scope followed. A record dated in the future is no later change:
// failing safe on what is known, such a trip is pushed to the board by the next write instead of
// being undone by a hostile or far-ahead clock.
//
// A record dated before the local trip never undoes it, whatever trip time it names: only a
// change made after it (within the clock slack), or a record of that very trip still open (the
// board has seen it), decides over it.
func localWins(l *states.Circuit, recs []Record, id Identity) bool {
	if l == nil || l.State == ledger.Closed {
		return false
	}
	r := recordAt(recs, id.ScopeFor(l.FailureType))
	if r == nil || r.Circuit == nil || r.Future {
		return true
	}
	if r.Circuit.LastAt.After(l.TrippedAt) {
		return false // changed after the trip (another session's trial closed it, say)
	}
	if !r.Circuit.TrippedAt.Equal(l.TrippedAt) {
		return true // older news
	}
	// The record of this very trip: still open, the board has seen it; closed, it is the close
	// of it by a session whose clock may run a little behind, but not one dated before the trip
	// by more than clocks differ (or undated), which is older news or forged.
	return r.Circuit.State == ledger.Closed && r.Circuit.LastAt.Before(l.TrippedAt.Add(-ClockSlack))
}

// choice is what decided a local key: the board's record (taken) or the local circuit.
type choice struct {
	rec   *Record // nil: the local circuit decides
	local bool    // the local circuit won over records the board has
}

// overlay returns a copy of local in which the circuits of recs' keys are the board's where the
// board decides, and which record decided each key.
func overlay(local *states.Board, recs map[string][]Record, id Identity, prefer map[string]string, now time.Time) (*states.Board, map[string]choice) {
	work := local.Clone()
	if work.Circuits == nil {
		work.Circuits = map[string]*states.Circuit{}
	}
	chosen := map[string]choice{}
	for k, rs := range recs {
		l := local.Get(k)
		var r *Record
		if localWins(l, rs, id) {
			// A circuit of another scope that blocks more still blocks.
			s := inForce(rs, "", now)
			if s == nil || s.Circuit == nil || s.Circuit.State == ledger.Closed || !stronger(s.Circuit, l, now) {
				chosen[k] = choice{local: true}
				continue
			}
			r = s
		} else {
			r = inForce(rs, prefer[k], now)
		}
		if r == nil {
			continue
		}
		chosen[k] = choice{rec: r}
		if r.Circuit == nil {
			if l != nil && l.State == ledger.Closed {
				delete(work.Circuits, k) // idle in the failure's scope
			}
			continue
		}
		c := *r.Circuit
		if l != nil && l.TrippedAt.Equal(c.TrippedAt) {
			c.Fingerprint = l.Fingerprint // the same trip, seen on this machine too
		}
		// What this ledger knows of the calls is this session's own: never the board's.
		c.KeepCalls(local.Get(k))
		work.Circuits[k] = &c
	}
	return work, chosen
}

// syncEntry is the local ledger entry that records what the board says of a circuit when the
// local record differs: what this session saw, marked source: shared. It returns false when the
// local record already agrees.
func syncEntry(local, sh *states.Circuit, now time.Time, sessionID string) (ledger.Entry, bool) {
	l := local
	if l == nil {
		l = &states.Circuit{Key: sh.Key, State: ledger.Closed}
	}
	if l.State == sh.State && l.FailureCount == sh.FailureCount && l.TrippedAt.Equal(sh.TrippedAt) &&
		l.OpenUntil.Equal(sh.OpenUntil) && sameLease(l, sh, now) {
		return ledger.Entry{}, false
	}
	e := ledger.Entry{Tool: sh.Key, State: sh.State, FailureType: sh.FailureType, FailureCount: sh.FailureCount,
		TrippedAt: sh.TrippedAt, At: now, Server: sh.Server, Cause: sh.Cause, Error: sh.Error,
		RetryAfter: sh.RetryAfter, SessionID: sessionID, Source: ledger.SourceShared, Verified: true}
	switch sh.State {
	case ledger.Open:
		e.Event, e.OpenUntil = ledger.EventTrip, sh.OpenUntil
		if l.State == ledger.Open && l.TrippedAt.Equal(sh.TrippedAt) {
			e.Event = ledger.EventFailure // the same trip: only the count moved
		}
	case ledger.HalfOpen:
		e.Event, e.LeaseUntil = ledger.EventHalfOpen, sh.LeaseUntil
	default:
		e.Event = ledger.EventFailure
		if l.State != ledger.Closed || sh.FailureCount == 0 {
			e.Event = ledger.EventSuccess
		}
		if l.State != ledger.Closed {
			e.ResetAt, e.ResetMethod = sh.ResetAt, sh.ResetMethod
			if e.ResetAt.IsZero() {
				e.ResetAt = now
			}
			if e.ResetMethod == "" {
				e.ResetMethod = ledger.ResetProbeSuccess
			}
		}
	}
	return e, true
}

// sameLease reports whether the local circuit l and the board's sh hold the same trial permit as
// of now: the same lease end, or, both HALF-OPEN, two ends still running within ClockSlack of each
// other. The board's lease end is its remaining time added to this run's clock (decode), so it
// moves a little with every read of one permit: were each read a new permit, every call blocked
// while a trial runs would append an entry that rewrites the snapshot under the ledger lock, and
// a project's concurrent hooks would queue on it past their budget for the board.
func sameLease(l, sh *states.Circuit, now time.Time) bool {
	if l.LeaseUntil.Equal(sh.LeaseUntil) {
		return true
	}
	if l.State != ledger.HalfOpen || !now.Before(l.LeaseUntil) || !now.Before(sh.LeaseUntil) {
		return false
	}
	d := l.LeaseUntil.Sub(sh.LeaseUntil)
	return d <= ClockSlack && d >= -ClockSlack
}

// Result says how an Update went with the board.
type Result struct {
	// Shared is set when the decision was made on, and written to, the board.
	Shared bool
	// Away is the reason the board could not be used, nil when it was.
	Away error
	// Synced counts the entries that recorded the board's state in the local ledger.
	Synced int
	// Clipped counts board records whose texts were clipped before use; Refused those that could
	// not be used at all, and RefusedWhy says why the first was.
	Clipped, Refused int
	RefusedWhy       string
}

// Binding is the board bound to the keys of one server for one hook run or command: it is what
// states.Store.Shared holds, so that every View and Update of the store goes through the board.
type Binding struct {
	board     *Board
	ctx       context.Context
	id        Identity
	keys      []string
	now       time.Time
	sessionID string
	machine   string
	// from is, per local key, the board record that decided it in the last View or Update.
	from map[string]Record
	// held is set once the board refused a permit because one runs by its clock: this session's
	// policy may have a shorter lease than the holder's, which states would take for a lease
	// written by a clock running ahead; the board's clock decides instead.
	held bool
	// latest, when set, is the latest an exchange with the board may end, however long the run
	// waited for the ledger lock (SetLatest).
	latest time.Time
	// Last is how the last View or Update went with the board.
	Last Result
}

// Bind returns the board bound to keys (local keys of id's server) at now; sessionID goes on the
// entries that record the board's state, and loc says which machine this is.
func (b *Board) Bind(ctx context.Context, id Identity, keys []string, now time.Time, sessionID string, loc Local) *Binding {
	return &Binding{board: b, ctx: ctx, id: id, keys: keys, now: now, sessionID: sessionID, machine: short("machine", loc.Machine)}
}

// Board returns the board.
func (bd *Binding) Board() *Board { return bd.board }

// Identity returns the identity the binding shares circuits by.
func (bd *Binding) Identity() Identity { return bd.id }

// SetSession sets the session id the entries recording the board's state carry, when the binding
// was made before it was known.
func (bd *Binding) SetSession(id string) { bd.sessionID = id }

// SetLatest sets the latest an exchange with the board may end when the run waited for the ledger
// lock before it (the hook's deadline less the time it needs to answer); zero: the binding's
// context alone bounds it.
func (bd *Binding) SetLatest(t time.Time) { bd.latest = t }

// Widen adds keys (of the same server) to the binding, for a decision that closes more than the
// call's own circuits (reset --all, a healthy probe of the server).
func (bd *Binding) Widen(keys []string) {
	for _, k := range keys {
		if ledger.Key(k).Server() == bd.id.Server && !contains(bd.keys, k) {
			bd.keys = append(bd.keys, k)
		}
	}
}

// Origin says where a circuit the board decided came from, for the texts that deny a call
// because of it: "opened by 3 sessions on 2 machines since 09:12 UTC (the fleet-shared board)";
// "" when the local circuit decided.
func (bd *Binding) Origin(key string) string {
	r, ok := bd.from[key]
	if !ok || r.Circuit == nil || r.Circuit.State == ledger.Closed {
		return ""
	}
	s, m := max(len(r.Who.Sessions), 1), max(len(r.Who.Machines), 1)
	plural := func(n int, one string) string {
		if n == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %ss", n, one)
	}
	shared := "its endpoint"
	switch {
	case r.Scope == bd.id.Credential && r.Scope != bd.id.Outage:
		shared = "this credential"
	case bd.id.Kind == "machine":
		shared = "this machine's server"
	case bd.id.Kind != "endpoint":
		shared = "this machine and user"
	}
	return fmt.Sprintf("opened by %s on %s since %s (the fleet-shared board, shared by %s)",
		plural(s, "session"), plural(m, "machine"), r.Circuit.TrippedAt.UTC().Format("15:04 UTC"), shared)
}

func (bd *Binding) note(recs map[string][]Record) {
	for _, rs := range recs {
		for _, r := range rs {
			if r.Clipped {
				bd.Last.Clipped++
			}
			if r.Refused != "" {
				if bd.Last.Refused == 0 {
					bd.Last.RefusedWhy = r.Refused
				}
				bd.Last.Refused++
			}
		}
	}
}

func (bd *Binding) remember(chosen map[string]choice) {
	bd.from = map[string]Record{}
	for k, ch := range chosen {
		if ch.rec != nil {
			bd.from[k] = *ch.rec
		}
	}
}

// Overlay reads the keys' circuits from the board (one round trip) and lays them over local; on
// error it returns local unchanged and records the error in Last.Away.
func (bd *Binding) Overlay(local *states.Board) *states.Board {
	if len(bd.keys) == 0 || bd.Last.Away != nil {
		return local
	}
	recs, err := bd.board.Read(bd.ctx, bd.id, bd.keys, bd.now)
	if err != nil {
		bd.Last = Result{Away: err}
		return local
	}
	bd.Last = Result{Shared: true}
	bd.note(recs)
	work, chosen := overlay(local, recs, bd.id, nil, bd.now)
	bd.remember(chosen)
	return work
}

// errWiden restarts an Update whose decision touched keys it had not read.
var errWiden = errors.New("the decision touched circuits not read from the board")

// Update is the shared form of states.Store.Update for a decision about the bound keys; local is
// the store's own locked update. It reads the keys' circuits from the board (one round trip), and
// under the ledger lock records in the local ledger where the board differs (entries with source:
// shared: what this session learned, not calls it made), runs decide on the local board overlaid
// with the board's circuits, writes the changed circuits back to the scopes they are shared by,
// with a generation check, and appends the decision's entries, which keep their own source. When
// another session won the race it reads again and decides again; when the decision touched other
// circuits of the server (a close of every tool) they are read too and it decides again. When the
// board is away (error, timeout) decide runs on local state alone, as without a board: never
// slower than the timeout, never a denial because of the board.
//
// The lock is held across the write, which is bounded by the board's timeout: the order of the
// board's changes and of this ledger's entries must agree.
func (bd *Binding) Update(decide func(*states.Board) ([]ledger.Entry, error),
	local func(func(*states.Board) ([]ledger.Entry, error)) (*states.Board, error)) (*states.Board, error) {
	if len(bd.keys) == 0 || bd.Last.Away != nil {
		// Found away earlier in this run: one wait for the board per run is enough.
		return local(decide)
	}
	b, now := bd.board, bd.now
	// The waits for the ledger lock are not the board's time: the project's other hooks queued on
	// it, and an exchange that found the run's bound spent there would say a board that answers
	// is away, and lose the decision's blocked count.
	var queued time.Duration
	for range maxAttempts {
		rctx, cancel := bd.after(queued)
		recs, err := b.Read(rctx, bd.id, bd.keys, now)
		cancel()
		if err != nil {
			bd.Last = Result{Away: err}
			return local(decide)
		}
		var res Result
		asked := time.Now()
		board, err := local(func(lb *states.Board) ([]ledger.Entry, error) {
			res = Result{}
			queued += time.Since(asked)
			wctx, cancel := bd.after(queued)
			defer cancel()
			var prefer map[string]string
			for round := 0; ; round++ {
				work, chosen := overlay(lb, recs, bd.id, prefer, now)
				if bd.held {
					holdLeases(work, chosen, now)
				}
				entries, err := decide(work)
				if err != nil {
					return nil, err
				}
				for _, e := range entries {
					if ledger.Key(e.Tool).Server() == bd.id.Server && !contains(bd.keys, e.Tool) {
						bd.Widen([]string{e.Tool})
						return nil, errWiden
					}
				}
				if want := failureScopes(entries, chosen, bd.id); round == 0 && len(want) > 0 {
					// A failure counts on its own scope: decide again on that scope's count.
					prefer = want
					continue
				}
				var sync []ledger.Entry
				for _, k := range bd.keys {
					if ch := chosen[k]; ch.rec != nil && ch.rec.Circuit != nil {
						if e, ok := syncEntry(lb.Get(k), ch.rec.Circuit, now, bd.sessionID); ok {
							sync = append(sync, e)
						}
					}
				}
				after := work.Clone()
				after.Replay(entries)
				writes := bd.plan(recs, chosen, entries, work, after)
				bd.remember(chosen)
				if werr := b.Write(wctx, bd.id, now, writes); werr != nil {
					if errors.Is(werr, ErrConflict) {
						return nil, werr
					}
					// The board went away between read and write: the decision stands on what was
					// known, recorded as this session's own.
					res.Away = werr
					return append(sync, entries...), nil
				}
				res.Shared, res.Synced = true, len(sync)
				return append(sync, entries...), nil
			}
		})
		if errors.Is(err, ErrPermitHeld) {
			bd.held = true
		}
		if errors.Is(err, ErrConflict) || errors.Is(err, errWiden) {
			continue
		}
		bd.Last = res
		bd.note(recs)
		return board, err
	}
	bd.Last = Result{Away: errors.New("the shared board kept changing under this decision")}
	return local(decide)
}

// after returns the context for an exchange made after waiting for waited on something that is
// not the board: the binding's, its deadline moved on by waited, but never past SetLatest's.
func (bd *Binding) after(waited time.Duration) (context.Context, context.CancelFunc) {
	end, ok := bd.ctx.Deadline()
	if !ok || waited <= 0 || bd.ctx.Err() != nil && !errors.Is(bd.ctx.Err(), context.DeadlineExceeded) {
		return bd.ctx, func() {}
	}
	end = end.Add(waited)
	if !bd.latest.IsZero() && end.After(bd.latest) {
		end = bd.latest
	}
	return context.WithDeadline(context.WithoutCancel(bd.ctx), end)
}

// minLease is the shortest lease a policy allows.
const minLease = time.Second

// holdLeases makes the trial permits the board holds by its clock live under any policy: their
// ends are brought within the shortest lease a policy allows, so that states sees a trial in
// flight rather than a lease from a clock running ahead.
func holdLeases(work *states.Board, chosen map[string]choice, now time.Time) {
	for k, ch := range chosen {
		c := work.Get(k)
		if ch.rec == nil || c == nil || c.State != ledger.HalfOpen || !now.Before(c.LeaseUntil) {
			continue
		}
		if end := now.Add(minLease); c.LeaseUntil.After(end) {
			c.LeaseUntil = end
		}
	}
}

// failureScopes returns, for each key whose decision counted a failure of a scope other than the
// CLOSED record it was decided on, that failure's scope.
func failureScopes(entries []ledger.Entry, chosen map[string]choice, id Identity) map[string]string {
	var want map[string]string
	for _, e := range entries {
		if !countsFailure(e) || callFault(e) {
			continue
		}
		ch := chosen[e.Tool]
		if ch.rec == nil || ch.rec.Circuit != nil && ch.rec.Circuit.State != ledger.Closed {
			continue
		}
		if sc := id.ScopeFor(e.FailureType); sc != ch.rec.Scope {
			if want == nil {
				want = map[string]string{}
			}
			want[e.Tool] = sc
		}
	}
	return want
}

// countsFailure reports whether e records a failure (counted, tripping, or a failed probe).
func countsFailure(e ledger.Entry) bool {
	switch e.Event {
	case ledger.EventFailure, ledger.EventTrip:
		return e.FailureType != ""
	case ledger.EventProbe:
		return e.State != ledger.Closed
	}
	return false
}

// plan turns a decision into writes for the board. Per key: a close goes to every scope the board
// holds a circuit in (the server answered and the credential worked); a failure or trip to the
// scope of its type (never a call's own failure); a trial permit to the scope of the circuit it
// tries; blocked counts to the circuit that blocked, with no generation check since increments
// commute; and a trip this session made while the board was away to its scope.
func (bd *Binding) plan(recs map[string][]Record, chosen map[string]choice, entries []ledger.Entry, before, after *states.Board) []Write {
	var writes []Write
	for _, k := range bd.keys {
		var es []ledger.Entry
		for _, e := range entries {
			if e.Tool == k && !localOnly(e, before.Get(k)) {
				es = append(es, e)
			}
		}
		if len(es) == 0 {
			continue
		}
		c := after.Get(k)
		if c != nil && c.Unverified {
			// Its state rests on entries this user's gate did not write (a committed or
			// merged-in ledger): it counts here, and never on the board, where it would block
			// every teammate (docs/security.md, provenance). Its close, once this gate sees
			// one, is verified and goes out like any other.
			continue
		}
		if c != nil {
			// What this ledger knows of the calls (the guards' memory, the evidence over calls)
			// is this session's own: never the board's.
			cc := c.Shared()
			c = &cc
		}
		ch := chosen[k]
		blocked, changed, trip, callOnly := 0, false, false, true
		var ftype ledger.FailureType
		var lease time.Duration
		for _, e := range es {
			switch {
			case isCounter(e):
				blocked++
				continue
			case e.Event == ledger.EventHalfOpen:
				lease = e.LeaseUntil.Sub(bd.now)
			}
			changed = true
			if countsFailure(e) {
				if callFault(e) {
					continue
				}
				ftype = e.FailureType
			}
			callOnly = false
			if e.Event == ledger.EventTrip || e.Event == ledger.EventProbe && e.State == ledger.Open {
				trip = true
			}
		}
		inScope := func() string {
			if ch.rec != nil {
				return ch.rec.Scope
			}
			if c != nil {
				return bd.id.ScopeFor(c.FailureType)
			}
			return bd.id.Outage
		}
		switch {
		case changed && callOnly:
			// A call's own failure: recorded locally, never shared.
		case changed && c != nil && c.State == ledger.Closed && c.FailureCount == 0:
			for _, r := range recs[k] {
				if r.Circuit == nil || r.Circuit.Idle() {
					continue
				}
				cc := *c
				writes = append(writes, Write{Key: k, Scope: r.Scope, Gen: r.Gen, Circuit: &cc, ResetBlocked: true, ClearWho: true})
			}
			continue
		case changed && c != nil:
			scope := inScope()
			if ftype != "" {
				scope = bd.id.ScopeFor(ftype)
			}
			w := Write{Key: k, Scope: scope, Circuit: c, Lease: lease}
			r := recordAt(recs[k], scope)
			who := Who{}
			if r != nil {
				w.Gen, who = r.Gen, r.Who
			}
			if ftype != "" {
				who.add(short("session", bd.sessionID), bd.machine)
				w.Who = &who
			}
			if trip || r == nil || r.Circuit == nil {
				w.ResetBlocked, w.Blocked = true, c.Blocked
			}
			if scope == inScope() {
				w.Blocked += blocked
				blocked = 0
			}
			writes = append(writes, w)
		case ch.local && c != nil:
			// A trip this session made while the board was away, unseen by it: pushed.
			scope := bd.id.ScopeFor(c.FailureType)
			w := Write{Key: k, Scope: scope, Circuit: c, ResetBlocked: true, Blocked: c.Blocked}
			if r := recordAt(recs[k], scope); r != nil {
				w.Gen = r.Gen
			}
			who := Who{}
			who.add(short("session", bd.sessionID), bd.machine)
			w.Who = &who
			writes = append(writes, w)
			blocked = 0
		}
		if blocked > 0 && ch.rec != nil {
			writes = append(writes, Write{Key: k, Scope: ch.rec.Scope, Blocked: blocked})
		}
	}
	return writes
}

// localOnly reports whether e concerns this session's own calls only, which the board never
// shares: a call that failed on its own terms, a failure held rather than counted, a call the loop
// guard, the streak guard or the runaway guard held back, and a success that only cleared what the circuit knew of its
// calls (the circuit, prev, had nothing counted).
func localOnly(e ledger.Entry, prev *states.Circuit) bool {
	switch {
	case states.IsCallError(e), states.IsHeld(e):
		return true
	case isCounter(e):
		return e.Cause == states.CauseLoopGuard || e.Cause == states.CauseStreakGuard || e.Cause == states.CauseRunaway
	case e.Event == ledger.EventSuccess:
		return prev == nil || prev.State == ledger.Closed && prev.FailureCount == 0
	}
	return false
}
