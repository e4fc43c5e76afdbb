//go:build unix

package probe

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/mcpconfig"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/testservers"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// short deadlines keep the failing fixtures fast; healthy servers answer in milliseconds.
var short = Options{Connect: 2 * time.Second, Initialize: 2 * time.Second, List: 2 * time.Second, Call: 2 * time.Second}

func with(o Options, f func(*Options)) Options { f(&o); return o }

func TestStdioFixtures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		server   mcpconfig.Server
		opts     Options
		healthy  bool
		typ      ledger.FailureType
		cause    string
		phase    Phase
		errHas   []string
		maxTime  time.Duration
		warnHas  string
		protocol string
	}{
		{name: "healthy", server: stdio("fx", fixtureBin, "healthy"), opts: short, healthy: true, protocol: "2025-11-25"},
		{name: "expected tool present (sanitized name)", server: stdio("fx", fixtureBin, "healthy"), opts: with(short, func(o *Options) { o.Tool = "echo" }), healthy: true},
		{name: "exits at once", server: stdio("fx", fixtureBin, "exit"), opts: short,
			typ: ledger.Timeout, cause: "process_exited", phase: PhaseInitialize,
			errHas: []string{"exit status 3", "fatal: MCP_FIXTURE_TOKEN is not set", "noise line 099"}},
		{name: "garbage on stdout", server: stdio("fx", fixtureBin, "garbage"), opts: short,
			typ: ledger.Malformed, cause: "protocol_error", phase: PhaseInitialize, errHas: []string{"invalid character"}},
		{name: "never answers initialize", server: stdio("fx", fixtureBin, "silent"), opts: with(short, func(o *Options) { o.Initialize = 400 * time.Millisecond }),
			typ: ledger.Timeout, cause: "deadline", phase: PhaseInitialize, errHas: []string{"no answer to initialize within 400ms"}, maxTime: 1500 * time.Millisecond},
		{name: "exits unless initialize comes first", server: stdio("fx", fixtureBin, "strict"), opts: short, healthy: true},
		{name: "modern only", server: stdio("fx", fixtureBin, "modern"), opts: short, healthy: true,
			warnHas: "retried with server/discover", protocol: "2026-07-28"},
		{name: "modern only, legacy pinned", server: stdio("fx", fixtureBin, "modern"), opts: with(short, func(o *Options) { o.Protocol = ProtocolLegacy }),
			typ: ledger.Malformed, cause: "version_mismatch", phase: PhaseInitialize, errHas: []string{"-32022"}},
		{name: "expected tool missing", server: stdio("fx", fixtureBin, "healthy"), opts: with(short, func(o *Options) { o.Tool = "search" }),
			typ: ledger.NotFound, cause: "tool_missing", phase: PhaseList, errHas: []string{`"search"`, "2 tools: add, echo"}},
		{name: "read-only call", server: stdio("fx", fixtureBin, "healthy"),
			opts: with(short, func(o *Options) { o.CallTool = "echo"; o.CallArgs = map[string]any{"message": "hi"} }), healthy: true},
		{name: "call returns isError", server: stdio("fx", fixtureBin, "callerror"), opts: with(short, func(o *Options) { o.CallTool = "echo" }),
			typ: ledger.Unknown, cause: "tool_error", phase: PhaseCall, errHas: []string{"upstream quota exceeded"}},
		{name: "write tool not called", server: stdio("fx", fixtureBin, "healthy"), opts: with(short, func(o *Options) { o.CallTool = "add" }),
			healthy: true, warnHas: `call of "add" skipped`},
		{name: "write tool called when allowed", server: stdio("fx", fixtureBin, "healthy"),
			opts: with(short, func(o *Options) { o.CallTool = "add"; o.AllowWrite = true; o.CallArgs = map[string]any{"a": 1, "b": 2} }), healthy: true},
		{name: "call of a tool that is not listed", server: stdio("fx", fixtureBin, "healthy"), opts: with(short, func(o *Options) { o.CallTool = "nope" }),
			typ: ledger.NotFound, cause: "tool_missing", phase: PhaseCall},
		{name: "command not found", server: stdio("fx", filepath.Join(t.TempDir(), "no-such-server")), opts: short,
			typ: ledger.NotFound, cause: "command_not_found", phase: PhaseConnect, errHas: []string{"no-such-server"}},
		{name: "exits 0 at once", server: stdio("fx", "/bin/true"), opts: short,
			typ: ledger.Timeout, cause: "process_exited", phase: PhaseInitialize, errHas: []string{"exit status 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			o := Probe(context.Background(), tt.server, tt.opts)
			elapsed := time.Since(start)
			t.Logf("%s: healthy=%v type=%s cause=%s phase=%s duration=%v wall=%v error=%q warnings=%q",
				tt.name, o.Healthy, o.Type, o.Cause, o.Phase, o.Duration, elapsed, clip(o.Error, 300), o.Warnings)
			if o.Healthy != tt.healthy || o.Type != tt.typ || o.Cause != tt.cause || o.Phase != tt.phase {
				t.Errorf("got healthy=%v type=%q cause=%q phase=%q, want %v %q %q %q (error %q)",
					o.Healthy, o.Type, o.Cause, o.Phase, tt.healthy, tt.typ, tt.cause, tt.phase, o.Error)
			}
			for _, s := range tt.errHas {
				if !strings.Contains(o.Error, s) {
					t.Errorf("error %q does not contain %q", o.Error, s)
				}
			}
			if tt.healthy && (o.Error != "" || !hasTool(o.Tools, "echo")) {
				t.Errorf("healthy outcome with error %q, tools %v", o.Error, toolNames(o.Tools))
			}
			if tt.maxTime > 0 && elapsed > tt.maxTime {
				t.Errorf("took %v, want at most %v", elapsed, tt.maxTime)
			}
			if tt.warnHas != "" && !strings.Contains(strings.Join(o.Warnings, "\n"), tt.warnHas) {
				t.Errorf("warnings %q do not contain %q", o.Warnings, tt.warnHas)
			}
			if tt.protocol != "" && o.ProtocolVersion != tt.protocol {
				t.Errorf("protocol %q, want %q", o.ProtocolVersion, tt.protocol)
			}
			if o.Server != "fx" || o.Duration <= 0 {
				t.Errorf("server %q duration %v", o.Server, o.Duration)
			}
		})
	}
}

