package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/failure"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/store"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/mcpconfig"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// Env is what every command gets from the edge: streams, environment, and the values derived from
// them (project directory, clock).
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string

	notFound string
}

// StateDirName is the state directory inside the project directory.
const StateDirName = ".claude/mcp_circuit"

// projectDir resolves DIR: --dir, $MCP_CIRCUIT_DIR, $CLAUDE_PROJECT_DIR, the current directory.
func (e *Env) projectDir(c *cli.Context) (string, error) {
	dir := c.String("dir")
	if dir == "" {
		dir = e.Getenv("MCP_CIRCUIT_DIR")
	}
	if dir == "" {
		dir = e.Getenv("CLAUDE_PROJECT_DIR")
	}
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return "", fmt.Errorf("find project directory: %w", err)
		}
		dir = wd
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("find project directory: %w", err)
	}
	return abs, nil
}

func (e *Env) stateDir(c *cli.Context) (string, error) {
	dir, err := e.projectDir(c)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, StateDirName), nil
}

// now is the clock: $MCP_CIRCUIT_NOW (RFC 3339) when set, for tests and replays.
func (e *Env) now() (time.Time, error) {
	if s := e.Getenv("MCP_CIRCUIT_NOW"); s != "" {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return time.Time{}, withHint(fmt.Errorf("read MCP_CIRCUIT_NOW %q: not an RFC 3339 time", s),
				"set it like MCP_CIRCUIT_NOW=2026-11-29T14:23:00Z, or unset it to use the real clock")
		}
		return t.UTC(), nil
	}
	return time.Now().UTC(), nil
}

// lockWait is the ledger lock bound; MCP_CIRCUIT_LOCK_WAIT overrides it (tests of the bound).
func (e *Env) lockWait() time.Duration {
	if d, err := time.ParseDuration(e.Getenv("MCP_CIRCUIT_LOCK_WAIT")); err == nil && d > 0 {
		return d
	}
	return ledger.DefaultLockWait
}

func (e *Env) shadow() bool {
	v := e.Getenv("MCP_CIRCUIT_FAIL_OPEN")
	return v != "" && v != "0" && !strings.EqualFold(v, "false")
}

// openStore returns the store of the project; with create it makes the state directory (0700) and
// warns once when the project's .gitignore does not ignore it.
func (e *Env) openStore(c *cli.Context, create bool) (*store.Store, error) {
	sd, err := e.stateDir(c)
	if err != nil {
		return nil, err
	}
	s := store.New(sd, e.lockWait())
	if create {
		made, err := s.Ledger.EnsureDir()
		if err != nil {
			return nil, withHint(err, "check that "+filepath.Dir(sd)+" is writable")
		}
		if made {
			e.warnGitignore(filepath.Dir(filepath.Dir(sd)))
		}
	}
	return s, nil
}

// warnGitignore prints one warning when DIR/.gitignore does not ignore the state directory.
func (e *Env) warnGitignore(projectDir string) {
	if gitignored(projectDir) {
		return
	}
	fmt.Fprintf(e.Stderr, "mcp-circuit-breaker: warning: %s is not git-ignored; add the line '.claude/mcp_circuit/' to %s (or run 'mcp-circuit-breaker install')\n",
		StateDirName+"/", filepath.Join(projectDir, ".gitignore"))
}

var ignoreLine = regexp.MustCompile(`^/?(\.claude/mcp_circuit/?|\.claude/mcp_circuit/\*\*?|\.claude/?|\.claude/\*\*?)$`)

// gitignored reports whether DIR/.gitignore has a line that ignores .claude/mcp_circuit/.
func gitignored(projectDir string) bool {
	f, err := os.Open(filepath.Join(projectDir, ".gitignore"))
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if ignoreLine.MatchString(strings.TrimSpace(sc.Text())) {
			return true
		}
	}
	return false
}

// loadPolicy reads DIR/.claude/mcp_circuit/policy.yaml; a missing file is the built-in policy.
func (e *Env) loadPolicy(c *cli.Context) (*states.Policy, error) {
	sd, err := e.stateDir(c)
	if err != nil {
		return nil, err
	}
	name := filepath.Join(sd, "policy.yaml")
	data, err := os.ReadFile(name)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read policy: %w", err)
	}
	return states.ParsePolicy(name, data)
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

// discover finds the MCP servers of the project and the user (SPEC §8); extra holds --mcp-config
// values. Problems with single files come back as the error while the rest is still used.
func (e *Env) discover(c *cli.Context, extra []string) ([]mcpconfig.Server, error) {
	dir, err := e.projectDir(c)
	if err != nil {
		return nil, err
	}
	return mcpconfig.Discover(mcpconfig.Options{
		Dir: dir, Home: e.Getenv("HOME"), ConfigDir: e.Getenv("CLAUDE_CONFIG_DIR"), MCPConfig: extra,
		LookupEnv: func(k string) (string, bool) {
			v := e.Getenv(k)
			return v, v != ""
		},
	})
}

// serverConfig returns the configuration of the server of a tool key, when a local file has it.
func (e *Env) serverConfig(c *cli.Context, key string) (mcpconfig.Server, bool) {
	servers, _ := e.discover(c, nil)
	return mcpconfig.Lookup(servers, states.ServerOf(key))
}

// fingerprint is the configuration fingerprint of the server of key, "" when it is not found. It
// is read only for AUTH and ADMIN_GATED circuits, whose trial waits for fixed credentials.
func (e *Env) fingerprint(c *cli.Context, key string, t failure.Type) string {
	if t != failure.Auth && t != failure.AdminGated {
		return ""
	}
	s, ok := e.serverConfig(c, key)
	if !ok {
		return ""
	}
	return s.Fingerprint()
}

// withFingerprint fills call.Fingerprint when a circuit that would block the call is AUTH or
// ADMIN_GATED with a fingerprint recorded at its trip: only then are config files read.
func (e *Env) withFingerprint(c *cli.Context, b *states.Board, call states.Call) states.Call {
	for _, k := range []string{call.Tool, states.ServerKey(call.Tool)} {
		ci := b.Get(k)
		if ci != nil && ci.State != ledger.Closed && ci.Fingerprint != "" &&
			(ci.FailureType == failure.Auth || ci.FailureType == failure.AdminGated) {
			call.Fingerprint = e.fingerprint(c, call.Tool, ci.FailureType)
			return call
		}
	}
	return call
}
