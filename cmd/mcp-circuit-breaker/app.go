package main

// The command plumbing, in the cli/cli shape: each subcommand has an options struct and a
// run<Command>(opts, e) function; urfave/cli only parses the command line into the struct
// (parse<Command>), and this file is the one place where errors become exit codes.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/userenv"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// Exit codes (docs/cli.md).
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
	exitBlocked = 3
)

// usageError is returned when the command line is wrong.
type usageError struct {
	msg  string
	hint string
}

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{msg: fmt.Sprintf(format, args...)} }

// exitCodeError carries an exit code other than 1 for a command whose result is not an error as
// such (check found the circuit open, a probe found a server unhealthy). The command has already
// printed its output.
type exitCodeError struct{ code int }

func (e *exitCodeError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// hintError adds hints to an error.
type hintError struct {
	err   error
	hints []string
}

func (e *hintError) Error() string { return e.err.Error() }
func (e *hintError) Unwrap() error { return e.err }

func withHint(err error, hints ...string) error { return &hintError{err: err, hints: hints} }

// Main runs the command line and returns the exit code.
func Main() int {
	// SIGTERM and Ctrl-C cancel the command's context, so that a probe stops its server's whole
	// process group before exiting: the hook ends a probe that runs out of its budget this way.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	return runContext(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr, os.Getenv)
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	return runContext(context.Background(), args, stdin, stdout, stderr, getenv)
}

func runContext(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	// Only the user configures the gate: what a project's settings set in "env" is not obeyed,
	// and said once, before anything else.
	user := userenv.New(getenv, dirArgs(args)...)
	e := &Env{Stdin: stdin, Stdout: stdout, Stderr: stderr, Getenv: user.Getenv, Loc: time.Local, user: user}
	if n := user.Notice(); n != "" {
		e.warnf("%s", n)
	}
	app := newApp(e)
	err := app.RunContext(ctx, interspersed(app, args))
	return e.exitCode(err)
}

// dirArgs returns every --dir value on the command line, before urfave parses it: the settings
// of the directory a command will guard are read too (internal/userenv).
func dirArgs(args []string) []string {
	var dirs []string
	for i, a := range args {
		switch {
		case a == "--":
			return dirs
		case (a == "--dir" || a == "-dir") && i+1 < len(args):
			dirs = append(dirs, args[i+1])
		case strings.HasPrefix(a, "--dir="):
			dirs = append(dirs, strings.TrimPrefix(a, "--dir="))
		}
	}
	return dirs
}

// exitCode prints err once, in the house format, and maps it to the exit code. It is the one place
// where errors become exit codes.
func (e *Env) exitCode(err error) int {
	if err == nil {
		return exitOK
	}
	var ec *exitCodeError
	if errors.As(err, &ec) {
		return ec.code
	}
	var ue *usageError
	if errors.As(err, &ue) {
		e.errorf("%s", ue.msg)
		if ue.hint != "" {
			e.hintf("%s", ue.hint)
		}
		e.hintf("run 'mcp-circuit-breaker help' or add --help to the command")
		return exitUsage
	}
	e.errorf("%s", strings.ReplaceAll(err.Error(), "\n", "\n  "))
	var he *hintError
	if errors.As(err, &he) {
		for _, h := range he.hints {
			e.hintf("%s", h)
		}
	}
	switch {
	case errors.Is(err, ledger.ErrCorrupt):
		e.hintf("run 'mcp-circuit-breaker ledger verify' to see every problem, then 'mcp-circuit-breaker ledger repair' (it keeps a backup)")
	case errors.Is(err, ledger.ErrLockTimeout):
		e.hintf("another mcp-circuit-breaker holds the ledger lock; try again, or look for a stuck process")
	case errors.Is(err, states.ErrInvalidPolicy):
		e.hintf("fix the lines above in policy.yaml; 'mcp-circuit-breaker policy show' prints the effective policy")
	case errors.Is(err, project.ErrNoProject):
		e.hintf("run it in the project directory, or pass --dir (or set MCP_CIRCUIT_DIR) to an existing one")
	}
	return exitFailure
}

func newApp(e *Env) *cli.App {
	app := &cli.App{
		Name:    "mcp-circuit-breaker",
		Usage:   "stop AI agents from retrying broken MCP tools",
		Version: gate.Version(),
		Description: "Keeps a circuit per MCP tool and per server in an append-only YAML ledger\n" +
			"(.claude/mcp_circuit/circuit_log.yaml), trips it by failure type, blocks OPEN circuits\n" +
			"through Claude Code's PreToolUse hook, proposes fallbacks and probes servers with a real\n" +
			"MCP handshake before letting calls through again.",
		Reader:    e.Stdin,
		Writer:    e.Stdout,
		ErrWriter: e.Stderr,
		Flags: []cli.Flag{
			dirFlag(),
			&cli.DurationFlag{Name: "lock-wait", Value: commandLockWait,
				Usage: "how long a command waits for the ledger lock held by another process (default $MCP_CIRCUIT_LOCK_WAIT, else 2m; the hook always waits at most 2s)"},
		},
		// Errors are printed and mapped to exit codes in one place (exitCode), never by urfave.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(c *cli.Context, err error, isSub bool) error {
			return usagef("%s", doubleDash(err.Error()))
		},
		CommandNotFound: func(c *cli.Context, name string) {
			e.notFound = &usageError{msg: fmt.Sprintf("unknown command %q", name)}
			cmds := c.App.Commands
			if c.Command != nil && c.Command.Name != c.App.Name && len(c.Command.Subcommands) > 0 {
				cmds = c.Command.Subcommands
				e.notFound.msg = fmt.Sprintf("%s: unknown command %q", c.Command.Name, name)
			}
			if s := suggest(name, commandNames(cmds)); s != "" {
				e.notFound.hint = fmt.Sprintf("did you mean %q?", s)
			}
		},
		Suggest:              true,
		EnableBashCompletion: true,
	}
	app.Commands = []*cli.Command{
		recordCommand(e),
		successCommand(e),
		checkCommand(e),
		classifyCommand(e),
		statusCommand(e),
		resetCommand(e),
		tripCommand(e),
		ledgerCommand(e),
		policyCommand(e),
		hookCommand(e),
		statuslineCommand(e),
		fallbacksCommand(e),
		reportCommand(e),
		probeCommand(e),
		proxyCommand(e),
		serversCommand(e),
		demoCommand(e),
		installCommand(e),
		uninstallCommand(e),
		doctorCommand(e),
		completionCommand(e),
	}
	for _, c := range app.Commands {
		wrapUsage(c)
	}
	app.After = func(c *cli.Context) error {
		if e.notFound != nil {
			return e.notFound
		}
		return nil
	}
	return app
}

