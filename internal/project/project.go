// Package project ties together the files of one project directory (docs/ledger.md): the state
// directory and its store, policy.yaml, fallbacks.yaml, the tools cache and the MCP server
// configuration, and composes the texts built from them (the step-2 and trip messages, fallback
// proposals). The CLI and the lean hook binary share it; it links neither urfave/cli nor the MCP
// SDK, so the hook stays cheap to start.
package project

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/fallbacks"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/mcpconfig"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/safefile"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/term"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/toolcache"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// StateDirName is the state directory inside the project directory.
const StateDirName = ".claude/mcp_circuit"

// Project is one project directory and the environment it is read in.
type Project struct {
	// Dir is the absolute project directory.
	Dir string
	// Getenv reads the environment (HOME, CLAUDE_CONFIG_DIR, ${VAR} in MCP configs).
	Getenv func(string) string
	// LockWait bounds waits for the ledger lock.
	LockWait time.Duration
	// LockWaiting, when set, is told when a wait for the ledger lock begins.
	LockWaiting func(wait time.Duration)
	// Warn receives warnings ("mcp-circuit-breaker: warning: …" lines).
	Warn io.Writer
	// Decode reads what only a YAML library reads (Decoder).
	Decode Decoder
	// NoToolSearch is set when the agent has no ToolSearch tool (every agent but Claude Code):
	// no fallback sends its model after one.
	NoToolSearch bool
	// Shared is the fleet-shared board bound to the current call (internal/fleet's BindProject),
	// nil without one: every store returned by Store decides through it.
	Shared states.Shared
	// provenance is the user's provenance key (Provenance), shared by every store of the
	// process so that the key file is read once.
	provenance struct {
		once sync.Once
		p    *ledger.Provenance
	}

	// local memoizes the discovery of the local MCP configuration: one hook run asks for a server's
	// fingerprint, the secrets of every server and a server's configuration, and each would read
	// ~/.claude.json, .mcp.json and the settings files again. A process serves one event or one
	// command, so the files cannot change under it in a way it must see.
	local struct {
		once    sync.Once
		servers []mcpconfig.Server
		err     error
		// deps is what the discovery read: files and variables (see fleetIDs).
		deps idDeps
	}
}

// ResolveDir returns DIR: flag, else $MCP_CIRCUIT_DIR, else $CLAUDE_PROJECT_DIR, else the project
// the current directory is in (Locate), made absolute.
func ResolveDir(flag string, getenv func(string) string) (string, error) {
	l, err := Locate(flag, getenv)
	return l.Dir, err
}

// Found says how the project directory was chosen.
type Found int

const (
	// FoundGiven: --dir, $MCP_CIRCUIT_DIR or $CLAUDE_PROJECT_DIR named it.
	FoundGiven Found = iota
	// FoundHere: the current directory, which holds the state directory, or is in no project.
	FoundHere
	// FoundState: the nearest directory above the current one that holds the state directory.
	FoundState
	// FoundGit: the root of the git work tree the current directory is in, when no directory on
	// the way up to it holds the state directory.
	FoundGit
)

// Location is the project directory and how it was found.
type Location struct {
	Dir string
	How Found
}

// Locate finds the project as git finds a repository: flag, else $MCP_CIRCUIT_DIR, else
// $CLAUDE_PROJECT_DIR, else from the current directory up, the nearest directory that holds
// .claude/mcp_circuit/, else the root of the git work tree (the nearest directory with a .git),
// else the current directory. The walk stops at the work tree's root, and never takes the home
// directory, whose .claude is the user's configuration: a subdirectory of a project never starts
// a ledger of its own.
func Locate(flag string, getenv func(string) string) (Location, error) {
	dir, how := flag, FoundGiven
	if dir == "" {
		dir = getenv("MCP_CIRCUIT_DIR")
	}
	if dir == "" {
		dir = getenv("CLAUDE_PROJECT_DIR")
	}
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return Location{}, fmt.Errorf("find project directory: %w", err)
		}
		dir, how = findUp(wd, getenv("HOME"))
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Location{}, fmt.Errorf("find project directory: %w", err)
	}
	return Location{Dir: abs, How: how}, nil
}

