//go:build unix

package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/failure"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/redact"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// firstAtOnce measures issue 27's case of the first calls: a ledger with no snapshot whose OPEN
// circuit is where a backward read finds it last (tripAtStart: the target server's ADMIN_GATED
// trip is the ledger's first entry and nothing after it names the server), and n first calls
// started at once, through each binary (the lean hook and `mcp-circuit-breaker hook`), each on
// its own copy of the project. Every one must deny. It prints how many were denied, allowed and
// left undecided, their median and slowest wall times, and then the later calls: 10 at once,
// then one every 100 ms until the catch-up has saved the complete snapshot (at most 20). With
// index, each ledger has the trip index the gate's appends would have written beside it.
func firstAtOnce(bins map[string]string, home, work, sizes string, n int, where string, index bool) error {
	if where != "start" && where != "middle" && where != "end" {
		return fmt.Errorf("-trip-at %q: start, middle or end", where)
	}
	fmt.Printf("%d first calls at once, no snapshot, the OPEN circuit at the ledger's %s, trip index %v (load average %s)\n\n", n, where, index, loadAverage())
	fmt.Printf("%-10s %-5s %-24s %7s %7s %9s %10s %10s\n", "entries", "bin", "calls", "denied", "allowed", "undecided", "median", "slowest")
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range bins {
			if !yield(k) {
				return
			}
		}
	})
	for _, f := range strings.Split(sizes, ",") {
		size, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return fmt.Errorf("-first %q: %v", sizes, err)
		}
		var data []byte
		var now time.Time
		if where != "end" {
			var at time.Time
			data, at, now = generateTripAt(size, where == "middle", homeSigner(home))
			fmt.Printf("%-10d the ADMIN_GATED trip is %.0f days old at the calls\n", size, now.Sub(at).Hours()/24)
		} else {
			data, _, now = generate(size, true, 0, homeSigner(home))
		}
		for _, name := range names {
			dir := filepath.Join(work, fmt.Sprintf("atonce-%d-%s", size, name))
			sd := filepath.Join(dir, ".claude", "mcp_circuit")
			if err := os.MkdirAll(sd, 0o700); err != nil {
				return err
			}
			if err := writeSynced(filepath.Join(sd, ledger.FileName), data); err != nil {
				return err
			}
			if index {
				// The generated entries stand for the gate's own appends, which write the index
				// as they go: the same index, built in one read.
				if err := (&ledger.Ledger{Dir: sd}).RebuildTripIndex(); err != nil {
					return err
				}
			}
			env := baseEnv(home, dir, now)
			type res struct {
				wall              time.Duration
				denied, undecided bool
			}
			call := func() (res, error) {
				stdout, wall, _, err := measure(bins[name], env)
				if err != nil {
					return res{}, err
				}
				return res{wall: wall, denied: bytes.Contains(stdout, []byte(`"permissionDecision":"deny"`)),
					undecided: bytes.Contains(stdout, []byte("could not decide"))}, nil
			}
			row := func(what string, rs []res) {
				var walls []time.Duration
				denied, undecided := 0, 0
				for _, r := range rs {
					walls = append(walls, r.wall)
					if r.denied {
						denied++
					} else if r.undecided {
						undecided++
					}
				}
				sort.Slice(walls, func(i, j int) bool { return walls[i] < walls[j] })
				fmt.Printf("%-10d %-5s %-24s %7d %7d %9d %10s %10s\n", size, name, what, denied, len(rs)-denied-undecided, undecided,
					ms(walls[len(walls)/2]), ms(walls[len(walls)-1]))
			}
			burst := func(k int) ([]res, error) {
				out := make([]res, k)
				errs := make([]error, k)
				var wg sync.WaitGroup
				for i := range out {
					wg.Go(func() { out[i], errs[i] = call() })
				}
				wg.Wait()
				for _, err := range errs {
					if err != nil {
						return nil, err
					}
				}
				return out, nil
			}
			first, err := burst(n)
			if err != nil {
				return err
			}
			row(fmt.Sprintf("1-%d (first, at once)", n), first)
			later, err := burst(10)
			if err != nil {
				return err
			}
			row("10 later, at once", later)
			var paced []res
			complete := func() bool {
				b, err := os.ReadFile(filepath.Join(sd, states.SnapshotName))
				return err == nil && strings.HasPrefix(snapshotOffset(b), "complete")
			}
			for len(paced) < 20 && !complete() {
				r, err := call()
				if err != nil {
					return err
				}
				paced = append(paced, r)
				time.Sleep(100 * time.Millisecond)
			}
			if len(paced) > 0 {
				row(fmt.Sprintf("%d later, every 100 ms", len(paced)), paced)
			}
			// The next size starts with a quiet machine: the catch-up of this one is done.
			for deadline := time.Now().Add(2 * time.Minute); !complete() && time.Now().Before(deadline); {
				time.Sleep(100 * time.Millisecond)
			}
		}
	}
	return nil
}

// generateTripAt returns a ledger of about n entries whose first (or, with middle, the one half
// way) is the target server's ADMIN_GATED trip (only a person closes it), among entries of the
// other servers, which never name the target server otherwise; when the trip happened; and the
// clock to run the hook at, months after it. A backward read of the target's circuits must read
// it all (half of it, and the look from the start the other half).
func generateTripAt(n int, middle bool, signer *ledger.Provenance) ([]byte, time.Time, time.Time) {
	rng := rand.New(rand.NewPCG(3, 4))
	servers := []string{"github", "jira", "docs", "db", "slack", "notion", "search"}
	tools := []string{"search", "get", "list", "create", "update"}
	var b states.Board
	var buf []byte
	count := 0
	now := tripAtStartTime
	emit := func(es []ledger.Entry) {
		for _, e := range es {
			signer.Sign(&e)
			buf = ledger.AppendEncoded(buf, e)
			b.Apply(e)
			count++
		}
	}
	call := func(server, tool string) states.Call {
		return states.Call{Tool: string(ledger.ToolKey(server, tool)), Server: server, SessionID: "64f49569-bench",
			ToolUseID: fmt.Sprintf("toolu_%08d", count), Source: ledger.SourceHook}
	}
	var at time.Time
	trip := func() {
		at = now
		emit(b.Failure(call(targetServer, "get"), states.Failure{Type: ledger.AdminGated, Cause: "admin_approval", ServerWide: true,
			Error: redact.StoredText("MCP server bench requires administrator approval")}, now, nil).Entries)
	}
	if !middle {
		trip()
	}
	for count < n {
		if middle && at.IsZero() && count >= n/2 {
			trip()
		}
		now = now.Add(time.Duration(1+rng.IntN(20)) * time.Second)
		c := call(servers[rng.IntN(len(servers))], tools[rng.IntN(len(tools))])
		d := b.Gate(c, now, nil, false)
		emit(d.Entries)
		if !d.Allowed {
			continue
		}
		if rng.IntN(100) < 80 {
			emit(b.Success(c, now).Entries)
		} else {
			r := failure.Classify(failure.Evidence{Text: "Connection closed"}, now)
			emit(b.Failure(c, states.Failure{Type: r.Type, Cause: r.Cause, Fault: r.Fault, ServerWide: r.ServerWide, Error: "Connection closed"}, now, nil).Entries)
		}
	}
	return buf, at, now.Add(5 * time.Second)
}

// tripAtStartTime is when generateTripAt's ledger starts.
var tripAtStartTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// writeSynced writes a generated ledger and syncs it to disk, as a ledger at rest is: otherwise
// the first call's fsynced append would pay for writing out the whole fresh file (575 ms for
// 358 MB here), which no real first call does.
func writeSynced(name string, data []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