// wrapUsage makes flag errors of every command usage errors (exit 2).
func wrapUsage(c *cli.Command) {
	c.OnUsageError = func(_ *cli.Context, err error, _ bool) error {
		ue := &usageError{msg: fmt.Sprintf("%s: %s", c.Name, doubleDash(err.Error()))}
		if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -"); ok {
			var names []string
			for _, f := range c.Flags {
				names = append(names, f.Names()...)
			}
			if s := suggest(strings.TrimLeft(name, "-"), names); s != "" {
				ue.hint = fmt.Sprintf("did you mean --%s?", s)
			}
		}
		return ue
	}
	for _, s := range c.Subcommands {
		wrapUsage(s)
	}
}

// flagName is a flag named in the standard library's parse errors ("flag provided but not defined:
// -frob", "invalid value "x" for flag -status: …"), which print one dash whatever was typed.
var flagName = regexp.MustCompile(`(flag provided but not defined: |flag needs an argument: |for flag )-([A-Za-z0-9][A-Za-z0-9-]+)`)

// doubleDash rewrites the flag names of a parse error to the form --help lists them in.
func doubleDash(msg string) string { return flagName.ReplaceAllString(msg, "${1}--${2}") }

// commandNames are the names of the visible commands.
func commandNames(cmds []*cli.Command) []string {
	var names []string
	for _, c := range cmds {
		if !c.Hidden {
			names = append(names, c.Names()...)
		}
	}
	return names
}

// suggest returns the name among names that name is most likely a misspelling of, or "": a
// prefix of at least two letters, else the nearest within about a third of its length.
func suggest(name string, names []string) string {
	best, bestD := "", len(name)/3+2
	for _, n := range names {
		d := editDistance(name, n)
		if strings.HasPrefix(n, name) && len(name) >= 2 {
			d = 1
		}
		if d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

func dirFlag() cli.Flag {
	return &cli.StringFlag{Name: "dir", Usage: "project directory, which must exist (default: $MCP_CIRCUIT_DIR, $CLAUDE_PROJECT_DIR, or the project the current directory is in: the nearest directory up with .claude/mcp_circuit/, else the git work tree's root)"}
}

func jsonFlag() cli.Flag {
	return &cli.BoolFlag{Name: "json", Usage: "print JSON"}
}
