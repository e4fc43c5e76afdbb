package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// Env is what every command gets from the edge: streams and environment. The project's files are
// reached through project.Project, which the lean hook binary shares.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string

	notFound string
}

// projectDir resolves DIR: --dir, $MCP_CIRCUIT_DIR, $CLAUDE_PROJECT_DIR, the current directory.
func (e *Env) projectDir(c *cli.Context) (string, error) {
	return project.ResolveDir(c.String("dir"), e.Getenv)
}

// project returns the project the command works on.
func (e *Env) project(c *cli.Context) (*project.Project, error) {
	dir, err := e.projectDir(c)
	if err != nil {
		return nil, err
	}
	return project.New(dir, e.Getenv, e.Stderr), nil
}

// now is the clock: $MCP_CIRCUIT_NOW (RFC 3339) when set, for tests and replays.
func (e *Env) now() (time.Time, error) {
	t, err := project.Now(e.Getenv)
	if err != nil {
		return t, withHint(err, "set it like MCP_CIRCUIT_NOW=2026-11-29T14:23:00Z, or unset it to use the real clock")
	}
	return t, nil
}

func (e *Env) shadow() bool { return project.Shadow(e.Getenv) }

// cmdRun is what a command works on, resolved once: the project (its files: policy, catalog, MCP
// configuration), the clock and the store.
type cmdRun struct {
	*project.Project
	now   time.Time
	store *states.Store
}

// begin resolves the project, the clock and the store for one command; with create it makes the
// state directory (0700), warning once when the project's .gitignore does not ignore it.
func (e *Env) begin(c *cli.Context, create bool) (*cmdRun, error) {
	now, err := e.now()
	if err != nil {
		return nil, err
	}
	p, err := e.project(c)
	if err != nil {
		return nil, err
	}
	s, err := p.Store(create)
	if err != nil {
		return nil, withHint(err, "check that "+p.Dir+"/.claude is writable")
	}
	return &cmdRun{Project: p, now: now, store: s}, nil
}

// printJSON writes v as indented JSON.
func (e *Env) printJSON(v any) error {
	enc := json.NewEncoder(e.Stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// toolArg returns the one TOOL argument, checked to be an MCP tool key.
func toolArg(c *cli.Context) (string, error) {
	if c.NArg() != 1 {
		return "", usagef("%s takes one TOOL argument (mcp__<server>__<tool> or mcp__<server>__*), got %d", c.Command.Name, c.NArg())
	}
	tool := c.Args().First()
	if err := checkToolKey(tool); err != nil {
		return "", err
	}
	return tool, nil
}

func checkToolKey(tool string) error {
	rest, ok := strings.CutPrefix(tool, "mcp__")
	i := strings.Index(rest, "__")
	if !ok || i <= 0 || i+2 >= len(rest) {
		return usagef("%q is not an MCP tool name: want mcp__<server>__<tool>, or mcp__<server>__* for a whole server", tool)
	}
	for _, r := range tool {
		if r < 0x20 || r == 0x7f {
			return usagef("%q holds a control character", tool)
		}
	}
	return nil
}

func timeOrNull(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(ledger.TimeFormat)
}

func withFallbackHint(err error, p *project.Project) error {
	return withHint(err, "fix the lines named above in "+p.CatalogPath())
}

// share makes the command decide about tool through the fleet-shared board, when the user
// configured one (internal/fleet), like the hook does; the returned function, deferred, says on
// stderr when the board could not be used and closes it.
func (r *cmdRun) share(e *Env, tool string) func() {
	b, err := r.BindFleet(context.Background(), tool, r.now, "")
	if err != nil {
		fmt.Fprintf(e.Stderr, "mcp-circuit-breaker: warning: %v; this command used the project's ledger alone\n", err)
		return func() {}
	}
	if b == nil {
		return func() {}
	}
	r.store.Shared = b
	return func() {
		if b.Last.Away != nil {
			fmt.Fprintf(e.Stderr, "mcp-circuit-breaker: warning: the fleet-shared board %s is unreachable (%v); this command used the project's ledger alone\n",
				b.Board().Config().Redacted(), b.Last.Away)
		}
		b.Board().Close()
	}
}
