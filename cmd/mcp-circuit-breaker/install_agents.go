package main

// The hook files of Codex CLI, Qwen Code, Copilot CLI, Gemini CLI and Goose, and the plugins of
// Cline, opencode and Kilo Code (opencode's plugin), for install's planHooks and
// planUnhook (docs/agents.md): Codex, Qwen and Goose (its plugin's hooks/hooks.json) read Claude
// Code's layout but run a handler only as a shell command line; Codex runs it only once its hash is trusted in the user's config.toml,
// which install writes in a block of its own; Copilot's hooks file is ours whole, one camelCase
// entry per event, each naming its event.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/agent"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/settings"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/plugin"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/skill"
)

// shellFormat reports whether install writes the agent's handlers as shell command lines.
func shellFormat(format string) bool {
	return format == agent.FormatCodexHooks || format == agent.FormatQwenSettings || format == agent.FormatCopilotHooks ||
		format == agent.FormatGeminiSettings || format == agent.FormatGoosePlugin || format == agent.FormatDevinHooks ||
		format == agent.FormatAntigravityHooks || format == agent.FormatDroidSettings
}

// parseAgentDoc parses an agent's hook file in Claude Code's layout: Gemini CLI's and Qwen Code's
// as JSON with comments (they strip comments before they parse their settings, and a user's may
// hold some, which an edit keeps); Devin CLI's has its events at the top level.
func parseAgentDoc(a agent.Codec, path string, data []byte) (*settings.Doc, error) {
	parse := settings.Parse
	if f := a.Setup().Format; f == agent.FormatGeminiSettings || f == agent.FormatQwenSettings {
		parse = settings.ParseJSONC
	}
	doc, err := parse(path, data)
	if err == nil && a.Setup().Format == agent.FormatDevinHooks {
		doc.HooksAtRoot()
	}
	return doc, err
}

// eventCommands reports whether each of the agent's handlers names its event (… --agent
// NAME:EVENT): its payloads do not say which event they are.
func eventCommands(a agent.Codec) bool {
	f := a.Setup().Format
	return f == agent.FormatCopilotHooks || f == agent.FormatAntigravityHooks
}

// pluginFormat reports whether install wires the agent by copying a plugin of ours (Cline,
// opencode) rather than by editing a hook file.
func pluginFormat(format string) bool {
	return format == agent.FormatClinePlugin || format == agent.FormatOpencodePlugin
}

// planPluginHooks fills sf with the agent's plugin, the hook binary's path written in. The file is
// ours whole; one of the user's by the same name is never replaced.
func planPluginHooks(sf *plan, a agent.Codec, bin string) error {
	if sf.exists && !plugin.IsOurs(sf.old) {
		return withHint(fmt.Errorf("%s exists and is not the plugin of %s", sf.display, skill.Binary),
			"move it away and run install again; nothing was changed")
	}
	src, err := plugin.Source(a.Name(), bin)
	if err != nil {
		return err
	}
	sf.writeWhole(src, "updated")
	return nil
}

// planPluginUnhook plans the removal of the agent's plugin when it is ours.
func planPluginUnhook(sf *plan) {
	switch {
	case !sf.exists:
		sf.done = "absent"
	case plugin.IsOurs(sf.old):
		sf.remove, sf.done = true, "removed"
	default:
		sf.done = "left as it is (not the plugin of " + skill.Binary + ")"
	}
}

// hookBinLine finds the hook's path install wrote into a plugin of ours.
var hookBinLine = regexp.MustCompile(`(?m)^const HOOK_BIN = ("(?:[^"\\]|\\.)*");$`)

// pluginCommand is the command a plugin of ours runs for the agent, as a shell command line of
// agentHookCommand's form (for doctor); ok is false when data is not our plugin.
func pluginCommand(a agent.Codec, data []byte) (cmd string, ok bool, err error) {
	if !plugin.IsOurs(data) {
		return "", false, nil
	}
	var bin string
	m := hookBinLine.FindSubmatch(data)
	if m == nil || json.Unmarshal(m[1], &bin) != nil || bin == "" {
		return "", true, fmt.Errorf("the plugin names no hook binary (a line const HOOK_BIN = \"…\";)")
	}
	return agentHookCommand(bin, a.Name(), ""), true, nil
}

