package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

func statusCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:      "status",
		Usage:     "list every circuit that is not idle: key, state, type, failures, open until",
		ArgsUsage: "[TOOL]",
		Flags:     []cli.Flag{dirFlag(), jsonFlag(), fleetFlag()},
		Action:    e.status,
	}
}

func (e *Env) status(c *cli.Context) error {
	var only string
	if c.NArg() > 1 {
		return usagef("status takes at most one TOOL argument")
	}
	if c.NArg() == 1 {
		only = c.Args().First()
		if err := checkToolKey(only); err != nil {
			return err
		}
	}
	r, err := e.begin(c, false)
	if err != nil {
		return err
	}
	if c.Bool("fleet") {
		return e.statusFleet(c, r.Dir, r.now)
	}
	pol, err := r.Policy()
	if err != nil {
		return err
	}
	now := r.now
	board, err := r.store.View()
	if err != nil {
		return fmt.Errorf("read circuits: %w", err)
	}
	var keys []string
	for _, k := range board.Keys() {
		if board.Get(k).Idle() {
			continue
		}
		if only != "" && k != only && !(k == states.ServerKey(only)) {
			continue
		}
		keys = append(keys, k)
	}
	var warnings []string
	if e.shadow() {
		warnings = append(warnings, project.ShadowWarning)
	}
	if w := e.fleetWarning(r.Dir); w != "" {
		warnings = append(warnings, w)
	}
	if c.Bool("json") {
		return e.printJSON(map[string]any{"circuits": circuitsJSON(board, keys, now, pol), "warnings": nonNil(warnings)})
	}
	for _, w := range warnings {
		fmt.Fprintf(e.Stderr, "mcp-circuit-breaker: warning: %s\n", w)
	}
	if len(keys) == 0 {
		if only != "" {
			fmt.Fprintf(e.Stdout, "%s: CLOSED, no failures recorded.\n", only)
		} else {
			fmt.Fprintln(e.Stdout, "All circuits CLOSED: no failures recorded.")
		}
		return nil
	}
	rows := [][]string{{"TOOL", "STATE", "TYPE", "FAILURES", "BLOCKED", "OPEN UNTIL"}}
	for _, k := range keys {
		ci := board.Get(k)
		until := "—"
		if ci.State != ledger.Closed {
			until = untilText(ci, now, pol)
		}
		typ := string(ci.FailureType)
		if typ == "" {
			typ = "—"
		}
		rows = append(rows, []string{k, string(ci.State), typ, fmt.Sprint(ci.FailureCount), fmt.Sprint(ci.Blocked), until})
	}
	printTable(e, rows)
	return nil
}

func untilText(ci *states.Circuit, now time.Time, pol *states.Policy) string {
	if ci.State == ledger.HalfOpen {
		if now.Before(ci.LeaseUntil) {
			return "trial in flight until " + states.CeilSecond(ci.LeaseUntil).Format(time.RFC3339)
		}
		return "trial permit free"
	}
	if t := ci.TrialAt(pol); !t.IsZero() {
		return states.CeilSecond(t).Format(time.RFC3339)
	}
	return "until a person acts"
}

func printTable(e *Env, rows [][]string) {
	widths := make([]int, len(rows[0]))
	for _, r := range rows {
		for i, c := range r {
			if n := len([]rune(c)); n > widths[i] {
				widths[i] = n
			}
		}
	}
	for _, r := range rows {
		var b strings.Builder
		for i, c := range r {
			if i == len(r)-1 {
				b.WriteString(c)
				break
			}
			b.WriteString(c)
			b.WriteString(strings.Repeat(" ", widths[i]-len([]rune(c))+2))
		}
		fmt.Fprintln(e.Stdout, strings.TrimRight(b.String(), " "))
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// circuitJSON is the --json shape of a circuit (SPEC §11).
type circuitJSON struct {
	Tool         string `json:"tool"`
	Server       string `json:"server"`
	State        string `json:"state"`
	FailureType  any    `json:"failure_type"`
	FailureCount int    `json:"failure_count"`
	Cause        any    `json:"cause"`
	TrippedAt    any    `json:"tripped_at"`
	OpenUntil    any    `json:"open_until"`
	LeaseUntil   any    `json:"lease_until,omitempty"`
	Blocked      int    `json:"blocked"`
}

func circuitsJSON(b *states.Board, keys []string, now time.Time, pol *states.Policy) []circuitJSON {
	out := []circuitJSON{}
	for _, k := range keys {
		ci := b.Get(k)
		if ci == nil {
			continue
		}
		out = append(out, toCircuitJSON(ci, pol))
	}
	return out
}

func toCircuitJSON(ci *states.Circuit, pol *states.Policy) circuitJSON {
	j := circuitJSON{Tool: ci.Key, Server: ci.Server, State: string(ci.State), FailureCount: ci.FailureCount,
		TrippedAt: timeOrNull(ci.TrippedAt), Blocked: ci.Blocked}
	if j.Server == "" {
		j.Server = states.ServerOf(ci.Key)
	}
	if ci.FailureType != "" {
		j.FailureType = ci.FailureType
	}
	if ci.Cause != "" {
		j.Cause = ci.Cause
	}
	if ci.State != ledger.Closed {
		j.OpenUntil = timeOrNull(ci.TrialAt(pol))
	} else {
		j.TrippedAt = nil
	}
	if ci.State == ledger.HalfOpen {
		j.LeaseUntil = timeOrNull(ci.LeaseUntil)
	}
	return j
}
