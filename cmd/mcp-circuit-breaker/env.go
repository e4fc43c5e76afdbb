package main

import (
	"context"
	"errors"
	"io"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/message"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/userenv"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/yamlfile"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// Env is the io of every run function: streams, environment and the zone human output is shown
// in. The project's files are reached through project.Project, which the lean hook binary shares.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Getenv is the environment as the gate obeys it: without what a project's settings set
	// (internal/userenv).
	Getenv func(string) string
	// Loc is the zone of times in human output (the TZ of the process); the ledger and JSON keep
	// UTC.
	Loc *time.Location

	// user is the filter behind Getenv, for doctor and the hook's notice; nil in tests that
	// build an Env by hand.
	user *userenv.Env

	// notFound is the unknown command urfave reported, turned into a usage error after it.
	notFound *usageError

	// saidProject is set once the project found above the current directory was said.
	saidProject bool
	// saidPolicy is set once an invalid policy.yaml was said.
	saidPolicy bool
}

// globalOptions are the options every command shares.
type globalOptions struct {
	// Dir is --dir, placed before the command (the global flag) or after it; "" when not given.
	Dir string
	// JSON is --json: print data, not text.
	JSON bool
	// LockWait is --lock-wait when given: how long a command waits for the ledger lock.
	LockWait *time.Duration
}

// parseGlobal reads the shared options. A --dir that does not exist is an error for every
// command, even one that reads no project: a mistyped directory must never pass silently.
func parseGlobal(c *cli.Context) (globalOptions, error) {
	g := globalOptions{Dir: dirFlagValue(c), JSON: c.Bool("json")}
	if c.IsSet("lock-wait") {
		d := c.Duration("lock-wait")
		g.LockWait = &d
	}
	if g.Dir != "" {
		if err := project.CheckDir(g.Dir); err != nil {
			return g, err
		}
	}
	return g, nil
}

// dirFlagValue is --dir wherever it was placed. A flag of the command's own shadows the global one
// of the same name in urfave's lookup, so each level is asked in turn, the command's first.
func dirFlagValue(c *cli.Context) string {
	for _, x := range c.Lineage() {
		if d := x.String("dir"); d != "" {
			return d
		}
	}
	return ""
}

// action is the urfave Action of a command: parse fills its options from the command line, run
// does the work with nothing but the options and the Env.
func action[O any](e *Env, parse func(*cli.Context) (*O, error), run func(*O, *Env) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		opts, err := parse(c)
		if err != nil {
			return err
		}
		return run(opts, e)
	}
}

// projectDir resolves the project directory: --dir, $MCP_CIRCUIT_DIR, $CLAUDE_PROJECT_DIR, the
// current directory, which must exist.
// From a subdirectory it finds the project as git does (project.Locate) and says which, once per
// process.
func (e *Env) projectDir(dir string) (string, error) {
	l, err := project.Locate(dir, e.Getenv)
	if err != nil {
		return "", err
	}
	if said := l.Said(); said != "" && !e.saidProject {
		e.saidProject = true
		e.notef("%s", said)
	}
	return l.Dir, project.CheckDir(l.Dir)
}

// project returns the project in projectDir(dir).
func (e *Env) project(dir string) (*project.Project, error) {
	d, err := e.projectDir(dir)
	if err != nil {
		return nil, err
	}
	return project.New(d, e.Getenv, e.Stderr, yamlDecoder()), nil
}

