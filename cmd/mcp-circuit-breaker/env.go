package main

import (
	"encoding/json"
	"errors"
	"io"
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

// checkToolKey returns a usage error when tool is not a circuit key (see [ledger.ParseKey]).
func checkToolKey(tool string) error {
	if _, err := ledger.ParseKey(tool); err != nil {
		if errors.Is(err, ledger.ErrControlChar) {
			return usagef("%q %v", tool, ledger.ErrControlChar)
		}
		return usagef("%q is %v", tool, ledger.ErrNotKey)
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
