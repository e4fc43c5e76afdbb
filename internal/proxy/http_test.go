//go:build unix

//lint:file-ignore SA1019 the server speaks sampling and logging on purpose: deprecated as of 2026-07-28 but still spoken, so the proxy must pass them unchanged

package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/report"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/testservers"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// token is the credential the HTTP tests' client sends and their server requires: it must reach
// the server through the proxy and never the ledger.
const token = "Bearer sk-proxy-test-7f3a9c"

// upstream is a real streamable HTTP MCP server (the go-sdk's handler) with the cue fixture's
// tools "echo" and "other" (testservers.CueInput), behind a bearer-token check.
type upstream struct {
	srv *httptest.Server
	// calls counts the tools/call that reached a tool; cancelled those whose context ended
	// before they answered (a notifications/cancelled, or the session closing).
	calls, cancelled atomic.Int32
	// down makes every tools/call POST get 503, as a server behind a failing load balancer.
	down atomic.Bool
}

func newUpstream(t *testing.T, opts *mcp.StreamableHTTPOptions) *upstream {
	t.Helper()
	u := &upstream{}
	var sessions atomic.Int32
	s := mcp.NewServer(&mcp.Implementation{Name: "cue-http", Version: "1"}, &mcp.ServerOptions{
		// Session ids the replay can predict: one server, one count.
		GetSessionID: func() string { return "session-" + string(rune('0'+sessions.Add(1))) },
	})
	handler := func(ctx context.Context, req *mcp.CallToolRequest, in testservers.CueInput) (*mcp.CallToolResult, any, error) {
		u.calls.Add(1)
		if in.SleepMS > 0 {
			select {
			case <-time.After(time.Duration(in.SleepMS) * time.Millisecond):
			case <-ctx.Done():
				u.cancelled.Add(1)
				return nil, nil, ctx.Err()
			}
		}
		if in.Fail != "" {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: in.Fail}}}, nil, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	}
	for _, name := range []string{"echo", "other"} {
		mcp.AddTool(s, &mcp.Tool{Name: name, Description: name + " on cue"}, handler)
	}
	addTalkative(s)
	h := testservers.RequireHeader(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, opts), "Authorization", token)
	u.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u.down.Load() && r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			if bytes.Contains(body, toolsCall) {
				http.Error(w, "service unavailable", http.StatusServiceUnavailable)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(u.srv.Close)
	return u
}

// addTalkative adds to s what makes the server speak on the response stream of a call: a tool
// that sends progress and a log message, one that asks the client to sample and one that elicits,
// and a prompt and a resource.
func addTalkative(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "progress"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		if tok := req.Params.GetProgressToken(); tok != nil {
			req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 2, Message: "half"})
		}
		req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "working"})
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "sample"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 10, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}})
		if err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{res.Content}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "elicit"}, func(ctx context.Context, req *mcp.CallToolRequest, _ struct{}) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "name?", RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}})
		if err != nil {
			return nil, nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Action}}}, nil, nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "greet"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello"}}}}, nil
	})
	s.AddResource(&mcp.Resource{Name: "info", URI: "embedded:info", MIMEType: "text/plain"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "embedded:info", MIMEType: "text/plain", Text: "info"}}}, nil
	})
}

