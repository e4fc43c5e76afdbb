package e2e

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/testservers"
)

// TestInspectorProxyHTTP drives the official MCP Inspector's CLI mode over streamable HTTP
// through `mcp-circuit-breaker proxy --upstream`, in front of a real streamable HTTP server (the
// go-sdk's, in this test's process) whose tools fail on cue and which requires a bearer token the
// Inspector sends as a header. Three failing calls trip the circuits, the fourth is the proxy's
// deny and never reaches the server, a proxy started past the cooldown lets the trial through and
// it closes them; status and the report show it, and the token is nowhere in the project's state.
func TestInspectorProxyHTTP(t *testing.T) {
	skipShort(t, "drives real processes end to end")
	entry := installAgent(t, "inspector")
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	goBuild(t, bin, module+"/cmd/mcp-circuit-breaker")
	cli := filepath.Join(bin, "mcp-circuit-breaker")
	proj := filepath.Join(root, "proj")
	home := filepath.Join(root, "home")
	for _, d := range []string{filepath.Join(proj, ".git"), home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	url0, calls := cueHTTPServer(t)
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}

	proxy := func(now string) string { return startHTTPProxy(t, cli, proj, env, url0, now) }
	inspect := func(url string, args ...string) string {
		t.Helper()
		cmdArgs := []string{entry, "--cli", url, "--transport", "http", "--header", "Authorization: " + secret,
			"--method", "tools/call", "--tool-name", "echo"}
		for _, a := range args {
			cmdArgs = append(cmdArgs, "--tool-arg", a)
		}
		out, _ := run(t, env, filepath.Dir(entry), agentRun, "node", cmdArgs...)
		return out
	}

	url := proxy("")
	const quota = "upstream quota exceeded"
	for i := 1; i <= 3; i++ {
		if out := inspect(url, "fail="+quota); !strings.Contains(out, `"text": "`+quota+`"`) || !strings.Contains(out, `"isError": true`) {
			t.Fatalf("call %d: the Inspector got\n%s\nwant the server's own isError result", i, out)
		}
	}
	if out := inspect(url, "fail="+quota); !strings.Contains(out, `"text": "⚡ CIRCUIT OPEN — `+serverKey+`\n`) || !strings.Contains(out, `"isError": true`) {
		t.Fatalf("call 4: the Inspector got\n%s\nwant the proxy's deny", out)
	}
	if n := calls.Load(); n != 3 {
		t.Fatalf("the server received %d calls, want 3: the fourth was answered by the proxy", n)
	}
	later := time.Now().Add(3 * time.Minute).UTC().Format(time.RFC3339)
	url = proxy(later)
	if out := inspect(url); !strings.Contains(out, `"text": "ok"`) || strings.Contains(out, `"isError": true`) {
		t.Fatalf("the trial: the Inspector got\n%s\nwant the server's ok", out)
	}
	if n := calls.Load(); n != 4 {
		t.Fatalf("the trial did not reach the server (%d calls)", n)
	}
	lenv := append(slices.Clip(env), "MCP_CIRCUIT_NOW="+later)
	if out, _ := run(t, lenv, proj, 20*time.Second, cli, "status", "--dir", proj); strings.Contains(out, "OPEN") {
		t.Errorf("after the trial some circuit is still open:\n%s", out)
	}
	if out, _ := run(t, lenv, proj, 20*time.Second, cli, "report", "--dir", proj, "--format", "json"); !strings.Contains(out, `"calls_blocked": 1`) || !strings.Contains(out, "mcp__fix__echo") {
		t.Errorf("the report does not show the blocked call and the tool:\n%s", out)
	}
	assertNoSecret(t, proj)
}

// secret is the bearer token the HTTP e2e servers require: it must pass through the proxy and
// never reach the project's state.
const secret = "Bearer sk-e2e-http-51c0"

// cueHTTPServer serves a real streamable HTTP MCP server (the go-sdk's handler, in the test's
// process) whose echo fails on cue (testservers.CueInput) and which requires secret; it returns
// its endpoint and the count of calls that reached echo.
func cueHTTPServer(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	calls := new(atomic.Int32)
	server := mcp.NewServer(&mcp.Implementation{Name: "cue-http", Version: "1"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "echo", Description: "echo on cue"},
		func(ctx context.Context, req *mcp.CallToolRequest, in testservers.CueInput) (*mcp.CallToolResult, any, error) {
			calls.Add(1)
			if in.Fail != "" {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: in.Fail}}}, nil, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
		})
	upstream := httptest.NewServer(testservers.RequireHeader(
		mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil), "Authorization", secret))
	t.Cleanup(upstream.Close)
	return upstream.URL + "/mcp", calls
}