// agentHookCommand is the shell command line a handler of agent runs: the binary, quoted for a
// POSIX shell, then hook --agent NAME (NAME:EVENT for an agent whose payloads do not name it).
func agentHookCommand(bin, name, event string) string {
	if event != "" {
		name += ":" + event
	}
	return shellQuote(bin) + " hook --agent " + name
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellOursFor reports whether a shell command line runs our hook for the agent called name: our
// binary (quoted or not), then hook --agent NAME or NAME:EVENT.
func shellOursFor(name string) func(command string) bool {
	return func(command string) bool {
		f := shellFields(command)
		if len(f) != 4 || !isBinary(f[0]) || f[1] != "hook" || f[2] != "--agent" {
			return false
		}
		base, _, _ := strings.Cut(f[3], ":")
		return base == name
	}
}

// shellFields splits a command line written by agentHookCommand (words in single quotes, a quote
// inside one written as quote, backslash, quote, quote); it is not a shell parser, and anything
// else it reads as plain words.
func shellFields(s string) []string {
	var fields []string
	var cur strings.Builder
	in, any := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'':
			in, any = !in, true
		case !in && c == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
			any = true
		case !in && (c == ' ' || c == '\t'):
			if any {
				fields = append(fields, cur.String())
				cur.Reset()
				any = false
			}
		default:
			cur.WriteByte(c)
			any = true
		}
	}
	if any {
		fields = append(fields, cur.String())
	}
	return fields
}

// shellHandlerFor is shellOursFor for a settings handler in shell form.
func shellHandlerFor(name string) func(settings.Handler) bool {
	ours := shellOursFor(name)
	return func(h settings.Handler) bool {
		return (h.Type == "command" || h.Type == "") && h.Args == nil && ours(h.Command)
	}
}

// planShellHooks fills sf (the agent's hook file) with the gate's handlers in shell form: in
// Claude Code's layout for Codex and Qwen, or as Copilot CLI's hooks file, which is ours whole.
func (e *Env) planShellHooks(sf *plan, path string, a agent.Codec, bin string) error {
	set := a.Setup()
	if set.Format == agent.FormatCopilotHooks {
		hooks := map[string]any{}
		for _, h := range set.Hooks {
			hooks[h.Event] = []any{map[string]any{"type": "command", "bash": agentHookCommand(bin, a.Name(), h.Event), "timeoutSec": set.Timeout}}
		}
		b, err := json.MarshalIndent(map[string]any{"version": 1, "hooks": hooks}, "", "  ")
		if err != nil {
			return err
		}
		sf.writeWhole(append(b, '\n'), "updated")
		return nil
	}
	doc, err := parseAgentDoc(a, path, sf.old)
	if err != nil {
		return withHint(err, "fix the file (or move it away) and run install again; nothing was changed")
	}
	var specs []settings.Spec
	for _, h := range set.Hooks {
		event := ""
		if eventCommands(a) {
			event = h.Event
		}
		specs = append(specs, settings.Spec{Event: h.Event, Matcher: h.Matcher, Command: agentHookCommand(bin, a.Name(), event), Timeout: set.Timeout, Shell: true})
	}
	changes, err := doc.Ensure(specs, shellHandlerFor(a.Name()))
	if err != nil {
		return withHint(err, "fix the file and run install again; nothing was changed")
	}
	sf.new = doc.Bytes()
	sf.done = settingsSummary(changes)
	return nil
}

