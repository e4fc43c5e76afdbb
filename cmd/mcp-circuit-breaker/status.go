package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/message"

	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/term"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/timetext"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// statusOptions are the options of status.
type statusOptions struct {
	globalOptions
	// Tool limits the list to this key and its server's circuit; "" lists every circuit.
	Tool string
	// Fleet is --fleet: list the fleet-shared board's circuits instead.
	Fleet bool
}

// statusJSON is status's --json output (docs/cli.md).
type statusJSON struct {
	Circuits []circuitJSON `json:"circuits"`
	Warnings []string      `json:"warnings"`
}

func statusCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:      "status",
		Usage:     "list every circuit that is not idle: key, state, type, failures, open until",
		ArgsUsage: "[TOOL]",
		Flags:     []cli.Flag{dirFlag(), jsonFlag(), fleetFlag()},
		Action:    action(e, parseStatus, runStatus),
	}
}

func parseStatus(c *cli.Context) (*statusOptions, error) {
	g, err := parseGlobal(c)
	if err != nil {
		return nil, err
	}
	opts := &statusOptions{globalOptions: g, Fleet: c.Bool("fleet")}
	if c.NArg() > 1 {
		return nil, usagef("status takes at most one TOOL argument")
	}
	if c.NArg() == 1 {
		opts.Tool = c.Args().First()
		if err := checkToolKey(opts.Tool); err != nil {
			return nil, err
		}
	}
	return opts, nil
}

func runStatus(opts *statusOptions, e *Env) error {
	only := opts.Tool
	r, err := e.begin(opts.globalOptions, false)
	if err != nil {
		return err
	}
	if opts.Fleet {
		return e.statusFleet(opts.JSON, r.Dir, r.now)
	}
	pol := e.usablePolicy(r.Project)
	now := r.now
	board, err := r.store.View()
	if err != nil {
		return fmt.Errorf("read circuits: %w", err)
	}
	var keys []string
	for _, k := range board.Keys() {
		if board.Get(k).AtRest() {
			continue
		}
		if only != "" && k != only && ledger.Key(k) != ledger.Key(only).ServerKey() {
			continue
		}
		keys = append(keys, k)
	}
	var warnings []string
	if e.shadow() {
		warnings = append(warnings, message.ShadowWarning)
	}
	if w := e.fleetWarning(r.Dir); w != "" {
		warnings = append(warnings, w)
	}
	if d := board.Damage; d.Count > 0 && opts.JSON {
		// Said on stderr already (the store's Damaged); the JSON carries it too.
		warnings = append(warnings, d.Summary(r.store.Ledger.Path()))
	}
	if w := message.UnverifiedWarning(board); w != "" {
		warnings = append(warnings, w)
	}
	if opts.JSON {
		return e.printJSON(statusJSON{Circuits: circuitsJSON(board, keys, standingFn(r.Project, now, pol), pol), Warnings: nonNil(warnings)})
	}
	for _, w := range warnings {
		e.warnf("%s", w)
	}
	if len(keys) == 0 {
		if only != "" {
			e.printf("%s: CLOSED, no failures recorded.\n", term.Escape(only))
		} else if n := rememberedCallErrors(board); n > 0 {
			e.printf("All circuits CLOSED. Calls that failed on their own terms lately: %d, counted against no tool ('mcp-circuit-breaker report' lists them).\n", n)
		} else {
			e.println("All circuits CLOSED: no failures recorded.")
		}
		return nil
	}
	rows := [][]string{{"TOOL", "STATE", "TYPE", "FAILURES", "BLOCKED", "OPEN UNTIL"}}
	for _, k := range keys {
		ci := board.Get(k)
		rows = append(rows, e.statusRow(ci, r.StandingOf(ci, now, pol)))
	}
	printTable(e, rows)
	return nil
}

