package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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

// proxyTarget is an agent's project MCP configuration file that install --proxy rewrites: its
// path in the project and the backup names in the state directory.
type proxyTarget struct {
	agent string
	rel   string
	// backup and wrote name the file before the first rewrite and as install wrote it.
	backup, wrote string
}

// proxyTargets are the agents whose project MCP configuration install --proxy edits; each keeps
// its servers in an mcpServers object of command/args/env entries.
var proxyTargets = []proxyTarget{
	{"claude", mcpJSON, proxyBackupName, proxyWroteName},
	{"cursor", filepath.Join(".cursor", "mcp.json"), "cursor-mcp.json.before-proxy", "cursor-mcp.json.proxied"},
	{"gemini", filepath.Join(".gemini", "settings.json"), "gemini-settings.json.before-proxy", "gemini-settings.json.proxied"},
}

// proxyTargetOf is the target of agent name; ok is false for an agent install --proxy does not edit.
func proxyTargetOf(name string) (proxyTarget, bool) {
	for _, t := range proxyTargets {
		if t.agent == name {
			return t, true
		}
	}
	return proxyTarget{}, false
}

// proxyTargetFor is the target of the one agent of opts (claude by default).
func proxyTargetFor(opts *installOptions) proxyTarget {
	t, _ := proxyTargetOf(opts.Agents[0].Name())
	return t
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
	path := filepath.Join(dir, target.rel)
	data, err := safefile.ReadBounded(path, safefile.MaxConfigBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return withHint(fmt.Errorf("install --proxy: no %s in %s", target.rel, dir), "add the servers to "+target.rel+", then run install --proxy again")
	}
	if err != nil {
		return fmt.Errorf("install --proxy: %w", err)
	}
	doc, err := settings.Parse(path, data)
	if err != nil {
		return fmt.Errorf("install --proxy: %w", err)
	}
	servers := doc.Root().Get("mcpServers")
	if servers == nil || servers.Kind() != settings.Object {
		return fmt.Errorf("install --proxy: %s has no mcpServers object", path)
	}
	var wrapped []string
	for _, name := range servers.Keys() {
		s := servers.Get(name)
		if s.Kind() != settings.Object {
			continue
		}
		command, ok := s.Get("command").Str()
		if !ok || s.Get("url") != nil {
			e.notef("%s: not a stdio server; the proxy runs stdio servers only, so it is left as it is", name)
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
		s.Set("args", settings.StringArray(append([]string{"proxy", "--name", name, "--", command}, args...)))
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
	sd := filepath.Join(dir, project.StateDirName)
	if _, err := safefile.MakeStateDir(sd); err != nil {
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
	path := filepath.Join(dir, target.rel)
	sd := filepath.Join(dir, project.StateDirName)
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
		doc, err := settings.Parse(path, cur)
		if err != nil {
			return fmt.Errorf("uninstall --proxy: %w", err)
		}
		servers := doc.Root().Get("mcpServers")
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

// proxiedServers are the servers of the agent's project MCP configuration file rel that run through
// the proxy, for doctor.
func proxiedServers(dir, rel string) (names []string, err error) {
	data, err := safefile.ReadBounded(filepath.Join(dir, rel), safefile.MaxConfigBytes)
	if err != nil {
		return nil, err
	}
	doc, err := settings.Parse(rel, data)
	if err != nil {
		return nil, err
	}
	servers := doc.Root().Get("mcpServers")
	if servers == nil || servers.Kind() != settings.Object {
		return nil, nil
	}
	for _, name := range servers.Keys() {
		s := servers.Get(name)
		command, _ := s.Get("command").Str()
		args, _ := s.Get("args").Strings()
		if _, ok := proxiedArgs(command, args); ok {
			names = append(names, name)
		}
	}
	return names, nil
}