func TestStderrTailBounded(t *testing.T) {
	t.Parallel()
	o := Probe(context.Background(), stdio("fx", fixtureBin, "exit"), with(short, func(o *Options) { o.StderrLimit = 256 }))
	_, stderr, ok := strings.Cut(o.Error, "stderr: ")
	if !ok {
		t.Fatalf("no stderr in %q", o.Error)
	}
	if len(stderr) > 256+len("…") || !strings.HasSuffix(stderr, "fatal: MCP_FIXTURE_TOKEN is not set") || strings.Contains(stderr, "noise line 000") {
		t.Errorf("stderr tail (%d bytes) = %q", len(stderr), stderr)
	}
}

// countRequests wraps h and counts the requests it serves.
func countRequests(h http.Handler, n *atomic.Int32) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h.ServeHTTP(w, r)
	})
}

func TestHTTPFixtures(t *testing.T) {
	t.Parallel()
	var requests atomic.Int32
	srv := httptest.NewServer(countRequests(testservers.Faults(), &requests))
	t.Cleanup(srv.Close)
	closed, err := testservers.ClosedPort()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path       string
		url        string
		opts       Options
		healthy    bool
		typ        ledger.FailureType
		cause      string
		phase      Phase
		status     int
		retryAfter time.Duration
		wwwAuth    string
		maxTime    time.Duration
		headers    map[string]string
		clientAuth bool
	}{
		{path: testservers.PathHealthy, healthy: true},
		// docs/probes.md: a 401 with a challenge from a server configured without credentials is an OAuth
		// server whose token only the client holds: reachable, healthy, never AUTH. With
		// credentials of its own (a header, a key in the URL) the 401 is theirs: AUTH.
		{path: testservers.Path401, healthy: true, status: 401, clientAuth: true, wwwAuth: testservers.WWWAuthenticate401},
		{path: testservers.Path401, headers: map[string]string{"Authorization": "Bearer sk-expired-000000"}, typ: ledger.Auth, cause: "http_401", phase: PhaseInitialize, status: 401, wwwAuth: testservers.WWWAuthenticate401},
		{path: testservers.Path401, headers: map[string]string{"X-API-Key": "k-000000000"}, typ: ledger.Auth, cause: "http_401", phase: PhaseInitialize, status: 401, wwwAuth: testservers.WWWAuthenticate401},
		{path: testservers.Path401 + "?api_key=abcdef123", typ: ledger.Auth, cause: "http_401", phase: PhaseInitialize, status: 401, wwwAuth: testservers.WWWAuthenticate401},
		{path: testservers.Path403, typ: ledger.Auth, cause: "http_403", phase: PhaseInitialize, status: 403, wwwAuth: `Bearer error="insufficient_scope", scope="files:write"`},
		{path: testservers.Path404, typ: ledger.NotFound, cause: "http_404", phase: PhaseInitialize, status: 404},
		{path: testservers.Path406, typ: ledger.Malformed, cause: "http_406", phase: PhaseInitialize, status: 406},
		{path: testservers.Path429, typ: ledger.RateLimit, cause: "http_429", phase: PhaseInitialize, status: 429, retryAfter: 7 * time.Second},
		{path: testservers.Path503, typ: ledger.Timeout, cause: "http_503", phase: PhaseInitialize, status: 503, retryAfter: 2 * time.Second},
		{path: testservers.PathHTML, typ: ledger.Malformed, cause: "protocol_error", phase: PhaseInitialize},
		{path: testservers.PathHang, opts: with(short, func(o *Options) { o.Initialize = 300 * time.Millisecond }),
			// Under the SDK's 5 s best-effort timers (its cancellation notice, its close): the probe
			// does not sit them out (connectGrace); a loaded machine may still add seconds of its own.
			typ: ledger.Timeout, cause: "deadline", phase: PhaseInitialize, maxTime: 4500 * time.Millisecond},
		{path: testservers.PathModern, healthy: true},
		{path: "closed port", url: "http://" + closed + "/mcp", typ: ledger.Timeout, cause: "connection_refused", phase: PhaseConnect},
	}
	for i, tt := range tests {
		t.Run(fmt.Sprintf("%d%s", i, strings.ReplaceAll(tt.path, "/", "_")), func(t *testing.T) {
			t.Parallel()
			url := tt.url
			if url == "" {
				url = srv.URL + tt.path
			}
			opts := tt.opts
			if opts.Initialize == 0 {
				opts = short
			}
			start := time.Now()
			s := httpServer("h", url)
			s.Headers = tt.headers
			o := Probe(context.Background(), s, opts)
			if o.ClientAuth != tt.clientAuth {
				t.Errorf("client auth %v, want %v", o.ClientAuth, tt.clientAuth)
			}
			elapsed := time.Since(start)
			t.Logf("%s: healthy=%v type=%s cause=%s phase=%s status=%d retry=%v wall=%v error=%q", tt.path, o.Healthy, o.Type, o.Cause, o.Phase, o.Status, o.RetryAfter, elapsed, o.Error)
			if o.Healthy != tt.healthy || o.Type != tt.typ || o.Cause != tt.cause || o.Phase != tt.phase {
				t.Errorf("got healthy=%v type=%q cause=%q phase=%q, want %v %q %q %q (error %q)",
					o.Healthy, o.Type, o.Cause, o.Phase, tt.healthy, tt.typ, tt.cause, tt.phase, o.Error)
			}
			if o.Status != tt.status || o.RetryAfter != tt.retryAfter || o.WWWAuthenticate != tt.wwwAuth {
				t.Errorf("got status %d retry %v www-auth %q, want %d %v %q", o.Status, o.RetryAfter, o.WWWAuthenticate, tt.status, tt.retryAfter, tt.wwwAuth)
			}
			if tt.healthy && !tt.clientAuth && !hasTool(o.Tools, "echo") {
				t.Errorf("tools %v", toolNames(o.Tools))
			}
			if !tt.healthy && o.Error == "" {
				t.Error("failure without error text")
			}
			if tt.maxTime > 0 && elapsed > tt.maxTime {
				t.Errorf("took %v, want at most %v", elapsed, tt.maxTime)
			}
		})
	}
}

