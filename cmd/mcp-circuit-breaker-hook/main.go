// Command mcp-circuit-breaker-hook is the hook of mcp-circuit-breaker in a binary of its own: the
// gate of `mcp-circuit-breaker hook` (any agent, --agent NAME) without the CLI framework and the MCP
// SDK, whose package initialisation would otherwise triple the cost of the check that runs before
// every MCP call (README, Performance). A fleet-shared board it reaches itself, through a client
// that links neither go-redis nor net (internal/hookboard.Lean).
package main

import (
	"os"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/agent"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/hookboard"
)

func main() {
	os.Exit(gate.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv, agent.Wire, hookboard.Lean))
}
