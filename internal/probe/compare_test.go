//go:build unix

package probe

import (
	"bufio"
	"context"
	"io"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"
)

// aliveRule is the baseline health-check hook's stdio probe (the peer health-check hook
// from the article the project started from): spawn the server with stdin open and idle, send nothing, and call it healthy if it is
// still alive when the timer fires, then kill it (SIGTERM, SIGKILL 200 ms later).
func aliveRule(command string, timeout time.Duration) (healthy bool) {
	cmd := exec.Command(command)
	stdin, _ := cmd.StdinPipe()
	cmd.Stdout = io.Discard
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return false
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	defer stdin.Close()
	select {
	case <-exited:
		return false
	case <-time.After(timeout):
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(200 * time.Millisecond):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}
	return true
}

// TestCompareAliveRule measures, on the same healthy stdio server (the go-sdk example
// "everything") in one run, how long a real handshake probe takes to call it healthy and how
// long the baseline 5-second "process still alive" rule takes. Run it with
// `go test ./probe -run TestCompareAliveRule -v` to see both numbers.
func TestCompareAliveRule(t *testing.T) {
	if testing.Short() {
		t.Skip("the baseline waits 5 s by design")
	}
	const runs = 20
	var verdicts, walls []time.Duration
	for range runs {
		start := time.Now()
		o := Probe(context.Background(), stdio("everything", everythingBin), Options{Tool: "greet"})
		wall := time.Since(start)
		if !o.Healthy {
			t.Fatalf("probe: %+v", o)
		}
		verdicts = append(verdicts, o.Duration)
		walls = append(walls, wall)
	}
	var raws []time.Duration
	for range runs {
		d, err := rawHandshake(everythingBin)
		if err != nil {
			t.Fatalf("raw handshake: %v", err)
		}
		raws = append(raws, d)
	}
	start := time.Now()
	healthy := aliveRule(everythingBin, 5*time.Second)
	baseline := time.Since(start)
	if !healthy {
		t.Fatal("baseline rule called the server unhealthy")
	}
	slices.Sort(verdicts)
	slices.Sort(walls)
	slices.Sort(raws)
	med := func(d []time.Duration) time.Duration { return d[len(d)/2] }
	t.Logf("the server's own handshake (raw JSON-RPC: spawn, initialize, tools/list), %d runs: median %v (min %v)", runs, med(raws), raws[0])
	t.Logf("handshake probe (spawn+initialize+tools/list), %d runs: verdict median %v (min %v, max %v); wall incl. teardown median %v (max %v)",
		runs, med(verdicts), verdicts[0], verdicts[len(verdicts)-1], med(walls), walls[len(walls)-1])
	t.Logf("baseline 5 s alive rule (spawn, wait, kill): %v", baseline)
	t.Logf("the handshake probe reaches its verdict %.0fx sooner, and it is a verdict about MCP, not about a process", float64(baseline)/float64(med(verdicts)))
	overhead := med(walls) - med(raws)
	t.Logf("probe overhead over the raw handshake (the README's Performance section budget 20ms): %v", overhead)
	if med(walls) > time.Second {
		t.Errorf("median probe wall time %v: a healthy stdio server must not cost a timeout", med(walls))
	}
	if overhead > 20*time.Millisecond && !raceEnabled {
		t.Errorf("probe overhead %v exceeds the 20ms budget", overhead)
	}
}

// rawHandshake times the least a client can do against a stdio server: spawn it, send
// initialize, the initialized notification and tools/list, and read the two answers. It is the
// "handshake time of the server" the probe's budget is measured against.
func rawHandshake(command string) (time.Duration, error) {
	start := time.Now()
	cmd := exec.Command(command)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 0, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	r := bufio.NewReader(stdout)
	io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`+"\n")
	if _, err := r.ReadBytes('\n'); err != nil {
		return 0, err
	}
	io.WriteString(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`+"\n")
	if _, err := r.ReadBytes('\n'); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

// BenchmarkProbeStdio measures a whole probe (spawn, handshake, tools/list, teardown) of the
// go-sdk example server over stdio.
func BenchmarkProbeStdio(b *testing.B) {
	for b.Loop() {
		if o := Probe(context.Background(), stdio("everything", everythingBin), Options{}); !o.Healthy {
			b.Fatalf("probe: %+v", o)
		}
	}
}
