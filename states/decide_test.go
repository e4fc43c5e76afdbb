package states

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

var t0 = time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)

// Failures as the classifier reports them.
var (
	transport = Failure{Type: ledger.Timeout, Cause: "connection_refused", ServerWide: true}
	deadline  = Failure{Type: ledger.Timeout, Cause: "deadline"}
	notFound  = Failure{Type: ledger.NotFound, Cause: "tool_missing"}
	auth401   = Failure{Type: ledger.Auth, Cause: "http_401", ServerWide: true}
	auth403   = Failure{Type: ledger.Auth, Cause: "http_403"}
	admin     = Failure{Type: ledger.AdminGated, Cause: "admin_approval", ServerWide: true}
	malformed = Failure{Type: ledger.Malformed, Cause: "invalid_params"}
	unknown   = Failure{Type: ledger.Unknown, Cause: "unknown"}
)

func rateLimit(hint time.Duration) Failure {
	return Failure{Type: ledger.RateLimit, Cause: "http_429", RetryAfter: hint, ServerWide: true}
}

// world is a board, a policy and a clock; its verbs decide and apply, as the store does.
type world struct {
	t   *testing.T
	b   *Board
	p   *Policy
	now time.Time
	log []ledger.Entry
}

func newWorld(t *testing.T) *world { return &world{t: t, b: &Board{}, now: t0} }

func (w *world) apply(es []ledger.Entry) {
	for _, e := range es {
		w.b.Apply(e)
		w.log = append(w.log, e)
	}
}

func (w *world) fail(tool string, r Failure) Outcome {
	return w.failAs(Call{Tool: tool}, r)
}

func (w *world) failAs(call Call, r Failure) Outcome {
	r.Error = "failure text"
	out := w.b.Failure(call, r, w.now, w.p)
	w.apply(out.Entries)
	return out
}

func (w *world) gate(tool string) Decision { return w.gateAs(Call{Tool: tool}, false) }

func (w *world) gateAs(call Call, shadow bool) Decision {
	d := w.b.Gate(call, w.now, w.p, shadow)
	w.apply(d.Entries)
	return d
}

func (w *world) succeed(tool string) Outcome {
	out := w.b.Success(Call{Tool: tool}, w.now)
	w.apply(out.Entries)
	return out
}

func (w *world) sleep(d time.Duration) { w.now = w.now.Add(d) }

func (w *world) circuit(key string) *Circuit {
	w.t.Helper()
	c := w.b.Get(key)
	if c == nil {
		w.t.Fatalf("no circuit for %s", key)
	}
	return c
}

func (w *world) wantState(key string, s ledger.State, count int) {
	w.t.Helper()
	c := w.b.Get(key)
	if s == ledger.Closed && count == 0 && c.Idle() {
		return
	}
	if c == nil || c.State != s || c.FailureCount != count {
		w.t.Fatalf("%s: got %+v, want %s with %d failures", key, c, s, count)
	}
}

func keysOf(es []ledger.Entry) []string {
	var ks []string
	for _, e := range es {
		ks = append(ks, e.Tool)
	}
	return ks
}

const (
	tool1 = "mcp__srv__one"
	tool2 = "mcp__srv__two"
	tool3 = "mcp__srv__three"
	tool4 = "mcp__srv__four"
	srvK  = "mcp__srv__*"
)