// startHTTP runs the HTTP proxy in front of upstream URL up, for server name "cue".
func (w *world) startHTTP(up string, stderr *lineLog) *httptest.Server {
	w.t.Helper()
	u, err := url.Parse(up)
	if err != nil {
		w.t.Fatal(err)
	}
	p, err := NewHTTP(HTTPConfig{Circuits: w.circuits(stderr), Upstream: u})
	if err != nil {
		w.t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	w.t.Cleanup(func() {
		srv.Close()
		p.Close()
	})
	return srv
}

// authTransport adds the test's credential to every request, as a client configured with a
// header does.
type authTransport struct{ rt http.RoundTripper }

func (a authTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", token)
	return a.rt.RoundTrip(r)
}

// httpClient connects the official go-sdk client to the HTTP proxy at url.
func httpClient(t *testing.T, url string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return httpClientOf(t, &mcp.StreamableClientTransport{Endpoint: url,
		HTTPClient: &http.Client{Transport: authTransport{http.DefaultTransport}}, MaxRetries: -1}, opts)
}

func httpClientOf(t *testing.T, tr *mcp.StreamableClientTransport, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	return httpClientAt(t, tr, opts, "2025-11-25")
}

// httpClientAt connects with protocol version ("": the go-sdk's latest, server/discover first).
func httpClientAt(t *testing.T, tr *mcp.StreamableClientTransport, opts *mcp.ClientOptions, version string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "proxy-test", Version: "1"}, opts)
	cs, err := c.Connect(context.Background(), tr,
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect through the HTTP proxy: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// TestHTTPTripDenyTrialClose: the go-sdk client drives the HTTP proxy in front of a real
// streamable HTTP server that fails on cue: three failures trip, the fourth call is the proxy's
// deny and never reaches the server, the trial after the cooldown closes the circuits, and the
// report shows it. The client's Authorization header reaches the server and not the ledger.
func TestHTTPTripDenyTrialClose(t *testing.T) {
	w := newWorld(t)
	up := newUpstream(t, nil)
	stderr := newLineLog()
	srv := w.startHTTP(up.srv.URL, stderr)
	cs := httpClient(t, srv.URL, nil)

	const fail = "upstream service unavailable 503"
	for i := 1; i <= 3; i++ {
		if text, isErr := callText(t, cs, "echo", map[string]any{"fail": fail}); !isErr || text != fail {
			t.Fatalf("call %d: got %q (isError %v), want the server's own %q", i, text, isErr, fail)
		}
	}
	if got := w.state(echoKey); got != ledger.Open {
		t.Fatalf("after 3 failures %s is %s, want OPEN", echoKey, got)
	}
	text, isErr := callText(t, cs, "echo", nil)
	if !isErr || !strings.Contains(text, "CIRCUIT OPEN") || !strings.Contains(text, "Do not retry this tool") {
		t.Fatalf("the fourth call: got %q (isError %v), want the hook's deny text", text, isErr)
	}
	if got := up.calls.Load(); got != 3 {
		t.Fatalf("the server saw %d calls, want 3: the denied one reached it", got)
	}
	w.advance(2 * time.Minute)
	if text, isErr := callText(t, cs, "echo", nil); isErr || text != "ok" {
		t.Fatalf("the trial: got %q (isError %v), want the server's answer", text, isErr)
	}
	if got := up.calls.Load(); got != 4 {
		t.Fatalf("the trial did not reach the server (%d calls)", got)
	}
	for _, k := range []string{echoKey, serverKey} {
		if got := w.state(k); got != ledger.Closed {
			t.Errorf("after the trial %s is %s, want CLOSED", k, got)
		}
	}
	es := w.entries()
	rep := report.Build(es, report.Options{Now: w.now})
	if md := rep.Markdown(); rep.Trips == 0 || !strings.Contains(md, echoKey) || !strings.Contains(md, "CLOSED") {
		t.Errorf("the report does not show the trip and the close:\n%s", md)
	}
	for _, e := range es {
		if e.Source != ledger.SourceProxy {
			t.Errorf("entry %s %s has source %q, want proxy", e.Tool, e.Event, e.Source)
		}
	}
	assertNoToken(t, w)
}

// assertNoToken fails when the client's credential is anywhere in the project's state.
func assertNoToken(t *testing.T, w *world) {
	t.Helper()
	filepath.WalkDir(w.dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if data, err := os.ReadFile(path); err == nil && bytes.Contains(data, []byte("sk-proxy-test")) {
				t.Errorf("%s holds the client's Authorization header", path)
			}
		}
		return nil
	})
}

// TestHTTPServerFailures: a 5xx from the upstream and an upstream that no longer answers are the
// server's failures: the 5xx is relayed as it came, the unreachable server gets the client a
// JSON-RPC error, and three of them open the server's circuit.
func TestHTTPServerFailures(t *testing.T) {
	w := newWorld(t)
	up := newUpstream(t, nil)
	stderr := newLineLog()
	srv := w.startHTTP(up.srv.URL, stderr)
	// Without the standalone GET stream, which would end the session when the server goes.
	cs := httpClientOf(t, &mcp.StreamableClientTransport{Endpoint: srv.URL, DisableStandaloneSSE: true,
		HTTPClient: &http.Client{Transport: authTransport{http.DefaultTransport}}, MaxRetries: -1}, nil)
	up.down.Store(true)
	for _, tool := range []string{"echo", "other"} {
		if _, err := cs.CallTool(t.Context(), callParams(tool, nil)); err == nil || !strings.Contains(err.Error(), "Service Unavailable") {
			t.Fatalf("%s through a 503: err %v, want the 503 relayed", tool, err)
		}
	}
	// The server goes away: its listener closed and its connections cut (Close would wait for the
	// client's open GET stream).
	up.srv.Listener.Close()
	up.srv.CloseClientConnections()
	_, err := cs.CallTool(t.Context(), callParams("echo", nil))
	if err == nil || !strings.Contains(err.Error(), unreachableMessage) {
		t.Fatalf("a call of an unreachable server: err %v, want %q", err, unreachableMessage)
	}
	if got := w.state(serverKey); got != ledger.Open {
		t.Fatalf("%s is %s after two 503s and a refused connection, want OPEN", serverKey, got)
	}
	for _, e := range w.entries() {
		if e.Event == ledger.EventFailure || e.Event == ledger.EventTrip {
			if e.FailureType != ledger.Timeout {
				t.Errorf("entry %s %s: %s (%s), want the server's", e.Tool, e.Event, e.FailureType, e.Cause)
			}
		}
	}
	if text, isErr := callText(t, cs, "other", nil); !isErr || !strings.Contains(text, serverKey) {
		t.Fatalf("a call after the server tripped: got %q (isError %v), want the deny", text, isErr)
	}
}

