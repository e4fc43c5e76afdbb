// Command mcpfixture is a stdio MCP server that misbehaves on cue, for probe tests. The first
// argument picks the behaviour:
//
//	healthy   a go-sdk server with the tools "echo" (read-only) and "add"
//	exit      writes a few KB of noise then "fatal: MCP_FIXTURE_TOKEN is not set" to stderr, exits 3
//	garbage   prints a banner on stdout instead of JSON-RPC, then idles
//	silent    reads stdin and never answers
//	strict    a healthy server that exits 1 if the first message is not "initialize"
//	          (older rmcp-based servers do this; go-sdk issue #1177)
//	modern    a healthy server that rejects "initialize" with -32022, supporting only
//	          protocol 2026-07-28 (answered through server/discover)
//	callerror a healthy server whose "echo" tool returns isError
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/testservers"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	mode := "healthy"
	if len(os.Args) > 1 {
		mode = os.Args[1]
	}
	if err := run(mode); err != nil {
		fmt.Fprintf(os.Stderr, "mcpfixture: %v\n", err)
		os.Exit(1)
	}
}

func run(mode string) error {
	ctx := context.Background()
	switch mode {
	case "healthy":
		return serve(ctx, newServer(false), os.Stdin)
	case "callerror":
		return serve(ctx, newServer(true), os.Stdin)
	case "exit":
		// More than any sensible stderr limit, so that tests see the tail is kept.
		for i := range 100 {
			fmt.Fprintf(os.Stderr, "noise line %03d: loading plugins, please wait\n", i)
		}
		fmt.Fprintln(os.Stderr, "fatal: MCP_FIXTURE_TOKEN is not set")
		os.Exit(3)
	case "garbage":
		fmt.Println("Starting fixture server v1.2.3 on stdio...")
		io.Copy(io.Discard, os.Stdin)
		return nil
	case "silent":
		io.Copy(io.Discard, os.Stdin)
		return nil
	case "strict":
		r := bufio.NewReader(os.Stdin)
		line, err := r.ReadBytes('\n')
		if err != nil {
			return err
		}
		var msg struct{ Method string }
		if json.Unmarshal(line, &msg) != nil || msg.Method != "initialize" {
			fmt.Fprintf(os.Stderr, "ExpectedInitializeRequest, got %q\n", msg.Method)
			os.Exit(1)
		}
		return serve(ctx, newServer(false), io.MultiReader(bytes.NewReader(line), r))
	case "modern":
		s := newServer(false)
		s.AddReceivingMiddleware(modernOnly)
		return serve(ctx, s, os.Stdin)
	}
	return fmt.Errorf("unknown mode %q", mode)
}

func serve(ctx context.Context, s *mcp.Server, in io.Reader) error {
	return s.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(in), Writer: os.Stdout})
}

// newServer returns the healthy server of [testservers.NewServer]; with echoFails its "echo"
// tool answers isError.
func newServer(echoFails bool) *mcp.Server {
	s := testservers.NewServer()
	if echoFails {
		mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echo the message back", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
			func(ctx context.Context, req *mcp.CallToolRequest, a struct{}) (*mcp.CallToolResult, any, error) {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "upstream quota exceeded"}}}, nil, nil
			})
	}
	return s
}

// modernOnly rejects the legacy handshake the way a 2026-07-28-only server does, naming the
// versions it supports; everything else (server/discover, tools/list) is served normally.
func modernOnly(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if strings.EqualFold(method, "initialize") {
			data, _ := json.Marshal(map[string]any{"supported": []string{"2026-07-28"}, "requested": "2025-11-25"})
			return nil, &jsonrpc.Error{Code: -32022, Message: "Unsupported protocol version", Data: data}
		}
		return next(ctx, method, req)
	}
}
