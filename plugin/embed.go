// Package plugin holds the files that put the gate into the agents that load plugins rather than
// run command hooks (Cline, opencode), for install to copy into the agent's own directories. The
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

// Agents are the agents this package has a plugin for.
var Agents = []string{"cline", "opencode"}

// Source returns agent's plugin file with hookBin, the hook binary's path, written in; an empty
// hookBin leaves the name to be found on PATH.
func Source(agent, hookBin string) ([]byte, error) {
	b, err := files.ReadFile(agent + "/mcp-circuit-breaker.js")
	if err != nil {
		return nil, fmt.Errorf("plugin of %s: %w", agent, err)
	}
	if hookBin == "" {
		return b, nil
	}
	quoted, err := json.Marshal(hookBin)
	if err != nil {
		return nil, fmt.Errorf("plugin of %s: %w", agent, err)
	}
	s := string(b)
	if strings.Count(s, hookLine) != 1 {
		return nil, fmt.Errorf("plugin of %s: no single line %q to write the hook's path into", agent, hookLine)
	}
	return []byte(strings.Replace(s, hookLine, "const HOOK_BIN = "+string(quoted)+";", 1)), nil
}

// IsOurs reports whether data is one of these plugins (as installed, any hook path): uninstall
// and doctor tell it from a file of the same name that the user wrote.
func IsOurs(data []byte) bool {
	return strings.Contains(string(data), "mcp-circuit-breaker-hook --agent ") &&
		strings.Contains(string(data), "const HOOK_BIN = ")
}
