package main

import (
	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/failure"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// classifyOptions are the options of classify.
type classifyOptions struct {
	globalOptions
	Evidence failure.Evidence
}

// classifyJSON is classify's --json output (docs/cli.md).
type classifyJSON struct {
	Type       ledger.FailureType `json:"type"`
	Cause      string             `json:"cause"`
	Fault      ledger.Fault       `json:"fault"`
	Transient  bool               `json:"transient"`
	RetryAfter *string            `json:"retry_after"`
	ServerWide bool               `json:"server_wide"`
}

func classifyCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:      "classify",
		Usage:     "print the failure type, cause, transient flag and retry hint of a failure",
		ArgsUsage: "--error TEXT [--status N] [--code N]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "error", Usage: "the failure text"},
			&cli.IntFlag{Name: "status", Usage: "HTTP status code"},
			&cli.IntFlag{Name: "code", Usage: "JSON-RPC error code"},
			jsonFlag(),
		},
		Action: action(e, parseClassify, runClassify),
	}
}

func parseClassify(c *cli.Context) (*classifyOptions, error) {
	g, err := parseGlobal(c)
	if err != nil {
		return nil, err
	}
	if c.NArg() > 0 {
		return nil, usagef("classify takes no arguments; pass the text with --error")
	}
	ev, err := parseEvidence(c, "--error TEXT (or --status N / --code N)")
	if err != nil {
		return nil, err
	}
	return &classifyOptions{globalOptions: g, Evidence: ev.Evidence}, nil
}

func runClassify(opts *classifyOptions, e *Env) error {
	now, err := e.now()
	if err != nil {
		return err
	}
	r := failure.Classify(opts.Evidence, now)
	if opts.JSON {
		return e.printJSON(classifyJSON{Type: r.Type, Cause: r.Cause, Fault: r.Fault, Transient: r.Transient,
			RetryAfter: durOrNull(r.RetryAfter), ServerWide: r.ServerWide})
	}
	e.printf("type: %s\ncause: %s\nfault: %s\ntransient: %t\nserver_wide: %t\n", r.Type, r.Cause, r.Fault, r.Transient, r.ServerWide)
	if r.RetryAfter > 0 {
		e.printf("retry_after: %s\n", r.RetryAfter)
	}
	if !r.Fault.Counts() {
		e.printf("trips at: never (the call's own fault: recorded, not counted against the tool)\n")
		return nil
	}
	e.printf("trips at: %d consecutive failure(s)\n", r.Type.DefaultThreshold())
	return nil
}
