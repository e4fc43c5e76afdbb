package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/message"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// tripOptions are the options of trip.
type tripOptions struct {
	globalOptions
	Tool string
	Type ledger.FailureType
}

// tripJSON is trip's --json output.
type tripJSON struct {
	Circuits []circuitJSON `json:"circuits"`
}

func tripCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:      "trip",
		Usage:     "open a circuit by hand, to isolate a tool or a server (mcp__<server>__*) for maintenance",
		ArgsUsage: "TOOL --type TYPE",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "type", Usage: "the failure type (required): " + typeNames()},
			dirFlag(), jsonFlag(),
		},
		Action: action(e, parseTrip, runTrip),
	}
}

func parseTrip(c *cli.Context) (*tripOptions, error) {
	g, err := parseGlobal(c)
	if err != nil {
		return nil, err
	}
	opts := &tripOptions{globalOptions: g}
	if opts.Tool, err = toolArg(c); err != nil {
		return nil, err
	}
	if c.String("type") == "" {
		return nil, usagef("trip needs --type TYPE (one of %s)", typeNames())
	}
	t, ok := ledger.ParseFailureType(c.String("type"))
	if !ok {
		return nil, usagef("--type %q is not one of %s", c.String("type"), typeNames())
	}
	opts.Type = t
	return opts, nil
}

func runTrip(opts *tripOptions, e *Env) error {
	tool := opts.Tool
	r, err := e.begin(opts.globalOptions, true)
	if err != nil {
		return err
	}
	defer r.share(e, tool)()
	pol := e.usablePolicy(r.Project)
	now := r.now
	board, err := r.store.Update(func(b *states.Board) ([]ledger.Entry, error) {
		return b.Trip(states.Call{Tool: tool, Source: ledger.SourceCLI}, opts.Type, now), nil
	})
	if err != nil {
		return fmt.Errorf("trip %s: %w", tool, err)
	}
	ci := board.Get(tool)
	if opts.JSON {
		return e.printJSON(tripJSON{Circuits: circuitsJSON(board, []string{tool}, standingFn(r.Project, now, pol), pol)})
	}
	e.println(message.Notice(ci) + "\n" + message.TripDetail(ci, now, pol))
	return nil
}
