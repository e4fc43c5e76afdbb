package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/safefile"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/settings"
)

// The files install --proxy keeps in the state directory: the project's .mcp.json as it was
// before the first rewrite, and as install wrote it, so that uninstall --proxy can give the
// first back byte for byte when the file is still the second.
const (
	proxyBackupName = "mcp.json.before-proxy"
	proxyWroteName  = "mcp.json.proxied"
)

// mcpJSON is Claude Code's project MCP configuration.
const mcpJSON = ".mcp.json"

// proxyTarget is a client's MCP configuration file that install --proxy rewrites: a file of the
// project (rel) or of the user (user), the object its servers are kept in, and the backup names.
type proxyTarget struct {
	agent string
	// rel is the file's path in the project; "" for a file of the user, whose path user gives
	// for the OS goos ("" when the environment names no absolute home).
	rel  string
	user func(getenv func(string) string, goos string) string
	// key is the object of the servers (mcpServers, VS Code's servers, Zed's context_servers);
	// jsonc is set for a client that accepts comments in the file.
	key   string
	jsonc bool
	// backup and wrote name the file before the first rewrite and as install wrote it, in the
	// project's state directory (a project file) or the user's (a user file).
	backup, wrote string
}

// proxyTargets are the clients whose MCP configuration install --proxy edits, each as its
// documentation places it; every entry is command/args/env.
var proxyTargets = []proxyTarget{
	{agent: "claude", rel: mcpJSON, key: "mcpServers", backup: proxyBackupName, wrote: proxyWroteName},
	{agent: "cursor", rel: filepath.Join(".cursor", "mcp.json"), key: "mcpServers", backup: "cursor-mcp.json.before-proxy", wrote: "cursor-mcp.json.proxied"},
	{agent: "gemini", rel: filepath.Join(".gemini", "settings.json"), key: "mcpServers", jsonc: true, backup: "gemini-settings.json.before-proxy", wrote: "gemini-settings.json.proxied"},
	// VS Code's workspace MCP configuration: "servers", comments allowed.
	{agent: "vscode", rel: filepath.Join(".vscode", "mcp.json"), key: "servers", jsonc: true, backup: "vscode-mcp.json.before-proxy", wrote: "vscode-mcp.json.proxied"},
	{agent: "claude-desktop", user: claudeDesktopConfig, key: "mcpServers", backup: "claude-desktop-config.json.before-proxy", wrote: "claude-desktop-config.json.proxied"},
	{agent: "windsurf", user: func(getenv func(string) string, goos string) string {
		return underHome(getenv, goos, ".codeium", "windsurf", "mcp_config.json")
	}, key: "mcpServers", backup: "windsurf-mcp_config.json.before-proxy", wrote: "windsurf-mcp_config.json.proxied"},
	// Zed's user settings.json (JSON with comments): "context_servers".
	{agent: "zed", user: zedSettings, key: "context_servers", jsonc: true, backup: "zed-settings.json.before-proxy", wrote: "zed-settings.json.proxied"},
}

// proxyAgents names the clients install --proxy edits, for messages.
func proxyAgents() string {
	var names []string
	for _, t := range proxyTargets {
		names = append(names, t.agent)
	}
	return strings.Join(names, ", ")
}

// home is getenv's HOME (USERPROFILE on Windows) when absolute, else "".
func home(getenv func(string) string, goos string) string {
	h := getenv("HOME")
	if goos == "windows" && h == "" {
		h = getenv("USERPROFILE")
	}
	if h == "" || !filepath.IsAbs(h) {
		return ""
	}
	return h
}

// underHome is elem under the user's home, "" without one.
func underHome(getenv func(string) string, goos string, elem ...string) string {
	h := home(getenv, goos)
	if h == "" {
		return ""
	}
	return filepath.Join(append([]string{h}, elem...)...)
}

// appData is Windows' %APPDATA% when absolute, else "".
func appData(getenv func(string) string) string {
	if d := getenv("APPDATA"); d != "" && filepath.IsAbs(d) {
		return d
	}
	return ""
}

