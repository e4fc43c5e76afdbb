// Command fleet measures what the fleet-shared board costs the PreToolUse gate: the whole-process
// wall time of mcp-circuit-breaker-hook on a CLOSED circuit with the board (a real redis-server on
// 127.0.0.1) side by side with the same hook on local state only, in one run, interleaved, so that
// machine noise hits every variant alike. Next to them it times what the board adds by itself: a
// fresh connection plus the one pipelined read of the tool and server keys, from Go.
//
// Usage, from the module root (redis-server on PATH: scripts/install-test-deps redis):
//
//	go run ./bench/fleet
//	go run ./bench/fleet -n 500
//	go run ./bench/fleet -base /tmp/old-hook   # also time an older build's floor and local runs
//
// Variants:
//
//	minimal         bench/minimal reading the event on stdin and a 512-byte file
//	floor           the hook for a non-MCP tool (Bash): start-up and reading stdin, no state read
//	local           hook PreToolUse, the tool CLOSED with one failure counted, no board configured
//	shared          the same with MCP_CIRCUIT_SHARED set; the board holds the same circuit
//	cluster         the same on a 3-node Redis Cluster (redis://h:p?addr=h:p&addr=h:p)
//	shared-away     the same with the board's port closed (connection refused): the local decision
//	floor:base      -base's hook for a non-MCP tool; local:base the same as local (with -base only)
//	read            (in-process) a fresh connection and the read script over the two keys' circuits
//	read-cluster    the same on the cluster (loading its slots, then the script)
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/boardconn/goredisconn"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/failure"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/fleet"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/mcpconfig"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/testservers"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

const (
	modPath = "github.com/mcp-circuit-breaker/mcp-circuit-breaker"
	tool    = "mcp__bench__query"
)

var (
	runs   = flag.Int("n", 300, "timed rounds")
	warmup = flag.Int("warmup", 20, "untimed rounds before timing")
	base   = flag.String("base", "", "another build of mcp-circuit-breaker-hook (e.g. from before the board) whose floor and local runs are timed alongside")
)

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "bench: error: %v\n", err)
		os.Exit(1)
	}
}

type variant struct {
	name    string
	argv    []string
	env     []string
	event   string
	samples []time.Duration
}