func TestFailureThresholds(t *testing.T) {
	tests := []struct {
		name       string
		r          Failure
		threshold  int
		serverWide bool
		cooldown   time.Duration // 0: no open_until (a person must act)
	}{
		{"ADMIN_GATED trips at once, on the server too", admin, 1, true, 0},
		{"AUTH 401 trips at once, on the server too", auth401, 1, true, time.Minute},
		{"AUTH 403 trips at once, on the tool only", auth403, 1, false, time.Minute},
		{"NOT_FOUND trips at once", notFound, 1, false, time.Minute},
		{"RATE_LIMIT trips at three", rateLimit(0), 3, true, time.Minute},
		{"TIMEOUT transport trips at three", transport, 3, true, time.Minute},
		{"TIMEOUT deadline trips at three", deadline, 3, false, time.Minute},
		{"MALFORMED trips at three", malformed, 3, false, time.Minute},
		{"UNKNOWN trips at three", unknown, 3, false, time.Minute},
		{"an invalid type counts as UNKNOWN", Failure{Type: "BOGUS"}, 3, false, time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			for i := 1; i < tt.threshold; i++ {
				out := w.fail(tool1, tt.r)
				if len(out.Tripped) != 0 {
					t.Fatalf("failure %d tripped %v", i, out.Tripped)
				}
				w.wantState(tool1, ledger.Closed, i)
				if out.Entries[0].Event != ledger.EventFailure || out.Tool.FailureCount != i {
					t.Fatalf("failure %d: %+v", i, out.Entries[0])
				}
			}
			w.sleep(time.Second)
			out := w.fail(tool1, tt.r)
			want := []string{tool1}
			if tt.serverWide {
				want = append(want, srvK)
			}
			if !slices.Equal(out.Tripped, want) || !slices.Equal(keysOf(out.Entries), want) {
				t.Fatalf("tripped %v with entries for %v, want %v", out.Tripped, keysOf(out.Entries), want)
			}
			for _, e := range out.Entries {
				if e.Event != ledger.EventTrip || e.State != ledger.Open || e.FailureCount != tt.threshold || !e.TrippedAt.Equal(w.now) {
					t.Errorf("trip entry %+v", e)
				}
				wantUntil := time.Time{}
				if tt.cooldown > 0 {
					wantUntil = w.now.Add(tt.cooldown)
				}
				if !e.OpenUntil.Equal(wantUntil) {
					t.Errorf("%s: open_until %v, want %v", e.Tool, e.OpenUntil, wantUntil)
				}
				wantType := tt.r.Type
				if !wantType.Valid() {
					wantType = ledger.Unknown
				}
				if e.FailureType != wantType {
					t.Errorf("%s: type %s", e.Tool, e.FailureType)
				}
			}
			if out.Tool == nil || out.Tool.State != ledger.Open {
				t.Errorf("Outcome.Tool %+v", out.Tool)
			}
			if (out.ServerCircuit != nil) != tt.serverWide {
				t.Errorf("Outcome.ServerCircuit %+v", out.ServerCircuit)
			}
			// The notice (internal/message) names the key and the count.
			if out.Tool.Key != tool1 || out.Tool.FailureCount == 0 {
				t.Errorf("Outcome.Tool %+v", out.Tool)
			}
		})
	}
}

func TestFailureCountsContinueAcrossTypes(t *testing.T) {
	w := newWorld(t)
	w.fail(tool1, deadline)
	w.fail(tool1, malformed)
	out := w.fail(tool1, unknown)
	if len(out.Tripped) != 1 || w.circuit(tool1).FailureType != ledger.Unknown || w.circuit(tool1).FailureCount != 3 {
		t.Fatalf("three failures of three types: %+v", w.circuit(tool1))
	}
	// The threshold is that of the failure being recorded: two timeouts then a NOT_FOUND trips.
	w = newWorld(t)
	w.fail(tool2, deadline)
	out = w.fail(tool2, notFound)
	if len(out.Tripped) != 1 || w.circuit(tool2).FailureCount != 2 {
		t.Fatalf("NOT_FOUND after a timeout: %+v", w.circuit(tool2))
	}
}

func TestServerWideCountsOnBothKeys(t *testing.T) {
	w := newWorld(t)
	out := w.fail(tool1, transport)
	if !slices.Equal(keysOf(out.Entries), []string{tool1, srvK}) {
		t.Fatalf("entries for %v", keysOf(out.Entries))
	}
	w.wantState(tool1, ledger.Closed, 1)
	w.wantState(srvK, ledger.Closed, 1)

	// Three transport failures on three tools of one dead server trip the server key.
	w.fail(tool2, transport)
	out = w.fail(tool3, transport)
	if !slices.Equal(out.Tripped, []string{srvK}) {
		t.Fatalf("tripped %v, want the server key", out.Tripped)
	}
	for _, k := range []string{tool1, tool2, tool3} {
		w.wantState(k, ledger.Closed, 1)
	}
	w.wantState(srvK, ledger.Open, 3)
	if sc := out.ServerCircuit; sc == nil || sc.Cause != "connection_refused" {
		t.Errorf("server circuit %+v", sc)
	}
	// The server circuit blocks every tool of the server, even one that never failed.
	w.sleep(10 * time.Second)
	d := w.gate(tool4)
	if d.Allowed || d.Block != BlockOpen || d.Circuit.Key != srvK || !d.RetryAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("gate of another tool: %+v", d)
	}
	if len(d.Entries) != 1 || d.Entries[0].Event != ledger.EventBlocked || d.Entries[0].Tool != srvK {
		t.Errorf("blocked entry %+v", d.Entries)
	}
	// Other servers are not concerned.
	if d := w.gate("mcp__other__x"); !d.Allowed || d.Trial || len(d.Entries) != 0 {
		t.Errorf("gate of another server: %+v", d)
	}
}