// statusRow is one row of the status tables (this project's and the fleet board's): the circuit
// as it stands, in the columns TOOL, STATE, TYPE, FAILURES, BLOCKED, OPEN UNTIL.
func (e *Env) statusRow(ci *states.Circuit, st states.Standing) []string {
	state := st.Label()
	if ci.Unverified && !ci.AtRest() {
		if l, ok := strings.CutSuffix(state, ")"); ok {
			state = l + ", unverified)"
		} else {
			state += " (unverified)"
		}
	}
	return []string{message.ShownKey(ci.Key), state, typeOrDash(ci), fmt.Sprint(st.FailureCount), fmt.Sprint(ci.Blocked), e.untilText(st)}
}

// untilText is the OPEN UNTIL column: what the standing says of the next trial.
func (e *Env) untilText(st states.Standing) string {
	switch st.Phase {
	case states.PhaseTrialInFlight:
		return "trial in flight until " + e.localTime(timetext.CeilSecond(st.Next))
	case states.PhaseTrialDue:
		if st.State == ledger.HalfOpen {
			return "trial permit free"
		}
		return e.localTime(timetext.CeilSecond(st.Next)) + " (trial due)"
	case states.PhaseCoolingDown:
		return e.localTime(timetext.CeilSecond(st.Next))
	case states.PhaseAwaitingPerson:
		return "until a person acts"
	}
	return "—"
}

// circuitJSON is the --json shape of a circuit (docs/cli.md).
type circuitJSON struct {
	Tool         string              `json:"tool"`
	Server       string              `json:"server"`
	State        ledger.State        `json:"state"`
	Phase        states.Phase        `json:"phase"`
	FailureType  *ledger.FailureType `json:"failure_type"`
	FailureCount int                 `json:"failure_count"`
	Cause        *string             `json:"cause"`
	TrippedAt    *string             `json:"tripped_at"`
	OpenUntil    *string             `json:"open_until"`
	LeaseUntil   *string             `json:"lease_until,omitempty"`
	Blocked      int                 `json:"blocked"`
	// Unverified is set when the circuit's state rests on ledger entries this user's gate did
	// not write (states.Circuit.Unverified).
	Unverified bool `json:"unverified,omitempty"`
}

// standingFn is the standing of each circuit in p at now, as every view takes it.
func standingFn(p *project.Project, now time.Time, pol *states.Policy) func(*states.Circuit) states.Standing {
	return func(ci *states.Circuit) states.Standing { return p.StandingOf(ci, now, pol) }
}

func circuitsJSON(b *states.Board, keys []string, standing func(*states.Circuit) states.Standing, pol *states.Policy) []circuitJSON {
	out := []circuitJSON{}
	for _, k := range keys {
		ci := b.Get(k)
		if ci == nil {
			continue
		}
		out = append(out, toCircuitJSON(ci, standing(ci), pol))
	}
	return out
}

func toCircuitJSON(ci *states.Circuit, st states.Standing, pol *states.Policy) circuitJSON {
	j := circuitJSON{Tool: ci.Key, Server: ci.Server, State: st.State, Phase: st.Phase, FailureCount: st.FailureCount,
		TrippedAt: utcOrNull(ci.TrippedAt), Blocked: ci.Blocked, Unverified: ci.Unverified}
	if j.Server == "" {
		j.Server = ledger.Key(ci.Key).Server()
	}
	if ci.FailureType != "" {
		j.FailureType = &ci.FailureType
	}
	if ci.Cause != "" {
		j.Cause = &ci.Cause
	}
	if ci.State != ledger.Closed {
		j.OpenUntil = utcOrNull(ci.TrialAt(pol))
	} else {
		j.TrippedAt = nil
	}
	if ci.State == ledger.HalfOpen {
		j.LeaseUntil = utcOrNull(ci.LeaseUntil)
	}
	return j
}

// rememberedCallErrors counts the failed calls the loop guard remembers on circuits at rest.
func rememberedCallErrors(b *states.Board) int {
	n := 0
	for _, c := range b.Circuits {
		if c.AtRest() {
			for _, r := range c.Repeats {
				n += r.Count
			}
		}
	}
	return n
}