// TestHTTPOneRequestOnFailure checks that a pinned handshake sends exactly one POST to a server
// that rejects it, where the SDK's default (discover first) sends two to a server that may
// already be rate-limiting.
func TestHTTPOneRequestOnFailure(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	srv := httptest.NewServer(countRequests(testservers.Faults(), &n))
	t.Cleanup(srv.Close)
	o := Probe(context.Background(), httpServer("h", srv.URL+testservers.Path429), short)
	if o.Type != ledger.RateLimit || n.Load() != 1 {
		t.Errorf("type %q after %d requests, want RATE_LIMIT after 1", o.Type, n.Load())
	}
}

func TestSSE(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(testservers.Faults())
	t.Cleanup(srv.Close)
	tests := []struct {
		path    string
		healthy bool
		typ     ledger.FailureType
		cause   string
		phase   Phase
	}{
		{testservers.PathSSE, true, "", "", ""},
		{testservers.Path401, true, "", "", ""}, // no credentials configured: the client's OAuth
		{testservers.PathHang, false, ledger.Timeout, "deadline", PhaseConnect},
	}
	for _, tt := range tests {
		s := httpServer("sse", srv.URL+tt.path)
		s.Transport = mcpconfig.TransportSSE
		o := Probe(context.Background(), s, with(short, func(o *Options) { o.Connect = 300 * time.Millisecond }))
		if o.Healthy != tt.healthy || o.Type != tt.typ || o.Cause != tt.cause || o.Phase != tt.phase {
			t.Errorf("%s: got healthy=%v type=%q cause=%q phase=%q (error %q), want %v %q %q %q",
				tt.path, o.Healthy, o.Type, o.Cause, o.Phase, o.Error, tt.healthy, tt.typ, tt.cause, tt.phase)
		}
		if tt.healthy && !o.ClientAuth && !hasTool(o.Tools, "echo") {
			t.Errorf("tools %v", toolNames(o.Tools))
		}
	}
}

