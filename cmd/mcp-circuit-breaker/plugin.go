package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

// The Claude Code plugin (plugin/, docs/plugin.md) runs the gate as
// ${CLAUDE_PLUGIN_DATA}/mcp-circuit-breaker-hook: a path in the plugin's own data directory that
// 'install --plugin' links to the installed binary, never a name looked up on PATH, which a
// repository's .claude/settings.json "env" can set.

// defaultPluginID is the plugin's id as the repository's marketplace installs it.
const defaultPluginID = "mcp-circuit-breaker@mcp-circuit-breaker"

// pluginDataName is how Claude Code names a plugin's data directory: its id with every character
// other than letters, digits, '-' and '_' replaced by '-'.
func pluginDataName(id string) string {
	return regexp.MustCompile(`[^a-zA-Z0-9_-]`).ReplaceAllString(id, "-")
}

// pluginDataDir is ${CLAUDE_PLUGIN_DATA} of the plugin id: <plugins>/data/<name>, where <plugins>
// is $CLAUDE_CODE_PLUGIN_CACHE_DIR, else the plugins directory of Claude Code's user directory.
func (e *Env) pluginDataDir(id string) (string, error) {
	base := e.Getenv("CLAUDE_CODE_PLUGIN_CACHE_DIR")
	if base == "" {
		cfg, err := e.userConfigDir()
		if err != nil {
			return "", err
		}
		base = filepath.Join(cfg, "plugins")
	}
	return filepath.Join(base, "data", pluginDataName(id)), nil
}

// pluginHookPath is the path the plugin's hooks run, in the data directory of id.
func (e *Env) pluginHookPath(id string) (string, error) {
	d, err := e.pluginDataDir(id)
	if err != nil {
		return "", err
	}
	return filepath.Join(d, leanBinary), nil
}

// runInstallPlugin links the installed gate binary (resolved now, to an absolute path) into the
// plugin's data directory, where its hooks run it. Running it again replaces the link, for a
// binary that moved.
func runInstallPlugin(opts *installOptions, e *Env) error {
	target, warns, err := e.hookBinary(opts)
	if err != nil {
		return err
	}
	for _, w := range warns {
		e.warnf("%s", w)
	}
	link, err := e.pluginHookPath(defaultPluginID)
	if err != nil {
		return withHint(err, "set HOME or CLAUDE_CONFIG_DIR to where Claude Code keeps its user settings")
	}
	if old, err := os.Readlink(link); err == nil && old == target {
		e.printf("%s already links to %s: the plugin's hooks run it\n", link, target)
		return nil
	}
	if opts.DryRun {
		e.printf("would link %s -> %s (the plugin's hooks run it from there, not from PATH)\n", link, target)
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(link), 0o700); err != nil {
		return fmt.Errorf("install plugin binary: %w", err)
	}
	tmp := link + ".new"
	os.Remove(tmp)
	if err := os.Symlink(target, tmp); err != nil {
		return fmt.Errorf("install plugin binary: %w", err)
	}
	if err := os.Rename(tmp, link); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("install plugin binary: %w", err)
	}
	e.printf("linked %s -> %s: the plugin's hooks run it from there, not from PATH\n", link, target)
	return nil
}

// pluginHookCommand is the command of the plugin's hooks (plugin/hooks/hooks.json), before
// Claude Code substitutes ${CLAUDE_PLUGIN_DATA}.
const pluginHookCommand = "${CLAUDE_PLUGIN_DATA}/" + leanBinary