func TestPerToolCausesStayOnTheTool(t *testing.T) {
	for _, r := range []Failure{notFound, malformed, unknown, auth403, deadline} {
		t.Run(string(r.Type)+"/"+r.Cause, func(t *testing.T) {
			w := newWorld(t)
			out := w.fail(tool1, r)
			if !slices.Equal(keysOf(out.Entries), []string{tool1}) || w.b.Get(srvK) != nil || out.ServerCircuit != nil {
				t.Fatalf("entries for %v", keysOf(out.Entries))
			}
		})
	}
}

func TestMultiToolFailureOpensTheServer(t *testing.T) {
	w := newWorld(t)
	out := w.fail(tool1, notFound)
	if !slices.Equal(out.Tripped, []string{tool1}) {
		t.Fatalf("first tool: tripped %v", out.Tripped)
	}
	w.sleep(time.Second)
	out = w.fail(tool2, notFound)
	if !slices.Equal(out.Tripped, []string{tool2, srvK}) || !slices.Equal(keysOf(out.Entries), []string{tool2, srvK}) {
		t.Fatalf("second tool: tripped %v, entries %v", out.Tripped, keysOf(out.Entries))
	}
	e := out.Entries[1]
	if e.Cause != "multi_tool_failure" || e.Event != ledger.EventTrip || e.State != ledger.Open || e.FailureCount != 1 ||
		!e.OpenUntil.Equal(w.now.Add(time.Minute)) {
		t.Errorf("server entry %+v", e)
	}
	if out.ServerCircuit == nil || out.ServerCircuit.State != ledger.Open {
		t.Errorf("Outcome.ServerCircuit %+v", out.ServerCircuit)
	}
	if d := w.gate(tool3); d.Allowed || d.Circuit.Key != srvK {
		t.Errorf("a third tool is not blocked by the server circuit: %+v", d)
	}
	// A third tool tripping while the server is open does not trip it again.
	out = w.fail(tool3, notFound)
	if !slices.Equal(out.Tripped, []string{tool3}) {
		t.Errorf("third tool: tripped %v", out.Tripped)
	}
}

func TestRateLimitHint(t *testing.T) {
	tests := []struct {
		hint, want time.Duration
	}{
		{0, time.Minute},
		{10 * time.Second, time.Minute}, // the base cooldown is the floor
		{5 * time.Minute, 5 * time.Minute},
		{time.Hour, time.Hour},
		{3 * time.Hour, time.Hour}, // capped
	}
	for _, tt := range tests {
		t.Run(tt.hint.String(), func(t *testing.T) {
			w := newWorld(t)
			var out Outcome
			for range 3 {
				out = w.fail(tool1, rateLimit(tt.hint))
			}
			if len(out.Tripped) != 2 {
				t.Fatalf("tripped %v", out.Tripped)
			}
			for _, e := range out.Entries {
				if !e.OpenUntil.Equal(w.now.Add(tt.want)) || e.RetryAfter != tt.hint {
					t.Errorf("%s: open_until %v retry_after %v, want now+%v", e.Tool, e.OpenUntil, e.RetryAfter, tt.want)
				}
			}
			// The gate says when, and blocks until then.
			w.sleep(tt.want - time.Millisecond)
			if d := w.gate(tool1); d.Allowed || !d.RetryAt.Equal(t0.Add(tt.want)) {
				t.Errorf("gate before open_until: %+v", d)
			}
			w.sleep(time.Millisecond)
			if d := w.gate(tool1); !d.Allowed || !d.Trial {
				t.Errorf("gate at open_until: %+v", d)
			}
		})
	}
}

