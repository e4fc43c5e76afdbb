package main

// doctor for the agents besides Claude Code: for each one installed on this machine (its program on
// PATH, or its user directory present) or wired by a hook file, whether its hooks run our gate,
// whether the binary they name exists, and for Codex CLI whether each handler is trusted (an
// untrusted one is skipped without a word).

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/agent"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/settings"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/plugin"
)

// hookBinLine finds the hook's path install wrote into a plugin of ours.
var hookBinLine = regexp.MustCompile(`(?m)^const HOOK_BIN = ("(?:[^"\\]|\\.)*");$`)

func (d *doctor) checkOtherAgents() {
	for _, c := range agent.All() {
		if c.Name() != "claude" {
			d.checkAgent(c)
		}
	}
}

// agentHookFile is one scope's hook file of an agent and the commands of ours in it.
type agentHookFile struct {
	as       agentScope
	data     []byte
	commands []string
	err      error
}

func (d *doctor) checkAgent(c agent.Codec) {
	name := "agent " + c.Name()
	setup := c.Setup()
	installed := false
	for _, b := range setup.Binaries {
		if _, ok := lookPath(d.e.Getenv("PATH"), b); ok {
			installed = true
		}
	}
	var files []agentHookFile
	for _, sc := range setup.Scopes {
		as, err := d.e.resolveAgentScope(c, &installOptions{globalOptions: globalOptions{Dir: d.dir}, Scope: sc.Name})
		if err != nil {
			continue
		}
		if fi, err := os.Stat(as.configDir); err == nil && fi.IsDir() {
			installed = true
		}
		data, err := ledger.ReadBounded(as.file, ledger.MaxConfigBytes)
		if os.IsNotExist(err) {
			continue
		}
		f := agentHookFile{as: as, data: data, err: err}
		if err == nil {
			f.commands, f.err = agentCommands(setup.Format, as.file, data)
		}
		files = append(files, f)
	}
	var wired, fails, warns []string
	for _, f := range files {
		if f.err != nil {
			fails = append(fails, fmt.Sprintf("%s: %v", f.as.show(f.as.file), f.err))
			continue
		}
		if len(f.commands) == 0 {
			continue
		}
		wired = append(wired, fmt.Sprintf("%s (%s scope)", f.as.show(f.as.file), f.as.scope.Name))
		for _, cmd := range f.commands {
			if fields := shellFields(cmd); len(fields) > 0 {
				if _, ok := lookPath(d.e.Getenv("PATH"), fields[0]); !ok {
					fails = append(fails, fmt.Sprintf("%s runs %s, which is not an executable file: %s then runs no hook and allows every call", f.as.show(f.as.file), fields[0], c.Title()))
					break
				}
			}
		}
		if setup.Format == agent.FormatCodexHooks {
			fails = append(fails, d.codexUntrusted(f)...)
			if f.as.scope.Name == "project" {
				warns = append(warns, fmt.Sprintf("%s is read only when Codex trusts this project", f.as.show(f.as.file)))
			}
		}
	}
	switch {
	case len(fails) > 0:
		d.add(name, statusFail, strings.Join(fails, "\n"), fmt.Sprintf("run 'mcp-circuit-breaker install --agent %s' again", c.Name()))
	case len(wired) == 0 && installed:
		d.add(name, statusWarn, fmt.Sprintf("%s is installed on this machine but no hook file of it runs the gate: its MCP calls are not protected", c.Title()),
			fmt.Sprintf("run 'mcp-circuit-breaker install --agent %s'", c.Name()))
	case len(wired) == 0:
		// Not installed, not wired: nothing to say.
	case len(warns) > 0:
		d.add(name, statusWarn, fmt.Sprintf("%s runs the gate from %s; %s", c.Title(), strings.Join(wired, ", "), strings.Join(warns, "; ")), "")
	default:
		d.add(name, statusPass, fmt.Sprintf("%s runs the gate from %s", c.Title(), strings.Join(wired, ", ")), "")
	}
}

// agentCommands returns the shell commands of our handlers in an agent's hook file; for a plugin
// of ours (Cline's, opencode's), the command it runs, with the hook path install wrote into it.
func agentCommands(format, path string, data []byte) ([]string, error) {
	if format == agent.FormatClinePlugin || format == agent.FormatOpencodePlugin {
		if !plugin.IsOurs(data) {
			return nil, nil // a plugin of the user's by the same name: not ours, not wired
		}
		var bin string
		m := hookBinLine.FindSubmatch(data)
		if m == nil || json.Unmarshal(m[1], &bin) != nil || bin == "" {
			return nil, fmt.Errorf("the plugin names no hook binary (a line const HOOK_BIN = \"…\";)")
		}
		return []string{shellQuote(bin) + " hook"}, nil
	}
	if format == agent.FormatCopilotHooks {
		var doc struct {
			Hooks map[string][]struct {
				Bash    string `json:"bash"`
				Command string `json:"command"`
			} `json:"hooks"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			return nil, err
		}
		var out []string
		for _, hs := range doc.Hooks {
			for _, h := range hs {
				for _, c := range []string{h.Bash, h.Command} {
					if isOursShell(c) {
						out = append(out, c)
					}
				}
			}
		}
		return out, nil
	}
	doc, err := settings.Parse(path, data)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, h := range doc.Handlers() {
		if oursShellHandler(h) {
			out = append(out, h.Command)
		}
	}
	return out, nil
}

// codexUntrusted says which of our handlers in a Codex hooks file have no matching trusted_hash in
// the user's config.toml (Codex skips them silently).
func (d *doctor) codexUntrusted(f agentHookFile) []string {
	want, err := agent.CodexTrustOf(f.as.file, f.data, isOursShell)
	if err != nil {
		return []string{err.Error()}
	}
	cfg := filepath.Join(f.as.configDir, "config.toml")
	config, _ := ledger.ReadBounded(cfg, ledger.MaxConfigBytes)
	trusted := map[string]string{}
	for _, t := range agent.CodexTrusted(config) {
		trusted[t.Key] = t.Hash
	}
	var bad []string
	for _, w := range want {
		if trusted[w.Key] == w.Hash || (strings.Contains(string(config), w.Key) && strings.Contains(string(config), w.Hash)) {
			continue
		}
		bad = append(bad, w.Key)
	}
	if len(bad) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%d handler(s) of ours in %s are not trusted in %s (%s): Codex skips an untrusted hook without a word",
		len(bad), f.as.show(f.as.file), f.as.show(cfg), strings.Join(bad, ", "))}
}
