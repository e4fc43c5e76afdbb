package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

func tripCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:      "trip",
		Usage:     "open a circuit by hand, to isolate a tool or a server (mcp__<server>__*) for maintenance",
		ArgsUsage: "TOOL --type TYPE",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "type", Usage: "the failure type (required): " + typeNames()},
			dirFlag(), jsonFlag(),
		},
		Action: e.trip,
	}
}

func (e *Env) trip(c *cli.Context) error {
	tool, err := toolArg(c)
	if err != nil {
		return err
	}
	if c.String("type") == "" {
		return usagef("trip needs --type TYPE (one of %s)", typeNames())
	}
	t, ok := ledger.ParseFailureType(c.String("type"))
	if !ok {
		return usagef("--type %q is not one of %s", c.String("type"), typeNames())
	}
	r, err := e.begin(c, true)
	if err != nil {
		return err
	}
	defer r.share(e, tool)()
	pol, err := r.Policy()
	if err != nil {
		return err
	}
	now := r.now
	board, err := r.store.Update(func(b *states.Board) ([]ledger.Entry, error) {
		return b.Trip(states.Call{Tool: tool, Source: ledger.SourceCLI}, t, now), nil
	})
	if err != nil {
		return fmt.Errorf("trip %s: %w", tool, err)
	}
	ci := board.Get(tool)
	if c.Bool("json") {
		return e.printJSON(map[string]any{"circuits": circuitsJSON(board, []string{tool}, now, pol)})
	}
	fmt.Fprintln(e.Stdout, states.Notice(ci)+"\n"+project.TripDetail(ci, now, pol))
	return nil
}