// findUp walks up from wd (Locate).
func findUp(wd, home string) (string, Found) {
	isDir := func(p string) bool {
		fi, err := os.Stat(p)
		return err == nil && fi.IsDir()
	}
	for d := wd; ; {
		if d != wd && home != "" && d == filepath.Clean(home) {
			break
		}
		if isDir(filepath.Join(d, StateDirName)) {
			if d == wd {
				return wd, FoundHere
			}
			return d, FoundState
		}
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			if d == wd {
				return wd, FoundHere
			}
			return d, FoundGit
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	return wd, FoundHere
}

// Said is how the CLI says a project found above the current directory: "" when it is the
// current directory or was named.
func (l Location) Said() string {
	switch l.How {
	case FoundState:
		return "using the project " + l.Dir + " (the nearest directory above this one with " + StateDirName + "/)"
	case FoundGit:
		return "using the project " + l.Dir + " (the root of this git work tree; no directory on the way has " + StateDirName + "/)"
	}
	return ""
}

// ErrNoProject is returned by CheckDir when the project directory does not exist or is not a
// directory: the CLI never creates anything outside an existing project (a mistyped --dir must
// not make a tree at the root of the file system).
var ErrNoProject = errors.New("no such project directory")

// CheckDir returns an error wrapping ErrNoProject unless dir is an existing directory.
func CheckDir(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case err != nil && errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("project directory %s: %w", dir, ErrNoProject)
	case err != nil:
		return fmt.Errorf("project directory: %w", err)
	case !fi.IsDir():
		return fmt.Errorf("project directory %s: not a directory: %w", dir, ErrNoProject)
	}
	return nil
}

// LockWaitEnv is the environment variable that overrides the wait for the ledger lock.
const LockWaitEnv = "MCP_CIRCUIT_LOCK_WAIT"

// EnvLockWait reads $MCP_CIRCUIT_LOCK_WAIT: ok is false when it is unset; a value that is not a
// positive duration is an error.
func EnvLockWait(getenv func(string) string) (d time.Duration, ok bool, err error) {
	v := getenv(LockWaitEnv)
	if v == "" {
		return 0, false, nil
	}
	d, err = time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, false, fmt.Errorf("read %s %q: not a positive duration", LockWaitEnv, v)
	}
	return d, true, nil
}

// New returns the project in dir; MCP_CIRCUIT_LOCK_WAIT overrides the lock wait (tests of the
// bound). An invalid value keeps the default, with a warning: the hook must answer regardless.
func New(dir string, getenv func(string) string, warn io.Writer, dec Decoder) *Project {
	p := &Project{Dir: dir, Getenv: getenv, LockWait: ledger.DefaultLockWait, Warn: warn, Decode: dec}
	switch d, ok, err := EnvLockWait(getenv); {
	case err != nil:
		p.warnf("%v; the lock wait stays %s", err, p.LockWait)
	case ok:
		p.LockWait = d
	}
	return p
}

// Now is the clock: $MCP_CIRCUIT_NOW (RFC 3339) when set, for tests and replays.
func Now(getenv func(string) string) (time.Time, error) {
	if s := getenv("MCP_CIRCUIT_NOW"); s != "" {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return time.Time{}, fmt.Errorf("read MCP_CIRCUIT_NOW %q: not an RFC 3339 time", s)
		}
		return t.UTC(), nil
	}
	return time.Now().UTC(), nil
}

// Shadow reports whether MCP_CIRCUIT_FAIL_OPEN asks for shadow mode.
func Shadow(getenv func(string) string) bool {
	v := getenv("MCP_CIRCUIT_FAIL_OPEN")
	return v != "" && v != "0" && !strings.EqualFold(v, "false")
}

// StateDir is DIR/.claude/mcp_circuit.
func (p *Project) StateDir() string { return filepath.Join(p.Dir, StateDirName) }

func (p *Project) warnf(format string, args ...any) {
	if p.Warn != nil {
		term.Warnf(p.Warn, format, args...)
	}
}

