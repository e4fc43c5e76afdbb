package main

// doctor for the agents whose hooks run as shell command lines (Codex CLI, Qwen Code, Copilot CLI,
// Crush, …): whether a hook file wires every event, whether the binary its commands name exists,
// and for Codex whether each handler of ours is trusted (Codex skips an untrusted hook without a
// word).

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/agent"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/safefile"
)

// shellCommands returns, by event, the shell commands of our handlers for the agent in its hook
// file.
func shellCommands(a agent.Codec, path string, data []byte) (map[string][]string, error) {
	ours := shellOursFor(a.Name())
	out := map[string][]string{}
	if pluginFormat(a.Setup().Format) {
		// A plugin of ours handles every event of the agent with the command it runs.
		cmd, isOurs, err := pluginCommand(a, data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if isOurs {
			for _, h := range a.Setup().Hooks {
				out[h.Event] = append(out[h.Event], cmd)
			}
		}
		return out, nil
	}
	if a.Setup().Format == agent.FormatCopilotHooks {
		var doc struct {
			Hooks map[string][]struct {
				Bash    string `json:"bash"`
				Command string `json:"command"`
			} `json:"hooks"`
		}
		if err := json.Unmarshal(data, &doc); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		for ev, hs := range doc.Hooks {
			for _, h := range hs {
				for _, c := range []string{h.Bash, h.Command} {
					if ours(c) {
						out[ev] = append(out[ev], c)
					}
				}
			}
		}
		return out, nil
	}
	doc, err := parseAgentDoc(a, path, data)
	if err != nil {
		return nil, err
	}
	isOurs := shellHandlerFor(a.Name())
	if execForm(a) {
		isOurs = oursFor(a.Name())
	}
	handlers := doc.Handlers()
	if flat, _, _ := flatFormat(a); flat {
		handlers = doc.FlatHandlers() // Crush's "hooks": event → [handler], no matcher groups
	}
	for _, h := range handlers {
		if isOurs(h) {
			out[h.Event] = append(out[h.Event], h.Command)
		}
	}
	return out, nil
}

// execForm reports whether the agent's handlers are Claude Code's exec form, the program and its
// args (Augment Auggie's), rather than Claude Code's own: doctor checks that program as it checks
// a shell command's.
func execForm(a agent.Codec) bool {
	return a.Setup().Format == agent.FormatClaudeSettings && a != agent.Claude
}

// shellWired reports whether the hook file wires every event of the agent to the gate.
func shellWired(a agent.Codec, path string, data []byte) bool {
	cmds, err := shellCommands(a, path, data)
	if err != nil {
		return false
	}
	for _, h := range a.Setup().Hooks {
		if len(cmds[h.Event]) == 0 {
			return false
		}
	}
	return true
}

// hookFile is one of an agent's hook files as doctor read it.
type hookFile struct {
	path string
	data []byte
}

// hookFiles returns each of a's hook files that exists and can be read, in the order of its
// scopes; the scopes in the agent's configuration directory are left out when it cannot be found.
func (d *doctor) hookFiles(a agent.Codec) []hookFile {
	var out []hookFile
	for _, sc := range a.Setup().Scopes {
		base := d.dir
		if sc.InConfigDir {
			cfg, err := d.e.agentConfigDir(a)
			if err != nil {
				continue
			}
			base = cfg
		}
		path := filepath.Join(base, filepath.FromSlash(sc.Path))
		paths := []string{path}
		if strings.Contains(sc.Path, "*") {
			// Kiro CLI's hooks are in each agent's file: every one is read.
			paths, _ = filepath.Glob(path)
		}
		for _, p := range paths {
			data, err := safefile.ReadBounded(p, safefile.MaxConfigBytes)
			if err != nil {
				continue
			}
			out = append(out, hookFile{p, data})
		}
	}
	return out
}

// checkAgentHooks: the hooks of each shell-form (or exec-form) agent name a binary that exists, and Codex's are
// trusted. An agent with no hook file of ours gets no line (the agents check says where each is
// wired).
func (d *doctor) checkAgentHooks() {
	for _, a := range agent.All() {
		if !shellFormat(a.Setup().Format) && !pluginFormat(a.Setup().Format) && a.Setup().Format != agent.FormatCrushHooks && !execForm(a) {
			continue
		}
		cfg, err := d.e.agentConfigDir(a)
		if err != nil {
			continue
		}
		var fails []string
		seen := false
		for _, f := range d.hookFiles(a) {
			path, data := f.path, f.data
			cmds, err := shellCommands(a, path, data)
			if err != nil {
				fails = append(fails, err.Error())
				continue
			}
			for _, list := range cmds {
				for _, c := range list {
					seen = true
					f := shellFields(c)
					if execForm(a) {
						f = []string{c}
					}
					if len(f) > 0 {
						if _, ok := lookPath(d.e.Getenv("PATH"), f[0]); !ok && !contains(fails, f[0]) {
							fails = append(fails, fmt.Sprintf("%s runs %s, which is not an executable file: %s then runs no hook and allows every call", d.show(path), f[0], a.Title()))
						}
					}
				}
			}
			if a.Setup().Format == agent.FormatCodexHooks && len(cmds) > 0 {
				fails = append(fails, d.codexUntrusted(path, data, cfg)...)
			}
		}
		if !seen && len(fails) == 0 {
			continue
		}
		name := "hooks of " + a.Name()
		if len(fails) > 0 {
			d.add(name, statusFail, strings.Join(fails, "\n"), fmt.Sprintf("run 'mcp-circuit-breaker install --agent %s' again (with the --scope of the file)", a.Name()))
			continue
		}
		d.add(name, statusPass, a.Title()+"'s hooks run an executable gate"+map[bool]string{true: " and are trusted by hash", false: ""}[a.Setup().Format == agent.FormatCodexHooks], "")
	}
}

// codexUntrusted says which of our handlers in a Codex hooks file have no matching trusted_hash in
// the user's config.toml.
func (d *doctor) codexUntrusted(path string, data []byte, cfgDir string) []string {
	want, err := agent.CodexTrustOf(path, data, shellOursFor("codex"))
	if err != nil {
		return []string{err.Error()}
	}
	cfg := filepath.Join(cfgDir, "config.toml")
	config, _ := safefile.ReadBounded(cfg, safefile.MaxConfigBytes)
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
		len(bad), d.show(path), d.show(cfg), strings.Join(bad, ", "))}
}