func TestHTTPHeadersAndRedaction(t *testing.T) {
	t.Parallel()
	const token = "sk-test-0123456789abcdef"
	// The server echoes the credential it got into its error, as careless servers do.
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": nil,
			"error": map[string]any{"code": -32001, "message": "bad credential " + r.Header.Get("Authorization")}})
	})
	mux := http.NewServeMux()
	mux.Handle("/ok", testservers.RequireHeader(testservers.Healthy(false), "Authorization", "Bearer "+token))
	mux.Handle("/echo", echo)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	s := httpServer("h", srv.URL+"/ok")
	s.Headers = map[string]string{"Authorization": "Bearer " + token}
	if o := Probe(context.Background(), s, short); !o.Healthy {
		t.Errorf("with the configured header: %+v", o)
	}
	s.Headers = map[string]string{"Authorization": "Bearer sk-wrong-0123456789"}
	o := Probe(context.Background(), s, short)
	if o.Type != ledger.Auth || o.WWWAuthenticate == "" {
		t.Errorf("with a wrong header: %+v", o)
	}
	s = httpServer("h", srv.URL+"/echo?api_key=querysecret123")
	s.Headers = map[string]string{"Authorization": "Bearer " + token}
	o = Probe(context.Background(), s, short)
	b, _ := json.Marshal(o)
	for _, secret := range []string{token, "querysecret123"} {
		if strings.Contains(o.Error, secret) || strings.Contains(string(b), secret) {
			t.Errorf("secret %q leaked: %s", secret, b)
		}
	}
	if !strings.Contains(o.Error, "[REDACTED]") {
		t.Errorf("error %q: want the echoed credential redacted", o.Error)
	}
	if got := Target(s); strings.Contains(got, "querysecret123") || strings.Contains(got, token) || !strings.Contains(got, "headers: Authorization") {
		t.Errorf("Target = %q", got)
	}
}

