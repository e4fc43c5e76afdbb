package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
)

// This file holds the two MCP ends of the demo: the server that fails on cue, and the client that
// calls it the way Claude Code does and turns what happens into the error text Claude Code would
// put in a PostToolUseFailure event (docs/hook.md).

// serverMode is how the demo server answers tools/call.
type serverMode int32

// The server's modes; initialize and tools/list are always answered, as by a real server whose
// backend is failing.
const (
	serveHealthy     serverMode = iota // answer with results
	serveDrop                          // drop the connection mid-call, as a crashed server or a reset proxy does
	serveRPCError                      // answer a JSON-RPC error (-32603)
	serveErrorResult                   // answer a result with isError: true
)

// The failure texts of the demo server.
const (
	demoRPCErrorText    = "search backend unavailable: 503 Service Unavailable"
	demoErrorResultText = "upstream said: search index overloaded"
)

// demoServer is a real MCP server over streamable HTTP on 127.0.0.1 (go-sdk), whose tools fail
// the way the demo tells it to.
type demoServer struct {
	// URL is the MCP endpoint.
	URL string

	mode  atomic.Int32
	calls atomic.Int32 // tools/call requests that reached the server
	http  *http.Server
}

// startDemoServer starts the server on a random port of 127.0.0.1, healthy.
func startDemoServer() (*demoServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("start the demo MCP server: %w", err)
	}
	d := &demoServer{URL: "http://" + ln.Addr().String() + "/mcp"}
	srv := mcp.NewServer(&mcp.Implementation{Name: "mcp-circuit-breaker-demo", Version: gate.Version()}, nil)
	type searchArgs struct {
		Query string `json:"query" jsonschema:"what to search for"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "search", Description: "Search the demo document index",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, _ *mcp.CallToolRequest, a searchArgs) (*mcp.CallToolResult, any, error) {
			return d.answer(fmt.Sprintf("3 results for %q: circuit-breakers.md, half-open.md, cooldown.md", a.Query))
		})
	type fetchArgs struct {
		Path string `json:"path" jsonschema:"the document to read"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "fetch", Description: "Read one document of the demo index",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, _ *mcp.CallToolRequest, a fetchArgs) (*mcp.CallToolResult, any, error) {
			return d.answer("# " + a.Path + "\n\nA circuit breaker stops calls to a failing dependency.")
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	mux := http.NewServeMux()
	mux.Handle("/mcp", d.faults(h))
	d.http = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	go d.http.Serve(ln)
	return d, nil
}

// set switches the server's mode; it applies from the next tools/call on.
func (d *demoServer) set(m serverMode) { d.mode.Store(int32(m)) }

// answer is a tool's answer in the current mode.
func (d *demoServer) answer(text string) (*mcp.CallToolResult, any, error) {
	switch serverMode(d.mode.Load()) {
	case serveRPCError:
		return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: demoRPCErrorText}
	case serveErrorResult:
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: demoErrorResultText}}}, nil, nil
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
}

// faults counts the tools/call requests and, in serveDrop mode, closes their connection without
// an answer. Every other request goes to the MCP handler untouched.
func (d *demoServer) faults(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			if err != nil {
				http.Error(w, "read body", http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				Method string `json:"method"`
			}
			if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call" {
				d.calls.Add(1)
				if serverMode(d.mode.Load()) == serveDrop {
					if hj, ok := w.(http.Hijacker); ok {
						if conn, _, err := hj.Hijack(); err == nil {
							conn.Close()
							return
						}
					}
					panic(http.ErrAbortHandler) // closes the connection too, without a log line
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// stop shuts the server down, waiting at most a second for connections in use.
func (d *demoServer) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if d.http.Shutdown(ctx) != nil {
		d.http.Close()
	}
}

// demoClient calls the demo server the way Claude Code does: one session kept open between calls
// and opened again after the connection was lost (Claude Code reconnects on the next call).
type demoClient struct {
	url string
	cs  *mcp.ClientSession
}

// callOutcome is what Claude Code makes of one tools/call.
type callOutcome struct {
	// Content is the result's content array, as PostToolUse carries it in tool_response.
	Content json.RawMessage
	// Text is the joined text of the content.
	Text string
	// Error is the error text of PostToolUseFailure; empty on success.
	Error string
	// What says what happened on the wire, for people.
	What string
}

// call makes one tools/call and returns what Claude Code would see.
func (m *demoClient) call(ctx context.Context, tool string, args map[string]any) (callOutcome, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if m.cs == nil {
		c := mcp.NewClient(&mcp.Implementation{Name: "claude-code (mcp-circuit-breaker demo)", Version: gate.Version()},
			&mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
		t := &mcp.StreamableClientTransport{Endpoint: m.url, MaxRetries: -1, DisableStandaloneSSE: true}
		cs, err := c.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			return callOutcome{}, fmt.Errorf("connect to the demo MCP server: %w", err)
		}
		m.cs = cs
	}
	res, err := m.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	var rpcErr *jsonrpc.Error
	switch {
	case errors.As(err, &rpcErr) && rpcErr.Code == jsonrpc.CodeInternalError:
		// Claude Code passes a server's JSON-RPC error message on without the "MCP error N:"
		// prefix.
		return callOutcome{Error: rpcErr.Message, What: fmt.Sprintf("JSON-RPC error %d %q", rpcErr.Code, rpcErr.Message)}, nil
	case err != nil:
		// The connection is gone; Claude Code says "Connection closed" and reconnects next time.
		m.close()
		return callOutcome{Error: "Connection closed", What: "the server dropped the connection (" + firstLine(err.Error()) + ")"}, nil
	}
	content, err := json.Marshal(res.Content)
	if err != nil {
		return callOutcome{}, fmt.Errorf("encode the tool's content: %w", err)
	}
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	o := callOutcome{Content: content, Text: strings.Join(texts, "\n")}
	if res.IsError {
		// Claude Code joins the text content of an error result into the error.
		o.Error, o.What = o.Text, fmt.Sprintf("a result with isError: true, %q", o.Text)
		return o, nil
	}
	o.What = "ok: " + firstLine(o.Text)
	return o, nil
}

func (m *demoClient) close() {
	if m.cs != nil {
		m.cs.Close()
		m.cs = nil
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return project.Clip(s, 120)
}