// Store returns the project's store; with create it makes the state directory (0700) and warns
// once, when it makes it, if the project's .gitignore does not ignore it.
func (p *Project) Store(create bool) (*states.Store, error) {
	s := states.NewStore(p.StateDir(), p.LockWait)
	s.Ledger.Waiting = p.LockWaiting
	s.Ledger.Slow = p.Decode.Item
	s.Ledger.Prefetch = p.Decode.Prefetch
	s.Ledger.Provenance = p.Provenance()
	s.Shared = p.Shared
	if create {
		made, err := s.Ledger.EnsureDir()
		if err != nil {
			return nil, err
		}
		if made && !Gitignored(p.Dir) {
			p.warnf("%s/ is not git-ignored; add the line '.claude/mcp_circuit/' to %s (or run 'mcp-circuit-breaker install')",
				StateDirName, filepath.Join(p.Dir, ".gitignore"))
		}
	}
	return s, nil
}

// Provenance is this user's provenance (ledger.Provenance): the key file ProvenanceKeyPath,
// made at the first entry signed. Without a home directory it is nil: nothing is signed or
// verified, and every entry is unverified.
func (p *Project) Provenance() *ledger.Provenance {
	p.provenance.once.Do(func() {
		if path := ProvenanceKeyPath(p.Getenv); path != "" {
			p.provenance.p = ledger.UserProvenance(path, true)
			p.provenance.p.Vet = func(key string) error { return OutsideWorkTree(key, p.Dir) }
		}
	})
	return p.provenance.p
}

// OutsideWorkTree refuses a file of the user's (the provenance key, our user cache) that lies in the
// git work tree the project dir is in (the nearest directory at or above dir that holds a .git):
// a repository whose tree holds the path, such as one checked out as the home directory of a
// container, could commit a key of its choosing there and sign its own ledger entries with it, or
// plant the answers our cache holds. A home directory that is itself a work tree (dotfiles kept in
// git in place) is refused the same way, since git cannot tell it from one: there every entry is
// unverified and nothing is cached, and doctor says why.
func OutsideWorkTree(path, dir string) error {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	for d := filepath.Clean(dir); ; {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			if rel, err := filepath.Rel(d, path); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return fmt.Errorf("it lies in the git work tree %s, whose files a repository chooses", d)
			}
			return nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return nil
		}
		d = parent
	}
}

// ReadStateFile reads a file of the state directory the way every state file is read: the
// directory and .claude must be real directories, the file a regular one (no link followed, no
// FIFO blocked on) of at most max bytes.
func (p *Project) ReadStateFile(name string, max int64) ([]byte, error) {
	if err := safefile.CheckStateDir(p.StateDir()); err != nil {
		return nil, err
	}
	return safefile.ReadRegular(name, max)
}

// Gitignored reports whether dir/.gitignore has a line that ignores .claude/mcp_circuit/.
func Gitignored(dir string) bool {
	data, err := safefile.ReadBounded(filepath.Join(dir, ".gitignore"), safefile.MaxConfigBytes)
	if err != nil {
		return false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		switch strings.TrimPrefix(strings.TrimSpace(sc.Text()), "/") {
		case ".claude/mcp_circuit", ".claude/mcp_circuit/", ".claude/mcp_circuit/*", ".claude/mcp_circuit/**",
			".claude", ".claude/", ".claude/*", ".claude/**":
			return true
		}
	}
	return false
}

// Policy reads policy.yaml; a missing file is the built-in policy (nil). An invalid file is an
// error wrapping states.ErrInvalidPolicy.
func (p *Project) Policy() (*states.Policy, error) {
	pol, err := p.UsablePolicy()
	if err != nil {
		return nil, err
	}
	return pol, nil
}

// UsablePolicy reads policy.yaml for the decisions that must go on when it is invalid (the gate,
// record, the failure hook, check): with a *states.PolicyError it also returns the policy whose
// invalid values are left to the built-in ones (internal/yamlfile.UsablePolicy); the caller says so
// loudly. A file that cannot be read at all gives the built-in policy and the error.
func (p *Project) UsablePolicy() (*states.Policy, error) {
	name := filepath.Join(p.StateDir(), "policy.yaml")
	data, err := p.ReadStateFile(name, safefile.MaxConfigBytes)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read policy: %w", err)
	}
	if p.Decode.Policy == nil {
		return nil, fmt.Errorf("read policy: %s: %w", name, errNoDecoder)
	}
	return p.Decode.Policy(name, data)
}