// TestGoSDKExample probes the go-sdk's own example server over stdio and streamable HTTP.
func TestGoSDKExample(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, o Outcome) {
		t.Helper()
		t.Logf("healthy=%v duration=%v protocol=%s server=%s tools=%v error=%q", o.Healthy, o.Duration, o.ProtocolVersion, o.ServerInfo, toolNames(o.Tools), o.Error)
		if !o.Healthy {
			t.Fatalf("not healthy: %+v", o)
		}
		for _, name := range testservers.GoSDKEverythingTools {
			if !hasTool(o.Tools, name) {
				t.Errorf("tool %q missing from %v", name, toolNames(o.Tools))
			}
		}
	}
	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		check(t, Probe(context.Background(), stdio("everything", everythingBin), with(short, func(o *Options) { o.Tool = "greet" })))
	})
	t.Run("http", func(t *testing.T) {
		t.Parallel()
		port, err := testservers.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		addr := "127.0.0.1:" + strconv.Itoa(port)
		srv := startServer(t, nil, everythingBin, "-http", addr)
		_ = srv
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := testservers.WaitListening(ctx, addr); err != nil {
			t.Fatal(err)
		}
		check(t, Probe(context.Background(), httpServer("everything", "http://"+addr+"/"), with(short, func(o *Options) {
			o.Tool = "greet"
			o.CallTool = "greet"
			o.AllowWrite = true // greet is harmless but not annotated
			o.CallArgs = map[string]any{"name": "probe"}
		})))
	})
}

// TestNoProcessLeft probes servers launched through a shell wrapper that backgrounds the real
// server (the npx/uvx situation) and checks that the whole process group is gone afterwards.
func TestNoProcessLeft(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"healthy", "silent", "garbage"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			pidFile := filepath.Join(dir, "pids")
			// $$ is the wrapper (the group leader), $! the server it backgrounds. The server gets
			// the wrapper's stdin through fd 3: a non-interactive shell gives a background job
			// /dev/null, and dash does so even for an explicit <&0.
			script := `exec 3<&0; "$0" "$1" <&3 3<&- & echo $$ $! > "$2"; wait`
			opts := with(short, func(o *Options) { o.Initialize = 500 * time.Millisecond })
			o := Probe(context.Background(), stdio("wrapped", "/bin/sh", "-c", script, fixtureBin, mode, pidFile), opts)
			t.Logf("outcome: healthy=%v type=%s cause=%s", o.Healthy, o.Type, o.Cause)
			if mode == "healthy" && !o.Healthy {
				t.Errorf("wrapped healthy server: %+v", o)
			}
			b, err := os.ReadFile(pidFile)
			if err != nil {
				t.Fatal(err)
			}
			f := strings.Fields(string(b))
			pgid, _ := strconv.Atoi(f[0])
			server, _ := strconv.Atoi(f[1])
			if alive := groupAlive(pgid, 2*time.Second); alive != nil {
				t.Errorf("process group %d still has live members %v after the probe", pgid, alive)
			}
			if err := syscall.Kill(server, 0); err == nil && !zombie(server) {
				t.Errorf("server %d still alive", server)
			}
		})
	}
}

