package main

import (
	"encoding/json"
	"io"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/failure"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/store"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/mcpconfig"
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

func (e *Env) stateDir(c *cli.Context) (string, error) {
	p, err := e.project(c)
	if err != nil {
		return "", err
	}
	return p.StateDir(), nil
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

// openStore returns the store of the project; with create it makes the state directory (0700) and
// warns once when the project's .gitignore does not ignore it.
func (e *Env) openStore(c *cli.Context, create bool) (*store.Store, error) {
	p, err := e.project(c)
	if err != nil {
		return nil, err
	}
	s, err := p.Store(create)
	if err != nil {
		return nil, withHint(err, "check that "+p.Dir+"/.claude is writable")
	}
	return s, nil
}

// loadPolicy reads DIR/.claude/mcp_circuit/policy.yaml; a missing file is the built-in policy.
func (e *Env) loadPolicy(c *cli.Context) (*states.Policy, error) {
	p, err := e.project(c)
	if err != nil {
		return nil, err
	}
	return p.Policy()
}

// discover finds the MCP servers of the project and the user (SPEC §8); extra holds --mcp-config
// values.
func (e *Env) discover(c *cli.Context, extra []string) ([]mcpconfig.Server, error) {
	p, err := e.project(c)
	if err != nil {
		return nil, err
	}
	return p.Discover(extra)
}

// fingerprint is the configuration fingerprint of the server of key for AUTH and ADMIN_GATED.
func (e *Env) fingerprint(c *cli.Context, key string, t failure.Type) string {
	p, err := e.project(c)
	if err != nil {
		return ""
	}
	return p.Fingerprint(key, t)
}

// withFingerprint fills call.Fingerprint when a blocking circuit waits for fixed credentials.
func (e *Env) withFingerprint(c *cli.Context, b *states.Board, call states.Call) states.Call {
	p, err := e.project(c)
	if err != nil {
		return call
	}
	return p.WithFingerprint(b, call)
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
