package gate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// TestLargeLedgerProvisionalSnapshot: on a ledger far larger than a reader replays (4 MB) with no
// snapshot, and a provisional snapshot a cloned repository committed (claiming no circuit at all,
// so every tool CLOSED), the first PreToolUse of a tool the ledger never names, on a server whose
// circuit is OPEN, is denied; it saves a provisional snapshot of this ledger in place of the
// planted one, and the next call, on another tool of that server, is denied from it; a session
// starting meanwhile lists the OPEN server from it.
func TestLargeLedgerProvisionalSnapshot(t *testing.T) {
	dir := testProject(t)
	sd := filepath.Join(dir, project.StateDirName)
	if err := os.MkdirAll(sd, 0o700); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	var data []byte
	for i := 0; len(data) < 4<<20; i++ {
		data = ledger.AppendEncoded(data, ledger.Entry{Tool: fmt.Sprintf("mcp__s%d__t", i%40), State: ledger.Closed,
			FailureType: ledger.Timeout, FailureCount: 1, Event: ledger.EventFailure, At: at.Add(time.Duration(i) * time.Second),
			Error: "MCP error -32001: Request timed out", Source: ledger.SourceHook})
	}
	trip := time.Date(2026, 11, 29, 11, 59, 50, 0, time.UTC)
	data = ledger.AppendEncoded(data, ledger.Entry{Tool: "mcp__docs__*", State: ledger.Open, FailureType: ledger.Timeout,
		FailureCount: 3, Event: ledger.EventTrip, At: trip, TrippedAt: trip, OpenUntil: trip.Add(time.Hour), Cause: "connection_closed",
		Server: "docs", Source: ledger.SourceHook})
	for i := range 3 {
		// After the trip, so that the trip is not the ledger's last item.
		data = ledger.AppendEncoded(data, ledger.Entry{Tool: fmt.Sprintf("mcp__s%d__t", i), State: ledger.Closed,
			Event: ledger.EventSuccess, At: trip.Add(time.Second), Source: ledger.SourceHook})
	}
	if err := os.WriteFile(filepath.Join(sd, ledger.FileName), data, 0o600); err != nil {
		t.Fatal(err)
	}
	prov := filepath.Join(sd, states.ProvisionalName)
	planted := `{"version":1004,"dev":1,"ino":2,"offset":100,"mtime_ns":0,"ctime_ns":0,"lines":3,"sums":[0,0,0],"body_len":0,"body_crc":0,"end_size":200,"end_mtime_ns":5,"end_ctime_ns":5}` + "\n"
	if err := os.WriteFile(prov, []byte(planted), 0o600); err != nil {
		t.Fatal(err)
	}
	// The catch-up is started (once: it has not finished when the next call comes) but does
	// nothing here, so no call finds a complete state.json.
	started := 0
	catchUp := func(c *Config) {
		c.CatchUp = func(string) error { started++; return nil }
	}
	for _, tool := range []string{"mcp__docs__search", "mcp__docs__fetch"} {
		a, stderr := runEventWith(t, dir, Event{Kind: Before, Key: tool, Tool: tool, Server: "docs", SessionID: "s"}, catchUp)
		if !a.Deny || !strings.Contains(a.Reason, "mcp__docs__*") {
			t.Fatalf("%s: %+v (stderr %q), want a deny naming the OPEN server circuit", tool, a, stderr)
		}
		got, err := os.ReadFile(prov)
		if err != nil {
			t.Fatalf("after %s: %v", tool, err)
		}
		head, _, _ := bytes.Cut(got, []byte("\n"))
		var h struct {
			Ino uint64 `json:"ino"`
		}
		fi, err := os.Stat(filepath.Join(sd, ledger.FileName))
		if json.Unmarshal(head, &h) != nil || err != nil || h.Ino != ledger.FileIDOf(fi).Ino {
			t.Fatalf("after %s the provisional snapshot is not this ledger's: %s", tool, head)
		}
		if _, err := os.Stat(filepath.Join(sd, states.SnapshotName)); err == nil {
			t.Fatalf("after %s: a state.json was written", tool)
		}
	}
	if started != 1 {
		t.Errorf("the catch-up was started %d times, want once (the second call comes while it runs)", started)
	}
	// A session starting now lists the OPEN server from it, rather than saying that the
	// circuits cannot be listed yet.
	a, stderr := runEventWith(t, dir, Event{Kind: SessionStart, SessionID: "s2"}, catchUp)
	if !strings.Contains(a.Context, "mcp__docs__*") || strings.Contains(a.Context, "being rebuilt") {
		t.Fatalf("SessionStart during the catch-up: %+v (stderr %q), want the OPEN server listed", a, stderr)
	}
	// What the second call read came from the provisional snapshot: with it holding the server
	// CLOSED (a change keyed to this ledger), a third call is allowed.
	got, _ := os.ReadFile(prov)
	head, body, _ := bytes.Cut(got, []byte("\n"))
	var lines [][]byte
	for _, l := range bytes.SplitAfter(body, []byte("\n")) {
		if len(l) > 0 && !bytes.HasPrefix(l, []byte(`{"key":"mcp__docs__*"`)) {
			lines = append(lines, l)
		}
	}
	newBody := bytes.Join(lines, nil)
	var h map[string]any
	dec := json.NewDecoder(bytes.NewReader(head))
	dec.UseNumber() // the times in nanoseconds do not fit a float64
	if err := dec.Decode(&h); err != nil {
		t.Fatal(err)
	}
	h["body_len"], h["body_crc"] = len(newBody), crc32.ChecksumIEEE(newBody)
	newHead, _ := json.Marshal(h)
	os.WriteFile(prov, append(append(newHead, '\n'), newBody...), 0o600)
	if a, stderr := runEventWith(t, dir, Event{Kind: Before, Key: "mcp__docs__list", Tool: "mcp__docs__list", Server: "docs"}, catchUp); a.Deny {
		t.Fatalf("the provisional snapshot's circuits were not what the call read: %+v (stderr %q)", a, stderr)
	}
}