// usablePolicy reads p's policy.yaml for any command: a file that is not valid (a typo in a
// key, a value of the wrong kind) is a warning naming each line, and the built-in values apply to
// what is invalid, as in the hook; it never stops a command. Said once per process.
func (e *Env) usablePolicy(p *project.Project) *states.Policy {
	pol, err := p.UsablePolicy()
	if err != nil && !e.saidPolicy {
		e.saidPolicy = true
		e.warnf("%s", message.PolicyWarning(err))
	}
	return pol
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
func (e *Env) begin(g globalOptions, create bool) (*cmdRun, error) {
	now, err := e.now()
	if err != nil {
		return nil, err
	}
	p, err := e.project(g.Dir)
	if err != nil {
		return nil, err
	}
	if p.LockWait, err = e.lockWait(g); err != nil {
		return nil, err
	}
	p.LockWaiting = func(d time.Duration) {
		e.notef("another process holds the ledger lock; waiting up to %s for it (--lock-wait)", d)
	}
	s, err := p.Store(create)
	if err != nil {
		return nil, withHint(err, "check that "+p.Dir+"/.claude is writable")
	}
	said := false
	s.Damaged = func(path string, d states.Damage) {
		if !said {
			said = true
			e.warnf("%s", d.Summary(path))
		}
	}
	return &cmdRun{Project: p, now: now, store: s}, nil
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

// checkToolKey checks that tool is a name Claude Code can give a tool: mcp__<server>__<tool>, or
// mcp__<server>__* for a whole server. Claude Code writes every space and control character of a
// name as '_', so a name holding one can only be a typing or quoting mistake, and it would make a
// circuit no call ever reaches.
func checkToolKey(tool string) error {
	_, err := ledger.ParseKey(tool)
	var ce *ledger.CharError
	switch {
	case errors.As(err, &ce):
		return usagef("%q holds a space or control character (%U): an MCP tool name is mcp__<server>__<tool>, where Claude Code has replaced every such character with '_'", tool, ce.Rune)
	case err != nil:
		return usagef("%q is not an MCP tool name: want mcp__<server>__<tool>, or mcp__<server>__* for a whole server", tool)
	}
	return nil
}

func withFallbackHint(err error, p *project.Project) error {
	return withHint(err, "fix the lines named above in "+p.CatalogPath())
}

// share makes the command decide about tool through the fleet-shared board, when the user
// configured one (internal/fleet), like the hook does; the returned function, deferred, says on
// stderr when the board could not be used and closes it.
func (r *cmdRun) share(e *Env, tool string) func() {
	return e.shareStore(r.Project, r.store, tool, r.now)
}

// shareStore binds the fleet board (when configured) to st for decisions about key; the returned
// function says on stderr when the board could not be used, unbinds and closes it.
func (e *Env) shareStore(p *project.Project, st *states.Store, key string, now time.Time) func() {
	return e.shareKeys(p, st, ledger.Key(key).Circuits(), now)
}

// shareKeys is shareStore for several keys of one server.
func (e *Env) shareKeys(p *project.Project, st *states.Store, keys []string, now time.Time) func() {
	b, err := fullBoard().BindProjectKeys(context.Background(), p, keys, now, "")
	if err != nil {
		e.warnf("%v; this command used the project's ledger alone", err)
		return func() {}
	}
	if b == nil {
		return func() {}
	}
	st.Shared = b
	return func() {
		if b.Last.Away != nil {
			e.warnf("the fleet-shared board %s is unreachable (%v); this command used the project's ledger alone",
				b.Board().Config().Redacted(), b.Last.Away)
		}
		st.Shared, p.Shared = nil, nil
		b.Board().Close()
	}
}

// noArgs is the usage error of a command that takes no arguments.
func noArgs(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef("%s takes no arguments, got %q", c.Command.FullName(), c.Args().First())
	}
	return nil
}

// hasLedger reports whether the project has a ledger. Without one there is nothing to reset,
// repair or compact, and no state directory is made for those commands.
func hasLedger(s *states.Store) bool {
	_, err := os.Stat(s.Ledger.Path())
	return err == nil
}

// commandLockWait is how long a command waits for the ledger lock by default: a person or a script
// waits for a busy ledger rather than lose a record; only the hook keeps the short bound that fits
// its budget (ledger.DefaultLockWait).
const commandLockWait = 2 * time.Minute

// lockWait is --lock-wait, else $MCP_CIRCUIT_LOCK_WAIT, else commandLockWait.
func (e *Env) lockWait(g globalOptions) (time.Duration, error) {
	if g.LockWait != nil {
		if *g.LockWait <= 0 {
			return 0, usagef("--lock-wait %s: want a positive duration such as 30s or 5m", *g.LockWait)
		}
		return *g.LockWait, nil
	}
	switch d, ok, err := project.EnvLockWait(e.Getenv); {
	case err != nil:
		return 0, withHint(err, "set it like MCP_CIRCUIT_LOCK_WAIT=30s, or unset it")
	case ok:
		return d, nil
	}
	return commandLockWait, nil
}

// yamlDecoder reads the project's YAML with yaml.v3 (internal/yamlfile): the full CLI links it,
// the lean hook asks this binary (hook --decode).
func yamlDecoder() project.Decoder {
	return project.Decoder{Policy: yamlfile.UsablePolicy, Catalog: yamlfile.Catalog, Item: yamlfile.Item}
}
