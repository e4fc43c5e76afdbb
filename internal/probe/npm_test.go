//go:build unix

package probe

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/testservers"
)

// everythingJS installs @modelcontextprotocol/server-everything with scripts/install-test-deps
// (a no-op when it is already in the cache) and returns the path of its dist/index.js. It skips
// the test only when node or npm is missing.
func everythingJS(t *testing.T) (node, index string) {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (%v): the Node reference server cannot run", tool, err)
		}
	}
	node, _ = exec.LookPath("node")
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "install-test-deps"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, script)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", script, err, stderr.String())
	}
	return node, strings.TrimSpace(stdout.String())
}

// TestNPMEverything probes the TypeScript reference server over stdio and streamable HTTP.
func TestNPMEverything(t *testing.T) {
	node, index := everythingJS(t)
	opts := Options{Tool: "echo", CallTool: "echo", CallArgs: map[string]any{"message": "probe"}, AllowWrite: true}

	t.Run("stdio", func(t *testing.T) {
		start := time.Now()
		o := Probe(context.Background(), stdio("everything-ts", node, index, "stdio"), opts)
		t.Logf("stdio: healthy=%v verdict=%v wall=%v protocol=%s server=%s tools=%d warnings=%q error=%q",
			o.Healthy, o.Duration, time.Since(start), o.ProtocolVersion, o.ServerInfo, len(o.Tools), o.Warnings, o.Error)
		if !o.Healthy || !hasTool(o.Tools, "get-sum") {
			t.Errorf("not healthy or tools incomplete: %+v", o)
		}
	})

	t.Run("streamableHttp", func(t *testing.T) {
		port, err := testservers.FreePort()
		if err != nil {
			t.Fatal(err)
		}
		startServer(t, []string{"PORT=" + strconv.Itoa(port)}, node, index, "streamableHttp")
		addr := "127.0.0.1:" + strconv.Itoa(port)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := testservers.WaitListening(ctx, addr); err != nil {
			t.Fatal(err)
		}
		o := Probe(context.Background(), httpServer("everything-ts", "http://"+addr+"/mcp"), opts)
		o2 := Probe(context.Background(), httpServer("everything-ts", "http://"+addr+"/mcp"), Options{})
		t.Logf("warm second probe (no call): %v", o2.Duration)
		t.Logf("http: healthy=%v verdict=%v protocol=%s server=%s tools=%d error=%q", o.Healthy, o.Duration, o.ProtocolVersion, o.ServerInfo, len(o.Tools), o.Error)
		if !o.Healthy || !hasTool(o.Tools, "get-sum") {
			t.Errorf("not healthy or tools incomplete: %+v", o)
		}
		// A wrong path on the same server is not an MCP endpoint.
		o = Probe(context.Background(), httpServer("everything-ts", "http://"+addr+"/nope"), opts)
		if o.Cause != "http_404" {
			t.Errorf("wrong path: %+v", o)
		}
	})
}
