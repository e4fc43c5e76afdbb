//go:build unix

//lint:file-ignore SA1019 the replay drives sampling, roots and logging on purpose: deprecated as of 2026-07-28 but still spoken by clients and servers, so the proxy must pass them unchanged

package proxy

import (
	"bytes"
	"context"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestReplayByteForByte records a real session of the official go-sdk client with a real server,
// replays the client's lines to the server directly and through the proxy, and compares what the
// client receives byte for byte: every message that is not a denied tools/call passes unchanged,
// including requests from the server (ping, roots, sampling, elicitation), notifications, errors,
// isError results, and a 2026-07-28 server that only speaks server/discover.
func TestReplayByteForByte(t *testing.T) {
	for _, tc := range []struct {
		name    string
		command string
		args    []string
		version string // the client's protocol version: "" is the SDK's latest (server/discover first)
		session func(t *testing.T, cs *mcp.ClientSession)
		// want are texts the recorded session must hold (either way), so that it covers what it
		// claims to; not is a text it must not hold.
		want []string
		not  string
	}{
		{"everything", everythingBin, nil, "2025-11-25", func(t *testing.T, cs *mcp.ClientSession) {
			ctx := context.Background()
			try(t)(cs.ListTools(ctx, nil))
			try(t)(cs.CallTool(ctx, callParams("greet", map[string]any{"name": "proxy"})))
			try(t)(cs.ListPrompts(ctx, nil))
			try(t)(cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "proxy"}}))
			try(t)(cs.ListResources(ctx, nil))
			try(t)(cs.ListResourceTemplates(ctx, nil))
			try(t)(cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "embedded:info"}))
			try(t)(struct{}{}, cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}))
			for _, tool := range []string{"log", "ping", "roots", "sample", "elicit (form)", "greet (structured)"} {
				try(t)(cs.CallTool(ctx, callParams(tool, map[string]any{"name": "proxy"})))
			}
			try(t)(struct{}{}, cs.Ping(ctx, nil))
		}, []string{`"method":"initialize"`, `"method":"sampling/createMessage"`, `"method":"elicitation/create"`, `"method":"roots/list"`,
			`"method":"ping"`, `"method":"notifications/message"`, `"method":"prompts/get"`, `"method":"resources/read"`, `"structuredContent"`}, ""},
		{"modern", fixtureBin, []string{"modern"}, "", func(t *testing.T, cs *mcp.ClientSession) {
			ctx := context.Background()
			if v := cs.InitializeResult(); v != nil && v.ProtocolVersion != "2026-07-28" {
				t.Errorf("the recorded session negotiated %s, want 2026-07-28", v.ProtocolVersion)
			}
			try(t)(cs.ListTools(ctx, nil))
			try(t)(cs.CallTool(ctx, callParams("echo", map[string]any{"message": "hi"})))
		}, []string{`"method":"server/discover"`, `"supportedVersions"`, `"method":"tools/call"`}, `"method":"initialize"`},
		{"cue", fixtureBin, []string{"cue"}, "2025-11-25", func(t *testing.T, cs *mcp.ClientSession) {
			ctx := context.Background()
			try(t)(cs.ListTools(ctx, nil))
			try(t)(cs.CallTool(ctx, callParams("echo", map[string]any{"fail": "quota exceeded, try again in 2 minutes"})))
			try(t)(cs.CallTool(ctx, callParams("echo", map[string]any{"sleep_ms": 10})))
			try(t)(cs.CallTool(ctx, callParams("nosuch", nil)))
		}, []string{`"isError":true`, `"error":{"code"`}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := record(t, tc.command, tc.args, tc.version, tc.session)
			direct := replay(t, client, func(in io.Reader, out io.Writer) func() {
				cmd := exec.Command(tc.command, tc.args...)
				cmd.Stdin, cmd.Stdout, cmd.Stderr = in, out, io.Discard
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				return func() { cmd.Wait() }
			})
			w := newWorld(t)
			proxied := replay(t, client, func(in io.Reader, out io.Writer) func() {
				done := make(chan struct{})
				go func() {
					defer close(done)
					Run(context.Background(), Config{Circuits: w.circuits(io.Discard), Command: tc.command, Args: tc.args, Stdin: in, Stdout: out})
				}()
				return func() { <-done }
			})
			if !bytes.Equal(direct, proxied) {
				t.Fatalf("through the proxy the client got other bytes.\ndirect:\n%s\nproxied:\n%s", direct, proxied)
			}
			all := string(client) + string(direct)
			for _, want := range tc.want {
				if !strings.Contains(all, want) {
					t.Errorf("the recorded session has no %s: it does not cover what it should", want)
				}
			}
			if tc.not != "" && strings.Contains(all, tc.not) {
				t.Errorf("the recorded session holds %s", tc.not)
			}
		})
	}
}

