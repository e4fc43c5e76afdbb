package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/failure"
)

func classifyCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:  "classify",
		Usage: "print the failure type, cause, transient flag and retry hint of a failure",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "error", Usage: "the failure text"},
			&cli.IntFlag{Name: "status", Usage: "HTTP status code"},
			&cli.IntFlag{Name: "code", Usage: "JSON-RPC error code"},
			jsonFlag(),
		},
		Action: e.classify,
	}
}

func (e *Env) classify(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("classify takes no arguments; pass the text with --error")
	}
	ev, _, err := evidenceFlags(c, true)
	if err != nil {
		return err
	}
	now, err := e.now()
	if err != nil {
		return err
	}
	r := failure.Classify(ev, now)
	if c.Bool("json") {
		return e.printJSON(map[string]any{"type": r.Type, "cause": r.Cause, "transient": r.Transient,
			"retry_after": durOrNull(r.RetryAfter), "server_wide": r.ServerWide})
	}
	fmt.Fprintf(e.Stdout, "type: %s\ncause: %s\ntransient: %t\nserver_wide: %t\n", r.Type, r.Cause, r.Transient, r.ServerWide)
	if r.RetryAfter > 0 {
		fmt.Fprintf(e.Stdout, "retry_after: %s\n", r.RetryAfter)
	}
	fmt.Fprintf(e.Stdout, "trips at: %d consecutive failure(s)\n", r.Type.DefaultThreshold())
	return nil
}