// Discover finds the MCP servers of the project and the user (docs/probes.md); extra holds --mcp-config
// values. Problems with single files come back as the error while the rest is still used.
func (p *Project) Discover(extra []string) ([]mcpconfig.Server, error) {
	if len(extra) > 0 {
		return p.DiscoverServers(extra, false)
	}
	p.local.once.Do(func() { p.local.servers, p.local.err = p.discover(nil, false, &p.local.deps) })
	return p.local.servers, p.local.err
}

// DiscoverServers is Discover; allowUnapproved expands variables into the repository's
// unapproved servers too, for the explicit override of probe --allow-unapproved.
func (p *Project) DiscoverServers(extra []string, allowUnapproved bool) ([]mcpconfig.Server, error) {
	return p.discover(extra, allowUnapproved, nil)
}

// discover is DiscoverServers; with deps set it records the files it read and the variables it
// looked up.
func (p *Project) discover(extra []string, allowUnapproved bool, deps *idDeps) ([]mcpconfig.Server, error) {
	opts := mcpconfig.Options{
		Dir: p.Dir, Home: p.Getenv("HOME"), ConfigDir: p.Getenv("CLAUDE_CONFIG_DIR"), MCPConfig: extra,
		LookupEnv: func(k string) (string, bool) {
			v := p.Getenv(k)
			if deps != nil {
				deps.lookedUp(k, v)
			}
			return v, v != ""
		},
		ManagedSettings: mcpconfig.ManagedSettingsPath(), AllowUnapproved: allowUnapproved,
	}
	if deps != nil {
		opts.Read = func(path string, max int64) ([]byte, error) {
			deps.read(path) // stamped before it is read: a change while reading shows next time
			return safefile.ReadBounded(path, max)
		}
	}
	return mcpconfig.Discover(opts)
}

// ServerConfig returns the configuration of the server of a tool key, when a local file has it.
func (p *Project) ServerConfig(key string) (mcpconfig.Server, bool) {
	servers, _ := p.Discover(nil)
	return mcpconfig.Lookup(servers, ledger.Key(key).Server())
}

// Secrets returns the configured values of every server of the local files that must never be
// printed or stored (see mcpconfig.Server.Secrets): all servers', since a server may echo
// another's value (a shared token), and a hand-written ledger entry may hold any of them.
func (p *Project) Secrets() []string {
	servers, _ := p.Discover(nil)
	var out []string
	for _, s := range servers {
		out = append(out, s.Secrets()...)
	}
	return out
}

// Fingerprint is the configuration fingerprint of the server of key, "" when it is not found. It
// is read only for AUTH and ADMIN_GATED, whose trial waits for fixed credentials (docs/circuits.md).
func (p *Project) Fingerprint(key string, t ledger.FailureType) string {
	if t != ledger.Auth && t != ledger.AdminGated {
		return ""
	}
	s, ok := p.ServerConfig(key)
	if !ok {
		return ""
	}
	return s.Fingerprint()
}

// StandingOf is c's standing at now, with the server's current configuration fingerprint when it
// matters (an AUTH or ADMIN_GATED circuit that recorded one at its trip), so that every view says
// "trial due" exactly when the gate would grant the trial.
func (p *Project) StandingOf(c *states.Circuit, now time.Time, pol *states.Policy) states.Standing {
	fp := ""
	if c != nil && c.State != ledger.Closed && c.Fingerprint != "" {
		fp = p.Fingerprint(c.Key, c.FailureType)
	}
	return c.StandingAt(now, pol, fp)
}

