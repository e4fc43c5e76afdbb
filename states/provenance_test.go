package states

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// TestUnverifiedRestsOnItsEpisode: a circuit is unverified from an entry without this user's
// provenance until it is at rest again, or until this gate itself observed the state (a trip out
// of HALF-OPEN, a trip by hand, the fleet board's record).
func TestUnverifiedRestsOnItsEpisode(t *testing.T) {
	at := t0
	entry := func(state ledger.State, ev ledger.Event, count int, verified bool) ledger.Entry {
		at = at.Add(time.Second)
		e := ledger.Entry{Tool: tool1, State: state, Event: ev, FailureCount: count, At: at, Verified: verified}
		if state != ledger.Closed {
			e.FailureType, e.TrippedAt = ledger.AdminGated, at
		}
		return e
	}
	steps := []struct {
		name string
		e    ledger.Entry
		want bool
	}{
		{"a verified failure", entry(ledger.Closed, ledger.EventFailure, 1, true), false},
		{"a committed failure", entry(ledger.Closed, ledger.EventFailure, 2, false), true},
		{"a verified trip on the committed count", entry(ledger.Open, ledger.EventTrip, 3, true), true},
		{"a verified trial", entry(ledger.HalfOpen, ledger.EventHalfOpen, 3, true), true},
		{"the trial failed here", entry(ledger.Open, ledger.EventTrip, 4, true), false},
		{"a committed close", entry(ledger.Closed, ledger.EventReset, 0, false), false},
		{"a committed trip", entry(ledger.Open, "", 1, false), true},
		{"blocked calls", ledger.Entry{Tool: tool1, State: ledger.Open, Event: ledger.EventBlocked, Verified: true}, true},
		{"a verified close", entry(ledger.Closed, ledger.EventSuccess, 0, true), false},
		{"a committed failure again", entry(ledger.Closed, ledger.EventFailure, 1, false), true},
		{"a trip by hand", func() ledger.Entry {
			e := entry(ledger.Open, ledger.EventTrip, 2, true)
			e.Cause = CauseManualTrip
			return e
		}(), false},
		{"a committed failure in the trip", entry(ledger.Open, ledger.EventFailure, 3, false), true},
		{"the board's record, copied by this gate", func() ledger.Entry {
			e := entry(ledger.Open, ledger.EventTrip, 3, true)
			e.Source = ledger.SourceShared
			return e
		}(), false},
	}
	var b Board
	for _, s := range steps {
		b.Apply(s.e)
		if got := b.Get(tool1).Unverified; got != s.want {
			t.Fatalf("after %s: unverified %v, want %v (%+v)", s.name, got, s.want, b.Get(tool1))
		}
	}
}

// TestUnverifiedAdminGatedGetsTheCooldown: a committed ADMIN_GATED trip, however old, gets the
// ordinary cooldown from its trip time instead of waiting for a person; this gate's own still
// waits.
func TestUnverifiedAdminGatedGetsTheCooldown(t *testing.T) {
	trip := ledger.Entry{Tool: string(ledger.Key(tool1).ServerKey()), State: ledger.Open, FailureType: ledger.AdminGated, FailureCount: 1,
		TrippedAt: t0, Event: ledger.EventTrip, At: t0}
	for _, verified := range []bool{false, true} {
		var b Board
		e := trip
		e.Verified = verified
		b.Apply(e)
		now := t0.Add(60 * 24 * time.Hour) // two months on
		d := b.Gate(Call{Tool: tool1}, now, nil, false)
		if verified && (d.Allowed || d.Block != BlockPerson) {
			t.Errorf("this gate's ADMIN_GATED trip: %+v, want it held for a person", d)
		}
		if !verified && (!d.Allowed || !d.Trial) {
			t.Errorf("a committed ADMIN_GATED trip two months old: %+v, want a trial", d)
		}
		if d := b.Gate(Call{Tool: tool1}, t0.Add(30*time.Second), nil, false); d.Allowed {
			t.Errorf("verified %v, within the cooldown: allowed", verified)
		}
	}
}