func TestAdminGatedWaitsForAPerson(t *testing.T) {
	w := newWorld(t)
	out := w.fail(tool1, admin)
	for _, e := range out.Entries {
		if !e.OpenUntil.IsZero() {
			t.Errorf("%s: open_until %v, want none", e.Tool, e.OpenUntil)
		}
	}
	w.sleep(30 * 24 * time.Hour)
	d := w.gate(tool1)
	if d.Allowed || d.Block != BlockPerson || !d.RetryAt.IsZero() {
		t.Fatalf("gate a month later: %+v", d)
	}
	if st := w.circuit(tool1).StandingAt(w.now, w.p, ""); st.Phase != PhaseAwaitingPerson {
		t.Errorf("standing %+v, want awaiting a person (an admin must act)", st)
	}
	// A changed server configuration makes it eligible at once.
	w = newWorld(t)
	w.failAs(Call{Tool: tool1, Fingerprint: "old"}, admin)
	if d := w.gateAs(Call{Tool: tool1, Fingerprint: "new"}, false); !d.Allowed || !d.Trial {
		t.Errorf("gate after the configuration changed: %+v", d)
	}
}

func TestAuthFingerprint(t *testing.T) {
	tests := []struct {
		name   string
		r      Failure
		tripFP string
		callFP string
		trial  bool
	}{
		{"same configuration waits", auth403, "fpA", "fpA", false},
		{"unknown configuration waits", auth403, "fpA", "", false},
		{"no fingerprint at the trip waits", auth403, "", "fpB", false},
		{"changed configuration is eligible at once", auth403, "fpA", "fpB", true},
		{"changed configuration, server-wide 401", auth401, "fpA", "fpB", true},
		{"a TIMEOUT does not care about the configuration", deadline, "fpA", "fpB", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			var out Outcome
			for len(out.Tripped) == 0 {
				out = w.failAs(Call{Tool: tool1, Fingerprint: tt.tripFP}, tt.r)
			}
			if out.Entries[0].Fingerprint != tt.tripFP {
				t.Errorf("trip entry fingerprint %q", out.Entries[0].Fingerprint)
			}
			w.sleep(time.Second)
			d := w.gateAs(Call{Tool: tool1, Fingerprint: tt.callFP}, false)
			if d.Allowed != tt.trial || d.Trial != tt.trial {
				t.Fatalf("gate: %+v", d)
			}
			if tt.trial {
				if len(d.Entries) != len(out.Tripped) {
					t.Errorf("permits %v for tripped %v", keysOf(d.Entries), out.Tripped)
				}
			} else if d.Block != BlockOpen {
				t.Errorf("block %q", d.Block)
			}
		})
	}
}

