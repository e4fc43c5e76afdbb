package main

// doctor for Gemini CLI, Cline and opencode: for each agent that is installed on this machine,
// whether the gate is wired into it and whether the hook binary its wiring names can run.

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

// hookBinLine finds the hook's path install wrote into a plugin.
var hookBinLine = regexp.MustCompile(`(?m)^const HOOK_BIN = ("(?:[^"\\]|\\.)*");$`)

// checkPluginAgents adds one check per agent of Gemini CLI, Cline and opencode that is installed
// (its program on PATH, or its user directory present) or wired: PASS when a scope runs the gate
// with a binary that can run, WARN when the agent is installed but no scope wires the gate (its
// MCP calls are unprotected), FAIL when the wiring names a binary that cannot run (the plugin or
// the agent then lets every call through).
func (d *doctor) checkPluginAgents() {
	for _, c := range []agent.Codec{agent.Gemini, agent.Cline, agent.Opencode} {
		setup := c.Setup()
		name := c.Title() + " hooks"
		configDir := d.e.Getenv(setup.ConfigDirEnv)
		if setup.ConfigDirEnv == "" || configDir == "" {
			configDir = filepath.Join(d.home, setup.HomeDir)
		}
		installed := false
		for _, b := range setup.Binaries {
			_, found := lookPath(d.e.Getenv("PATH"), b)
			installed = installed || found
		}
		if fi, err := os.Stat(configDir); err == nil && fi.IsDir() {
			installed = true
		}
		var wired, broken []string
		for _, sc := range setup.Scopes {
			file := filepath.Join(d.dir, filepath.FromSlash(sc.Path))
			show := showPath(d.dir, d.home, file)
			if sc.InConfigDir {
				file = filepath.Join(configDir, filepath.FromSlash(sc.Path))
				show = showPath("", d.home, file)
			}
			bins := d.agentHookBinaries(c, file)
			for _, b := range bins {
				if p, ok := lookPath(d.e.Getenv("PATH"), b); ok {
					wired = append(wired, fmt.Sprintf("%s (%s scope) runs %s", show, sc.Name, p))
				} else {
					broken = append(broken, fmt.Sprintf("%s (%s scope) runs %s, which is not an executable file", show, sc.Name, b))
				}
			}
		}
		switch {
		case len(broken) > 0:
			d.add(name, statusFail, strings.Join(append(broken, wired...), "; ")+": "+c.Title()+" then lets every MCP call through",
				fmt.Sprintf("install the binaries and run '%s install --agent %s' from them", "mcp-circuit-breaker", c.Name()))
		case len(wired) > 0:
			d.add(name, statusPass, strings.Join(wired, "; "), "")
		case installed:
			d.add(name, statusWarn, c.Title()+" is installed here, but no scope of it runs the gate: its MCP calls are not protected",
				fmt.Sprintf("run 'mcp-circuit-breaker install --agent %s' (docs/agents.md)", c.Name()))
		}
	}
}

// agentHookBinaries returns the hook binaries file wires the gate into c with: the programs of
// its handlers that run `hook --agent NAME`, or the path written into its plugin.
func (d *doctor) agentHookBinaries(c agent.Codec, file string) []string {
	data, err := ledger.ReadBounded(file, ledger.MaxConfigBytes)
	if err != nil {
		return nil
	}
	if c.Setup().Format != agent.FormatGeminiSettings {
		if !plugin.IsOurs(data) {
			return nil
		}
		m := hookBinLine.FindSubmatch(data)
		var bin string
		if m == nil || json.Unmarshal(m[1], &bin) != nil || bin == "" {
			return []string{"(no hook path in the plugin)"}
		}
		return []string{bin}
	}
	doc, err := settings.Parse(file, data)
	if err != nil {
		return nil
	}
	var bins []string
	for _, h := range doc.Handlers() {
		if f := shellFields(h.Command); len(f) == 4 && oursShellHandler(h) && f[3] == c.Name() && !contains(bins, f[0]) {
			bins = append(bins, f[0])
		}
	}
	return bins
}
