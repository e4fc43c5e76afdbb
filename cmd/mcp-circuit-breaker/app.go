package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// Exit codes (SPEC §11).
const (
	exitOK      = 0
	exitFailure = 1
	exitUsage   = 2
	exitBlocked = 3
)

// usageError is returned when the command line is wrong.
type usageError struct{ msg string }

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

// buildVersion is the version set at link time, else the module version go install recorded.
func buildVersion() string {
	if version != "dev" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return version
}

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
	app := newApp(stdin, stdout, stderr, getenv)
	err := app.RunContext(ctx, interspersed(app, args))
	return exitCode(stderr, err)
}

// exitCode prints err once, in the house format, and maps it to the exit code. It is the one place
// where errors become exit codes.
func exitCode(stderr io.Writer, err error) int {
	if err == nil {
		return exitOK
	}
	var ec *exitCodeError
	if errors.As(err, &ec) {
		return ec.code
	}
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "mcp-circuit-breaker: error: %s\n", ue.msg)
		fmt.Fprintf(stderr, "mcp-circuit-breaker: hint: run 'mcp-circuit-breaker help' or add --help to the command\n")
		return exitUsage
	}
	msg := err.Error()
	fmt.Fprintf(stderr, "mcp-circuit-breaker: error: %s\n", strings.ReplaceAll(msg, "\n", "\n  "))
	var he *hintError
	if errors.As(err, &he) {
		for _, h := range he.hints {
			fmt.Fprintf(stderr, "mcp-circuit-breaker: hint: %s\n", h)
		}
	}
	switch {
	case errors.Is(err, ledger.ErrCorrupt):
		fmt.Fprintf(stderr, "mcp-circuit-breaker: hint: run 'mcp-circuit-breaker ledger verify' to see every problem, then 'mcp-circuit-breaker ledger repair' (it keeps a backup)\n")
	case errors.Is(err, ledger.ErrLockTimeout):
		fmt.Fprintf(stderr, "mcp-circuit-breaker: hint: another mcp-circuit-breaker holds the ledger lock; try again, or look for a stuck process\n")
	case errors.Is(err, states.ErrInvalidPolicy):
		fmt.Fprintf(stderr, "mcp-circuit-breaker: hint: fix the lines above in policy.yaml; 'mcp-circuit-breaker policy show' prints the effective policy once it is valid\n")
	}
	return exitFailure
}

func newApp(stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) *cli.App {
	env := &Env{Stdin: stdin, Stdout: stdout, Stderr: stderr, Getenv: getenv}
	app := &cli.App{
		Name:    "mcp-circuit-breaker",
		Usage:   "stop AI agents from retrying broken MCP tools",
		Version: buildVersion(),
		Description: "Keeps a circuit per MCP tool and per server in an append-only YAML ledger\n" +
			"(.claude/mcp_circuit/circuit_log.yaml), trips it by failure type, blocks OPEN circuits\n" +
			"through Claude Code's PreToolUse hook, proposes fallbacks and probes servers with a real\n" +
			"MCP handshake before letting calls through again.",
		Reader:    stdin,
		Writer:    stdout,
		ErrWriter: stderr,
		Flags: []cli.Flag{
			dirFlag(),
			&cli.DurationFlag{Name: "lock-wait", Value: commandLockWait,
				Usage: "how long a command waits for the ledger lock held by another process (default $MCP_CIRCUIT_LOCK_WAIT, else 2m; the hook always waits at most 2s)"},
		},
		// Errors are printed and mapped to exit codes in one place (report), never by urfave.
		ExitErrHandler: func(*cli.Context, error) {},
		OnUsageError: func(c *cli.Context, err error, isSub bool) error {
			return usagef("%v", err)
		},
		CommandNotFound: func(c *cli.Context, name string) {
			env.notFound = name
		},
		HideHelpCommand: false,
		Suggest:         true,
	}
	app.Commands = []*cli.Command{
		recordCommand(env),
		successCommand(env),
		checkCommand(env),
		classifyCommand(env),
		statusCommand(env),
		resetCommand(env),
		tripCommand(env),
		ledgerCommand(env),
		policyCommand(env),
		hookCommand(env),
		fallbacksCommand(env),
		reportCommand(env),
		probeCommand(env),
		serversCommand(env),
		demoCommand(env),
		installCommand(env),
		uninstallCommand(env),
		doctorCommand(env),
	}
	for _, c := range app.Commands {
		wrapUsage(c)
	}
	app.After = func(c *cli.Context) error {
		if env.notFound != "" {
			return usagef("unknown command %q", env.notFound)
		}
		return nil
	}
	return app
}

// wrapUsage makes flag errors of every command usage errors (exit 2).
func wrapUsage(c *cli.Command) {
	c.OnUsageError = func(_ *cli.Context, err error, _ bool) error { return usagef("%s: %v", c.Name, err) }
	for _, s := range c.Subcommands {
		wrapUsage(s)
	}
}

func dirFlag() cli.Flag {
	return &cli.StringFlag{Name: "dir", Usage: "project directory (default: $MCP_CIRCUIT_DIR, $CLAUDE_PROJECT_DIR, or the current directory)"}
}

func jsonFlag() cli.Flag {
	return &cli.BoolFlag{Name: "json", Usage: "print JSON"}
}
