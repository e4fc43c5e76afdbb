package main

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/message"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/timetext"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// checkOptions are the options of check.
type checkOptions struct {
	globalOptions
	Tool string
}

// checkJSON is check's --json output (docs/cli.md).
type checkJSON struct {
	Tool      string       `json:"tool"`
	Allowed   bool         `json:"allowed"`
	State     ledger.State `json:"state"`
	Reason    string       `json:"reason"`
	OpenUntil *string      `json:"open_until"`
}

func checkCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:      "check",
		Usage:     "exit 0 if a call may go now (takes the half-open trial permit when due), 3 if blocked",
		ArgsUsage: "TOOL",
		Flags:     []cli.Flag{dirFlag(), jsonFlag()},
		Action:    action(e, parseCheck, runCheck),
	}
}

func parseCheck(c *cli.Context) (*checkOptions, error) {
	g, err := parseGlobal(c)
	if err != nil {
		return nil, err
	}
	opts := &checkOptions{globalOptions: g}
	opts.Tool, err = toolArg(c)
	return opts, err
}

func runCheck(opts *checkOptions, e *Env) error {
	tool := opts.Tool
	r, err := e.begin(opts.globalOptions, false)
	if err != nil {
		return err
	}
	defer r.share(e, tool)()
	// An invalid policy.yaml must not stop the decision: its valid parts and the built-in
	// values apply, and the user is told.
	pol := e.usablePolicy(r.Project)
	now := r.now
	res, err := r.store.Gate(states.GateRequest{
		Call: states.Call{Tool: tool, Source: ledger.SourceCLI}, Now: now,
		// The permit is decided with the time read under the lock (GateOn keeps the later one).
		Clock: func() time.Time {
			if t, err := e.now(); err == nil {
				return t
			}
			return now
		},
		Policy: func() (*states.Policy, error) { return pol, nil },
		Refine: r.WithFingerprint,
		// A check records permits only; blocked calls are counted by the gate that denies them.
		PermitsOnly: true,
	})
	if err != nil {
		return fmt.Errorf("check %s: %w", tool, err)
	}
	d := res.Decision
	out := checkJSON{Tool: tool, Allowed: d.Allowed, State: ledger.Closed, Reason: "CLOSED: calls may go."}
	if d.Circuit != nil {
		out.State = d.Circuit.State
		out.OpenUntil = utcOrNull(d.RetryAt)
	}
	switch {
	case d.Trial:
		out.State = ledger.HalfOpen
		out.Reason = fmt.Sprintf("HALF-OPEN: %s: %s; this call is the trial (permit until %s). Record its result with 'mcp-circuit-breaker success %s' or 'mcp-circuit-breaker record %s --error …'.",
			d.Circuit.Key, message.TrialDue(d), e.localTime(timetext.CeilSecond(d.Entries[0].LeaseUntil)), tool, tool)
	case !d.Allowed:
		out.Reason = message.Notice(d.Circuit) + "\n" + message.TripDetail(d.Circuit, now, pol)
	}
	if opts.JSON {
		if err := e.printJSON(out); err != nil {
			return err
		}
	} else {
		e.println(out.Reason)
	}
	if !d.Allowed {
		return &exitCodeError{code: exitBlocked}
	}
	return nil
}
