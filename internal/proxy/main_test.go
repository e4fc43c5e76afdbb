//go:build unix

package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/testservers"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/yamlfile"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// Binaries built once for the whole package by TestMain: real stdio MCP servers.
var (
	fixtureBin    string // internal/testservers/cmd/mcpfixture (cue, modern, …)
	everythingBin string // the go-sdk example server "everything"
)

func TestMain(m *testing.M) { os.Exit(testMain(m)) }

func testMain(m *testing.M) int {
	bins, cleanup, err := testservers.BuildBinaries("proxy-test-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cleanup()
	fixtureBin, everythingBin = bins.Fixture, bins.Everything
	return m.Run()
}

// world is one project, its user and a clock the test moves.
type world struct {
	t    *testing.T
	dir  string
	home string
	mu   sync.Mutex
	now  time.Time
	// calls is the fixture's call log: one line per tools/call that reached the server.
	calls string
	// deadline is the per-call deadline the proxies of the world get (0: none).
	deadline time.Duration
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{t: t, dir: t.TempDir(), home: t.TempDir(), now: time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)}
	w.calls = filepath.Join(t.TempDir(), "calls.log")
	if err := os.MkdirAll(filepath.Join(w.dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *world) getenv(k string) string {
	switch k {
	case "HOME":
		return w.home
	case "MCP_CIRCUIT_NOW":
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.now.Format(time.RFC3339Nano)
	}
	return ""
}

func (w *world) advance(d time.Duration) {
	w.mu.Lock()
	w.now = w.now.Add(d)
	w.mu.Unlock()
}

func (w *world) policy(text string) {
	w.t.Helper()
	sd := filepath.Join(w.dir, ".claude", "mcp_circuit")
	if err := os.MkdirAll(sd, 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sd, "policy.yaml"), []byte(text), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

func (w *world) project(stderr io.Writer) *project.Project {
	return project.New(w.dir, w.getenv, stderr, project.Decoder{Policy: yamlfile.UsablePolicy, Catalog: yamlfile.Catalog, Item: yamlfile.Item})
}

// serverCalls is how many tools/call reached the server.
func (w *world) serverCalls() int {
	data, err := os.ReadFile(w.calls)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		w.t.Fatal(err)
	}
	return bytes.Count(data, []byte("\n"))
}

// board is the project's circuits now.
func (w *world) board() *states.Board {
	w.t.Helper()
	s, err := w.project(io.Discard).Store(false)
	if err != nil {
		w.t.Fatal(err)
	}
	b, err := s.View()
	if err != nil {
		w.t.Fatal(err)
	}
	return b
}

// state is the recorded state of circuit key.
func (w *world) state(key string) ledger.State {
	if c := w.board().Get(key); c != nil {
		return c.State
	}
	return ledger.Closed
}

// entries are the ledger's entries.
func (w *world) entries() []ledger.Entry {
	w.t.Helper()
	s, err := w.project(io.Discard).Store(false)
	if err != nil {
		w.t.Fatal(err)
	}
	es, err := s.Ledger.ReadAll()
	if err != nil {
		w.t.Fatal(err)
	}
	return es
}

// circuits are the gate and the policy's times of server "cue" in w's project, the proxy's notes
// going to stderr.
func (w *world) circuits(stderr io.Writer) Circuits {
	pol, _ := w.project(io.Discard).UsablePolicy()
	return Circuits{Name: "cue", Stderr: stderr,
		HangAfter: func(key string) time.Duration { return pol.For(key, ledger.Timeout).HangAfter },
		Deadline:  func(string) time.Duration { return w.deadline },
		HookDecided: func(id string) bool {
			s, err := w.project(io.Discard).Store(false)
			return err == nil && s.Ledger.Recorded(id, ledger.SourceHook)
		},
		Gate: HookGate(func() gate.Config {
			return gate.Config{Project: w.project(stderr), Getenv: w.getenv, Stderr: stderr}
		})}
}

// running is one proxy run and the streams of its client.
type running struct {
	toProxy   *io.PipeWriter
	fromProxy *io.PipeReader
	stderr    *lineLog
	done      chan error
	cancel    context.CancelFunc
}

// start runs the proxy in front of the fixture in mode, for server name "cue".
func (w *world) start(command string, args ...string) *running {
	w.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	r := &running{toProxy: inW, fromProxy: outR, stderr: newLineLog(), done: make(chan error, 1), cancel: cancel}
	cfg := Config{Circuits: w.circuits(r.stderr), Command: command, Args: args, Env: append(os.Environ(), testservers.CallLogEnv+"="+w.calls),
		Stdin: inR, Stdout: outW}
	go func() {
		err := Run(ctx, cfg)
		outW.Close()
		r.done <- err
	}()
	w.t.Cleanup(func() {
		inW.Close()
		outR.Close()
		cancel()
		<-r.done
	})
	return r
}

// client connects the official go-sdk client to the proxy.
func (r *running) client(t *testing.T, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "proxy-test", Version: "1"}, opts)
	cs, err := c.Connect(context.Background(), &mcp.IOTransport{Reader: r.fromProxy, Writer: r.toProxy},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect through the proxy: %v\nstderr:\n%s", err, r.stderr)
	}
	return cs
}

// lineLog is the proxy's stderr, which a test can wait on.
type lineLog struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	wake chan struct{}
}

func newLineLog() *lineLog { return &lineLog{wake: make(chan struct{})} }

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	close(l.wake)
	l.wake = make(chan struct{})
	return len(p), nil
}

func (l *lineLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// waitFor waits until the log holds text: an event the proxy reports, not a time.
func (l *lineLog) waitFor(t *testing.T, text string) {
	t.Helper()
	limit := time.After(2 * time.Minute)
	for {
		l.mu.Lock()
		has, wake := strings.Contains(l.buf.String(), text), l.wake
		l.mu.Unlock()
		if has {
			return
		}
		select {
		case <-wake:
		case <-limit:
			t.Fatalf("the proxy never said %q; it said:\n%s", text, l.String())
		}
	}
}

// callText calls tool with args and returns the result's text and isError.
func callText(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", tool, err)
	}
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	return strings.Join(texts, "\n"), res.IsError
}

// lines splits a JSON-RPC stream into its lines, each with its newline.
func lines(data []byte) [][]byte {
	var out [][]byte
	r := bufio.NewReader(bytes.NewReader(data))
	for {
		l, err := r.ReadBytes('\n')
		if len(l) > 0 {
			out = append(out, l)
		}
		if err != nil {
			return out
		}
	}
}

// message is what a replay reads of a line.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

func parse(t *testing.T, line []byte) message {
	t.Helper()
	var m message
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatalf("not a JSON-RPC line: %q: %v", line, err)
	}
	return m
}

func callParams(tool string, args map[string]any) *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: tool, Arguments: args}
}
