//go:build unix

//lint:file-ignore SA1019 the server speaks sampling and logging on purpose: deprecated as of 2026-07-28 but still spoken, so the proxy must pass them unchanged

package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// exchange is one HTTP request of a recorded session, and what came back for it.
type exchange struct {
	method string
	header http.Header
	body   []byte
	// answers is the id of the server's request this POST answers ("" for none): the replay
	// sends it once that request came.
	answers string
}

// recorder keeps every request the go-sdk client makes.
type recorder struct {
	mu  sync.Mutex
	rt  http.RoundTripper
	log []*exchange
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		body, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	ex := &exchange{method: req.Method, header: req.Header.Clone(), body: body}
	var m message
	if json.Unmarshal(body, &m) == nil && m.Method == "" && len(m.ID) > 0 {
		ex.answers = string(m.ID)
	}
	r.mu.Lock()
	r.log = append(r.log, ex)
	r.mu.Unlock()
	return r.rt.RoundTrip(req)
}

// TestHTTPReplayByteForByte records a go-sdk client's streamable HTTP session with a real server
// (sessions, SSE responses with progress and logging, sampling and elicitation requests from the
// server on a call's stream, prompts, resources, isError results and JSON-RPC errors), replays
// its requests to a fresh server directly and through the HTTP proxy, and compares each response
// (status, Content-Type, Mcp-Session-Id, body) byte for byte.
// The 2026-07-28 case is a stateless server that the client meets with server/discover, no
// initialize and no session.
func TestHTTPReplayByteForByte(t *testing.T) {
	for _, tc := range []struct {
		name, version string
		opts          *mcp.StreamableHTTPOptions
		want, not     []string
	}{
		{"2025-11-25", "2025-11-25", nil, []string{"Mcp-Session-Id: session-1", `"method":"sampling/createMessage"`, `"method":"elicitation/create"`}, nil},
		{"2026-07-28", "", &mcp.StreamableHTTPOptions{Stateless: true}, []string{`"supportedVersions"`}, []string{"Mcp-Session-Id: session"}},
	} {
		t.Run(tc.name, func(t *testing.T) { replayHTTPCase(t, tc.version, tc.opts, tc.want, tc.not) })
	}
}

func replayHTTPCase(t *testing.T, version string, opts *mcp.StreamableHTTPOptions, want, not []string) {
	rec := &recorder{rt: http.DefaultTransport} // beneath the credential, so that it is replayed too
	up := newUpstream(t, opts)
	cs := httpClientAt(t, &mcp.StreamableClientTransport{Endpoint: up.srv.URL, DisableStandaloneSSE: true,
		HTTPClient: &http.Client{Transport: authTransport{rec}}, MaxRetries: -1}, &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Model: "fake", Role: "assistant", Content: &mcp.TextContent{Text: "sampled"}}, nil
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	}, version)
	ctx := context.Background()
	try(t)(cs.ListTools(ctx, nil))
	try(t)(cs.ListPrompts(ctx, nil))
	try(t)(cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet"}))
	try(t)(cs.ListResources(ctx, nil))
	try(t)(cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "embedded:info"}))
	try(t)(struct{}{}, cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}))
	p := callParams("progress", nil)
	p.SetProgressToken("tok-1")
	try(t)(cs.CallTool(ctx, p))
	for _, tool := range []string{"sample", "elicit"} {
		try(t)(cs.CallTool(ctx, callParams(tool, nil)))
	}
	try(t)(cs.CallTool(ctx, callParams("echo", map[string]any{"fail": "quota exceeded"})))
	try(t)(cs.CallTool(ctx, callParams("nosuch", nil)))
	try(t)(struct{}{}, cs.Ping(ctx, nil))
	cs.Close()
	session := rec.log

	direct := replayHTTP(t, newUpstream(t, opts).srv.URL, session)
	w := newWorld(t)
	proxied := replayHTTP(t, w.startHTTP(newUpstream(t, opts).srv.URL, newLineLog()).URL, session)
	var all strings.Builder
	for i := range session {
		if !bytes.Equal(direct[i], proxied[i]) {
			t.Errorf("request %d (%s %.80s): through the proxy the client got other bytes.\ndirect:\n%s\nproxied:\n%s", i, session[i].method, session[i].body, direct[i], proxied[i])
		}
		all.Write(direct[i])
	}
	for _, want := range append(want, `"method":"notifications/progress"`, `"isError":true`, `"error":{"code"`, `"text":"hello"`, `"text":"info"`) {
		if !strings.Contains(all.String(), want) {
			t.Errorf("the recorded session has no %s: it does not cover what it should", want)
		}
	}
	for _, n := range not {
		if strings.Contains(all.String(), n) {
			t.Errorf("the recorded session holds %s", n)
		}
	}
}

// replayHTTP sends the session's requests to url in their order (a POST that answers a server's
// request once that request came, any other once every earlier response is complete) and returns
// what came back for each.
func replayHTTP(t *testing.T, url string, session []*exchange) [][]byte {
	t.Helper()
	got := &collector{cond: sync.NewCond(&sync.Mutex{})}
	out := make([][]byte, len(session))
	var wg sync.WaitGroup
	for i, ex := range session {
		if ex.answers != "" {
			got.waitUntil(t, func(seen []byte) bool { return asked(seen, ex.answers) })
		} else {
			wg.Wait()
		}
		req, err := http.NewRequest(ex.method, url, bytes.NewReader(ex.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header = ex.header.Clone()
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.DefaultTransport.RoundTrip(req)
			if err != nil {
				out[i] = []byte("error: " + err.Error())
				return
			}
			defer resp.Body.Close()
			var b bytes.Buffer
			fmt.Fprintf(&b, "%d\nContent-Type: %s\nMcp-Session-Id: %s\n\n", resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get(sessionHeader))
			buf := make([]byte, 32<<10)
			for {
				n, err := resp.Body.Read(buf)
				b.Write(buf[:n])
				got.Write(buf[:n])
				if err != nil {
					break
				}
			}
			out[i] = b.Bytes()
		}()
	}
	wg.Wait()
	return out
}

// asked reports whether the SSE bytes seen hold the server's request with id.
func asked(seen []byte, id string) bool {
	for _, l := range bytes.Split(seen, []byte("\n")) {
		var m message
		if d, ok := bytes.CutPrefix(l, []byte("data: ")); ok && json.Unmarshal(d, &m) == nil && m.Method != "" && string(m.ID) == id {
			return true
		}
	}
	return false
}