// claudeDesktopConfig is Claude Desktop's claude_desktop_config.json: under Application Support
// on macOS, %APPDATA%\Claude on Windows, and ~/.config/Claude on Linux.
func claudeDesktopConfig(getenv func(string) string, goos string) string {
	const name = "claude_desktop_config.json"
	switch goos {
	case "darwin":
		return underHome(getenv, goos, "Library", "Application Support", "Claude", name)
	case "windows":
		if d := appData(getenv); d != "" {
			return filepath.Join(d, "Claude", name)
		}
		return ""
	}
	if d := getenv("XDG_CONFIG_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "Claude", name)
	}
	return underHome(getenv, goos, ".config", "Claude", name)
}

// zedSettings is Zed's user settings.json: %APPDATA%\Zed on Windows, else ~/.config/zed (macOS
// too), $XDG_CONFIG_HOME/zed when set on Linux.
func zedSettings(getenv func(string) string, goos string) string {
	switch goos {
	case "windows":
		if d := appData(getenv); d != "" {
			return filepath.Join(d, "Zed", "settings.json")
		}
		return ""
	case "linux", "freebsd", "openbsd", "netbsd":
		if d := getenv("XDG_CONFIG_HOME"); d != "" && filepath.IsAbs(d) {
			return filepath.Join(d, "zed", "settings.json")
		}
	}
	return underHome(getenv, goos, ".config", "zed", "settings.json")
}

// proxyTargetOf is the target of client name; ok is false for a client install --proxy does not
// edit.
func proxyTargetOf(name string) (proxyTarget, bool) {
	switch name {
	case "vs-code", "code", "copilot-vscode":
		name = "vscode"
	case "claude_desktop", "claudedesktop", "desktop":
		name = "claude-desktop"
	}
	for _, t := range proxyTargets {
		if t.agent == name {
			return t, true
		}
	}
	return proxyTarget{}, false
}

// proxyTargetFor is the target of opts (claude by default).
func proxyTargetFor(opts *installOptions) proxyTarget {
	if opts.proxyTarget.agent != "" {
		return opts.proxyTarget
	}
	t, _ := proxyTargetOf(agentName(opts))
	return t
}

// agentName is the one agent of opts, claude when none.
func agentName(opts *installOptions) string {
	if len(opts.Agents) == 0 {
		return "claude"
	}
	return opts.Agents[0].Name()
}

// parseInstallProxy checks install --proxy's and uninstall --proxy's --agent: one client whose file
// it edits (some, as Claude Desktop and Zed, run no hooks and are no agent of install).
func parseInstallProxy(opts *installOptions, names []string) error {
	if len(names) != 1 {
		return usagef("--proxy rewrites one client's MCP configuration: give one --agent")
	}
	t, ok := proxyTargetOf(names[0])
	if !ok || opts.Plugin || opts.StatusLine {
		return usagef("--proxy rewrites the MCP configuration of %s: give it alone with one of them (--dir, --dry-run and --command go with it)", proxyAgents())
	}
	opts.proxyTarget = t
	return nil
}

// files are the target's configuration file and the directory its backups go to, for the project
// dir.
func (t proxyTarget) files(dir string, getenv func(string) string) (path, state string, err error) {
	if t.rel != "" {
		return filepath.Join(dir, t.rel), filepath.Join(dir, project.StateDirName), nil
	}
	path = t.user(getenv, runtime.GOOS)
	h := home(getenv, runtime.GOOS)
	if path == "" || h == "" {
		return "", "", withHint(fmt.Errorf("--proxy --agent %s: the environment names no home directory to find its configuration in", t.agent), "set HOME")
	}
	return path, filepath.Join(h, ".local", "state", "mcp-circuit-breaker"), nil
}

// parseTarget parses the target's file: JSON with comments for a client that allows them.
func (t proxyTarget) parse(path string, data []byte) (*settings.Doc, error) {
	if t.jsonc {
		return settings.ParseJSONC(path, data)
	}
	return settings.Parse(path, data)
}

// shown is how messages name the target's file: its path in the project, or its full path.
func (t proxyTarget) shown() string {
	if t.rel != "" {
		return t.rel
	}
	return t.agent + "'s configuration"
}

// proxiedArgs reports whether command and args run a server through our proxy, and if so the
// server's own command and arguments after "--".
func proxiedArgs(command string, args []string) (inner []string, ok bool) {
	if filepath.Base(command) != "mcp-circuit-breaker" || len(args) == 0 || args[0] != "proxy" {
		return nil, false
	}
	for i, a := range args {
		if a == "--" && i+1 < len(args) {
			return args[i+1:], true
		}
	}
	return nil, false
}

