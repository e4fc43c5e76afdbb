package main

// install --agent codex|qwen|copilot|gemini|cline|opencode and uninstall --agent …: each agent's hooks in its own files
// and scopes (docs/agents.md). Codex CLI's handlers are trusted by their hash in the user's
// config.toml, the step its hook review would otherwise need; Copilot CLI's hooks file is ours
// whole, and so is the plugin file of Cline and opencode. Files are planned first and written only when all could be, like Claude Code's install.

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/agent"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/settings"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/plugin"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/skill"
)

// agentScope is the resolved hook file of one agent and scope.
type agentScope struct {
	codec agent.Codec
	scope agent.Scope
	// file is the hook configuration file; configDir the agent's user directory.
	file, configDir string
	// dir is the project directory ("" for a user scope); home is $HOME, for display.
	dir, home string
}

func (s agentScope) show(path string) string { return showPath(s.dir, s.home, path) }

// resolveAgentScope finds the file of --scope (the agent's default scope when empty).
func (e *Env) resolveAgentScope(c agent.Codec, opts *installOptions) (agentScope, error) {
	setup := c.Setup()
	as := agentScope{codec: c, home: e.Getenv("HOME")}
	name := opts.Scope
	if name == "" {
		name = setup.Scopes[0].Name
	}
	var names []string
	for _, sc := range setup.Scopes {
		names = append(names, sc.Name)
		if sc.Name == name {
			as.scope = sc
		}
	}
	if as.scope.Name == "" {
		return as, usagef("--scope %q is not a scope of %s: %s", name, c.Title(), strings.Join(names, ", "))
	}
	dir := e.Getenv(setup.ConfigDirEnv)
	if setup.ConfigDirEnv == "" || dir == "" {
		if as.home == "" {
			return as, withHint(fmt.Errorf("cannot find %s's user directory: HOME is not set", c.Title()), "set HOME")
		}
		dir = filepath.Join(as.home, setup.HomeDir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return as, err
	}
	as.configDir = abs
	if as.scope.InConfigDir {
		as.file = filepath.Join(as.configDir, filepath.FromSlash(as.scope.Path))
		return as, nil
	}
	pdir, err := e.projectDir(opts.Dir)
	if err != nil {
		return as, err
	}
	as.dir = pdir
	as.file = filepath.Join(pdir, filepath.FromSlash(as.scope.Path))
	return as, nil
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

// isOursShell reports whether a shell command line runs our hook: our binary (quoted or not),
// then hook, then --agent NAME[:EVENT].
func isOursShell(command string) bool {
	f := shellFields(command)
	return len(f) == 4 && isBinary(f[0]) && f[1] == "hook" && f[2] == "--agent" && f[3] != ""
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

func oursShellHandler(h settings.Handler) bool {
	return (h.Type == "command" || h.Type == "") && h.Args == nil && isOursShell(h.Command)
}

// runAgentInstall wires the gate into another agent than Claude Code.
func runAgentInstall(opts *installOptions, e *Env, c agent.Codec) error {
	as, err := e.resolveAgentScope(c, opts)
	if err != nil {
		return err
	}
	bin, warns, err := e.hookBinary(opts)
	if err != nil {
		return err
	}
	for _, w := range warns {
		e.warnf("%s", w)
	}
	setup := c.Setup()
	hf, err := readPlan(as.file, as.show(as.file), 0o644)
	if err != nil {
		return err
	}
	plans := []*plan{hf}
	switch setup.Format {
	case agent.FormatCopilotHooks:
		hooks := map[string]any{}
		for _, h := range setup.Hooks {
			hooks[h.Event] = []any{map[string]any{"type": "command", "bash": agentHookCommand(bin, c.Name(), h.Event), "timeoutSec": hookTimeout}}
		}
		hf.new = encodeIndented(map[string]any{"version": 1, "hooks": hooks})
		hf.ours = true
		hf.done = "written"
		if hf.exists {
			hf.done = "unchanged"
			if hf.changes() {
				hf.done = "updated"
			}
		}
	case agent.FormatClinePlugin, agent.FormatOpencodePlugin:
		// The plugin file is ours whole; one of the user's by the same name is never replaced.
		if hf.exists && !plugin.IsOurs(hf.old) {
			return withHint(fmt.Errorf("%s exists and is not the plugin of %s", as.show(as.file), skill.Binary),
				"move it away and run install again; nothing was changed")
		}
		src, err := plugin.Source(c.Name(), bin)
		if err != nil {
			return err
		}
		hf.new, hf.ours, hf.done = src, true, "written"
		if hf.exists {
			hf.done = "unchanged"
			if hf.changes() {
				hf.done = "updated"
			}
		}
	default: // FormatCodexHooks, FormatQwenSettings, FormatGeminiSettings: Claude Code's layout, shell commands
		doc, err := settings.Parse(as.file, hf.old)
		if err != nil {
			return withHint(err, "fix the file (or move it away) and run install again; nothing was changed")
		}
		timeout := hookTimeout
		if setup.Format == agent.FormatGeminiSettings {
			timeout *= 1000 // Gemini CLI reads milliseconds
		}
		var specs []settings.Spec
		for _, h := range setup.Hooks {
			specs = append(specs, settings.Spec{Event: h.Event, Matcher: h.Matcher, Command: agentHookCommand(bin, c.Name(), ""), Timeout: timeout, Shell: true})
		}
		changes, err := doc.Ensure(specs, oursShellHandler)
		if err != nil {
			return withHint(err, "fix the file and run install again; nothing was changed")
		}
		hf.new = doc.Bytes()
		hf.done = settingsSummary(changes)
	}
	var trust []string
	if setup.Format == agent.FormatCodexHooks {
		tp, msgs, err := codexTrustPlan(as, hf.new)
		if err != nil {
			return err
		}
		plans = append(plans, tp)
		trust = msgs
	}
	if opts.DryRun {
		return e.printPlan(plans, func() {})
	}
	for i := len(plans) - 1; i >= 0; i-- {
		if err := plans[i].apply(); err != nil {
			return err
		}
	}
	fmt.Fprintf(e.Stdout, "%s, %s scope: %s\n", c.Title(), as.scope.Name, as.scope.Usage)
	for _, p := range plans {
		fmt.Fprintf(e.Stdout, "  %s: %s\n", p.display, p.done)
	}
	for _, m := range trust {
		e.warnf("%s", m)
	}
	fmt.Fprintf(e.Stdout, "hook command: %s (timeout %d s)\n", agentHookCommand(bin, c.Name(), eventPlaceholder(setup)), hookTimeout)
	switch {
	case c.Name() == "codex" && as.scope.Name == "project":
		e.hintf("Codex reads %s only in a project it trusts: trust it in Codex (or add [projects.%q] trust_level = \"trusted\" to %s)",
			as.show(as.file), as.dir, as.show(filepath.Join(as.configDir, "config.toml")))
	case c.Name() == "copilot" && as.scope.Name == "project":
		e.hintf("Copilot CLI loads %s only in a folder it trusts (its folder trust prompt, or trustedFolders in ~/.copilot/config.json)", as.show(as.file))
	case c.Name() == "gemini":
		e.hintf("Gemini CLI runs hooks only in a folder it trusts (its trust prompt, or ~/.gemini/trustedFolders.json); it lists project hooks it has not seen before and may ask to trust them")
	case c.Name() == "opencode":
		e.hintf("opencode loads the plugin at its next start; restart a running opencode")
	case c.Name() == "cline":
		e.hintf("Cline loads the plugin at its next start; restart a running Cline")
	}
	return nil
}

// eventPlaceholder is what the hook command shows for the event, for an agent bound per event.
func eventPlaceholder(setup agent.Setup) string {
	if setup.Format == agent.FormatCopilotHooks {
		return "<event>"
	}
	return ""
}

// codexTrustPlan plans config.toml of Codex's user directory: the install block trusting every
// handler of ours in hooks (the new hooks.json of scope as).
func codexTrustPlan(as agentScope, hooks []byte) (*plan, []string, error) {
	cfg := filepath.Join(as.configDir, "config.toml")
	p, err := readPlan(cfg, as.show(cfg), 0o600)
	if err != nil {
		return nil, nil, err
	}
	var add []agent.CodexTrust
	if len(hooks) > 0 {
		if add, err = agent.CodexTrustOf(as.file, hooks, isOursShell); err != nil {
			return nil, nil, err
		}
	}
	out, outside, err := agent.CodexTrustConfig(p.old, as.file+":", add)
	if err != nil {
		return nil, nil, err
	}
	p.new = out
	var msgs []string
	for key, same := range outside {
		if !same {
			msgs = append(msgs, fmt.Sprintf("%s already has [hooks.state.%q] outside the block install writes, with another hash: Codex will skip that hook until you trust it again in its /hooks review (or remove that table and run install again)", p.display, key))
		}
	}
	switch {
	case len(add) == 0:
		p.done = "hook trust removed"
	case p.changes():
		p.done = fmt.Sprintf("%d hook(s) trusted by hash", len(add)-len(outside))
	default:
		p.done = "unchanged (the hooks are trusted)"
	}
	if !p.changes() && len(add) == 0 {
		p.done = "unchanged"
	}
	return p, msgs, nil
}

// runAgentUninstall removes the gate's hooks from another agent than Claude Code.
func runAgentUninstall(opts *installOptions, e *Env, c agent.Codec) error {
	as, err := e.resolveAgentScope(c, opts)
	if err != nil {
		return err
	}
	setup := c.Setup()
	hf, err := readPlan(as.file, as.show(as.file), 0o644)
	if err != nil {
		return err
	}
	plans := []*plan{hf}
	switch {
	case !hf.exists:
		hf.done = "absent"
	case setup.Format == agent.FormatCopilotHooks:
		hf.remove, hf.done = true, "removed"
	case setup.Format == agent.FormatClinePlugin || setup.Format == agent.FormatOpencodePlugin:
		hf.done = "left as it is (not the plugin of " + skill.Binary + ")"
		if plugin.IsOurs(hf.old) {
			hf.remove, hf.done = true, "removed"
		}
	default:
		doc, err := settings.Parse(as.file, hf.old)
		if err != nil {
			return withHint(err, "fix the file and run uninstall again; nothing was changed")
		}
		events, n := doc.Remove(oursShellHandler)
		hf.new = doc.Bytes()
		hf.done = "unchanged (no hooks of " + skill.Binary + ")"
		if n > 0 {
			hf.done = fmt.Sprintf("removed %d handler(s) from %s", n, strings.Join(events, ", "))
			if doc.Root().Len() == 0 {
				hf.remove = true
				hf.done += "; the file held nothing else and was removed"
			}
		}
	}
	if setup.Format == agent.FormatCodexHooks {
		tp, _, err := codexTrustPlan(as, nil)
		if err != nil {
			return err
		}
		if tp.exists {
			plans = append(plans, tp)
		}
	}
	if opts.DryRun {
		return e.printPlan(plans, func() {})
	}
	for _, p := range plans {
		if p.exists {
			if err := p.apply(); err != nil {
				return err
			}
		}
	}
	fmt.Fprintf(e.Stdout, "%s, %s scope:\n", c.Title(), as.scope.Name)
	for _, p := range plans {
		fmt.Fprintf(e.Stdout, "  %s: %s\n", p.display, p.done)
	}
	return nil
}

// agentsOf returns the codecs named by --agent (claude when none is given).
func agentsOf(names []string) ([]agent.Codec, error) {
	if len(names) == 0 {
		names = []string{"claude"}
	}
	var out []agent.Codec
	for _, n := range names {
		c, err := agent.Lookup(n)
		if err != nil {
			return nil, usagef("--agent: %v", err)
		}
		out = append(out, c)
	}
	return out, nil
}

// forAgents runs claude for Claude Code and other for every other agent named by --agent.
func forAgents(opts *installOptions, e *Env, claude func(*installOptions, *Env) error, other func(*installOptions, *Env, agent.Codec) error) error {
	codecs, err := agentsOf(opts.Agents)
	if err != nil {
		return err
	}
	if len(codecs) == 1 && codecs[0].Name() != "claude" {
		return other(opts, e, codecs[0])
	}
	var errs []error
	for _, c := range codecs {
		if c.Name() == "claude" {
			o := *opts
			if o.Scope == "" {
				o.Scope = "project"
			}
			errs = append(errs, claude(&o, e))
			continue
		}
		errs = append(errs, other(opts, e, c))
	}
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}

// encodeIndented is v as JSON indented by two spaces, with a newline.
func encodeIndented(v any) []byte {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil
	}
	return append(b, '\n')
}
