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
	const secret = "Bearer sk-e2e-http-51c0"
	var calls atomic.Int32
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
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}

	// proxy starts the HTTP proxy with the clock at now ("": the real one) and returns its URL.
	proxy := func(now string) string {
		t.Helper()
		penv := slices.Clip(env)
		if now != "" {
			penv = append(penv, "MCP_CIRCUIT_NOW="+now)
		}
		cmd := exec.Command(cli, "proxy", "--dir", proj, "--name", "fix", "--upstream", upstream.URL+"/mcp", "--listen", "127.0.0.1:0")
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
	filepath.WalkDir(proj, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if data, err := os.ReadFile(path); err == nil && strings.Contains(string(data), "sk-e2e-http") {
				t.Errorf("%s holds the Inspector's Authorization header", path)
			}
		}
		return nil
	})
}
