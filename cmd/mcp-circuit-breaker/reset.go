package main

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// resetOptions are the options of reset.
type resetOptions struct {
	globalOptions
	// Tool is the key to close; "" with All.
	Tool string
	All  bool
}

// resetJSON is reset's --json output.
type resetJSON struct {
	Reset    []string `json:"reset"`
	Messages []string `json:"messages"`
}

func resetCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:      "reset",
		Usage:     "close a circuit by hand (reset_method: user_forced)",
		ArgsUsage: "TOOL | --all",
		Flags:     []cli.Flag{&cli.BoolFlag{Name: "all", Usage: "close every circuit that is not idle"}, dirFlag(), jsonFlag()},
		Action:    action(e, parseReset, runReset),
	}
}

func parseReset(c *cli.Context) (*resetOptions, error) {
	g, err := parseGlobal(c)
	if err != nil {
		return nil, err
	}
	opts := &resetOptions{globalOptions: g, All: c.Bool("all")}
	switch {
	case opts.All && c.NArg() > 0:
		return nil, usagef("reset takes TOOL or --all, not both")
	case !opts.All:
		if opts.Tool, err = toolArg(c); err != nil {
			return nil, err
		}
	}
	return opts, nil
}

func runReset(opts *resetOptions, e *Env) error {
	all, tool := opts.All, opts.Tool
	// Closing needs an open circuit, which needs a ledger: a project without a state directory
	// has nothing to reset, and gets none made for it.
	r, err := e.begin(opts.globalOptions, false)
	if err != nil {
		return err
	}
	if !all {
		defer r.share(e, tool)()
	}
	now, s := r.now, r.store
	var entries []ledger.Entry
	if all {
		entries, err = e.resetAll(r)
		if err != nil {
			return fmt.Errorf("reset: %w", err)
		}
	} else if hasLedger(s) {
		_, err = s.Update(func(b *states.Board) ([]ledger.Entry, error) {
			keys := []string{tool}
			entries = nil
			for _, k := range keys {
				entries = append(entries, b.Reset(states.Call{Tool: k, Source: ledger.SourceCLI}, now)...)
			}
			return entries, nil
		})
		if err != nil {
			return fmt.Errorf("reset: %w", err)
		}
	}
	var msgs []string
	for _, en := range entries {
		msgs = append(msgs, fmt.Sprintf("Circuit CLOSED — %s (reset_method: user_forced).", en.Tool))
	}
	if len(msgs) == 0 {
		if all {
			msgs = append(msgs, "All circuits already CLOSED: nothing to reset.")
		} else {
			msgs = append(msgs, fmt.Sprintf("%s is already CLOSED with no failures: nothing to reset.", tool))
		}
	}
	if !all && !ledger.Key(tool).IsServer() && hasLedger(s) {
		s, _ := s.View()
		if sc := s.Get(string(ledger.Key(tool).ServerKey())); sc != nil && sc.State != ledger.Closed {
			msgs = append(msgs, fmt.Sprintf("Note: the server circuit %s is still %s and still blocks this tool; reset it too if the server is fixed.", sc.Key, sc.State))
		}
	}
	if opts.JSON {
		return e.printJSON(resetJSON{Reset: keysOf(entries), Messages: msgs})
	}
	for _, m := range msgs {
		e.println(m)
	}
	return nil
}

// resetAll closes every circuit that is not idle (one that only knows its tool worked has nothing to
// reset): this project's, and those the fleet-shared board
// holds for its servers (so the next hook does not learn them OPEN again), one server at a time
// through the board, each server's under one decision.
func (e *Env) resetAll(r *cmdRun) ([]ledger.Entry, error) {
	s, now := r.store, r.now
	var local []string
	if hasLedger(s) {
		b, err := s.View()
		if err != nil {
			return nil, err
		}
		for _, k := range b.Keys() {
			if c := b.Get(k); !c.Idle() && !c.OnlyWorked() {
				local = append(local, k)
			}
		}
	}
	byServer := map[string][]string{}
	var servers []string
	add := func(k string) {
		sv := ledger.Key(k).Server()
		if _, ok := byServer[sv]; !ok {
			servers = append(servers, sv)
		}
		if !slices.Contains(byServer[sv], k) {
			byServer[sv] = append(byServer[sv], k)
		}
	}
	for _, k := range local {
		add(k)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	shared, ferr := fullBoard().ProjectCircuits(ctx, r.Project, local, now)
	cancel()
	if ferr != nil {
		e.warnf("%v; reset --all closed this project's circuits only", ferr)
	}
	for _, c := range shared {
		if c.State != ledger.Closed || c.FailureCount > 0 {
			add(c.Key)
		}
	}
	sort.Strings(servers)
	var entries []ledger.Entry
	for _, sv := range servers {
		keys := byServer[sv]
		if len(keys) == 0 {
			continue
		}
		if _, err := s.Ledger.EnsureDir(); err != nil {
			return entries, err
		}
		unbind := e.shareKeys(r.Project, s, keys, now)
		var mine []ledger.Entry
		_, err := s.Update(func(b *states.Board) ([]ledger.Entry, error) {
			mine = nil
			for _, k := range keys {
				mine = append(mine, b.Reset(states.Call{Tool: k, Source: ledger.SourceCLI}, now)...)
			}
			return mine, nil
		})
		unbind()
		if err != nil {
			return entries, err
		}
		entries = append(entries, mine...)
	}
	return entries, nil
}
