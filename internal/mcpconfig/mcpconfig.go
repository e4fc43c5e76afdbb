// Package mcpconfig owns the discovery of the MCP servers Claude Code would mount from local
// configuration files: which files are read, in which precedence, how `${VAR}` references are
// expanded, and each server's name as it appears in tool names (docs/probes.md; the sanitizing rule itself
// is ledger.Sanitize).
//
// Files read, highest precedence first (the winner supplies the whole entry; entries are never
// merged, as in Claude Code):
//
//	dynamic  each --mcp-config FILE (or inline JSON), later ones winning over earlier ones
//	local    ~/.claude.json projects[DIR].mcpServers
//	local    DIR/.claude/settings.local.json mcpServers
//	project  DIR/.mcp.json mcpServers
//	project  DIR/.claude/settings.json mcpServers
//	user     ~/.claude.json mcpServers
//	user     ~/.claude/settings.json mcpServers
//
// Claude Code itself treats --mcp-config as the strongest source, so a server defined there
// overrides every file. Settings files do not define servers in current Claude Code (they only
// gate them); they are read because older setups and other tools put mcpServers there, and they
// rank below the CLI-owned file of the same scope.
//
// Plugin, managed and claude.ai servers live in no file read here, so an empty result means
// "no project/user-scope config found", never "no MCP server mounted".
//
// It also owns Claude Code's approvals (approval.go): a server defined by a file of the
// repository (.mcp.json and the two settings files under DIR/.claude) is usable only when the
// user approved it, an unusable one is never expanded with the environment and shadows no
// weaker definition, and deniedMcpServers/allowedMcpServers bind every scope. Each Server
// carries its Approval; callers start or connect to a server only when Approval.Usable().
package mcpconfig

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	multierror "github.com/hashicorp/go-multierror"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/safefile"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// Scope says where a server definition comes from, named as Claude Code names it.
type Scope string

// The scopes, strongest first.
const (
	ScopeDynamic Scope = "dynamic" // --mcp-config
	ScopeLocal   Scope = "local"   // ~/.claude.json projects[DIR], .claude/settings.local.json
	ScopeProject Scope = "project" // .mcp.json, .claude/settings.json
	ScopeUser    Scope = "user"    // ~/.claude.json top level, ~/.claude/settings.json
)

// Trusted reports whether definitions of this scope were written by the user rather than by a
// repository: project-scope files (.mcp.json, .claude/settings.json) come with the code, so
// starting their commands needs the user's consent (docs/probes.md, probe --all --include-project).
// Whether a given server may be started is its [Server.Approval], which also treats
// .claude/settings.local.json (local scope, but inside the repository's tree) as the repository's.
func (s Scope) Trusted() bool { return s != ScopeProject }

// Transport is how a server is reached. Values other than the constants below (for example "ws")
// are kept as written so that callers can say which transport they do not support.
type Transport string

// The transports a probe understands.
const (
	TransportStdio Transport = "stdio"
	TransportHTTP  Transport = "http" // streamable HTTP
	TransportSSE   Transport = "sse"  // deprecated HTTP+SSE
)

// Server is one MCP server definition after precedence and variable expansion.
type Server struct {
	// Name is the server's name as written in the configuration file.
	Name string
	// Sanitized is Name as the server part of its circuit keys (mcp__<Sanitized>__<tool>): as it
	// appears in tool names, except for the names ledger.SanitizeServer makes unambiguous.
	Sanitized string
	// Scope is the scope of the winning definition.
	Scope Scope
	// Source is the file the winning definition was read from ("--mcp-config" for inline JSON).
	Source string
	// Transport is stdio, http or sse (or an unsupported value kept as written).
	Transport Transport

	// Command and Args start a stdio server. They are executed directly, never through a shell.
	Command string
	Args    []string
	// Env holds the variables added to a stdio server's environment.
	Env map[string]string

	// URL is the endpoint of an http or sse server.
	URL string
	// Headers are sent with every HTTP request. Their values are secrets: never print them.
	Headers map[string]string

	// Missing lists the variables referenced without a default that were not set; their
	// `${VAR}` text is left in place, as Claude Code does.
	Missing []string
	// Shadowed lists the weaker definitions of the same name that this one overrides.
	Shadowed []Origin
	// Ignored lists stronger definitions of the same name that Claude Code would not load (a
	// repository's server that is unapproved, disabled or denied), so they shadow nothing.
	Ignored []Origin

	// Approval says whether Claude Code would start or connect to this server; only a
	// [Approval.Usable] one is ever started, connected to or has `${VAR}` expanded into it.
	Approval Approval
	// ApprovalNote says why: the file and key that approve, disable or deny it.
	ApprovalNote string

	// fromEnv holds the values `${VAR}` references were expanded to.
	fromEnv []string
}