// startHTTPProxy starts `proxy --upstream` in front of upstream for server fix of project proj,
// its clock at now ("": the real one), and returns its endpoint once it says where it listens.
func startHTTPProxy(t *testing.T, cli, proj string, env []string, upstream, now string) string {
	t.Helper()
	penv := slices.Clip(env)
	if now != "" {
		penv = append(penv, "MCP_CIRCUIT_NOW="+now)
	}
	cmd := exec.Command(cli, "proxy", "--dir", proj, "--name", "fix", "--upstream", upstream, "--listen", "127.0.0.1:0")
	cmd.Dir, cmd.Env = proj, penv
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	sc := bufio.NewScanner(stderr)
	listening := regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+/)`)
	for sc.Scan() {
		if m := listening.FindStringSubmatch(sc.Text()); m != nil {
			go func() {
				for sc.Scan() {
					t.Logf("proxy: %s", sc.Text())
				}
			}()
			return m[1] + "mcp"
		}
		t.Logf("proxy: %s", sc.Text())
	}
	t.Fatalf("the proxy never said where it listens")
	return ""
}

// TestClaudeCodeProxyHTTP drives the real Claude Code CLI (offline, against the scripted Messages
// API, no hook) with a .mcp.json HTTP server that points at `proxy --upstream`, in front of a real
// streamable HTTP server requiring the bearer token the entry's headers give. The model asks for
// echo four times: three failures trip, the fourth is the proxy's deny and never reaches the
// server; a second session, through a proxy whose clock is past the cooldown, makes the trial,
// which closes the circuits; the report shows it, and the token is in no state file.
func TestClaudeCodeProxyHTTP(t *testing.T) {
	skipShort(t, "drives real processes end to end")
	claude := installClaude(t)
	root, proj, cfgDir, env := claudeProxyProject(t)
	cli := filepath.Join(root, "bin", "mcp-circuit-breaker")
	writeJSON(t, filepath.Join(cfgDir, ".claude.json"), map[string]any{"projects": map[string]any{
		proj: map[string]any{"hasTrustDialogAccepted": true, "enabledMcpjsonServers": []string{"fix"}}}})
	upstream, calls := cueHTTPServer(t)

	session := func(proxyURL string, api *fakeAPI, url string) {
		t.Helper()
		writeJSON(t, filepath.Join(proj, ".mcp.json"), map[string]any{"mcpServers": map[string]any{"fix": map[string]any{
			"type": "http", "url": proxyURL, "headers": map[string]string{"Authorization": secret}}}})
		runClaudeEcho(t, claude, proj, env, url)
	}

	const quota = "upstream quota exceeded"
	api, srv := newFakeAPI(t, echoTool, `{"fail":"`+quota+`"}`, 4, "The echo tool is unavailable; its circuit is open.")
	session(startHTTPProxy(t, cli, proj, env, upstream, ""), api, srv.URL)
	for i := 1; i <= 3; i++ {
		if r, ok := api.result(i); !ok || !r.IsError || !strings.HasPrefix(r.Text, quota) {
			t.Fatalf("tool_result %d: %+v, want the server's own isError text %q", i, r, quota)
		}
	}
	if r, ok := api.result(4); !ok || !r.IsError || !strings.HasPrefix(r.Text, "⚡ CIRCUIT OPEN — "+serverKey+"\n") {
		t.Fatalf("tool_result 4: %+v, want the proxy's deny text", r)
	}
	if n := calls.Load(); n != 3 {
		t.Fatalf("the server received %d calls, want 3", n)
	}
	later := time.Now().Add(3 * time.Minute).UTC().Format(time.RFC3339)
	api2, srv2 := newFakeAPI(t, echoTool, `{}`, 1, "The echo tool works again.")
	session(startHTTPProxy(t, cli, proj, env, upstream, later), api2, srv2.URL)
	if r, ok := api2.result(1); !ok || r.IsError || !strings.HasPrefix(r.Text, "ok") {
		t.Fatalf("the trial's tool_result: %+v, want the server's ok", r)
	}
	if n := calls.Load(); n != 4 {
		t.Fatalf("the trial did not reach the server (%d calls)", n)
	}
	report, _ := run(t, append(slices.Clip(env), "MCP_CIRCUIT_NOW="+later), proj, 20*time.Second, cli, "report", "--dir", proj)
	if !strings.Contains(report, "Calls blocked: 1") || !strings.Contains(report, "| "+echoTool+" | CLOSED |") {
		t.Errorf("the report does not show the blocked call and the close:\n%s", report)
	}
	assertNoSecret(t, filepath.Join(proj, ".claude"))
}

// assertNoSecret fails when the token is in a file under dir.
func assertNoSecret(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if data, err := os.ReadFile(path); err == nil && strings.Contains(string(data), "sk-e2e-http") {
				t.Errorf("%s holds the client's Authorization header", path)
			}
		}
		return nil
	})
}
