// Command mcpfixture is a stdio MCP server that misbehaves on cue, for probe tests. The first
// argument picks the behaviour:
//
//	healthy   a go-sdk server with the tools "echo" (read-only) and "add"
//	exit      writes a few KB of noise then "fatal: MCP_FIXTURE_TOKEN is not set" to stderr, exits 3
//	garbage   prints a banner on stdout instead of JSON-RPC, then idles
//	silent    reads stdin and never answers
//	hang      never answers and ignores stdin closing and SIGTERM (only a group kill ends it)
//	strict    a healthy server that exits 1 if the first message is not "initialize"
//	          (older rmcp-based servers do this; go-sdk issue #1177)
//	modern    a healthy server that rejects "initialize" with -32022, supporting only
//	          protocol 2026-07-28 (answered through server/discover)
//	callerror a healthy server whose "echo" tool returns isError
//	cue       tools "echo" and "other" that fail, stall or succeed as their arguments say
//	          ({"fail": TEXT}, {"sleep_ms": N}, or {"exit": true} to die on the call;
//	          testservers.CueInput)
//	rendezvous a healthy server that answers only once MCP_FIXTURE_PEERS fixtures have started
//	          (each leaves a file in MCP_FIXTURE_RENDEZVOUS): a test that probes run concurrently
//
// With MCP_FIXTURE_CALL_LOG=FILE every mode that serves MCP appends one JSON line per tools/call
// to FILE.
package main

import (
	"os"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/testservers"
)

func main() {
	mode := "healthy"
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	os.Exit(testservers.RunFixture(mode))
}