func run() error {
	if msg := testservers.RedisMissing(); msg != "" {
		return fmt.Errorf("%s", msg)
	}
	work, err := os.MkdirTemp("", "mcb-bench-fleet-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	r, err := testservers.NewRedis(filepath.Join(work, "redis"), "")
	if err != nil {
		return err
	}
	defer r.Stop()
	rc, err := testservers.NewRedisCluster(filepath.Join(work, "cluster"), 3)
	if err != nil {
		return err
	}
	defer rc.Stop()

	hook := filepath.Join(work, "mcp-circuit-breaker-hook")
	minimal := filepath.Join(work, "minimal")
	for _, b := range [][2]string{{hook, modPath + "/cmd/mcp-circuit-breaker-hook"}, {minimal, modPath + "/bench/minimal"}} {
		if out, err := exec.Command("go", "build", "-o", b[0], b[1]).CombinedOutput(); err != nil {
			return fmt.Errorf("go build %s: %v\n%s", b[1], err, out)
		}
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	// The ledger: one failure of the tool, so the hook reads state and decides (CLOSED, count 1).
	var b states.Board
	res := failure.Classify(failure.Evidence{Text: "internal boom"}, now)
	out := b.Failure(states.Call{Tool: tool, Server: "bench", Source: ledger.SourceHook}, states.Failure{Type: res.Type, Cause: res.Cause, Fault: res.Fault, Error: "internal boom"}, now, nil)
	var data []byte
	for _, e := range out.Entries {
		data = ledger.AppendEncoded(data, e)
	}
	// The board holds the same circuit, so the shared hook decides without writing anything. The
	// server is in no MCP configuration: its identity is this machine and user's.
	idOf := func(home string) fleet.Identity {
		return fleet.IdentityOf("bench", mcpconfig.Server{}, false, fleet.Keys{Namespace: "bench"}, fleet.Local{Machine: "bench", User: home})
	}
	cfg := fleet.Config{URL: r.URL(), Namespace: "bench", Timeout: time.Second}
	ccfg := fleet.Config{URL: rc.URL(), Namespace: "bench", Timeout: time.Second}
	c := *out.Tool
	c.LastAt = now
	for _, bc := range []fleet.Config{cfg, ccfg} {
		board, err := fleet.Open(bc, goredisconn.Dial)
		if err != nil {
			return err
		}
		home := filepath.Join(work, "shared", "home")
		if bc.URL == ccfg.URL {
			home = filepath.Join(work, "shared-cluster", "home")
		}
		err = board.Write(context.Background(), idOf(home), now, []fleet.Write{{Key: tool, Scope: idOf(home).Outage, Circuit: &c}})
		board.Close()
		if err != nil {
			return err
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	closedPort := l.Addr().String()
	l.Close()

	event := filepath.Join(work, "event.json")
	bash := filepath.Join(work, "event-bash.json")
	small := filepath.Join(work, "small.txt")
	os.WriteFile(event, []byte(preToolUse(tool)), 0o600)
	os.WriteFile(bash, []byte(preToolUse("Bash")), 0o600)
	os.WriteFile(small, bytes.Repeat([]byte("0123456789abcdef"), 32), 0o600)
	project := func(name string, extra ...string) ([]string, error) {
		dir := filepath.Join(work, name)
		sd := filepath.Join(dir, ".claude", "mcp_circuit")
		if err := os.MkdirAll(sd, 0o700); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(sd, ledger.FileName), data, 0o600); err != nil {
			return nil, err
		}
		os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(".claude/mcp_circuit/\n"), 0o600)
		home := filepath.Join(dir, "home")
		os.MkdirAll(home, 0o700)
		return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "MCP_CIRCUIT_DIR=" + dir, "NO_COLOR=1", "MCP_CIRCUIT_MACHINE=bench",
			"MCP_CIRCUIT_NOW=" + now.Add(time.Second).Format(time.RFC3339)}, extra...), nil
	}
	localEnv, err := project("local")
	if err != nil {
		return err
	}
	sharedEnv, err := project("shared", fleet.EnvURL+"="+r.URL(), fleet.EnvNamespace+"=bench")
	if err != nil {
		return err
	}
	clusterEnv, err := project("shared-cluster", fleet.EnvURL+"="+rc.URL(), fleet.EnvNamespace+"=bench")
	if err != nil {
		return err
	}
	awayEnv, err := project("away", fleet.EnvURL+"=redis://"+closedPort, fleet.EnvNamespace+"=bench")
	if err != nil {
		return err
	}
	vs := []*variant{
		{name: "minimal", argv: []string{minimal, small}, env: localEnv, event: event},
		{name: "floor", argv: []string{hook, "hook"}, env: localEnv, event: bash},
		{name: "local", argv: []string{hook, "hook"}, env: localEnv, event: event},
		{name: "shared", argv: []string{hook, "hook"}, env: sharedEnv, event: event},
		{name: "cluster", argv: []string{hook, "hook"}, env: clusterEnv, event: event},
		{name: "shared-away", argv: []string{hook, "hook"}, env: awayEnv, event: event},
	}
	if *base != "" {
		vs = append(vs, &variant{name: "floor:base", argv: []string{*base, "hook"}, env: localEnv, event: bash},
			&variant{name: "local:base", argv: []string{*base, "hook"}, env: localEnv, event: event})
	}
	for _, v := range vs[2:] {
		out, stderr, err := capture(v)
		if err != nil || len(out) > 0 && v.name != "shared-away" {
			return fmt.Errorf("%s: priming run: %v: %q %s", v.name, err, out, stderr)
		}
	}
	var reads, creads []time.Duration
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer devnull.Close()
	start := time.Now()
	for i := 0; i < *warmup+*runs; i++ {
		for j := range vs {
			v := vs[(i+j)%len(vs)]
			d, err := once(v, devnull)
			if err != nil {
				return fmt.Errorf("%s: %v", v.name, err)
			}
			if i >= *warmup {
				v.samples = append(v.samples, d)
			}
		}
		// What the board adds by itself: a new client, its connection (for a Cluster: loading its
		// slots first), the one read script.
		for _, bc := range []fleet.Config{cfg, ccfg} {
			t0 := time.Now()
			fb, err := fleet.Open(bc, goredisconn.Dial)
			if err != nil {
				return err
			}
			if _, err := fb.Read(context.Background(), idOf(""), ledger.Key(tool).Circuits(), now); err != nil {
				return err
			}
			d := time.Since(t0)
			fb.Close()
			if i >= *warmup && bc.URL == cfg.URL {
				reads = append(reads, d)
			} else if i >= *warmup {
				creads = append(creads, d)
			}
		}
	}
	fmt.Printf("mcp-circuit-breaker-hook PreToolUse on a CLOSED circuit, with the fleet-shared board vs local only: %d interleaved rounds after %d warm-up (%s)\n",
		*runs, *warmup, time.Since(start).Round(time.Second))
	fmt.Printf("%s %s/%s, %d CPUs, redis-server on 127.0.0.1 (single node, and a 3-node cluster)\n\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	fmt.Printf("%-13s %6s %9s %9s %9s\n", "variant", "runs", "median", "p90", "min")
	med := map[string]time.Duration{}
	for _, v := range append(vs, &variant{name: "read", samples: reads}, &variant{name: "read-cluster", samples: creads}) {
		s := slices.Clone(v.samples)
		slices.Sort(s)
		med[v.name] = s[len(s)/2]
		fmt.Printf("%-13s %6d %9s %9s %9s\n", v.name, len(s), ms(s[len(s)/2]), ms(s[(len(s)-1)*9/10]), ms(s[0]))
	}
	fmt.Printf("\nshared - local        %s (median difference; read alone: %s)\n", ms(med["shared"]-med["local"]), ms(med["read"]))
	fmt.Printf("shared / local        %.2f\n", float64(med["shared"])/float64(med["local"]))
	fmt.Printf("cluster - local       %s (median difference; read alone: %s)\n", ms(med["cluster"]-med["local"]), ms(med["read-cluster"]))
	fmt.Printf("cluster / local       %.2f\n", float64(med["cluster"])/float64(med["local"]))
	fmt.Printf("shared-away - local   %s (connection refused, decided locally)\n", ms(med["shared-away"]-med["local"]))
	if *base != "" {
		fmt.Printf("floor - floor:base    %s (what linking the Redis client costs a start-up)\n", ms(med["floor"]-med["floor:base"]))
		fmt.Printf("local - local:base    %s\n", ms(med["local"]-med["local:base"]))
	}
	return nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/1e6) }

func once(v *variant, devnull *os.File) (time.Duration, error) {
	in, err := os.Open(v.event)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	cmd := exec.Command(v.argv[0], v.argv[1:]...)
	cmd.Env, cmd.Stdin, cmd.Stdout, cmd.Stderr = v.env, in, devnull, devnull
	t0 := time.Now()
	err = cmd.Run()
	return time.Since(t0), err
}

func capture(v *variant) ([]byte, []byte, error) {
	in, err := os.Open(v.event)
	if err != nil {
		return nil, nil, err
	}
	defer in.Close()
	cmd := exec.Command(v.argv[0], v.argv[1:]...)
	cmd.Env, cmd.Stdin = v.env, in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	return out, stderr.Bytes(), err
}

func preToolUse(name string) string {
	return `{"session_id":"64f49569-0000-4000-8000-00000000beef","transcript_path":"/t.jsonl","cwd":"/p","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"` +
		name + `","tool_input":{"sql":"select 1"},"tool_use_id":"toolu_bench","mcp_server":{"name":"bench","source":"project"}}` + "\n"
}