// TestHTTPHangAndDeadline: a call past hang_after is recorded as a TIMEOUT at that moment; with
// a deadline, the client gets -32001 "Request timed out" from the proxy at it, the server is told
// the call is cancelled, and a TIMEOUT is recorded, whichever comes first.
func TestHTTPHangAndDeadline(t *testing.T) {
	w := newWorld(t)
	w.policy("defaults:\n  hang_after: 1s\n")
	up := newUpstream(t, nil)
	stderr := newLineLog()
	srv := w.startHTTP(up.srv.URL, stderr)
	cs := httpClient(t, srv.URL, nil)
	// The call outlives hang_after and then ends by itself, so that the server can close.
	go cs.CallTool(t.Context(), callParams("echo", map[string]any{"sleep_ms": 4000}))
	waitEntries(t, w, 1)
	if es := w.entries(); es[0].FailureType != ledger.Timeout || es[0].Cause != "hung" {
		t.Fatalf("a call past hang_after: %+v, want TIMEOUT hung", es[0])
	}

	w2 := newWorld(t)
	w2.deadline = 200 * time.Millisecond
	up2 := newUpstream(t, nil)
	srv2 := w2.startHTTP(up2.srv.URL, newLineLog())
	cs2 := httpClient(t, srv2.URL, nil)
	_, err := cs2.CallTool(t.Context(), callParams("echo", map[string]any{"sleep_ms": 600000}))
	if err == nil || !strings.Contains(err.Error(), timeoutMessage) {
		t.Fatalf("a call past its deadline: err %v, want %q from the proxy", err, timeoutMessage)
	}
	es := waitEntries(t, w2, 1)
	if es[0].FailureType != ledger.Timeout {
		t.Fatalf("a call past its deadline: %+v, want TIMEOUT", es[0])
	}
	for up2.cancelled.Load() == 0 {
		// The cancellation is posted after the client's answer: an event the server reports.
		time.Sleep(10 * time.Millisecond)
	}
	// The session goes on: the next call is answered as usual.
	if text, isErr := callText(t, cs2, "echo", nil); isErr || text != "ok" {
		t.Fatalf("the call after the deadline: %q %v", text, isErr)
	}
}

// waitEntries waits until the ledger holds n entries and returns them.
func waitEntries(t *testing.T, w *world, n int) []ledger.Entry {
	t.Helper()
	limit := time.Now().Add(2 * time.Minute)
	for {
		if es := w.entries(); len(es) >= n {
			return es
		}
		if time.Now().After(limit) {
			t.Fatalf("the ledger never held %d entries", n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestHTTPRefusesOtherHosts: a request naming a host that is not loopback is refused (DNS
// rebinding), and so is a browser's cross-origin POST.
func TestHTTPRefusesOtherHosts(t *testing.T) {
	w := newWorld(t)
	up := newUpstream(t, nil)
	srv := w.startHTTP(up.srv.URL, newLineLog())
	for _, tc := range []struct {
		name   string
		header map[string]string
		host   string
	}{
		{"rebound host", nil, "evil.example:80"},
		{"cross-origin page", map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, ""},
	} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		for k, v := range tc.header {
			req.Header.Set(k, v)
		}
		if tc.host != "" {
			req.Host = tc.host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: status %d, want 403", tc.name, resp.StatusCode)
		}
	}
}

// TestBatchWithCallRefused: a JSON-RPC batch holding a tools/call is answered with an error for
// each of its requests and never reaches the server (the gate would not see the call); a batch
// without one passes as it came.
func TestBatchWithCallRefused(t *testing.T) {
	batch := []byte(`[{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo"}},{"jsonrpc":"2.0","method":"notifications/progress","params":{}},{"jsonrpc":"2.0","id":"x","method":"tools/list"}]`)
	got := refuseBatch(batch)
	var resps []struct {
		ID    json.RawMessage `json:"id"`
		Error rpcError        `json:"error"`
	}
	if err := json.Unmarshal(got, &resps); err != nil || len(resps) != 2 || string(resps[0].ID) != "7" || string(resps[1].ID) != `"x"` || resps[0].Error.Code != -32600 {
		t.Fatalf("refusal %s: want an error for ids 7 and \"x\"", got)
	}
	if got := refuseBatch([]byte(`[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]`)); got != nil {
		t.Fatalf("a batch without tools/call was refused: %s", got)
	}
	w := newWorld(t)
	up := newUpstream(t, nil)
	srv := w.startHTTP(up.srv.URL, newLineLog())
	resp, err := http.Post(srv.URL, "application/json", bytes.NewReader(batch))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !bytes.Contains(body, []byte(batchMessage)) || up.calls.Load() != 0 {
		t.Fatalf("the batch through the HTTP proxy: %s (server calls %d)", body, up.calls.Load())
	}
}
