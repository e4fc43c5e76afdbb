package gate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/term"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/userenv"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// usage is the lean binary's help.
const usage = `usage: mcp-circuit-breaker-hook [hook] [--agent NAME] [--dir DIR] | statusline [--dir DIR] | --version | --help

The hook of mcp-circuit-breaker: reads one hook event of the agent NAME (default claude: Claude
Code's PreToolUse, PostToolUse, PostToolUseFailure, SessionStart) on stdin and answers in that
agent's shape, for Claude Code JSON on stdout with exit status 0. It is the gate of
'mcp-circuit-breaker hook' in a binary without the CLI framework and the MCP SDK, so that the check
before every MCP call costs about one process start. DIR defaults to $MCP_CIRCUIT_DIR, then
$CLAUDE_PROJECT_DIR, then the current directory. For half_open: probe it runs
'mcp-circuit-breaker probe' from its own directory or PATH.

statusline is Claude Code's status-line command: it reads the session's JSON on stdin and prints
one line naming the MCP circuits that are not CLOSED, with their failure type and when their
trial comes, or nothing when every circuit is CLOSED.
`

// version is set at build time, for both binaries, with
// -ldflags "-X github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate.version=…".
var version = "dev"

// Version is the version set at link time, else the module version go install recorded, else
// "dev". Both binaries print it for --version.
func Version() string {
	if version != "dev" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// DefaultAgent is the agent a hook serves when --agent is not given.
const DefaultAgent = "claude"

// LeanBoard is how the lean binary decides with a fleet-shared board in its own process
// (internal/hookboard.Lean): the board's binding for the project in dir, nil, nil when no board
// is configured, or why this binary cannot reach it as the full CLI would (the event is then
// handed to the full CLI).
type LeanBoard func(getenv func(string) string, dir string) (BindBoard, error)

// Main is the lean hook binary: it parses its few arguments and runs the gate with the codec that
// wire returns for the agent's name, and with board for a user who configured a fleet-shared
// board (nil: every such event is handed to the full CLI). It returns the exit status: the
// codec's for the answer (0 after any Claude Code event: the gate's own failures are answered,
// not crashed on), 2 on a wrong command line. An agent wire does not know is an error that allows the call: exit 0, the
// error on stderr, stdin not read.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string, wire func(agent string) (Wire, error), board LeanBoard) int {
	if len(args) > 0 && args[0] == "statusline" {
		return StatusLineMain(args[1:], stdin, stdout, stderr, getenv)
	}
	if len(args) > 0 && args[0] == "hook" {
		args = args[1:]
	}
	dir, agent := "", DefaultAgent
	catchUp := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--catch-up-snapshot":
			catchUp = true
		case a == "--dir" && i+1 < len(args):
			dir = args[i+1]
			i++
		case strings.HasPrefix(a, "--dir="):
			dir = strings.TrimPrefix(a, "--dir=")
		case a == "--agent" && i+1 < len(args):
			agent = args[i+1]
			i++
		case strings.HasPrefix(a, "--agent="):
			agent = strings.TrimPrefix(a, "--agent=")
		case a == "-h" || a == "--help" || a == "help":
			fmt.Fprint(stdout, usage)
			return 0
		case a == "-v" || a == "--version" || a == "version":
			fmt.Fprintf(stdout, "mcp-circuit-breaker-hook version %s\n", Version())
			return 0
		default:
			fmt.Fprintf(stderr, "mcp-circuit-breaker-hook: error: unknown argument %q\nmcp-circuit-breaker-hook: hint: it takes only [hook] [--agent NAME] [--dir DIR], --version or --help\n", a)
			return 2
		}
	}
	w, err := wire(agent)
	if err != nil {
		fmt.Fprintf(stderr, "mcp-circuit-breaker-hook: error: %v; allowing the call\nmcp-circuit-breaker-hook: hint: fix --agent in the hook's configuration (or run 'mcp-circuit-breaker install --agent NAME' again)\n", term.Escape(err.Error()))
		return 0
	}
	var first []byte
	if sk, ok := w.(Skipper); ok && !catchUp {
		got, inTime, rest := readFirst(stdin, firstWait)
		if inTime && sk.Skips(got) {
			return 0 // about no MCP tool (VS Code sends every tool): allowed, nothing read
		}
		if inTime {
			first = got // decoded by the gate, not read again
		}
		stdin = rest
	}
	// Only the user configures the gate: what a project's settings set in "env" is not obeyed.
	// Nothing below reads a file until the event is known to be about an MCP tool (Run): the
	// settings files, the user's configuration and the decoder's cache are read only then.
	user := userenv.New(getenv, dir)
	getenv = user.Getenv
	d, err := project.ResolveDir(dir, getenv)
	if err != nil {
		fmt.Fprintf(stderr, "mcp-circuit-breaker-hook: error: %v\n", err)
		return 1
	}
	bin := func() (string, error) { return mainBinary(getenv("PATH")) }
	dec := fullDecoder{bin: bin, cache: projectDecoderCache(getenv, d), items: &itemMemo{}, getenv: getenv}
	if catchUp {
		return CatchUpMain(d, dec.decoder(), project.New(d, getenv, stderr, dec.decoder()).Provenance(), stderr)
	}
	degraded := ""
	notice := func() string {
		n := user.Notice()
		if n != "" {
			term.Warnf(stderr, "%s", n)
		}
		if degraded != "" {
			if n != "" {
				n += "\n"
			}
			n += degraded
		}
		return n
	}
	// bind is the board decided in this process, set by handOverTo (asked before any board is
	// bound, and only about MCP tools and SessionStart).
	var bind BindBoard
	handOverTo := func(in io.Reader) (int, bool) {
		if !project.BoardConfigured(getenv) {
			return 0, false
		}
		why := errors.New("it is wired without a board")
		if board != nil {
			var b BindBoard
			if b, why = board(getenv, d); why == nil {
				bind = b
				return 0, false
			}
		}
		path, err := bin()
		if err == nil {
			var code int
			var started bool
			if code, started, err = handOver(path, args, in, stdout, stderr); started {
				if err != nil {
					// The full CLI took the event and failed without an answer: the call goes
					// through, as an agent lets it when a hook crashes.
					term.Warnf(stderr, "%v; allowing the call", err)
				}
				return code, true
			}
		}
		// Decide alone rather than not at all, and say so once: the local ledger still holds
		// every circuit this project saw.
		degraded = fmt.Sprintf("a fleet-shared board is configured, which this binary cannot use (%v): %v; deciding from this project's ledger alone (install mcp-circuit-breaker next to mcp-circuit-breaker-hook)", why, err)
		term.Warnf(stderr, "%s", degraded)
		return 0, false
	}
	p := project.New(d, getenv, stderr, dec.decoder())
	return Run(Config{Project: p, Wire: w, Getenv: getenv, Stdin: stdin, First: first, Stdout: stdout, Stderr: stderr,
		Probe: LazyProber(bin, d), EnvNotice: notice, CatchUp: DetachedCatchUp, HandOver: handOverTo,
		Board: func(ctx context.Context, p *project.Project, tool string, now time.Time, sessionID string) (Board, error) {
			if bind == nil {
				return nil, nil
			}
			return bind(ctx, p, tool, now, sessionID)
		}})
}