// try fails the test on err, for calls whose result is only recorded.
func try(t *testing.T) func(any, error) {
	return func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Logf("(recorded as it is) %v", err)
		}
	}
}

// record runs session with the go-sdk client against the server and returns the client's bytes.
func record(t *testing.T, command string, args []string, version string, session func(*testing.T, *mcp.ClientSession)) []byte {
	t.Helper()
	cmd := exec.Command(command, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var rec syncBuffer
	c := mcp.NewClient(&mcp.Implementation{Name: "recorder", Version: "1"}, &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Model: "fake", Role: "assistant", Content: &mcp.TextContent{Text: "sampled"}}, nil
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"random": "xyz"}}, nil
		},
	})
	c.AddRoots(&mcp.Root{Name: "work", URI: "file:///work"})
	cs, err := c.Connect(context.Background(), &mcp.IOTransport{Reader: stdout, Writer: teeCloser{stdin, &rec}},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("record: connect: %v", err)
	}
	session(t, cs)
	cs.Close()
	cmd.Process.Kill()
	cmd.Wait()
	return rec.Bytes()
}

// replay writes the client's lines to the server start gives, one after another as the client
// sent them (a request once every earlier request is answered, an answer to the server once its
// request came), and returns every byte the client side received.
func replay(t *testing.T, client []byte, start func(in io.Reader, out io.Writer) (wait func())) []byte {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	got := &collector{cond: sync.NewCond(&sync.Mutex{})}
	read := make(chan struct{})
	go func() {
		defer close(read)
		io.Copy(got, outR)
	}()
	wait := start(inR, outW)
	answered := func(id string, request bool) func([]byte) bool {
		return func(out []byte) bool {
			for _, l := range lines(out) {
				m := parse(t, l)
				if idKey(m.ID) == id && (m.Method != "") == request {
					return true
				}
			}
			return false
		}
	}
	var asked []string
	for _, l := range lines(client) {
		m := parse(t, l)
		if m.Method == "" {
			got.waitUntil(t, answered(idKey(m.ID), true))
		} else {
			for _, id := range asked {
				got.waitUntil(t, answered(id, false))
			}
			if len(m.ID) > 0 {
				asked = append(asked, idKey(m.ID))
			}
		}
		inW.Write(l)
	}
	for _, id := range asked {
		got.waitUntil(t, answered(id, false))
	}
	inW.Close()
	wait()
	outW.Close()
	<-read
	return got.bytes()
}

// collector is what the client side received, which replay waits on.
type collector struct {
	cond *sync.Cond
	buf  bytes.Buffer
}

func (c *collector) Write(p []byte) (int, error) {
	c.cond.L.Lock()
	defer c.cond.L.Unlock()
	c.buf.Write(p)
	c.cond.Broadcast()
	return len(p), nil
}

func (c *collector) bytes() []byte {
	c.cond.L.Lock()
	defer c.cond.L.Unlock()
	return bytes.Clone(c.buf.Bytes())
}

// waitUntil waits for what the server sends to satisfy ok: an event, bounded only so that a
// broken relay fails the test instead of hanging it.
func (c *collector) waitUntil(t *testing.T, ok func([]byte) bool) {
	t.Helper()
	limit := time.Now().Add(2 * time.Minute)
	wake := time.AfterFunc(2*time.Minute, c.cond.Broadcast)
	defer wake.Stop()
	c.cond.L.Lock()
	defer c.cond.L.Unlock()
	for !ok(c.buf.Bytes()) {
		if time.Now().After(limit) {
			t.Fatalf("replay: the server never answered; got so far:\n%s", c.buf.Bytes())
		}
		c.cond.Wait()
	}
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

// teeCloser writes to w and copies every byte to rec.
type teeCloser struct {
	w   io.WriteCloser
	rec io.Writer
}

func (t teeCloser) Write(p []byte) (int, error) {
	t.rec.Write(p)
	return t.w.Write(p)
}

func (t teeCloser) Close() error { return t.w.Close() }
