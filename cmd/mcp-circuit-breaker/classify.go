package main

import (
	"encoding/json"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/failure"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
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
		ArgsUsage: "--error TEXT [--status N] [--code N] [--tool TOOL] [--args JSON]",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "error", Usage: "the failure text"},
			&cli.IntFlag{Name: "status", Usage: "HTTP status code"},
			&cli.IntFlag{Name: "code", Usage: "JSON-RPC error code"},
			&cli.StringFlag{Name: "tool", Usage: "the tool that failed, mcp__<server>__<tool>: its kind is evidence (a fetch or shell tool)"},
			&cli.StringFlag{Name: "args", Usage: "the call's arguments, a JSON object: what the text echoes of them is evidence"},
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
	if err := parseCall(c, &ev.Evidence); err != nil {
		return nil, err
	}
	return &classifyOptions{globalOptions: g, Evidence: ev.Evidence}, nil
}

// parseCall reads the call a failure came from: --tool, its canonical name, and --args, its
// arguments as a JSON object (docs/classification.md, "Evidence from the call").
func parseCall(c *cli.Context, ev *failure.Evidence) error {
	if tool := c.String("tool"); tool != "" {
		if !ledger.ValidToolName(tool) || !strings.HasPrefix(tool, "mcp__") {
			return usagef("--tool %q is not an MCP tool name: it is mcp__<server>__<tool>", tool)
		}
		ev.Tool = tool
	}
	if c.IsSet("args") {
		raw := []byte(c.String("args"))
		var obj map[string]any
		if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
			return usagef("--args is not a JSON object (%s): pass the call's arguments as {\"key\": \"value\", …}", jsonProblem(err))
		}
		ev.Args = failure.ArgsFromJSON(raw)
		if ev.Args == nil {
			ev.Args = []failure.Arg{}
		}
	}
	return nil
}

// jsonProblem says briefly what is wrong with a JSON value.
func jsonProblem(err error) string {
	if err == nil {
		return "null"
	}
	return err.Error()
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
	e.printf("trips at: %d consecutive failure(s)\n", states.DefaultThreshold(r.Type))
	return nil
}