// proxyBinary is the binary the rewritten entries run: --command, else this one (symlinks
// resolved), which must be the full CLI (the lean hook binary has no proxy).
func (e *Env) proxyBinary(opts *installOptions) (string, error) {
	path := opts.Command
	if path == "" {
		exe, err := os.Executable()
		if err != nil {
			return "", withHint(fmt.Errorf("find this binary's path: %w", err), "pass it with --command PATH")
		}
		if r, err := filepath.EvalSymlinks(exe); err == nil {
			exe = r
		}
		path = exe
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if filepath.Base(abs) != "mcp-circuit-breaker" {
		return "", withHint(fmt.Errorf("install --proxy: %s is not named mcp-circuit-breaker", abs), "pass the full CLI with --command PATH (the lean hook binary runs no proxy)")
	}
	return abs, nil
}

// runInstallProxy is install --proxy: every stdio server of the project's .mcp.json that does not
// run through the proxy yet is made to, keeping every other byte of the file.
func runInstallProxy(opts *installOptions, e *Env) error {
	dir, err := e.projectDir(opts.Dir)
	if err != nil {
		return err
	}
	bin, err := e.proxyBinary(opts)
	if err != nil {
		return err
	}
	target := proxyTargetFor(opts)
	path, sd, err := target.files(dir, e.Getenv)
	if err != nil {
		return err
	}
	data, err := safefile.ReadBounded(path, safefile.MaxConfigBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return withHint(fmt.Errorf("install --proxy: no %s at %s", target.shown(), path), "add the servers to "+path+", then run install --proxy again")
	}
	if err != nil {
		return fmt.Errorf("install --proxy: %w", err)
	}
	doc, err := target.parse(path, data)
	if err != nil {
		return fmt.Errorf("install --proxy: %w", err)
	}
	servers := doc.Root().Get(target.key)
	if servers == nil || servers.Kind() != settings.Object {
		return fmt.Errorf("install --proxy: %s has no %s object", path, target.key)
	}
	// A client of the user runs its servers from no project: its proxies record in this one.
	var where []string
	if target.rel == "" {
		where = []string{"--dir", dir}
	}
	var wrapped []string
	for _, name := range servers.Keys() {
		s := servers.Get(name)
		if s.Kind() != settings.Object {
			continue
		}
		command, ok := s.Get("command").Str()
		if !ok || s.Get("url") != nil || s.Get("serverUrl") != nil {
			e.notef("%s: not a stdio server with a command; left as it is (an HTTP server goes through 'mcp-circuit-breaker proxy --upstream URL', docs/proxy.md)", name)
			continue
		}
		var args []string
		if a := s.Get("args"); a != nil {
			if args, ok = a.Strings(); !ok {
				e.warnf("%s: its args are not a list of strings; left as it is", name)
				continue
			}
		}
		if _, ok := proxiedArgs(command, args); ok {
			continue
		}
		s.Set("command", settings.String(bin))
		wrap := append(append([]string{"proxy"}, where...), "--name", name, "--", command)
		s.Set("args", settings.StringArray(append(wrap, args...)))
		wrapped = append(wrapped, name)
	}
	if len(wrapped) == 0 {
		e.printf("every stdio server of %s already runs through the proxy; nothing to change\n", path)
		return nil
	}
	out := doc.Bytes()
	if opts.DryRun {
		e.printf("%s", settings.Unified(path, path, data, out))
		return nil
	}
	if err := makeProxyStateDir(target, sd); err != nil {
		return fmt.Errorf("install --proxy: %w", err)
	}
	backup := filepath.Join(sd, target.backup)
	if _, err := os.Lstat(backup); errors.Is(err, fs.ErrNotExist) {
		// Only the first rewrite is backed up: uninstall gives back the file from before the proxy.
		if err := safefile.WriteFileAtomic(backup, data, 0o600); err != nil {
			return fmt.Errorf("install --proxy: back up %s: %w", path, err)
		}
	}
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := safefile.WriteFileAtomic(path, out, mode); err != nil {
		return fmt.Errorf("install --proxy: %w", err)
	}
	if err := safefile.WriteFileAtomic(filepath.Join(sd, target.wrote), out, 0o600); err != nil {
		return fmt.Errorf("install --proxy: %w", err)
	}
	undo := "mcp-circuit-breaker uninstall --proxy"
	if target.rel == "" {
		undo += " --dir " + dir
	}
	if target.agent != "claude" {
		undo += " --agent " + target.agent
	}
	e.printf("%s: %s now run through the proxy (%s proxy --name NAME -- …); the file before is kept in %s, and '%s' restores it\n",
		path, strings.Join(wrapped, ", "), bin, backup, undo)
	return nil
}

// runUninstallProxy is uninstall --proxy: the project's .mcp.json as it was before install
// --proxy, byte for byte when nobody changed the file since; otherwise each proxied entry is
// unwrapped in place, keeping the changes.
func runUninstallProxy(opts *installOptions, e *Env) error {
	dir, err := e.projectDir(opts.Dir)
	if err != nil {
		return err
	}
	target := proxyTargetFor(opts)
	path, sd, err := target.files(dir, e.Getenv)
	if err != nil {
		return err
	}
	backup, wrote := filepath.Join(sd, target.backup), filepath.Join(sd, target.wrote)
	cur, err := safefile.ReadBounded(path, safefile.MaxConfigBytes)
	if err != nil {
		return fmt.Errorf("uninstall --proxy: %w", err)
	}
	before, berr := safefile.ReadBounded(backup, safefile.MaxConfigBytes)
	ours, werr := safefile.ReadBounded(wrote, safefile.MaxConfigBytes)
	var out []byte
	exact := berr == nil && werr == nil && bytes.Equal(cur, ours)
	if exact {
		out = before
	} else {
		doc, err := target.parse(path, cur)
		if err != nil {
			return fmt.Errorf("uninstall --proxy: %w", err)
		}
		servers := doc.Root().Get(target.key)
		n := 0
		if servers != nil && servers.Kind() == settings.Object {
			for _, name := range servers.Keys() {
				s := servers.Get(name)
				command, _ := s.Get("command").Str()
				args, _ := s.Get("args").Strings()
				inner, ok := proxiedArgs(command, args)
				if !ok {
					continue
				}
				s.Set("command", settings.String(inner[0]))
				if len(inner) > 1 {
					s.Set("args", settings.StringArray(inner[1:]))
				} else {
					s.Delete("args")
				}
				n++
			}
		}
		if n == 0 {
			e.printf("no server of %s runs through the proxy; nothing to change\n", path)
			return nil
		}
		out = doc.Bytes()
	}
	if opts.DryRun {
		e.printf("%s", settings.Unified(path, path, cur, out))
		return nil
	}
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := safefile.WriteFileAtomic(path, out, mode); err != nil {
		return fmt.Errorf("uninstall --proxy: %w", err)
	}
	os.Remove(backup)
	os.Remove(wrote)
	if exact {
		e.printf("%s: restored as it was before install --proxy, byte for byte\n", path)
	} else {
		e.printf("%s: its servers no longer run through the proxy (the file changed since install --proxy, so each entry was unwrapped in place and the other changes kept)\n", path)
	}
	return nil
}

// proxiedServers are the servers of the client's MCP configuration that run through the proxy,
// and the file's path, for doctor.
func proxiedServers(dir string, t proxyTarget, getenv func(string) string) (names []string, path string, err error) {
	path, _, err = t.files(dir, getenv)
	if err != nil {
		return nil, "", err
	}
	data, err := safefile.ReadBounded(path, safefile.MaxConfigBytes)
	if err != nil {
		return nil, path, err
	}
	doc, err := t.parse(path, data)
	if err != nil {
		return nil, path, err
	}
	servers := doc.Root().Get(t.key)
	if servers == nil || servers.Kind() != settings.Object {
		return nil, path, nil
	}
	for _, name := range servers.Keys() {
		s := servers.Get(name)
		command, _ := s.Get("command").Str()
		args, _ := s.Get("args").Strings()
		if _, ok := proxiedArgs(command, args); ok {
			names = append(names, name)
		}
	}
	return names, path, nil
}

// makeProxyStateDir makes the directory target's backups go to: the project's state directory,
// or the user's state directory (private to the user) for a user file.
func makeProxyStateDir(t proxyTarget, sd string) error {
	if t.rel != "" {
		_, err := safefile.MakeStateDir(sd)
		return err
	}
	return os.MkdirAll(sd, 0o700)
}
