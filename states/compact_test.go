package states

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

var results = []Failure{
	{Type: ledger.Timeout, Cause: "connection_refused", ServerWide: true},
	{Type: ledger.Timeout, Cause: "deadline"},
	{Type: ledger.NotFound, Cause: "tool_missing"},
	{Type: ledger.Auth, Cause: "http_401", ServerWide: true},
	{Type: ledger.AdminGated, Cause: "admin_approval", ServerWide: true},
	{Type: ledger.RateLimit, Cause: "http_429", ServerWide: true, RetryAfter: 90 * time.Second},
	{Type: ledger.Malformed, Cause: "invalid_params"},
	// Failures on weak evidence only, of two texts: held after a success, counted otherwise.
	{Type: ledger.Unknown, Cause: "unknown", Fault: ledger.FaultTool, Weak: true, Shape: "s"},
	{Type: ledger.Unknown, Cause: "unknown", Fault: ledger.FaultTool, Weak: true, Shape: "t"},
}

// randomLedger writes a history of n decisions over keys of two servers, made by the states
// package on the board as it goes, with the clock moving on at random.
func randomLedger(r *rand.Rand, n int, start time.Time) ([]ledger.Entry, time.Time) {
	tools := []string{"mcp__a__x", "mcp__a__y", "mcp__a__z", "mcp__b__x", "mcp__b__y", "mcp__c__q"}
	var b Board
	var log []ledger.Entry
	now := start
	for range n {
		now = now.Add(time.Duration(r.IntN(240_000)) * time.Millisecond)
		if r.IntN(30) == 0 {
			now = now.Add(time.Duration(r.IntN(48)) * time.Hour)
		}
		tool := tools[r.IntN(len(tools))]
		call := Call{Tool: tool, Source: ledger.SourceHook}
		var es []ledger.Entry
		switch k := r.IntN(100); {
		case k < 40:
			es = b.Failure(call, results[r.IntN(len(results))], now, nil).Entries
		case k < 65:
			es = b.Gate(call, now, nil, r.IntN(10) == 0).Entries
		case k < 88:
			es = b.Success(call, now).Entries
		case k < 94:
			call.Tool = string(ledger.Key(tool).ServerKey())
			es = b.Probe(call, true, Failure{}, nil, now, nil).Entries
		default:
			es = b.Reset(call, now)
		}
		for _, e := range es {
			b.Apply(e)
			log = append(log, e)
		}
	}
	return log, now
}

// circuitSummary is what compaction at cutoff must keep of a circuit that is not idle. What
// compaction may forget (forgettable) is left out: that a tool worked, and a streak of call errors
// or a failure held too old at the cutoff to matter to any decision after it.
func circuitSummary(b *Board, cutoff time.Time) map[string]string {
	m := map[string]string{}
	for k, c := range b.Circuits {
		v := *c
		if v.Held.At.Before(cutoff.Add(-CallMemoryAge)) {
			v.Held = Held{}
		}
		if v.Streak.At.Before(cutoff.Add(-CallMemoryAge)) {
			v.Streak = Streak{}
		}
		if c = &v; c.Idle() || c.OnlyWorked() {
			continue
		}
		m[k] = fmt.Sprintf("state=%s type=%s count=%d open_until=%s lease_until=%s level=%d blocked=%d streak=%+v held=%+v",
			c.State, c.FailureType, c.FailureCount, c.OpenUntil.Format(time.RFC3339Nano), c.LeaseUntil.Format(time.RFC3339Nano), c.Level, c.Blocked,
			c.Streak, c.Held)
	}
	return m
}

// TestCompactProperty compacts random histories at random cutoffs: the compacted ledger replays to
// the same circuits (every one that is not idle, field by field), parses strictly, is shorter or
// untouched, and the original is kept byte for byte as the backup.
func TestCompactProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for run := range 30 {
		t.Run(fmt.Sprint("run", run), func(t *testing.T) {
			log, end := randomLedger(r, 50+r.IntN(400), t0)
			s := newStore(t)
			var data []byte
			for _, e := range log {
				data = ledger.AppendEncoded(data, e)
			}
			if err := os.WriteFile(s.Ledger.Path(), data, 0o600); err != nil {
				t.Fatal(err)
			}
			cutoff := t0.Add(time.Duration(r.Int64N(int64(end.Sub(t0)) + 1)))
			if run%10 == 0 {
				cutoff = end.Add(time.Hour) // everything is old
			}
			want := circuitSummary(replayFile(t, s), cutoff)
			now := end.Add(2 * time.Hour)
			res, err := s.Compact(cutoff, now)
			if err != nil {
				t.Fatal(err)
			}
			if res.Before != len(log) || res.After > res.Before {
				t.Fatalf("result %+v for %d entries", res, len(log))
			}
			got := circuitSummary(replayFile(t, s), cutoff) // ReadAll fails on any problem
			for k, w := range want {
				if got[k] != w {
					t.Errorf("%s after compaction:\n got %s\nwant %s", k, got[k], w)
				}
			}
			for k, g := range got {
				if want[k] == "" {
					t.Errorf("%s appeared after compaction: %s", k, g)
				}
			}
			after, _ := os.ReadFile(s.Ledger.Path())
			if res.Before == res.After {
				if res.Backup != "" || string(after) != string(data) {
					t.Errorf("nothing to drop, but the ledger was rewritten (backup %q)", res.Backup)
				}
				return
			}
			backup, err := os.ReadFile(res.Backup)
			if err != nil || string(backup) != string(data) {
				t.Fatalf("backup %s differs from the original (%v)", res.Backup, err)
			}
			if !strings.HasPrefix(string(after), "# compacted at ") {
				t.Errorf("no summary at the top:\n%.200s", after)
			}
			if _, err := os.Stat(s.snapshotPath()); !os.IsNotExist(err) {
				t.Errorf("the snapshot of the old ledger is still there")
			}
			// The store reads the compacted ledger like any other.
			if got := circuitSummary(view(t, s), cutoff); len(got) != len(want) {
				t.Errorf("View after compaction: %d circuits, want %d", len(got), len(want))
			}
		})
	}
}

