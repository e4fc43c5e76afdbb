package main

import (
	"fmt"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/term"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

func ledgerCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:  "ledger",
		Usage: "verify, repair or compact the ledger (.claude/mcp_circuit/circuit_log.yaml)",
		Subcommands: []*cli.Command{
			{
				Name:   "verify",
				Usage:  "report every problem of the ledger with its line; exit 1 when there is one",
				Flags:  []cli.Flag{dirFlag(), jsonFlag()},
				Action: e.ledgerVerify,
			},
			{
				Name:   "repair",
				Usage:  "split merged items, quarantine torn or invalid ones; keeps a timestamped backup",
				Flags:  []cli.Flag{dirFlag(), jsonFlag()},
				Action: e.ledgerRepair,
			},
			{
				Name:  "compact",
				Usage: "summarise history older than a cutoff, keeping every open circuit's record; keeps a backup",
				Flags: []cli.Flag{
					&cli.DurationFlag{Name: "older-than", Value: 30 * 24 * time.Hour, Usage: "the cutoff, as an age"},
					dirFlag(), jsonFlag(),
				},
				Action: e.ledgerCompact,
			},
		},
	}
}

func (e *Env) ledgerVerify(c *cli.Context) error {
	p, err := e.project(c)
	if err != nil {
		return err
	}
	s, err := p.Store(false) // verifying needs no clock: a bad MCP_CIRCUIT_NOW must not stop it
	if err != nil {
		return err
	}
	entries, problems, err := s.Ledger.ReadFile()
	if err != nil {
		return err
	}
	path := s.Ledger.Path()
	var warnings []string
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm()&0o077 != 0 {
		warnings = append(warnings, fmt.Sprintf("%s is readable by others (mode %o); run: chmod 600 %s", path, fi.Mode().Perm(), path))
	}
	if c.Bool("json") {
		ps := []map[string]any{}
		for _, p := range problems {
			ps = append(ps, map[string]any{"line": p.Line, "kind": p.Kind, "message": p.Msg})
		}
		if err := e.printJSON(map[string]any{"path": path, "entries": len(entries), "valid": len(problems) == 0, "problems": ps, "warnings": nonNil(warnings)}); err != nil {
			return err
		}
	} else {
		for _, w := range warnings {
			term.Warnf(e.Stderr, "%s", w)
		}
		for _, p := range problems {
			fmt.Fprintf(e.Stdout, "%s:%d: %s: %s\n", term.Escape(path), p.Line, p.Kind, term.Escape(p.Msg))
		}
		if len(problems) == 0 {
			fmt.Fprintf(e.Stdout, "ledger OK: %d entries in %s\n", len(entries), path)
		}
	}
	if len(problems) > 0 {
		if !c.Bool("json") {
			term.Errorf(e.Stderr, "the ledger has %d problem(s); nothing will be appended to it until it is repaired", len(problems))
			term.Hintf(e.Stderr, "run 'mcp-circuit-breaker ledger repair' (it keeps a backup and quarantines what it cannot read)")
		}
		return &exitCodeError{code: exitFailure}
	}
	return nil
}

func (e *Env) ledgerRepair(c *cli.Context) error {
	r, err := e.begin(c, false)
	if err != nil {
		return err
	}
	now, s := r.now, r.store
	unlock, err := s.Ledger.Lock()
	if err != nil {
		return fmt.Errorf("repair ledger: %w", err)
	}
	res, err := s.Ledger.Repair(now)
	unlock()
	if err != nil {
		return fmt.Errorf("repair ledger: %w", err)
	}
	s.Invalidate()
	if c.Bool("json") {
		q := []map[string]any{}
		for _, p := range res.Quarantined {
			q = append(q, map[string]any{"line": p.Line, "kind": p.Kind, "message": p.Msg})
		}
		return e.printJSON(map[string]any{"entries": res.Entries, "split": res.Split, "quarantined": q,
			"backup": res.Backup, "quarantine": res.Quarantine})
	}
	if res.Backup == "" {
		fmt.Fprintf(e.Stdout, "ledger OK: %d entries, nothing to repair\n", res.Entries)
		return nil
	}
	fmt.Fprintf(e.Stdout, "repaired %s: %d entries, %d merged item(s) split, %d item(s) quarantined\n", s.Ledger.Path(), res.Entries, res.Split, len(res.Quarantined))
	for _, p := range res.Quarantined {
		fmt.Fprintf(e.Stdout, "  quarantined line %d: %s\n", p.Line, term.Escape(p.Msg))
	}
	fmt.Fprintf(e.Stdout, "backup: %s\n", res.Backup)
	if res.Quarantine != "" {
		fmt.Fprintf(e.Stdout, "quarantine: %s\n", res.Quarantine)
	}
	return nil
}

func (e *Env) ledgerCompact(c *cli.Context) error {
	age := c.Duration("older-than")
	if age < 0 {
		return usagef("--older-than must not be negative")
	}
	r, err := e.begin(c, false)
	if err != nil {
		return err
	}
	now := r.now
	res, err := r.store.Compact(now.Add(-age), now)
	if err != nil {
		return fmt.Errorf("compact ledger: %w", err)
	}
	if c.Bool("json") {
		return e.printJSON(map[string]any{"before": res.Before, "after": res.After, "backup": res.Backup})
	}
	if res.Backup == "" {
		fmt.Fprintf(e.Stdout, "nothing to compact: %d entries, none idle before %s\n", res.Before, now.Add(-age).Format(ledger.TimeFormat))
		return nil
	}
	fmt.Fprintf(e.Stdout, "compacted %s: %d → %d entries\nbackup: %s\n", r.store.Ledger.Path(), res.Before, res.After, res.Backup)
	return nil
}