// planShellUnhook plans the removal of the gate's shell handlers from sf.
func planShellUnhook(sf *plan, path string, a agent.Codec) error {
	if !sf.exists {
		sf.done = "absent"
		return nil
	}
	if a.Setup().Format == agent.FormatCopilotHooks {
		sf.remove, sf.done = true, "removed"
		return nil
	}
	doc, err := parseAgentDoc(a, path, sf.old)
	if err != nil {
		return withHint(err, "fix the file and run uninstall again; nothing was changed")
	}
	events, n := doc.Remove(shellHandlerFor(a.Name()))
	sf.new = doc.Bytes()
	sf.done = "unchanged (no hooks of " + skill.Binary + ")"
	if n > 0 {
		sf.done = fmt.Sprintf("removed %d handler(s) from %s", n, strings.Join(events, ", "))
		if doc.Root().Len() == 0 {
			sf.remove = true
			sf.done += "; the file held nothing else and was removed"
		}
	}
	return nil
}

// codexTrustPlan plans the install block of config.toml in Codex's user directory cfgDir: every
// handler of ours in hooks (the planned content of the hooks file at hooksPath; nil when it goes)
// trusted by its hash, the block's entries of other hooks files kept.
func (e *Env) codexTrustPlan(cfgDir, hooksPath string, hooks []byte, show func(string) string) (*plan, error) {
	cfg := filepath.Join(cfgDir, "config.toml")
	p, err := readPlan(cfg, show(cfg), 0o600, "")
	if err != nil {
		return nil, err
	}
	var add []agent.CodexTrust
	if len(hooks) > 0 {
		if add, err = agent.CodexTrustOf(hooksPath, hooks, shellOursFor("codex")); err != nil {
			return nil, err
		}
	}
	out, outside, err := agent.CodexTrustConfig(p.old, hooksPath+":", add)
	if err != nil {
		return nil, err
	}
	p.new = out
	for key, same := range outside {
		if !same {
			e.warnf("%s already has [hooks.state.%q] outside the block install writes, with another hash: Codex will skip that hook until you trust it again in its /hooks review (or remove that table and run install again)", p.display, key)
		}
	}
	switch {
	case !p.changes():
		p.done = "unchanged (the hooks are trusted)"
		if len(add) == 0 {
			p.done = "unchanged"
		}
	case len(add) == 0 && len(bytes.TrimSpace(out)) == 0:
		// Nothing but our block was in it (install created it).
		p.remove, p.done = true, "hook trust removed; the file held nothing else and was removed"
	case len(add) == 0:
		p.done = "hook trust removed"
	default:
		p.done = fmt.Sprintf("%d hook(s) trusted by hash", len(add)-len(outside))
	}
	return p, nil
}

// agentTrustHint says what else the agent needs before it reads a project-scope hook file.
func (e *Env) agentTrustHint(a agent.Codec, ap scopePaths, cfgDir string) {
	switch a.Name() {
	case "gemini":
		e.hintf("Gemini CLI runs hooks only in a folder it trusts (its trust prompt, or ~/.gemini/trustedFolders.json); it lists project hooks it has not seen before and may ask to trust them")
		return
	case "cline", "opencode", "kilo":
		e.hintf("%s loads the plugin at its next start; restart a running %s", a.Title(), a.Title())
		return
	case "goose":
		e.hintf("Goose runs the hooks of the plugins under ~/.agents/plugins/ and the project's .agents/plugins/ from its next session on, unless a plugin settings file lists %s in disabledPlugins", "mcp-circuit-breaker")
		return
	}
	if ap.scope != "project" {
		return
	}
	switch a.Name() {
	case "codex":
		e.hintf("Codex reads %s only in a project it trusts: trust it in Codex (or add [projects.%q] trust_level = \"trusted\" to %s); --scope user needs no project trust",
			ap.show(ap.settings), ap.dir, ap.show(filepath.Join(cfgDir, "config.toml")))
	case "copilot":
		e.hintf("Copilot CLI loads %s only in a folder it trusts (its folder trust prompt, or trustedFolders in ~/.copilot/config.json); --scope user needs no trust", ap.show(ap.settings))
	}
}
