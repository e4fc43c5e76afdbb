package main

import (
	"fmt"
	"sort"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/term"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

func policyCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:  "policy",
		Usage: "show the effective policy (built-ins plus .claude/mcp_circuit/policy.yaml)",
		Subcommands: []*cli.Command{{
			Name:      "show",
			Usage:     "print the effective settings per failure type (for TOOL's globs when given)",
			ArgsUsage: "[TOOL]",
			Flags:     []cli.Flag{dirFlag(), jsonFlag()},
			Action:    action(e, parsePolicyShow, runPolicyShow),
		}},
	}
}

// policyRow is one failure type's effective settings.
type policyRow struct {
	Type        ledger.FailureType `json:"type"`
	Threshold   int                `json:"threshold"`
	Cooldown    string             `json:"cooldown"`
	CooldownCap string             `json:"cooldown_cap"`
	Jitter      float64            `json:"jitter"`
	Lease       string             `json:"lease"`
	Scope       string             `json:"scope"`
	HalfOpen    string             `json:"half_open"`
	OnError     string             `json:"on_error"`
	LoopGuard   int                `json:"loop_guard"`
	// CallErrorStreak is the streak guard's number (docs/circuits.md).
	CallErrorStreak int `json:"call_error_streak"`
	// SessionFailureStreak is the runaway guard's number, EmptyStreak the empty-result notice's.
	SessionFailureStreak int    `json:"session_failure_streak"`
	EmptyStreak          int    `json:"empty_streak"`
	HangAfter            string `json:"hang_after"`
	// Deadline is the MCP proxy's per-call deadline, "none" when there is none.
	Deadline string `json:"deadline"`
}

// policyJSON is policy show's --json output.
type policyJSON struct {
	Source string      `json:"source"`
	Tool   string      `json:"tool"`
	Types  []policyRow `json:"types"`
	// Warnings name cooldowns above their cap, with the value that applies.
	Warnings []string `json:"warnings"`
}

// policyShowOptions are the options of policy show.
type policyShowOptions struct {
	globalOptions
	// Tool is the key whose tool rules apply; mcp__*__* for none.
	Tool string
}

func parsePolicyShow(c *cli.Context) (*policyShowOptions, error) {
	g, err := parseGlobal(c)
	if err != nil {
		return nil, err
	}
	opts := &policyShowOptions{globalOptions: g, Tool: string(ledger.ToolKey("*", "*"))} // every tool of every server
	if c.NArg() > 1 {
		return nil, usagef("policy show takes at most one TOOL")
	}
	if c.NArg() == 1 {
		opts.Tool = c.Args().First()
		if err := checkToolKey(opts.Tool); err != nil {
			return nil, err
		}
	}
	return opts, nil
}

func runPolicyShow(opts *policyShowOptions, e *Env) error {
	key := opts.Tool
	p, err := e.project(opts.Dir)
	if err != nil {
		return err
	}
	pol := e.usablePolicy(p)
	source := "built-in defaults (no policy.yaml)"
	if pol != nil {
		source = pol.Source
	}
	var rows []policyRow
	for _, t := range ledger.FailureTypes {
		f := pol.For(key, t)
		rows = append(rows, policyRow{t, f.Threshold, f.Cooldown.String(), f.CooldownCap.String(), f.Jitter, f.Lease.String(), f.Scope, f.HalfOpen, f.OnError,
			f.LoopGuard, f.CallErrorStreak, f.SessionFailureStreak, f.EmptyStreak, f.HangAfter.String(), deadlineText(f.Deadline)})
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Threshold < rows[j].Threshold })
	warnings := pol.CapWarnings()
	if opts.JSON {
		return e.printJSON(policyJSON{Source: source, Tool: key, Types: rows, Warnings: nonNil(warnings)})
	}
	for _, w := range warnings {
		e.warnf("%s: %s", source, w)
	}
	e.printf("policy: %s\ntool: %s\n", source, key)
	table := [][]string{{"TYPE", "THRESHOLD", "COOLDOWN", "CAP", "JITTER", "LEASE", "SCOPE", "HALF_OPEN", "ON_ERROR", "LOOP_GUARD", "CALL_ERROR_STREAK", "SESSION_FAILURE_STREAK", "EMPTY_STREAK", "HANG_AFTER", "DEADLINE"}}
	for _, r := range rows {
		table = append(table, []string{string(r.Type), fmt.Sprint(r.Threshold), r.Cooldown, r.CooldownCap, fmt.Sprint(r.Jitter), r.Lease, r.Scope, r.HalfOpen, r.OnError,
			fmt.Sprint(r.LoopGuard), fmt.Sprint(r.CallErrorStreak), fmt.Sprint(r.SessionFailureStreak), fmt.Sprint(r.EmptyStreak), r.HangAfter, r.Deadline})
	}
	printTable(e, table)
	if pol != nil && len(pol.Tools) > 0 {
		e.println("tool rules (in file order; later ones win):")
		for _, tr := range pol.Tools {
			e.println("  " + term.Escape(tr.Match))
		}
	}
	return nil
}

// deadlineText shows the proxy's per-call deadline d, "none" when there is none.
func deadlineText(d time.Duration) string {
	if d <= 0 {
		return "none"
	}
	return d.String()
}
