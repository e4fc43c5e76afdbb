package fleet

import (
	"context"
	"errors"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// maxAttempts bounds the read-decide-write rounds of one Update when other sessions keep winning
// the race (each round is two round trips, and the caller's context bounds them all); after them
// the decision is made on local state.
const maxAttempts = 16

// Overlay returns a copy of local in which the circuits of keys are the board's, where the board
// is authoritative (see wins), and which keys it took from the board.
func Overlay(local *states.Board, shared map[string]Shared) (*states.Board, map[string]bool) {
	work := local.Clone()
	if work.Circuits == nil {
		work.Circuits = map[string]*states.Circuit{}
	}
	taken := map[string]bool{}
	for k, sh := range shared {
		if !wins(local.Get(k), sh) {
			continue
		}
		c := *sh.Circuit
		if l := local.Get(k); l != nil && l.TrippedAt.Equal(c.TrippedAt) {
			c.Fingerprint = l.Fingerprint // the same trip, seen on this machine too
		}
		// The loop guard's memory is this session's own calls: never the board's.
		c.Repeats = nil
		if l := local.Get(k); l != nil {
			c.Repeats = l.Repeats
		}
		work.Circuits[k] = &c
		taken[k] = true
	}
	return work, taken
}

// wins reports whether the board's circuit decides rather than the local one. The board is
// authoritative when it has a record, except for a trip this session made while the board was
// away and that the board has not seen (tripped after the board's last change): failing safe on
// what is known, it is pushed to the board by the next write instead of being forgotten.
func wins(local *states.Circuit, sh Shared) bool {
	if sh.Circuit == nil {
		return false
	}
	if local != nil && local.State != ledger.Closed && local.TrippedAt.After(sh.Circuit.LastAt) {
		return false
	}
	return true
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
		l.OpenUntil.Equal(sh.OpenUntil) && l.LeaseUntil.Equal(sh.LeaseUntil) {
		return ledger.Entry{}, false
	}
	e := ledger.Entry{Tool: sh.Key, State: sh.State, FailureType: sh.FailureType, FailureCount: sh.FailureCount,
		TrippedAt: sh.TrippedAt, At: now, Server: sh.Server, Cause: sh.Cause, Error: sh.Error,
		RetryAfter: sh.RetryAfter, SessionID: sessionID, Source: ledger.SourceShared}
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

// Result says how an Update went with the board.
type Result struct {
	// Shared is set when the decision was made on, and written to, the board.
	Shared bool
	// Away is the reason the board could not be used, nil when it was.
	Away error
	// Synced counts the entries that recorded the board's state in the local ledger.
	Synced int
}

// Binding is the board bound to the keys of one call: it is what states.Store.Shared holds for one
// hook run or command, so that every View and Update of the store goes through the board.
type Binding struct {
	board     *Board
	ctx       context.Context
	keys      []string
	now       time.Time
	sessionID string
	// Last is how the last View or Update went with the board.
	Last Result
}

// Bind returns the board bound to keys (Keys of the call) at now; sessionID goes on the entries
// that record the board's state.
func (b *Board) Bind(ctx context.Context, keys []string, now time.Time, sessionID string) *Binding {
	return &Binding{board: b, ctx: ctx, keys: keys, now: now, sessionID: sessionID}
}

// Board returns the board.
func (bd *Binding) Board() *Board { return bd.board }

// SetSession sets the session id the entries recording the board's state carry, when the binding
// was made before it was known.
func (bd *Binding) SetSession(id string) { bd.sessionID = id }

// Overlay reads the keys' circuits from the board (one round trip) and lays them over local; on
// error it returns local unchanged and records the error in Last.Away.
func (bd *Binding) Overlay(local *states.Board) *states.Board {
	if len(bd.keys) == 0 || bd.Last.Away != nil {
		return local
	}
	shared, err := bd.board.Read(bd.ctx, bd.keys)
	if err != nil {
		bd.Last = Result{Away: err}
		return local
	}
	bd.Last = Result{Shared: true}
	work, _ := Overlay(local, shared)
	return work
}

// Update is the shared form of states.Store.Update for a decision about the bound keys; local is
// the store's own locked update. It reads the keys' circuits from the board (one round trip), and
// under the ledger lock records in the local ledger where the board differs (entries with source:
// shared: what this session learned, not calls it made), runs decide on the local board overlaid
// with the board's circuits, writes the changed circuits back with a generation check, and appends
// the decision's entries, which keep their own source (this session's calls). When another
// session won the race it reads again and decides again. When the board is away (error, timeout)
// decide runs on local state alone, as without a board: never slower than the timeout, never a
// denial because of the board.
//
// The lock is held across the write, which is bounded by the board's timeout: the order of the
// board's changes and of this ledger's entries must agree.
func (bd *Binding) Update(decide func(*states.Board) ([]ledger.Entry, error),
	local func(func(*states.Board) ([]ledger.Entry, error)) (*states.Board, error)) (*states.Board, error) {
	if len(bd.keys) == 0 || bd.Last.Away != nil {
		// Found away earlier in this run: one wait for the board per run is enough.
		return local(decide)
	}
	b, ctx, keys, now := bd.board, bd.ctx, bd.keys, bd.now
	for range maxAttempts {
		shared, err := b.Read(ctx, keys)
		if err != nil {
			bd.Last = Result{Away: err}
			return local(decide)
		}
		var res Result
		board, err := local(func(lb *states.Board) ([]ledger.Entry, error) {
			res = Result{}
			var sync []ledger.Entry
			for _, k := range keys {
				sh := shared[k]
				if !wins(lb.Get(k), sh) {
					continue
				}
				if e, ok := syncEntry(lb.Get(k), sh.Circuit, now, bd.sessionID); ok {
					sync = append(sync, e)
				}
			}
			work, taken := Overlay(lb, shared)
			entries, err := decide(work)
			if err != nil {
				return nil, err
			}
			after := work.Clone()
			after.Replay(entries)
			writes := planWrites(keys, shared, taken, work, entries, after)
			if werr := b.Write(ctx, now, writes); werr != nil {
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
		})
		if errors.Is(err, ErrConflict) {
			continue
		}
		bd.Last = res
		return board, err
	}
	bd.Last = Result{Away: errors.New("the shared board kept changing under this decision")}
	return local(decide)
}

// planWrites turns a decision into writes for the board: the new circuit of every key the
// decision changed (or that the board did not have and this session knows better), and the
// blocked counts, which need no generation check since increments commute.
func planWrites(keys []string, shared map[string]Shared, taken map[string]bool, before *states.Board, entries []ledger.Entry, after *states.Board) []Write {
	var writes []Write
	for _, k := range keys {
		var w Write
		touched, changed := false, false
		for _, e := range entries {
			if e.Tool != k || localOnly(e, before.Get(k)) {
				continue
			}
			touched = true
			if isCounter(e) {
				w.Blocked++
				continue
			}
			changed = true
			if e.Event == ledger.EventTrip || e.State == ledger.Closed && e.ResetMethod != "" {
				w.ResetBlocked, w.Blocked = true, 0
			}
		}
		if !touched {
			continue
		}
		c := after.Get(k)
		if c != nil && len(c.Repeats) > 0 {
			cc := *c
			cc.Repeats = nil
			c = &cc
		}
		if c != nil && (changed || !taken[k]) {
			w.Key, w.Gen, w.Circuit = k, shared[k].Gen, c
			if !taken[k] {
				w.ResetBlocked = true
				w.Blocked = c.Blocked
			}
		}
		w.Key = k
		writes = append(writes, w)
	}
	return writes
}

// localOnly reports whether e concerns this session's own calls only, which the board never
// shares: a call that failed on its own terms, a call the loop guard held back, and a success that
// only made the loop guard forget a call (the circuit, prev, had nothing counted).
func localOnly(e ledger.Entry, prev *states.Circuit) bool {
	switch {
	case states.IsCallError(e):
		return true
	case isCounter(e):
		return e.Cause == states.CauseLoopGuard
	case e.Event == ledger.EventSuccess && e.CallHash != "":
		return prev == nil || prev.State == ledger.Closed && prev.FailureCount == 0
	}
	return false
}
