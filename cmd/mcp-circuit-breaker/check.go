package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

func checkCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:      "check",
		Usage:     "exit 0 if a call may go now (takes the half-open trial permit when due), 3 if blocked",
		ArgsUsage: "TOOL",
		Flags:     []cli.Flag{dirFlag(), jsonFlag()},
		Action:    e.check,
	}
}

func (e *Env) check(c *cli.Context) error {
	tool, err := toolArg(c)
	if err != nil {
		return err
	}
	r, err := e.begin(c, false)
	if err != nil {
		return err
	}
	defer r.share(e, tool)()
	pol, err := r.Policy()
	if err != nil {
		return err
	}
	now, s := r.now, r.store
	call := states.Call{Tool: tool, Source: ledger.SourceCLI}
	board, err := s.View()
	if err != nil {
		return fmt.Errorf("check %s: %w", tool, err)
	}
	call = r.WithFingerprint(board, call)
	d := board.Gate(call, now, pol, false)
	if d.Trial {
		// Deciding again under the lock: two checkers must not both get the trial permit. A
		// check records permits only; blocked calls are counted by the gate that denies them.
		_, err = s.Update(func(b *states.Board) ([]ledger.Entry, error) {
			d = b.Gate(call, now, pol, false)
			if !d.Trial {
				return nil, nil
			}
			return d.Entries, nil
		})
		if err != nil {
			return fmt.Errorf("check %s: %w", tool, err)
		}
	}
	reason := "CLOSED: calls may go."
	state := ledger.Closed
	var openUntil any
	if d.Circuit != nil {
		state = d.Circuit.State
		if !d.RetryAt.IsZero() {
			openUntil = timeOrNull(d.RetryAt)
		}
	}
	switch {
	case d.Trial:
		state = ledger.HalfOpen
		reason = fmt.Sprintf("HALF-OPEN: the cooldown of %s is over; this call is the trial (permit until %s). Record its result with 'mcp-circuit-breaker success %s' or 'mcp-circuit-breaker record %s --error …'.",
			d.Circuit.Key, d.Entries[0].LeaseUntil.Format("2006-01-02T15:04:05Z07:00"), tool, tool)
	case !d.Allowed:
		reason = states.Notice(d.Circuit) + "\n" + project.TripDetail(d.Circuit, now, pol)
	}
	if c.Bool("json") {
		if err := e.printJSON(map[string]any{"tool": tool, "allowed": d.Allowed, "state": state, "reason": reason, "open_until": openUntil}); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(e.Stdout, reason)
	}
	if !d.Allowed {
		return &exitCodeError{code: exitBlocked}
	}
	return nil
}
