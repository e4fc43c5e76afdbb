// Command mcp-circuit-breaker keeps circuit breakers for Claude Code's MCP tools: see README.md.
package main

import "os"

func main() { os.Exit(Main()) }