func TestCompactKeepsOpenCircuitsRecord(t *testing.T) {
	s := newStore(t)
	var b Board
	now := t0
	apply := applyTo(t, s, &b)
	// An old closed history on a, and b tripped long ago and still OPEN (ADMIN_GATED).
	for range 3 {
		apply(b.Failure(Call{Tool: "mcp__s__a"}, withText(results[1], "x"), now, nil).Entries)
		now = now.Add(time.Second)
	}
	apply(b.Success(Call{Tool: "mcp__s__a"}, now).Entries)
	apply(b.Failure(Call{Tool: "mcp__t__b"}, withText(results[4], "gated"), now, nil).Entries)
	now = now.Add(48 * time.Hour)
	apply(b.Gate(Call{Tool: "mcp__t__b"}, now, nil, false).Entries)
	before, _ := s.Ledger.ReadAll()

	res, err := s.Compact(now.Add(-time.Hour), now)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := s.Ledger.ReadAll()
	if res.Before != len(before) || res.After != len(after) || res.Backup == "" {
		t.Fatalf("result %+v", res)
	}
	for _, e := range after {
		if e.Tool == "mcp__s__a" {
			t.Errorf("the closed history of a was kept: %+v", e)
		}
	}
	board := replayFile(t, s)
	if c := board.Get("mcp__t__b"); c == nil || c.State != ledger.Open || !c.TrippedAt.Equal(t0.Add(3*time.Second)) {
		t.Errorf("b after compaction: %+v", c)
	}
	// ADMIN_GATED is server-wide: the server circuit blocked the call.
	if c := board.Get("mcp__t__*"); c == nil || c.State != ledger.Open || c.Blocked != 1 {
		t.Errorf("the server of b after compaction: %+v", c)
	}
	data, _ := os.ReadFile(s.Ledger.Path())
	if !strings.Contains(string(data), `# "mcp__s__a": 4 entries, 1 trips, 0 calls blocked`) {
		t.Errorf("summary missing:\n%s", data)
	}
}

// TestCompactCountsProbeTrips compacts a key that only probes opened (twice) and a probe closed:
// its summary must say 2 trips, as the report counts them, not 0.
func TestCompactCountsProbeTrips(t *testing.T) {
	s := newStore(t)
	var b Board
	now := t0
	apply := applyTo(t, s, &b)
	call := Call{Tool: "mcp__p__*", Source: ledger.SourceProbe}
	down := Failure{Type: ledger.NotFound, Cause: "command_not_found", ServerWide: true}
	apply(b.Probe(call, false, withText(down, "not found"), nil, now, nil).Entries) // trips (NOT_FOUND at 1)
	now = now.Add(10 * time.Minute)
	apply(b.Probe(call, false, withText(down, "not found"), nil, now, nil).Entries) // re-opens
	now = now.Add(10 * time.Minute)
	apply(b.Probe(call, true, Failure{}, nil, now, nil).Entries) // closes
	if _, err := s.Compact(now.Add(time.Hour), now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(s.Ledger.Path())
	if err != nil {
		t.Fatal(err)
	}
	if want := `# "mcp__p__*": 3 entries, 2 trips, 0 calls blocked`; !strings.Contains(string(data), want) {
		t.Errorf("summary lacks %q:\n%s", want, data)
	}
}

// applyTo returns a function that applies entries to b and appends them to s.
func applyTo(t *testing.T, s *Store, b *Board) func([]ledger.Entry) {
	return func(es []ledger.Entry) {
		for _, e := range es {
			b.Apply(e)
		}
		update(t, s, es...)
	}
}

// withText is f with its stored text.
func withText(f Failure, text string) Failure {
	f.Error = text
	return f
}

// TestCompactCallErrors: a tool with only call errors long past the cutoff has its history
// compacted like an idle one; recent ones (the loop guard may still hold them) are kept.
func TestCompactCallErrors(t *testing.T) {
	s := newStore(t)
	var b Board
	now := t0
	apply := applyTo(t, s, &b)
	missing := Failure{Type: ledger.NotFound, Cause: "http_404", Fault: ledger.FaultCall, Error: "404"}
	for range 3 {
		apply(b.Failure(Call{Tool: "mcp__s__old", Hash: "h"}, missing, now, nil).Entries)
	}
	now = now.Add(72 * time.Hour)
	for range 3 {
		apply(b.Failure(Call{Tool: "mcp__s__new", Hash: "h"}, missing, now, nil).Entries)
	}
	if _, err := s.Compact(now.Add(time.Minute), now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	after, _ := s.Ledger.ReadAll()
	var old, recent int
	for _, e := range after {
		switch e.Tool {
		case "mcp__s__old":
			old++
		case "mcp__s__new":
			recent++
		}
	}
	if old != 0 || recent != 3 {
		t.Fatalf("after compaction: %d old call errors (want 0), %d recent (want 3)", old, recent)
	}
	if c := replayFile(t, s).Get("mcp__s__new"); c == nil || len(c.Repeats) != 1 || c.Repeats[0].Count != 3 {
		t.Fatalf("the loop guard's memory after compaction: %+v", c)
	}
}