func TestHandWrittenEntries(t *testing.T) {
	trippedAt := t0
	tests := []struct {
		name  string
		entry ledger.Entry
		p     *Policy
		check func(t *testing.T, w *world)
	}{
		{
			name:  "OPEN gets tripped_at plus the cooldown",
			entry: ledger.Entry{Tool: tool1, State: ledger.Open, FailureType: ledger.Timeout, FailureCount: 3, TrippedAt: trippedAt},
			check: func(t *testing.T, w *world) {
				c := w.circuit(tool1)
				if !c.HandWritten || !c.OpenUntil.IsZero() || !c.TrippedAt.Equal(trippedAt) {
					t.Fatalf("circuit %+v", c)
				}
				w.now = trippedAt.Add(59 * time.Second)
				if d := w.gate(tool1); d.Allowed || d.Block != BlockOpen || !d.RetryAt.Equal(trippedAt.Add(time.Minute)) {
					t.Fatalf("before the cooldown: %+v", d)
				}
				w.now = trippedAt.Add(time.Minute)
				if d := w.gate(tool1); !d.Allowed || !d.Trial {
					t.Fatalf("after the cooldown: %+v", d)
				}
			},
		},
		{
			name:  "OPEN with the policy's cooldown",
			entry: ledger.Entry{Tool: tool1, State: ledger.Open, FailureType: ledger.Auth, FailureCount: 1, TrippedAt: trippedAt},
			p:     &Policy{Types: map[ledger.FailureType]Rule{ledger.Auth: {Cooldown: 5 * time.Minute}}},
			check: func(t *testing.T, w *world) {
				w.now = trippedAt.Add(4 * time.Minute)
				if d := w.gate(tool1); d.Allowed || !d.RetryAt.Equal(trippedAt.Add(5*time.Minute)) {
					t.Fatalf("gate: %+v", d)
				}
			},
		},
		{
			// Only this user's gate may hold a circuit until a person acts (docs/security.md,
			// provenance): a hand-written ADMIN_GATED entry counts, with the ordinary cooldown.
			name:  "OPEN ADMIN_GATED gets the cooldown",
			entry: ledger.Entry{Tool: tool1, State: ledger.Open, FailureType: ledger.AdminGated, FailureCount: 1, TrippedAt: trippedAt},
			check: func(t *testing.T, w *world) {
				if c := w.circuit(tool1); !c.Unverified {
					t.Fatalf("a hand-written entry is verified: %+v", c)
				}
				w.now = trippedAt.Add(59 * time.Second)
				if d := w.gate(tool1); d.Allowed || d.Block != BlockOpen || !d.RetryAt.Equal(trippedAt.Add(time.Minute)) {
					t.Fatalf("before the cooldown: %+v", d)
				}
				w.now = trippedAt.Add(time.Hour)
				if d := w.gate(tool1); !d.Allowed || !d.Trial {
					t.Fatalf("after the cooldown: %+v", d)
				}
			},
		},
		{
			name:  "OPEN ADMIN_GATED of this user's gate waits for a person",
			entry: ledger.Entry{Tool: tool1, State: ledger.Open, FailureType: ledger.AdminGated, FailureCount: 1, TrippedAt: trippedAt, Event: ledger.EventTrip, At: trippedAt, Verified: true},
			check: func(t *testing.T, w *world) {
				w.now = trippedAt.Add(time.Hour)
				if d := w.gate(tool1); d.Allowed || d.Block != BlockPerson {
					t.Fatalf("gate: %+v", d)
				}
			},
		},
		{
			name:  "CLOSED with reset_at is a reset",
			entry: ledger.Entry{Tool: tool1, State: ledger.Closed, ResetAt: trippedAt.Add(time.Minute), ResetMethod: ledger.ResetUserForced},
			check: func(t *testing.T, w *world) {
				c := w.circuit(tool1)
				if c.State != ledger.Closed || !c.ResetAt.Equal(trippedAt.Add(time.Minute)) || c.ResetMethod != ledger.ResetUserForced || !c.OpenUntil.IsZero() || c.HandWritten {
					t.Fatalf("circuit %+v", c)
				}
				if d := w.gate(tool1); !d.Allowed || d.Trial {
					t.Fatalf("gate: %+v", d)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorld(t)
			w.p = tt.p
			if strings.HasPrefix(tt.name, "CLOSED") {
				// A trip first, then the reset written by hand.
				w.apply([]ledger.Entry{{Tool: tool1, State: ledger.Open, FailureType: ledger.Timeout, FailureCount: 3, TrippedAt: trippedAt}})
			}
			w.apply([]ledger.Entry{tt.entry})
			tt.check(t, w)
		})
	}
}

// tripped returns a world whose tool1 tripped at t0 (NOT_FOUND, one minute of cooldown).
func tripped(t *testing.T) *world {
	w := newWorld(t)
	if out := w.fail(tool1, notFound); len(out.Tripped) != 1 {
		t.Fatalf("no trip: %+v", out)
	}
	return w
}

func TestGatePermitAndLease(t *testing.T) {
	w := tripped(t)
	w.sleep(30 * time.Second)
	if d := w.gate(tool1); d.Allowed || d.Block != BlockOpen {
		t.Fatalf("during the cooldown: %+v", d)
	}
	if c := w.circuit(tool1); c.Blocked != 1 {
		t.Errorf("blocked count %d", c.Blocked)
	}
	w.sleep(30 * time.Second)
	d := w.gate(tool1)
	if !d.Allowed || !d.Trial || d.Probe || len(d.Entries) != 1 {
		t.Fatalf("cooldown over: %+v", d)
	}
	permit := d.Entries[0]
	if permit.Event != ledger.EventHalfOpen || permit.State != ledger.HalfOpen || !permit.LeaseUntil.Equal(w.now.Add(DefaultLease)) ||
		permit.FailureCount != 1 || permit.FailureType != ledger.NotFound {
		t.Fatalf("permit %+v", permit)
	}
	// A concurrent caller is blocked while the trial is in flight.
	w.sleep(DefaultLease - time.Millisecond)
	d = w.gate(tool1)
	if d.Allowed || d.Block != BlockInFlight || !d.RetryAt.Equal(permit.LeaseUntil) {
		t.Fatalf("while the lease lives: %+v", d)
	}
	if st := w.circuit(tool1).StandingAt(w.now, nil, ""); st.Phase != PhaseTrialInFlight {
		t.Errorf("standing %+v, want a trial in flight", st)
	}
	// An expired lease frees the permit for the next caller.
	w.sleep(time.Millisecond)
	d = w.gate(tool1)
	if !d.Allowed || !d.Trial || !d.Entries[0].LeaseUntil.Equal(w.now.Add(DefaultLease)) {
		t.Fatalf("after the lease expired: %+v", d)
	}
	// The trial fails: OPEN again with the doubled cooldown.
	out := w.fail(tool1, notFound)
	e := out.Entries[0]
	if e.Event != ledger.EventTrip || e.State != ledger.Open || w.circuit(tool1).Level != 1 {
		t.Fatalf("failed trial: %+v", e)
	}
	if cd := e.OpenUntil.Sub(w.now); cd < 108*time.Second || cd > 132*time.Second {
		t.Errorf("re-trip cooldown %v, want 120s ±10%%", cd)
	}
	if c := w.circuit(tool1); !c.LeaseUntil.IsZero() || c.Blocked != 0 {
		t.Errorf("after the re-trip: %+v", c)
	}
}

func TestGateProbeMode(t *testing.T) {
	w := tripped(t)
	w.p = &Policy{Defaults: Rule{HalfOpen: HalfOpenProbe, Lease: 10 * time.Second}}
	w.sleep(time.Minute)
	d := w.gate(tool1)
	if !d.Allowed || !d.Trial || !d.Probe || !d.Entries[0].LeaseUntil.Equal(w.now.Add(10*time.Second)) {
		t.Fatalf("gate: %+v", d)
	}
}

func TestShadowMode(t *testing.T) {
	w := tripped(t)
	until := w.circuit(tool1).OpenUntil
	w.sleep(time.Second)
	d := w.gateAs(Call{Tool: tool1}, true)
	if !d.Allowed || !d.Shadow || d.Trial || d.Block != BlockOpen || len(d.Entries) != 1 || d.Entries[0].Event != ledger.EventWouldBlock {
		t.Fatalf("shadow gate: %+v", d)
	}
	if c := w.circuit(tool1); c.Blocked != 1 || !c.OpenUntil.Equal(until) || c.State != ledger.Open {
		t.Errorf("after would_block: %+v", c)
	}
	// A closed circuit is allowed without entries in shadow mode too.
	if d := w.gateAs(Call{Tool: tool2}, true); !d.Allowed || d.Shadow || len(d.Entries) != 0 {
		t.Errorf("closed circuit in shadow mode: %+v", d)
	}
}

func TestSuccess(t *testing.T) {
	t.Run("closes a half-open trial", func(t *testing.T) {
		w := tripped(t)
		w.sleep(time.Minute)
		w.gate(tool1)
		out := w.succeed(tool1)
		if len(out.Entries) != 1 {
			t.Fatalf("entries %+v", out.Entries)
		}
		e := out.Entries[0]
		if e.Event != ledger.EventSuccess || e.State != ledger.Closed || e.FailureCount != 0 || e.ResetMethod != ledger.ResetProbeSuccess ||
			!e.ResetAt.Equal(w.now) || !e.TrippedAt.Equal(t0) || e.FailureType != ledger.NotFound {
			t.Fatalf("entry %+v", e)
		}
		// At rest, and it knows its tool worked (the evidence over calls weighs that).
		c := w.circuit(tool1)
		if !c.OnlyWorked() || c.Level != 0 || !c.OpenUntil.IsZero() || !c.LeaseUntil.IsZero() || c.ResetMethod != ledger.ResetProbeSuccess {
			t.Errorf("circuit %+v", c)
		}
	})
	t.Run("resets the count in CLOSED", func(t *testing.T) {
		w := newWorld(t)
		w.fail(tool1, transport)
		w.fail(tool1, transport)
		out := w.succeed(tool1)
		if !slices.Equal(keysOf(out.Entries), []string{tool1, srvK}) {
			t.Fatalf("entries for %v", keysOf(out.Entries))
		}
		for _, e := range out.Entries {
			if e.FailureCount != 0 || e.ResetMethod != "" || !e.ResetAt.IsZero() {
				t.Errorf("entry %+v", e)
			}
		}
		w.wantState(tool1, ledger.Closed, 0)
		w.wantState(srvK, ledger.Closed, 0)
		if c := w.circuit(tool1); c.Cause != "" || c.Error != "" {
			t.Errorf("cause kept after the reset of the count: %+v", c)
		}
	})
	t.Run("writes nothing when nothing changes", func(t *testing.T) {
		w := newWorld(t)
		if out := w.succeed(tool1); len(out.Entries) != 0 {
			t.Fatalf("entries %+v", out.Entries)
		}
		w.fail(tool1, deadline)
		w.succeed(tool1)
		if out := w.succeed(tool1); len(out.Entries) != 0 {
			t.Fatalf("second success: entries %+v", out.Entries)
		}
	})
	t.Run("closes the open server circuit", func(t *testing.T) {
		w := newWorld(t)
		w.fail(tool1, admin)
		out := w.succeed(tool2)
		if !slices.Equal(keysOf(out.Entries), []string{srvK}) || out.Entries[0].ResetMethod != ledger.ResetProbeSuccess {
			t.Fatalf("entries %+v", out.Entries)
		}
	})
}

func TestResetAndTrip(t *testing.T) {
	w := tripped(t)
	w.sleep(time.Second)
	es := w.b.Reset(Call{Tool: tool1, Source: ledger.SourceCLI}, w.now)
	if len(es) != 1 || es[0].Event != ledger.EventReset || es[0].State != ledger.Closed || es[0].ResetMethod != ledger.ResetUserForced ||
		!es[0].ResetAt.Equal(w.now) || es[0].Source != ledger.SourceCLI || es[0].FailureType != ledger.NotFound {
		t.Fatalf("reset entries %+v", es)
	}
	w.apply(es)
	if c := w.circuit(tool1); !c.Idle() || c.ResetMethod != ledger.ResetUserForced {
		t.Fatalf("after reset %+v", c)
	}
	if es := w.b.Reset(Call{Tool: tool1}, w.now); es != nil {
		t.Errorf("reset of an idle circuit: %+v", es)
	}
	if es := w.b.Reset(Call{Tool: "mcp__none__x"}, w.now); es != nil {
		t.Errorf("reset of an unknown circuit: %+v", es)
	}

	// A manual trip waits for a person, whatever the type.
	es = w.b.Trip(Call{Tool: srvK}, ledger.Timeout, w.now)
	if len(es) != 1 || es[0].Event != ledger.EventTrip || es[0].State != ledger.Open || es[0].Cause != "manual_trip" ||
		!es[0].OpenUntil.IsZero() || es[0].FailureCount != 1 {
		t.Fatalf("trip entries %+v", es)
	}
	w.apply(es)
	w.sleep(24 * time.Hour)
	if d := w.gate(tool2); d.Allowed || d.Block != BlockPerson || d.Circuit.Key != srvK {
		t.Fatalf("gate after a manual trip: %+v", d)
	}
	if st := w.circuit(srvK).StandingAt(w.now, nil, ""); st.Phase != PhaseAwaitingPerson {
		t.Errorf("standing %+v, want awaiting a person", st)
	}
}

func TestProbe(t *testing.T) {
	// setup: the server circuit and tool1 OPEN (transport), tool2 OPEN (NOT_FOUND), tool3 counting.
	setup := func(t *testing.T) *world {
		w := newWorld(t)
		for range 3 {
			w.fail(tool1, transport)
		}
		w.fail(tool2, notFound)
		w.fail(tool3, deadline)
		w.wantState(srvK, ledger.Open, 3)
		w.wantState(tool1, ledger.Open, 3)
		w.wantState(tool2, ledger.Open, 1)
		w.wantState(tool3, ledger.Closed, 1)
		w.sleep(time.Second)
		return w
	}
	probe := func(w *world, key string, healthy bool, r Failure, tools []string) Outcome {
		r.Error = "probe text"
		out := w.b.Probe(Call{Tool: key}, healthy, r, tools, w.now, w.p)
		w.apply(out.Entries)
		return out
	}
	t.Run("healthy server probe closes the server and its tools, but not a tool still missing", func(t *testing.T) {
		w := setup(t)
		out := probe(w, srvK, true, Failure{}, []string{"one", "three"})
		if !slices.Equal(keysOf(out.Entries), []string{srvK, tool1, tool3}) {
			t.Fatalf("entries for %v", keysOf(out.Entries))
		}
		for _, e := range out.Entries {
			if e.Event != ledger.EventProbe || e.Source != ledger.SourceProbe || e.State != ledger.Closed {
				t.Errorf("entry %+v", e)
			}
		}
		if out.Entries[0].ResetMethod != ledger.ResetProbeSuccess || out.Entries[2].ResetMethod != "" {
			t.Errorf("reset methods %q %q", out.Entries[0].ResetMethod, out.Entries[2].ResetMethod)
		}
		w.wantState(srvK, ledger.Closed, 0)
		w.wantState(tool1, ledger.Closed, 0)
		w.wantState(tool3, ledger.Closed, 0)
		w.wantState(tool2, ledger.Open, 1)
	})
	t.Run("healthy probe closes a NOT_FOUND tool that is back", func(t *testing.T) {
		w := setup(t)
		probe(w, srvK, true, Failure{}, []string{"one", "two"})
		w.wantState(tool2, ledger.Closed, 0)
	})
	t.Run("healthy probe without a tool list closes every tool", func(t *testing.T) {
		w := setup(t)
		probe(w, srvK, true, Failure{}, nil)
		w.wantState(tool2, ledger.Closed, 0)
	})
	t.Run("healthy probe of one tool closes it and the server, not the other tools", func(t *testing.T) {
		w := setup(t)
		out := probe(w, tool1, true, Failure{}, nil)
		if !slices.Equal(keysOf(out.Entries), []string{srvK, tool1}) {
			t.Fatalf("entries for %v", keysOf(out.Entries))
		}
		w.wantState(tool2, ledger.Open, 1)
		w.wantState(tool3, ledger.Closed, 1)
	})
	t.Run("unhealthy probe re-opens with the grown cooldown", func(t *testing.T) {
		w := setup(t)
		level := w.circuit(srvK).Level
		out := probe(w, srvK, false, transport, nil)
		if !slices.Equal(out.Tripped, []string{srvK}) || len(out.Entries) != 1 {
			t.Fatalf("out %+v", out)
		}
		e := out.Entries[0]
		if e.Event != ledger.EventProbe || e.State != ledger.Open || e.FailureCount != 4 || e.Source != ledger.SourceProbe {
			t.Errorf("entry %+v", e)
		}
		if cd := e.OpenUntil.Sub(w.now); cd < 108*time.Second || cd > 132*time.Second {
			t.Errorf("cooldown %v, want 120s ±10%%", cd)
		}
		if w.circuit(srvK).Level != level+1 {
			t.Errorf("level %d", w.circuit(srvK).Level)
		}
	})
	t.Run("unhealthy probe: NOT_FOUND tool still missing stays open and grows", func(t *testing.T) {
		w := setup(t)
		out := probe(w, tool2, false, notFound, []string{"one"})
		if len(out.Entries) != 1 || out.Entries[0].State != ledger.Open || out.Entries[0].Tool != tool2 {
			t.Fatalf("entries %+v", out.Entries)
		}
		if w.circuit(tool2).Level != 1 || w.circuit(tool2).FailureCount != 2 {
			t.Errorf("circuit %+v", w.circuit(tool2))
		}
	})
	t.Run("unhealthy probe of a closed tool counts a failure", func(t *testing.T) {
		w := newWorld(t)
		out := probe(w, tool4, false, deadline, nil)
		if len(out.Entries) != 1 || out.Entries[0].Event != ledger.EventProbe || out.Entries[0].State != ledger.Closed || out.Entries[0].FailureCount != 1 {
			t.Fatalf("entries %+v", out.Entries)
		}
		out = probe(w, tool4, false, notFound, nil)
		if !slices.Equal(out.Tripped, []string{tool4}) {
			t.Fatalf("NOT_FOUND probe did not trip: %+v", out)
		}
	})
}
