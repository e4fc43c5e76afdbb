// Command mcp-circuit-breaker-hook is the Claude Code hook of mcp-circuit-breaker in a binary of its
// own: the gate of `mcp-circuit-breaker hook` without the CLI framework and the MCP SDK, whose
// package initialisation would otherwise triple the cost of the check that runs before every MCP
// call (README, Performance).
package main

import (
	"os"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/claude"
)

func main() { os.Exit(claude.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)) }