// groupAlive waits up to d for the process group pgid to be gone (kill(-pgid, 0) → ESRCH) and
// returns the PIDs of its members that are still running (not zombies: reaping orphans is PID
// 1's job, not the probe's).
func groupAlive(pgid int, d time.Duration) []int {
	deadline := time.Now().Add(d)
	for {
		if err := syscall.Kill(-pgid, 0); err == syscall.ESRCH {
			return nil
		}
		live := groupMembers(pgid)
		if len(live) == 0 || time.Now().After(deadline) {
			return live
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// groupMembers lists the running (non-zombie) processes whose group is pgid, from /proc.
func groupMembers(pgid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		state, group, ok := procStat(pid)
		if ok && group == pgid && state != "Z" {
			out = append(out, pid)
		}
	}
	return out
}

func zombie(pid int) bool {
	state, _, ok := procStat(pid)
	return !ok || state == "Z"
}

// procStat reads a process's state and process group from /proc/PID/stat.
func procStat(pid int) (state string, pgid int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0, false
	}
	// The command name is in parentheses and may contain spaces: parse after the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	f := strings.Fields(s[i+1:])
	if len(f) < 3 {
		return "", 0, false
	}
	pgid, _ = strconv.Atoi(f[2])
	return f[0], pgid, true
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		v, date string
		want    time.Duration
	}{
		{"7", "", 7 * time.Second},
		{" 120 ", "", 2 * time.Minute},
		{"-1", "", 0},
		{"", "", 0},
		{"soon", "", 0},
		{"Sun, 29 Nov 2026 12:00:30 GMT", "", 30 * time.Second},
		{"Sun, 29 Nov 2026 12:00:30 GMT", "Sun, 29 Nov 2026 12:00:20 GMT", 10 * time.Second},
		{"Sun, 29 Nov 2026 11:00:00 GMT", "", 0},
	}
	for _, tt := range tests {
		if got := parseRetryAfter(tt.v, tt.date, now); got != tt.want {
			t.Errorf("parseRetryAfter(%q, %q) = %v, want %v", tt.v, tt.date, got, tt.want)
		}
	}
}

func TestOutcomeJSON(t *testing.T) {
	tests := []struct {
		o    Outcome
		want string
	}{
		{Outcome{Server: "s", Healthy: true, Duration: 212 * time.Millisecond, Tools: []Tool{{Name: "a"}, {Name: "b"}}, Transport: "stdio"},
			`{"server":"s","healthy":true,"type":null,"cause":null,"duration_ms":212,"tools":["a","b"],"retry_after":null,"transport":"stdio"}`},
		{Outcome{Server: "s", Type: ledger.RateLimit, Cause: "http_429", Status: 429, RetryAfter: 7 * time.Second, Phase: PhaseInitialize, Error: "HTTP 429"},
			`{"server":"s","healthy":false,"type":"RATE_LIMIT","cause":"http_429","duration_ms":0,"tools":[],"retry_after":"7s","error":"HTTP 429","phase":"initialize","status":429}`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.o)
		if err != nil || string(b) != tt.want {
			t.Errorf("got %s, %v\nwant %s", b, err, tt.want)
		}
	}
}

func TestTarget(t *testing.T) {
	s := stdio("s", "npx", "-y", "@scope/server", "--dir", "/a b")
	s.Env = map[string]string{"TOKEN": "secret-value", "A": "1"}
	if got, want := Target(s), `npx -y @scope/server --dir "/a b" (env: A, TOKEN)`; got != want {
		t.Errorf("Target = %q, want %q", got, want)
	}
}

func TestUnsupportedTransport(t *testing.T) {
	o := Probe(context.Background(), mcpconfig.Server{Name: "w", Transport: "ws", URL: "wss://x"}, Options{})
	if o.Healthy || o.Type != ledger.Unknown || o.Cause != "unsupported_transport" {
		t.Errorf("%+v", o)
	}
}

func TestCanceled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	o := Probe(ctx, stdio("fx", fixtureBin, "silent"), short)
	if o.Cause != "canceled" || o.Healthy {
		t.Errorf("%+v", o)
	}
}
