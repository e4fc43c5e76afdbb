package states

import (
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// Phase is where a circuit stands at one instant, finer than its state: an OPEN circuit whose
// cooldown is over is due for a trial, not plainly OPEN.
type Phase string

// The phases of a circuit at one instant.
const (
	PhaseClosed         Phase = "closed"          // CLOSED, possibly counting failures
	PhaseCoolingDown    Phase = "cooling_down"    // OPEN until its trial time
	PhaseTrialDue       Phase = "trial_due"       // the next call is the trial (cooldown over, or a lease expired)
	PhaseTrialInFlight  Phase = "trial_in_flight" // HALF-OPEN and a caller holds the permit
	PhaseAwaitingPerson Phase = "awaiting_person" // OPEN until a person acts (ADMIN_GATED, a manual trip)
)

// Standing is what every view says of one circuit at one instant: status, report, check,
// fallbacks, probe, deny reasons and SessionStart all take their figures from it, so that no two
// of them disagree.
type Standing struct {
	Key          string
	State        ledger.State
	Phase        Phase
	FailureCount int
	// Next is when something changes without a person: the trial time while cooling down (or when
	// it became due), the end of the permit while a trial is in flight; zero otherwise.
	Next time.Time
	// ConfigChanged is set when a trial is due because the server's configuration changed since
	// the trip (AUTH, ADMIN_GATED), not because a cooldown ended.
	ConfigChanged bool
}

// StandingAt returns c's standing at now under p; fingerprint is the server's current
// configuration fingerprint ("" when unknown). A nil c stands CLOSED with nothing counted.
func (c *Circuit) StandingAt(now time.Time, p *Policy, fingerprint string) Standing {
	if c == nil {
		return Standing{State: ledger.Closed, Phase: PhaseClosed}
	}
	s := Standing{Key: c.Key, State: c.State, FailureCount: c.FailureCount}
	switch c.State {
	case ledger.HalfOpen:
		s.Next = c.LeaseUntil
		if c.LeaseLive(p, now) {
			s.Phase = PhaseTrialInFlight
		} else {
			s.Phase = PhaseTrialDue
		}
	case ledger.Open:
		at, auto := c.eligibleAt(Call{Fingerprint: fingerprint}, p, now)
		switch {
		case !auto:
			s.Phase = PhaseAwaitingPerson
		case now.Before(at):
			s.Phase, s.Next = PhaseCoolingDown, at
		default:
			s.Phase, s.Next = PhaseTrialDue, at
			s.ConfigChanged = c.configChanged(fingerprint)
		}
	default:
		s.Phase = PhaseClosed
	}
	return s
}

// configChanged reports whether c (AUTH or ADMIN_GATED) is eligible for a trial because the
// server's configuration fingerprint differs from the one recorded at the trip.
func (c *Circuit) configChanged(fingerprint string) bool {
	return (c.FailureType == ledger.Auth || c.FailureType == ledger.AdminGated) &&
		c.Fingerprint != "" && fingerprint != "" && c.Fingerprint != fingerprint
}

// Label is the state as the views print it: the state, with "(trial due)" when the next call is
// the trial.
func (s Standing) Label() string {
	if s.Phase == PhaseTrialDue {
		return string(s.State) + " (trial due)"
	}
	return string(s.State)
}

// Opens reports whether applying e to a circuit in state prev trips it: it moves to OPEN, or an
// OPEN circuit is re-opened by a trip or a failed probe. Apply, the report and compaction count
// trips with it.
func Opens(prev ledger.State, e ledger.Entry) bool {
	if e.State != ledger.Open || e.Event == ledger.EventBlocked || e.Event == ledger.EventWouldBlock {
		return false
	}
	return prev != ledger.Open || e.Event == ledger.EventTrip || e.Event == ledger.EventProbe
}

// IsFailure reports whether e, applied to a circuit in state prev, records a failed call: a
// failure or a trip by a failure (not a manual trip), a failed probe, or for entries written by
// hand an OPEN entry (it records the failures that tripped it). An entry that records what the
// fleet-shared board said (source: shared) is another session's call, not a failure of this one;
// a call error (fault: call) is the call's, not the tool's: IsCallError.
func IsFailure(prev ledger.State, e ledger.Entry) bool {
	if e.Source == ledger.SourceShared || e.Fault == ledger.FaultCall {
		return false // another session's call, or a call that failed on its own terms
	}
	switch e.Event {
	case ledger.EventFailure, ledger.EventTrip:
		return e.Cause != "manual_trip"
	case ledger.EventProbe:
		// A failed probe that did not trip leaves the circuit CLOSED with the count grown.
		return e.State != ledger.Closed || (e.ResetMethod == "" && e.FailureCount > 0)
	case "":
		return e.State == ledger.Open && prev != ledger.Open
	}
	return false
}

// IsHeld reports whether e records a failure held rather than counted (held_shape): recorded and
// reported as a failed call, counted only if the next failure confirms it, never shared.
func IsHeld(e ledger.Entry) bool {
	return e.HeldShape != "" && e.Event == ledger.EventFailure && e.Fault != ledger.FaultCall && e.Source != ledger.SourceShared
}

// IsCallError reports whether e records a call that failed on its own terms (fault: call): the
// report lists them per tool; they count toward no trip.
func IsCallError(e ledger.Entry) bool {
	return e.Fault == ledger.FaultCall && e.Event == ledger.EventFailure && e.Source != ledger.SourceShared
}
