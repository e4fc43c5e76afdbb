package main

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/term"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// ledgerOptions are the options of ledger verify, repair and compact.
type ledgerOptions struct {
	globalOptions
	// OlderThan is compact's cutoff, as an age.
	OlderThan time.Duration
}

// problemJSON is a ledger problem in --json output.
type problemJSON struct {
	Line    int    `json:"line"`
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// verifyJSON is ledger verify's --json output.
type verifyJSON struct {
	Path     string        `json:"path"`
	Entries  int           `json:"entries"`
	Valid    bool          `json:"valid"`
	Problems []problemJSON `json:"problems"`
	Warnings []string      `json:"warnings"`
}

// repairJSON is ledger repair's --json output.
type repairJSON struct {
	Entries     int           `json:"entries"`
	Split       int           `json:"split"`
	Quarantined []problemJSON `json:"quarantined"`
	Backup      string        `json:"backup"`
	Quarantine  string        `json:"quarantine"`
}

// compactJSON is ledger compact's --json output.
type compactJSON struct {
	Before int    `json:"before"`
	After  int    `json:"after"`
	Backup string `json:"backup"`
}

func ledgerCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:  "ledger",
		Usage: "verify, repair or compact the ledger (.claude/mcp_circuit/circuit_log.yaml)",
		Subcommands: []*cli.Command{
			{
				Name:   "verify",
				Usage:  "report every problem of the ledger with its line; exit 1 when there is one",
				Flags:  []cli.Flag{dirFlag(), jsonFlag()},
				Action: action(e, parseLedger, runLedgerVerify),
			},
			{
				Name:   "repair",
				Usage:  "split merged items, quarantine torn or invalid ones; keeps a timestamped backup",
				Flags:  []cli.Flag{dirFlag(), jsonFlag()},
				Action: action(e, parseLedger, runLedgerRepair),
			},
			{
				Name:  "compact",
				Usage: "summarise history older than a cutoff, keeping every open circuit's record; keeps a backup",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "older-than", Value: "30d", Usage: "the cutoff, as an age: 7d, 36h, 1d12h"},
					dirFlag(), jsonFlag(),
				},
				Action: action(e, parseLedger, runLedgerCompact),
			},
		},
	}
}

func parseLedger(c *cli.Context) (*ledgerOptions, error) {
	g, err := parseGlobal(c)
	if err != nil {
		return nil, err
	}
	if err := noArgs(c); err != nil {
		return nil, err
	}
	opts := &ledgerOptions{globalOptions: g}
	if c.Command.Name == "compact" {
		d, err := parseAge(c.String("older-than"))
		if err != nil || d < 0 {
			return nil, usagef("--older-than %q is not an age such as 7d, 36h or 1d12h", c.String("older-than"))
		}
		opts.OlderThan = d
	}
	return opts, nil
}

// days is an age in days, optionally followed by a Go duration ("7d", "1d12h").
var days = regexp.MustCompile(`^(\d+)d(.*)$`)

// parseAge reads an age: a Go duration (36h, 90m) or days (7d, 1d12h), which Go's durations lack
// and a retention cutoff is naturally written in.
func parseAge(s string) (time.Duration, error) {
	m := days.FindStringSubmatch(s)
	if m == nil {
		return time.ParseDuration(s)
	}
	n, err := strconv.Atoi(m[1])
	if err != nil || n > 100000 {
		return 0, fmt.Errorf("parse age %q: too many days", s)
	}
	d := time.Duration(n) * 24 * time.Hour
	if m[2] != "" {
		rest, err := time.ParseDuration(m[2])
		if err != nil {
			return 0, err
		}
		d += rest
	}
	return d, nil
}

func runLedgerVerify(opts *ledgerOptions, e *Env) error {
	p, err := e.project(opts.Dir)
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
	if opts.JSON {
		if err := e.printJSON(verifyJSON{Path: path, Entries: len(entries), Valid: len(problems) == 0,
			Problems: problemsJSON(problems), Warnings: nonNil(warnings)}); err != nil {
			return err
		}
	} else {
		for _, w := range warnings {
			e.warnf("%s", w)
		}
		for _, p := range problems {
			e.printf("%s:%d: %s: %s\n", path, p.Line, p.Kind, term.Escape(p.Msg))
		}
		if len(problems) == 0 {
			e.printf("ledger OK: %d entries in %s\n", len(entries), path)
		}
	}
	if len(problems) > 0 {
		if !opts.JSON {
			e.errorf("the ledger has %d problem(s); readers leave those items out (every other entry counts, appends go on) until it is repaired", len(problems))
			e.hintf("run 'mcp-circuit-breaker ledger repair' (it keeps a backup and quarantines what it cannot read)")
		}
		return &exitCodeError{code: exitFailure}
	}
	return nil
}

func problemsJSON(problems []ledger.Problem) []problemJSON {
	out := []problemJSON{}
	for _, p := range problems {
		out = append(out, problemJSON{Line: p.Line, Kind: string(p.Kind), Message: p.Msg})
	}
	return out
}

func runLedgerRepair(opts *ledgerOptions, e *Env) error {
	r, err := e.begin(opts.globalOptions, false)
	if err != nil {
		return err
	}
	now, s := r.now, r.store
	var res ledger.RepairResult
	if hasLedger(s) {
		unlock, err := s.Ledger.Lock()
		if err != nil {
			return fmt.Errorf("repair ledger: %w", err)
		}
		res, err = s.Ledger.Repair(now)
		unlock()
		if err != nil {
			return fmt.Errorf("repair ledger: %w", err)
		}
		s.Invalidate()
		// The trip index too, when it is missing or partial (a ledger an earlier version wrote,
		// one cloned with its project): a repaired ledger has a whole one.
		if err := s.Reindex(); err != nil {
			return fmt.Errorf("repair ledger: %w", err)
		}
	}
	if opts.JSON {
		return e.printJSON(repairJSON{Entries: res.Entries, Split: res.Split, Quarantined: problemsJSON(res.Quarantined),
			Backup: res.Backup, Quarantine: res.Quarantine})
	}
	if res.Backup == "" {
		e.printf("ledger OK: %d entries, nothing to repair\n", res.Entries)
		return nil
	}
	e.printf("repaired %s: %d entries, %d merged item(s) split, %d item(s) quarantined\n", s.Ledger.Path(), res.Entries, res.Split, len(res.Quarantined))
	for _, p := range res.Quarantined {
		e.printf("  quarantined line %d: %s\n", p.Line, term.Escape(p.Msg))
	}
	e.printf("backup: %s\n", res.Backup)
	if res.Quarantine != "" {
		e.printf("quarantine: %s\n", res.Quarantine)
	}
	return nil
}

func runLedgerCompact(opts *ledgerOptions, e *Env) error {
	r, err := e.begin(opts.globalOptions, false)
	if err != nil {
		return err
	}
	now := r.now
	cutoff := now.Add(-opts.OlderThan)
	var before, after int
	var backup string
	if hasLedger(r.store) {
		res, err := r.store.Compact(cutoff, now)
		if err != nil {
			return fmt.Errorf("compact ledger: %w", err)
		}
		before, after, backup = res.Before, res.After, res.Backup
	}
	if opts.JSON {
		return e.printJSON(compactJSON{Before: before, After: after, Backup: backup})
	}
	if backup == "" {
		e.printf("nothing to compact: %d entries, none idle before %s\n", before, cutoff.Format(ledger.TimeFormat))
		return nil
	}
	e.printf("compacted %s: %d → %d entries\nbackup: %s\n", r.store.Ledger.Path(), before, after, backup)
	return nil
}
