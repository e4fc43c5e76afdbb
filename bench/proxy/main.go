// Command proxy measures what the MCP proxy adds to a tools/call: the official go-sdk client calls
// the same tool of the same real stdio server (the cue fixture's echo, answering "ok") directly and
// through `mcp-circuit-breaker proxy`, side by side in one run, interleaved in a rotating order so
// that machine noise hits both alike; then it makes -calls calls in a row through the proxy and
// samples the proxy process's resident memory as it goes.
//
// With -http the server is a real streamable HTTP one (the go-sdk's handler in this process,
// the same echo tool) and the proxy is `mcp-circuit-breaker proxy --upstream URL`, listening on
// loopback; the client is the go-sdk's streamable HTTP client both ways.
//
// Usage, from the module root:
//
//	go run ./bench/proxy
//	go run ./bench/proxy -n 2000 -calls 10000
//	go run ./bench/proxy -http -n 300 -calls 10000
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/testservers"
)

var (
	runs    = flag.Int("n", 1000, "timed rounds of the side-by-side comparison")
	warmup  = flag.Int("warmup", 50, "untimed rounds before timing")
	calls   = flag.Int("calls", 10000, "calls in a row through the proxy while its memory is sampled")
	every   = flag.Int("sample", 1000, "calls between memory samples")
	useHTTP = flag.Bool("http", false, "compare over streamable HTTP (proxy --upstream) instead of stdio")
)

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench/proxy:", err)
		os.Exit(1)
	}
}

func run() error {
	work, err := os.MkdirTemp("", "bench-proxy-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	ctx := context.Background()
	cli, err := testservers.Build(ctx, work, "mcp-circuit-breaker", "github.com/mcp-circuit-breaker/mcp-circuit-breaker/cmd/mcp-circuit-breaker")
	if err != nil {
		return err
	}
	fixture, err := testservers.Build(ctx, work, "mcpfixture", testservers.FixturePackage)
	if err != nil {
		return err
	}
	project := filepath.Join(work, "project")
	home := filepath.Join(work, "home")
	for _, d := range []string{filepath.Join(project, ".git"), home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	env := append(os.Environ(), "HOME="+home)

	var direct, proxied *mcp.ClientSession
	var proxyCmd *exec.Cmd
	transport := "stdio"
	if *useHTTP {
		transport = "streamable HTTP"
		url, stop, err := serveEcho()
		if err != nil {
			return err
		}
		defer stop()
		if direct, err = connectHTTP(ctx, url); err != nil {
			return fmt.Errorf("direct: %w", err)
		}
		proxyCmd = exec.Command(cli, "proxy", "--dir", project, "--name", "bench", "--upstream", url, "--listen", "127.0.0.1:0")
		proxyCmd.Env = env
		at, err := startListening(proxyCmd)
		if err != nil {
			return fmt.Errorf("proxied: %w", err)
		}
		defer func() {
			proxyCmd.Process.Signal(os.Interrupt)
			proxyCmd.Wait()
		}()
		if proxied, err = connectHTTP(ctx, at); err != nil {
			return fmt.Errorf("proxied: %w", err)
		}
	} else {
		if direct, err = connect(ctx, exec.Command(fixture, "cue"), env); err != nil {
			return fmt.Errorf("direct: %w", err)
		}
		proxyCmd = exec.Command(cli, "proxy", "--dir", project, "--name", "bench", "--", fixture, "cue")
		if proxied, err = connect(ctx, proxyCmd, env); err != nil {
			return fmt.Errorf("proxied: %w", err)
		}
	}
	defer direct.Close()
	defer proxied.Close()

	sessions := []*mcp.ClientSession{direct, proxied}
	times := [2][]time.Duration{}
	for i := 0; i < *warmup+*runs; i++ {
		for k := range 2 {
			j := (i + k) % 2 // rotate which goes first
			d, err := call(ctx, sessions[j])
			if err != nil {
				return err
			}
			if i >= *warmup {
				times[j] = append(times[j], d)
			}
		}
	}
	fmt.Printf("tools/call over %s, %d rounds interleaved (go-sdk client, cue echo)\n", transport, *runs)
	fmt.Printf("%-10s %10s %10s\n", "variant", "median", "p90")
	for j, name := range []string{"direct", "proxied"} {
		fmt.Printf("%-10s %10s %10s\n", name, pct(times[j], 50), pct(times[j], 90))
	}
	delta := pct(times[1], 50) - pct(times[0], 50)
	fmt.Printf("median delta: %s (target ≤ 1ms)\n\n", delta)

	fmt.Printf("%d calls in a row through the proxy, its resident memory every %d calls:\n", *calls, *every)
	pid := proxyCmd.Process.Pid
	var samples []int
	for i := 1; i <= *calls; i++ {
		if _, err := call(ctx, proxied); err != nil {
			return err
		}
		if i%*every == 0 {
			kb, err := rss(pid)
			if err != nil {
				return err
			}
			samples = append(samples, kb)
			fmt.Printf("  after %6d calls: %6d KB\n", i, kb)
		}
	}
	if len(samples) > 1 {
		first, last := samples[0], samples[len(samples)-1]
		fmt.Printf("growth from the first sample to the last: %+d KB (%+.1f%%)\n", last-first, 100*float64(last-first)/float64(first))
	}
	return nil
}

func connect(ctx context.Context, cmd *exec.Cmd, env []string) (*mcp.ClientSession, error) {
	cmd.Env = env
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	return c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
}

func call(ctx context.Context, cs *mcp.ClientSession) (time.Duration, error) {
	start := time.Now()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}})
	d := time.Since(start)
	if err != nil {
		return d, err
	}
	if res.IsError {
		return d, fmt.Errorf("echo failed: %v", res.Content)
	}
	return d, nil
}

func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	return s[(len(s)-1)*p/100]
}

// rss is the resident set of process pid in KB (Linux).
func rss(pid int) (int, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
		}
	}
	return 0, fmt.Errorf("no VmRSS for process %d", pid)
}

// serveEcho serves a streamable HTTP MCP server (the go-sdk's handler) with the cue fixture's
// echo on a loopback port, and returns its URL.
func serveEcho() (url string, stop func(), err error) {
	s := mcp.NewServer(&mcp.Implementation{Name: "bench-http", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo"}, func(context.Context, *mcp.CallToolRequest, testservers.CueInput) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)}
	go srv.Serve(l)
	return "http://" + l.Addr().String() + "/mcp", func() { srv.Close() }, nil
}

// startListening starts the HTTP proxy and returns its endpoint, from the address it prints.
func startListening(cmd *exec.Cmd) (string, error) {
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return "", err
	}
	if err := cmd.Start(); err != nil {
		return "", err
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if _, rest, ok := strings.Cut(sc.Text(), "listening on "); ok {
			go io.Copy(io.Discard, stderr)
			return strings.Fields(rest)[0] + "mcp", nil
		}
	}
	return "", fmt.Errorf("the proxy never said where it listens")
}

func connectHTTP(ctx context.Context, url string) (*mcp.ClientSession, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	return c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
}
