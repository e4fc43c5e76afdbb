// Package plugin holds the files that put the gate into the agents that load plugins rather than
// run command hooks (Cline, opencode and its fork Kilo Code), for install to copy into the agent's own directories. The
// Claude Code plugin beside them (plugin.json, hooks/, skills/) is read by Claude Code itself.
package plugin

import (
	"embed"
	"encoding/json"
	"fmt"
	"strings"
)

//go:embed cline/mcp-circuit-breaker.js opencode/mcp-circuit-breaker.js
var files embed.FS

// hookLine is the line of each plugin that names the hook binary; install writes its path there.
const hookLine = `const HOOK_BIN = "mcp-circuit-breaker-hook";`

// agentLine is the line of the opencode plugin that names the --agent it runs the gate with.
const agentLine = `const AGENT = "opencode";`

// Agents are the agents this package has a plugin for.
var Agents = []string{"cline", "opencode", "kilo"}

// forkOf names the plugin each agent runs when it is another agent's: Kilo Code's CLI is a fork
// of opencode that loads opencode's plugins unchanged.
var forkOf = map[string]string{"kilo": "opencode"}

// Source returns agent's plugin file with hookBin, the hook binary's path, written in; an empty
// hookBin leaves the name to be found on PATH.
func Source(agent, hookBin string) ([]byte, error) {
	file := agent
	if base, ok := forkOf[agent]; ok {
		file = base
	}
	b, err := files.ReadFile(file + "/mcp-circuit-breaker.js")
	if err != nil {
		return nil, fmt.Errorf("plugin of %s: %w", agent, err)
	}
	s := string(b)
	if file != agent {
		if s, err = replaceLine(s, agentLine, "const AGENT = "+quote(agent)+";"); err != nil {
			return nil, fmt.Errorf("plugin of %s: %w", agent, err)
		}
	}
	if hookBin != "" {
		if s, err = replaceLine(s, hookLine, "const HOOK_BIN = "+quote(hookBin)+";"); err != nil {
			return nil, fmt.Errorf("plugin of %s: %w", agent, err)
		}
	}
	return []byte(s), nil
}

// quote is s as a JSON (and so JavaScript) string literal.
func quote(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}

// replaceLine replaces the one line old of s with new.
func replaceLine(s, old, new string) (string, error) {
	if strings.Count(s, old) != 1 {
		return "", fmt.Errorf("no single line %q to write into", old)
	}
	return strings.Replace(s, old, new, 1), nil
}

// IsOurs reports whether data is one of these plugins (as installed, any hook path): uninstall
// and doctor tell it from a file of the same name that the user wrote.
func IsOurs(data []byte) bool {
	return strings.Contains(string(data), "mcp-circuit-breaker-hook --agent ") &&
		strings.Contains(string(data), "const HOOK_BIN = ")
}