// Secrets returns the configured values that must never be printed or stored (docs/security.md): every
// env and header value (and a header's credential without its scheme), every value expanded from
// the environment, and each argument that is a secret by its shape or follows a secret flag. Pass
// them to redact.RedactKnown and redact.StoredTextKnown.
func (s Server) Secrets() []string {
	var out []string
	add := func(v string) {
		if v = strings.TrimSpace(v); v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	for _, v := range s.Env {
		add(v)
	}
	for _, v := range s.Headers {
		add(v)
		if scheme, cred, ok := strings.Cut(v, " "); ok && scheme != "" {
			add(cred)
		}
	}
	for _, v := range s.fromEnv {
		add(v)
	}
	for i, a := range s.Args {
		if k, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(k, "-") && v != "" && secretArg(a) {
			add(v)
		}
		if i > 0 && secretFlag(s.Args[i-1]) {
			add(a)
		}
	}
	if u, err := url.Parse(s.URL); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok {
			add(p)
		}
	}
	return out
}

// secretArg reports whether the key of an argument "--key=value" or "--key" names a secret.
func secretArg(a string) bool {
	k, _, _ := strings.Cut(a, "=")
	k = strings.ToLower(strings.TrimLeft(k, "-"))
	for _, w := range []string{"token", "secret", "password", "passwd", "api-key", "api_key", "apikey", "key", "auth", "credential"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// secretFlag reports whether a flag takes a secret as its next argument (--token V, -p V).
func secretFlag(a string) bool {
	if a == "-p" {
		return true
	}
	return strings.HasPrefix(a, "--") && !strings.Contains(a, "=") && secretArg(a)
}

// Origin names one definition of a server: its scope and file.
type Origin struct {
	Scope  Scope
	Source string
}

// Options says where to look. Paths must be absolute; tests point them at temporary directories.
type Options struct {
	// Dir is the project directory (docs/ledger.md DIR). Empty skips the project and local files.
	Dir string
	// Home is the user's home directory. Empty skips ~/.claude.json and ~/.claude/settings.json
	// unless ConfigDir is set.
	Home string
	// ConfigDir is $CLAUDE_CONFIG_DIR. When set, the CLI-owned file is ConfigDir/.claude.json and
	// the user settings file ConfigDir/settings.json, as Claude Code resolves them.
	ConfigDir string
	// MCPConfig holds --mcp-config values in command-line order: each a file path or, when it
	// starts with '{', inline JSON.
	MCPConfig []string
	// LookupEnv resolves `${VAR}` references; nil means no variable is set. Pass os.LookupEnv in
	// production. It is never called for a repository's server that is not approved.
	LookupEnv func(string) (string, bool)
	// ManagedSettings is the managed settings file whose deniedMcpServers and allowedMcpServers
	// bind every server ([ManagedSettingsPath] in production); empty skips it.
	ManagedSettings string
	// AllowUnapproved expands variables into unapproved repository servers too: the user asked
	// for one of them explicitly (probe --allow-unapproved). Their Approval is still reported.
	AllowUnapproved bool
	// Read, when set, reads a file instead of safefile.ReadBounded (same contract): a caller that
	// caches what it derives from the result learns which files it depends on.
	Read func(path string, max int64) ([]byte, error)
}

// Size caps of the files read here (see safefile.ReadBounded).
const (
	maxConfig     = safefile.MaxConfigBytes
	maxClaudeJSON = safefile.MaxClaudeJSONBytes
)

// Discover reads every configuration file of opts and returns the servers found, one per name,
// sorted by name. Missing files are skipped silently. A file that cannot be read or parsed, or an
// entry that is not a usable server, is reported in the returned error (one [*FileError] per
// problem, in one *multierror.Error that prints one per line) while everything else is still
// returned. No servers at all is not an error.
func Discover(opts Options) ([]Server, error) {
	var errs *multierror.Error
	// ~/.claude.json is read for local servers, user servers and approvals: read each file once.
	type result struct {
		data []byte
		err  error
	}
	cache := map[string]result{}
	read := func(path string, max int64) ([]byte, error) {
		if r, ok := cache[path]; ok {
			return r.data, r.err
		}
		readFile := safefile.ReadBounded
		if opts.Read != nil {
			readFile = opts.Read
		}
		data, err := readFile(path, max)
		cache[path] = result{data, err}
		return data, err
	}
	claudeJSON, userSettings := userFiles(opts)
	appr := readApprovals(opts, read, claudeJSON, userSettings)
	// Every definition of each name, strongest first.
	defs := map[string][]Server{}
	var order []string
	seen := map[string]bool{}
	for _, src := range sources(opts) {
		lookupFor := func(name string) func(string) (string, bool) {
			if !src.repo || opts.AllowUnapproved {
				return opts.LookupEnv
			}
			if a, _ := appr.repoApproval(name); a.Usable() && !appr.deniedName(name) {
				return opts.LookupEnv
			}
			return nil // never expand the environment into a server the user has not approved
		}
		found, err := src.load(read, lookupFor)
		// ~/.claude.json is read twice (local and user parts): report a broken file once.
		if err != nil && !seen[err.Error()] {
			seen[err.Error()] = true
			errs = multierror.Append(errs, err) // flattens the file's own list
		}
		for _, s := range found {
			s.Approval = ApprovalTrusted
			if src.repo {
				s.Approval, s.ApprovalNote = appr.repoApproval(s.Name)
			}
			if _, ok := defs[s.Name]; !ok {
				order = append(order, s.Name)
			}
			defs[s.Name] = append(defs[s.Name], s)
		}
	}
	out := make([]Server, 0, len(order))
	for _, n := range order {
		all := defs[n]
		// Claude Code drops a repository's unapproved or disabled server before it merges the
		// scopes, so such a definition shadows nothing: the strongest usable one wins.
		win := slices.IndexFunc(all, func(s Server) bool { return s.Approval.Usable() })
		if win < 0 {
			win = 0
		}
		w := all[win]
		for i, s := range all {
			switch {
			case i < win:
				w.Ignored = append(w.Ignored, Origin{Scope: s.Scope, Source: s.Source})
			case i > win:
				w.Shadowed = append(w.Shadowed, Origin{Scope: s.Scope, Source: s.Source})
			}
		}
		if w.Approval.Usable() {
			if a, note, ok := appr.policy(w); ok {
				w.Approval, w.ApprovalNote = a, note
			}
		}
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, problems(errs)
}

// Lookup returns the server whose real or sanitized name is name. A real-name match wins over a
// sanitized one, so "a.b" and "a_b" stay distinguishable when both exist.
func Lookup(servers []Server, name string) (Server, bool) {
	for _, s := range servers {
		if s.Name == name {
			return s, true
		}
	}
	for _, s := range servers {
		if s.Sanitized == name || ledger.Sanitize(s.Name) == name {
			return s, true
		}
	}
	return Server{}, false
}

// Fingerprint returns a stable hash of what decides how the server is reached and authenticated:
// transport, command, args, env, url and headers (after expansion). It changes when a credential
// is fixed (docs/circuits.md) and not when the server is renamed or moved to another file. It is a
// one-way digest (64 bits of SHA-256), safe to store and print; like any hash it protects only
// secrets that are hard to guess.
func (s Server) Fingerprint() string {
	// encoding/json sorts map keys, which makes the encoding canonical.
	b, _ := json.Marshal(struct {
		V         int               `json:"v"`
		Transport Transport         `json:"transport"`
		Command   string            `json:"command"`
		Args      []string          `json:"args"`
		Env       map[string]string `json:"env"`
		URL       string            `json:"url"`
		Headers   map[string]string `json:"headers"`
	}{1, s.Transport, s.Command, s.Args, s.Env, s.URL, s.Headers})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// source is one place a definition may come from.
type source struct {
	scope Scope
	path  string // file path, or "--mcp-config" for inline JSON
	data  []byte // inline JSON; nil for files
	// project, when non-empty, selects projects[project].mcpServers of ~/.claude.json.
	project []string
	// repo marks a file that comes with the repository: its servers need the user's approval.
	repo bool
}

// userFiles returns the CLI-owned file (~/.claude.json) and the user settings file.
func userFiles(opts Options) (claudeJSON, userSettings string) {
	switch {
	case opts.ConfigDir != "":
		return filepath.Join(opts.ConfigDir, ".claude.json"), filepath.Join(opts.ConfigDir, "settings.json")
	case opts.Home != "":
		return filepath.Join(opts.Home, ".claude.json"), filepath.Join(opts.Home, ".claude", "settings.json")
	}
	return "", ""
}

func sources(opts Options) []source {
	var out []source
	for i := len(opts.MCPConfig) - 1; i >= 0; i-- {
		v := opts.MCPConfig[i]
		if len(v) > 0 && v[0] == '{' {
			out = append(out, source{scope: ScopeDynamic, path: "--mcp-config", data: []byte(v)})
			continue
		}
		if !filepath.IsAbs(v) && opts.Dir != "" {
			v = filepath.Join(opts.Dir, v)
		}
		out = append(out, source{scope: ScopeDynamic, path: v})
	}
	claudeJSON, userSettings := userFiles(opts)
	if opts.Dir != "" {
		if claudeJSON != "" {
			out = append(out, source{scope: ScopeLocal, path: claudeJSON, project: projectKeys(opts.Dir)})
		}
		out = append(out,
			// A settings.local.json is usually the user's, but it lives in the repository's
			// tree and may be committed with it: its servers need approval too.
			source{scope: ScopeLocal, path: filepath.Join(opts.Dir, ".claude", "settings.local.json"), repo: true},
			source{scope: ScopeProject, path: filepath.Join(opts.Dir, ".mcp.json"), repo: true},
			source{scope: ScopeProject, path: filepath.Join(opts.Dir, ".claude", "settings.json"), repo: true},
		)
	}
	if claudeJSON != "" {
		out = append(out,
			source{scope: ScopeUser, path: claudeJSON},
			source{scope: ScopeUser, path: userSettings},
		)
	}
	return out
}

// projectKeys returns the keys under which ~/.claude.json may record dir: Claude Code writes the
// absolute path it was started in, which may be the symlink-resolved one.
func projectKeys(dir string) []string {
	keys := []string{filepath.Clean(dir)}
	if r, err := filepath.EvalSymlinks(dir); err == nil && r != keys[0] {
		keys = append(keys, r)
	}
	return keys
}

func (src source) load(read func(string, int64) ([]byte, error), lookupFor func(string) func(string) (string, bool)) ([]Server, error) {
	data := src.data
	if data == nil {
		var err error
		max := int64(maxConfig)
		if src.scope == ScopeUser || src.project != nil {
			max = maxClaudeJSON
		}
		data, err = read(src.path, max)
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, &FileError{Path: src.path, Err: err}
		}
	}
	var servers []Server
	var err error
	if src.project != nil {
		servers, err = parseProjects(src.path, data, src.project, lookupFor)
	} else {
		servers, err = parse(src.path, data, src.scope, lookupFor)
	}
	for i := range servers {
		servers[i].Scope = src.scope
	}
	return servers, err
}

// FileError is a problem with one configuration file or one entry in it. Line and Column are
// 1-based and zero when unknown.
type FileError struct {
	Path   string
	Line   int
	Column int
	// Server is the entry the problem is about; empty for whole-file problems.
	Server string
	Err    error
}

// Error implements error as "read mcp config FILE:LINE:COL: server "NAME": problem".
func (e *FileError) Error() string {
	pos := e.Path
	if e.Line > 0 {
		pos = fmt.Sprintf("%s:%d:%d", e.Path, e.Line, e.Column)
	}
	if e.Server != "" {
		return fmt.Sprintf("read mcp config %s: server %q: %v", pos, e.Server, e.Err)
	}
	return fmt.Sprintf("read mcp config %s: %v", pos, e.Err)
}

// Unwrap returns the underlying error.
func (e *FileError) Unwrap() error { return e.Err }
