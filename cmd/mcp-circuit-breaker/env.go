package main

import (
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
	if p.LockWait, err = e.lockWait(c); err != nil {
		return nil, err
	}
	p.LockWaiting = func(d time.Duration) {
		fmt.Fprintf(e.Stderr, "mcp-circuit-breaker: note: another process holds the ledger lock; waiting up to %s for it (--lock-wait)\n", d)
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

// commandLockWait is how long a command waits for the ledger lock by default: a person or a script
// waits for a busy ledger rather than lose a record; only the hook keeps the short bound that fits
// its budget (ledger.DefaultLockWait).
const commandLockWait = 2 * time.Minute

// lockWait is --lock-wait, else $MCP_CIRCUIT_LOCK_WAIT, else commandLockWait.
func (e *Env) lockWait(c *cli.Context) (time.Duration, error) {
	if c.IsSet("lock-wait") {
		d := c.Duration("lock-wait")
		if d <= 0 {
			return 0, usagef("--lock-wait %s: want a positive duration such as 30s or 5m", d)
		}
		return d, nil
	}
	if v := e.Getenv("MCP_CIRCUIT_LOCK_WAIT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return 0, withHint(fmt.Errorf("read MCP_CIRCUIT_LOCK_WAIT %q: not a positive duration", v), "set it like MCP_CIRCUIT_LOCK_WAIT=30s, or unset it")
		}
		return d, nil
	}
	return commandLockWait, nil
}

// warnf prints a "mcp-circuit-breaker: warning: …" line on stderr.
func (e *Env) warnf(format string, args ...any) {
	fmt.Fprintf(e.Stderr, "mcp-circuit-breaker: warning: "+format+"\n", args...)
}