// WithFingerprint fills call.Fingerprint when a circuit that would block the call is AUTH or
// ADMIN_GATED with a fingerprint recorded at its trip: only then are config files read.
func (p *Project) WithFingerprint(b *states.Board, call states.Call) states.Call {
	for _, k := range ledger.Key(call.Tool).Circuits() {
		c := b.Get(k)
		if c != nil && c.State != ledger.Closed && c.Fingerprint != "" &&
			(c.FailureType == ledger.Auth || c.FailureType == ledger.AdminGated) {
			call.Fingerprint = p.Fingerprint(call.Tool, c.FailureType)
			return call
		}
	}
	return call
}

// CatalogPath is the user's fallback catalog.
func (p *Project) CatalogPath() string { return filepath.Join(p.StateDir(), fallbacks.CatalogFile) }

// FallbackRequest gathers what fallbacks.Propose needs for circ: the circuit, the user's catalog,
// the tools cache of earlier probes, and which other circuits are open. A catalog that does not
// parse is returned as the error, with the request still usable without it.
func (p *Project) FallbackRequest(b *states.Board, circ *states.Circuit, pol *states.Policy, now time.Time) (fallbacks.Request, error) {
	// The gate's own answer, so option 3 names the time check and the deny reason name: the later
	// of the circuit's and its server's, the end of a trial in flight, now when a trial is due.
	var until time.Time
	if circ.State != ledger.Closed {
		if b.Get(circ.Key) == circ {
			until, _ = b.NextCall(states.Call{Tool: circ.Key}, now, pol)
		} else {
			until = circ.StandingAt(now, pol, "").Next
		}
	}
	return p.FallbackRequestUntil(b, circ, now, until)
}

// DenyFallbacks is FallbackRequest for the circuit that decision d denied: the time option 3
// names is d's own (states.Decision.Next), so the deny reason decides nothing again.
func (p *Project) DenyFallbacks(b *states.Board, d states.Decision, now time.Time) (fallbacks.Request, error) {
	until, _ := d.Next(now)
	return p.FallbackRequestUntil(b, d.Circuit, now, until)
}

// FallbackRequestUntil is FallbackRequest with the time the circuit's next call may go (zero when
// only a person can let it go) already known.
func (p *Project) FallbackRequestUntil(b *states.Board, circ *states.Circuit, now, until time.Time) (fallbacks.Request, error) {
	req := fallbacks.Request{
		Tool: circ.Key, Server: circ.Server, Type: circ.FailureType, Cause: circ.Cause,
		OpenUntil: until, RetryAfter: circ.RetryAfter, Now: now, NoToolSearch: p.NoToolSearch,
		IsOpen: func(key string) bool {
			o := b.Get(key)
			return o != nil && o.State != ledger.Closed
		},
	}
	if cache, err := toolcache.LoadTools(p.StateDir()); err != nil {
		p.warnf("%v (similar-tool suggestions skipped; the next probe rewrites it)", err)
	} else {
		req.Tools = make(map[string][]fallbacks.Tool, len(cache))
		for server, st := range cache {
			for _, t := range st.Tools {
				req.Tools[server] = append(req.Tools[server], fallbacks.Tool{Name: t.Name, Description: t.Description})
			}
		}
	}
	name := p.CatalogPath()
	data, err := p.ReadStateFile(name, safefile.MaxConfigBytes)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return req, fmt.Errorf("read fallbacks catalog: %w", err)
	default:
		if p.Decode.Catalog == nil {
			return req, fmt.Errorf("read fallbacks catalog: %s: %w", name, errNoDecoder)
		}
		cat, err := p.Decode.Catalog(name, data)
		if err != nil {
			return req, err
		}
		req.Catalog = cat
	}
	return req, nil
}

// FallbackMarkdown is the full fallback list for a circuit that just opened; a broken catalog is a
// warning rather than hiding the notice.
func (p *Project) FallbackMarkdown(b *states.Board, circ *states.Circuit, pol *states.Policy, now time.Time) string {
	req, err := p.FallbackRequest(b, circ, pol, now)
	if err != nil {
		p.warnf("fallbacks: %v", err)
	}
	return fallbacks.Markdown(circ.Key, circ.FailureType, fallbacks.Propose(req))
}

// Clip keeps s on one line and at most n characters, marking a cut with "…".
func Clip(s string, n int) string {
	return term.Clip(strings.ReplaceAll(s, "\n", " "), n)
}
