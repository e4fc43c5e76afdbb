// Package testservers owns the MCP servers that tests probe: the stdio fault fixture program
// (cmd/mcpfixture), builders for it and for the go-sdk's own example server, and in-process HTTP
// fixtures that answer the MCP endpoint with a chosen failure. It is for tests only.
package testservers

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FixturePackage is the import path of the stdio fault fixture program.
const FixturePackage = "github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/testservers/cmd/mcpfixture"

// GoSDKEverything is the import path of the go-sdk v1.8.0 example server ("everything"): stdio by
// default, streamable HTTP at path "/" with -http ADDR. It ships in the go-sdk module zip, so it
// builds from the module cache of any module that requires go-sdk.
const GoSDKEverything = "github.com/modelcontextprotocol/go-sdk/examples/server/everything"

// GoSDKEverythingTools are tool names the example server lists.
var GoSDKEverythingTools = []string{"greet", "ping", "log", "roots"}

// Build compiles the Go package pkg into dir/name with `go build` and returns the binary's path.
// It must run inside this module (tests do: their working directory is their package).
func Build(ctx context.Context, dir, name, pkg string) (string, error) {
	out := filepath.Join(dir, name)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %w\n%s", pkg, err, b)
	}
	return out, nil
}

// Binaries are the two stdio servers a test package builds once, in its TestMain: the fault
// fixture program and the go-sdk's example server.
type Binaries struct {
	Fixture, Everything string
}

// BuildBinaries builds both into a new temporary directory named after prefix; cleanup removes
// it. Building takes minutes on a loaded machine the first time, hence the 5-minute bound.
func BuildBinaries(prefix string) (b Binaries, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		return Binaries{}, nil, err
	}
	cleanup = func() { os.RemoveAll(dir) }
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if b.Fixture, err = Build(ctx, dir, "mcpfixture", FixturePackage); err == nil {
		b.Everything, err = Build(ctx, dir, "goeverything", GoSDKEverything)
	}
	if err != nil {
		cleanup()
		return Binaries{}, nil, err
	}
	return b, cleanup, nil
}

// NewServer returns a healthy in-process MCP server with the tools "echo" (annotated read-only)
// and "add", the same as the fixture program's "healthy" mode.
func NewServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "testservers", Version: "1.0.0"}, nil)
	type echoArgs struct {
		Message string `json:"message"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "echo the message back", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
		func(ctx context.Context, req *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Message}}}, nil, nil
		})
	type addArgs struct {
		A int `json:"a"`
		B int `json:"b"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "add two numbers"},
		func(ctx context.Context, req *mcp.CallToolRequest, a addArgs) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(a.A + a.B)}}}, nil, nil
		})
	return s
}

// Healthy returns a streamable HTTP handler for [NewServer]. A stateless handler serves both the
// legacy handshake and 2026-07-28; a stateful one serves the legacy handshake only.
func Healthy(stateless bool) http.Handler {
	s := NewServer()
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: stateless})
}

// RequireHeader wraps h so that requests without header key=value get 401, the way a server
// behind a bearer-token check answers.
func RequireHeader(h http.Handler, key, value string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(key) != value {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Fault paths served by [Faults].
const (
	Path401     = "/401"     // 401 with a WWW-Authenticate naming resource_metadata and scope
	Path403     = "/403"     // 403 insufficient_scope
	Path404     = "/404"     // 404: not an MCP endpoint
	Path406     = "/406"     // 406 with the TS SDK's -32000 body
	Path429     = "/429"     // 429 with Retry-After: 7
	Path503     = "/503"     // 503 with Retry-After: 2
	PathHTML    = "/html"    // 200 text/html (a login page)
	PathHang    = "/hang"    // never answers
	PathModern  = "/modern"  // modern-only: initialize gets 400 -32022, the rest is served statelessly
	PathHealthy = "/healthy" // stateful healthy server
	PathSSE     = "/sse"     // healthy server on the deprecated HTTP+SSE transport
)

// WWWAuthenticate401 is the challenge the 401 fixture sends.
const WWWAuthenticate401 = `Bearer resource_metadata="https://auth.example/.well-known/oauth-protected-resource", scope="files:read"`

// Faults returns a mux serving every fault fixture at its path.
func Faults() *http.ServeMux {
	mux := http.NewServeMux()
	status := func(code int, header map[string]string, contentType, body string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			for k, v := range header {
				w.Header().Set(k, v)
			}
			if contentType != "" {
				w.Header().Set("Content-Type", contentType)
			}
			w.WriteHeader(code)
			io.WriteString(w, body)
		})
	}
	mux.Handle(Path401, status(401, map[string]string{"WWW-Authenticate": WWWAuthenticate401}, "text/plain", "unauthorized\n"))
	mux.Handle(Path403, status(403, map[string]string{"WWW-Authenticate": `Bearer error="insufficient_scope", scope="files:write"`}, "text/plain", "forbidden\n"))
	mux.Handle(Path404, status(404, nil, "text/plain", "404 page not found\n"))
	mux.Handle(Path406, status(406, nil, "application/json",
		`{"jsonrpc":"2.0","error":{"code":-32000,"message":"Not Acceptable: Client must accept both application/json and text/event-stream"},"id":null}`))
	mux.Handle(Path429, status(429, map[string]string{"Retry-After": "7"}, "text/plain", "too many requests\n"))
	mux.Handle(Path503, status(503, map[string]string{"Retry-After": "2"}, "text/plain", "service unavailable\n"))
	mux.Handle(PathHTML, status(200, nil, "text/html; charset=utf-8", "<html><body>Please sign in</body></html>"))
	mux.Handle(PathHang, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The server notices a client that gave up only once the body has been read.
		io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	mux.Handle(PathModern, modernOnly(Healthy(true)))
	mux.Handle(PathHealthy, Healthy(false))
	sse := NewServer()
	mux.Handle(PathSSE, mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return sse }, nil))
	return mux
}

// modernOnly answers "initialize" as a 2026-07-28-only server does (400 with -32022 and the
// supported versions) and passes everything else to h.
func modernOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			json.Unmarshal(body, &msg)
			if msg.Method == "initialize" {
				data, _ := json.Marshal(map[string]any{"supported": []string{"2026-07-28"}, "requested": "2025-11-25"})
				resp, _ := jsonrpc.EncodeMessage(&jsonrpc.Response{
					ID:    mustID(msg.ID),
					Error: &jsonrpc.Error{Code: -32022, Message: "Unsupported protocol version", Data: data},
				})
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				w.Write(resp)
				return
			}
			r.Body = io.NopCloser(strings.NewReader(string(body)))
		}
		h.ServeHTTP(w, r)
	})
}

func mustID(raw json.RawMessage) jsonrpc.ID {
	var v any
	json.Unmarshal(raw, &v)
	if f, ok := v.(float64); ok {
		v = int64(f)
	}
	id, err := jsonrpc.MakeID(v)
	if err != nil {
		id, _ = jsonrpc.MakeID(nil)
	}
	return id
}

// ClosedPort returns "127.0.0.1:PORT" where nothing listens: a port that was just bound and
// released, so connecting to it is refused.
func ClosedPort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("listen on a free port: %w", err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr, nil
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago, for servers that take
// their port from the command line or the environment.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("listen on a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// WaitListening polls addr until it accepts a TCP connection or ctx ends.
func WaitListening(ctx context.Context, addr string) error {
	var d net.Dialer
	for {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for %s: %w", addr, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