// CatchUpMain is `hook --catch-up-snapshot`, the process DetachedCatchUp starts: it brings the
// snapshot of the project in dir up to date, unless another process is already doing so. It
// creates nothing outside an existing state directory. dec reads the items in odd shapes; prov
// checks the entries it reads, so that the snapshot it saves knows which circuits are verified
// (nil: none is).
func CatchUpMain(dir string, dec project.Decoder, prov *ledger.Provenance, stderr io.Writer) int {
	if err := project.CheckDir(dir); err != nil {
		fmt.Fprintf(stderr, "mcp-circuit-breaker-hook: error: %v\n", err)
		return 1
	}
	s := states.NewStore(filepath.Join(dir, project.StateDirName), 0)
	s.Ledger.Slow, s.Ledger.Prefetch = dec.Item, dec.Prefetch
	s.Ledger.Provenance = prov
	if _, err := s.Ledger.Stat(); err != nil {
		fmt.Fprintf(stderr, "mcp-circuit-breaker-hook: error: %v\n", err)
		return 1
	}
	if _, err := s.CatchUpSnapshot(lowerPriority); err != nil {
		fmt.Fprintf(stderr, "mcp-circuit-breaker-hook: error: catch up the snapshot: %v\n", err)
		return 1
	}
	return 0
}

// LazyProber is ExecProber with the binary found (by bin) and the environment copied only when a
// probe runs: every hook event starts a process, and almost none of them probes.
func LazyProber(bin func() (string, error), dir string) func(context.Context, string) error {
	return func(ctx context.Context, key string) error {
		b, err := bin()
		if err != nil {
			return err
		}
		return ExecProber(b, dir, os.Environ())(ctx, key)
	}
}

// mainBinary finds the full CLI, which holds the MCP probe, the YAML reader and the fleet board:
// next to this binary, else on path (the PATH the user set: one a project's settings set is ""
// here, so a repository cannot plant it).
func mainBinary(path string) (string, error) {
	const name = "mcp-circuit-breaker"
	if exe, err := os.Executable(); err == nil {
		// The plugin runs a link to this binary (install --plugin); on systems where the path is
		// the link's, the full CLI is beside what it points to.
		dirs := []string{filepath.Dir(exe)}
		if real, err := filepath.EvalSymlinks(exe); err == nil && filepath.Dir(real) != dirs[0] {
			dirs = append(dirs, filepath.Dir(real))
		}
		for _, d := range dirs {
			sib := filepath.Join(d, name)
			if fi, err := os.Stat(sib); err == nil && !fi.IsDir() {
				return sib, nil
			}
		}
	}
	bin, err := lookPath(path, name)
	if err != nil {
		return "", fmt.Errorf("find %s (the full CLI) next to mcp-circuit-breaker-hook or on PATH: %w", name, err)
	}
	return bin, nil
}

// lookPath finds an executable name in the directories of path, as exec.LookPath does with $PATH.
// Relative directories are skipped: they name whatever the current directory (a repository)
// holds.
func lookPath(path, name string) (string, error) {
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			continue
		}
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: %w", name, exec.ErrNotFound)
}