// TestStoreSignsWhatItWritesAndChecksWhatItReads: what a store appends carries the user's
// provenance and reads back verified, through the snapshot and the forward and backward reads
// alike; a committed item (no provenance, or another user's) reads back unverified.
func TestStoreSignsWhatItWritesAndChecksWhatItReads(t *testing.T) {
	key := []byte("store-test-key-of-thirty-two-by!")
	open := func(dir string) *Store {
		s := NewStore(dir, time.Second)
		s.Ledger.Provenance = ledger.NewProvenanceKey(key)
		return s
	}
	dir := filepath.Join(t.TempDir(), ".claude", "mcp_circuit")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	committed := "- tool: mcp__github__*\n  state: OPEN\n  failure_type: ADMIN_GATED\n  failure_count: 1\n  tripped_at: 2026-11-01T00:00:00.000Z\n  reset_at: null\n  event: trip\n  at: 2026-11-01T00:00:00.000Z\n  source: hook\n" +
		"  provenance: h1-00112233445566778899aabbccddeeff\n"
	if err := os.WriteFile(filepath.Join(dir, ledger.FileName), []byte(committed), 0o600); err != nil {
		t.Fatal(err)
	}
	s := open(dir)
	if _, err := s.Update(func(b *Board) ([]ledger.Entry, error) {
		return b.Trip(Call{Tool: "mcp__jira__*", Source: ledger.SourceCLI}, ledger.AdminGated, t0), nil
	}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, ledger.FileName))
	if n := bytes.Count(data, []byte("\n  provenance: h1-")); n != 2 {
		t.Fatalf("%d provenance lines, want the committed one and the store's:\n%s", n, data)
	}
	check := func(what string, b *Board) {
		t.Helper()
		if c := b.Get("mcp__github__*"); c == nil || !c.Unverified {
			t.Errorf("%s: the committed trip is %+v, want unverified", what, c)
		}
		if c := b.Get("mcp__jira__*"); c == nil || c.Unverified {
			t.Errorf("%s: the store's own trip is %+v, want verified", what, c)
		}
	}
	b, err := open(dir).View()
	if err != nil {
		t.Fatal(err)
	}
	check("rebuilt from the file", b)
	if b, err = open(dir).View(); err != nil {
		t.Fatal(err)
	}
	check("from the snapshot", b)
	// A backward read of a large ledger without a snapshot checks what it keeps the same way.
	var pad bytes.Buffer
	for pad.Len() < boundedLag+1024 {
		e := ledger.Entry{Tool: "mcp__pad__x", State: ledger.Closed, Event: ledger.EventSuccess, At: t0}
		pad.Write(ledger.Encode(e))
	}
	big := append(bytes.Clone(pad.Bytes()), data...)
	if err := os.WriteFile(filepath.Join(dir, ledger.FileName), big, 0o600); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, SnapshotName))
	bs := open(dir)
	bs.Bound = &Bound{Keys: []string{"mcp__github__*", "mcp__jira__*"}, Deadline: time.Now().Add(time.Minute)}
	if b, err = bs.View(); err != nil || !b.Partial {
		t.Fatalf("bounded view: %v, partial %v", err, b != nil && b.Partial)
	}
	check("read backwards", b)
	// Without the key, nothing the store wrote is verified either: it fails safe. (A snapshot is
	// this user's derived file, keyed to the ledger's identity: it keeps what was checked.)
	os.Remove(filepath.Join(dir, SnapshotName))
	nokey := NewStore(dir, time.Second)
	if b, err = nokey.View(); err != nil {
		t.Fatal(err)
	}
	if c := b.Get("mcp__jira__*"); c == nil || !c.Unverified {
		t.Errorf("without the key, the store's trip is %+v", c)
	}
	if !strings.Contains(string(data), "manual_trip") {
		t.Fatalf("the trip by hand is not in the ledger:\n%s", data)
	}
}
