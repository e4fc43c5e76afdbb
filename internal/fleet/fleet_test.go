package fleet

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"gopkg.in/yaml.v3"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/boardconn"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/boardconn/goredisconn"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/boardconn/respconn"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/failure"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/mcpconfig"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/testservers"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// testSecret is the board's secret in these tests (Keys).
const testSecret = "the team's secret"

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoad(t *testing.T) {
	home := t.TempDir()
	cfgDir := filepath.Join(home, ".config", "mcp-circuit-breaker")
	os.MkdirAll(cfgDir, 0o700)
	os.WriteFile(filepath.Join(cfgDir, "config.yaml"), []byte("shared:\n  url: rediss://u:s3cret@redis.example:6380/2\n  namespace: team-a\n  timeout: 120ms\n"), 0o600)
	proj := t.TempDir()
	hostile := t.TempDir()
	os.MkdirAll(filepath.Join(hostile, ".claude"), 0o700)
	os.WriteFile(filepath.Join(hostile, ".claude", "settings.json"), []byte(`{"env":{"MCP_CIRCUIT_SHARED":"redis://attacker:6379"}}`), 0o600)
	home2 := t.TempDir()
	os.MkdirAll(filepath.Join(home2, ".config", "mcp-circuit-breaker"), 0o700)
	os.WriteFile(filepath.Join(home2, ".config", "mcp-circuit-breaker", "config.yaml"), []byte("shared:\n  url: redis://h:1\n  secret: team-secret\n"), 0o600)
	secretDir := t.TempDir()
	os.MkdirAll(filepath.Join(secretDir, ".claude"), 0o700)
	os.WriteFile(filepath.Join(secretDir, ".claude", "settings.json"), []byte(`{"env":{"MCP_CIRCUIT_SHARED_SECRET":"theirs"}}`), 0o600)
	machine := t.TempDir()
	os.MkdirAll(filepath.Join(machine, ".claude"), 0o700)
	os.WriteFile(filepath.Join(machine, ".claude", "settings.local.json"), []byte(`{"env":{"MCP_CIRCUIT_MACHINE":"their-laptop"}}`), 0o600)
	tests := []struct {
		name    string
		env     map[string]string
		dir     string
		want    *Config
		wantErr string
	}{
		{name: "nothing configured", env: map[string]string{"HOME": t.TempDir()}, dir: proj},
		{name: "environment", env: map[string]string{"HOME": home, EnvURL: "redis://127.0.0.1:6379", EnvNamespace: "ci"}, dir: proj,
			want: &Config{URL: "redis://127.0.0.1:6379", Namespace: "ci", Timeout: DefaultTimeout, From: EnvURL}},
		{name: "environment default namespace", env: map[string]string{EnvURL: "redis://h:1"}, dir: proj,
			want: &Config{URL: "redis://h:1", Namespace: DefaultNamespace, Timeout: DefaultTimeout, From: EnvURL}},
		{name: "user file", env: map[string]string{"HOME": home}, dir: proj,
			want: &Config{URL: "rediss://u:s3cret@redis.example:6380/2", Namespace: "team-a", Timeout: 120 * time.Millisecond, From: filepath.Join(cfgDir, "config.yaml"), Secret: "s3cret"}},
		{name: "user file with a secret", env: map[string]string{"HOME": home2}, dir: proj,
			want: &Config{URL: "redis://h:1", Namespace: DefaultNamespace, Timeout: DefaultTimeout, From: filepath.Join(home2, ".config", "mcp-circuit-breaker", "config.yaml"), Secret: "team-secret"}},
		{name: "secret from the environment over the password", env: map[string]string{EnvURL: "redis://:pw@h:1", EnvSecret: "env-secret"}, dir: proj,
			want: &Config{URL: "redis://:pw@h:1", Namespace: DefaultNamespace, Timeout: DefaultTimeout, From: EnvURL, Secret: "env-secret"}},
		{name: "secret from project settings refused", env: map[string]string{EnvURL: "redis://h:1", EnvSecret: "theirs"}, dir: secretDir, wantErr: "cloned repository"},
		{name: "XDG_CONFIG_HOME without file", env: map[string]string{"HOME": home, "XDG_CONFIG_HOME": t.TempDir()}, dir: proj},
		{name: "project settings refused", env: map[string]string{EnvURL: "redis://attacker:6379"}, dir: hostile, wantErr: "cloned repository"},
		{name: "machine name from project settings refused", env: map[string]string{EnvURL: "redis://h:1", EnvMachine: "their-laptop"}, dir: machine, wantErr: "cloned repository"},
		{name: "cluster URL", env: map[string]string{EnvURL: "redis://h1:1?addr=h2:2&addr=h3:3"}, dir: proj,
			want: &Config{URL: "redis://h1:1?addr=h2:2&addr=h3:3", Namespace: DefaultNamespace, Timeout: DefaultTimeout, From: EnvURL}},
		{name: "not redis", env: map[string]string{EnvURL: "http://h:1"}, dir: proj, wantErr: "not a redis:// or rediss:// URL"},
		{name: "bad timeout", env: map[string]string{EnvURL: "redis://h:1", EnvTimeout: "fast"}, dir: proj, wantErr: "not a duration between"},
		{name: "timeout too long", env: map[string]string{EnvURL: "redis://h:1", EnvTimeout: "3s"}, dir: proj, wantErr: "not a duration between"},
		{name: "brace in namespace", env: map[string]string{EnvURL: "redis://h:1", EnvNamespace: "a}b"}, dir: proj, wantErr: "without braces"},
		{name: "secret redacted in error", env: map[string]string{EnvURL: "http://u:hunter2@h:1"}, dir: proj, wantErr: "xxxxx"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Load(env(tt.env), tt.dir, yaml.Unmarshal)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Fatalf("error leaks the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (got == nil) != (tt.want == nil) || got != nil && *got != *tt.want {
				t.Fatalf("Load = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"redis://:pw@h:6379/0":            "redis://xxxxx@h:6379/0",
		"rediss://user:pw@h:6380":         "rediss://xxxxx@h:6380",
		"redis://h:6379?password=pw":      "redis://h:6379?password=xxxxx",
		"redis://h:6379":                  "redis://h:6379",
		"redis://:pw@h1:1?addr=h2:2":      "redis://xxxxx@h1:1?addr=h2%3A2",
		"rediss://us%zz:pw@h":             "rediss://(unparsable URL)",
		"no scheme at all with a pw=1234": "(unparsable URL)",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// newBoard starts a redis-server and opens a board on it in namespace ns.
func newBoard(t *testing.T, r *testservers.Redis, ns string) *Board {
	t.Helper()
	return newBoardAt(t, r.URL(), ns)
}

func newBoardAt(t *testing.T, url, ns string) *Board {
	t.Helper()
	return newBoardWith(t, url, ns, goredisconn.Dial)
}

// dials are both ways to reach a board: the full CLI's (go-redis) and the lean hook's
// (respconn); the tests of what the board stores and decides run with each.
var dials = []struct {
	name string
	dial boardconn.Dial
}{{"go-redis", goredisconn.Dial}, {"respconn", respconn.Dial}}

func newBoardWith(t *testing.T, url, ns string, dial boardconn.Dial) *Board {
	t.Helper()
	b, err := Open(Config{URL: url, Namespace: ns, Timeout: 2 * time.Second, From: EnvURL}, dial)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// remote is the identity of a remote server "s" as user u on machine m sees it.
func remote(ns, m, u string) Identity {
	return IdentityOf("s", mcpconfig.Server{Name: "s", Transport: mcpconfig.TransportHTTP, URL: "https://mcp.example/v1"}, true, Keys{Namespace: ns, Secret: testSecret}, Local{Machine: m, User: u})
}

func TestWriteChecksGeneration(t *testing.T) {
	for _, d := range dials {
		t.Run(d.name, func(t *testing.T) { writeChecksGeneration(t, d.dial) })
	}
}

func writeChecksGeneration(t *testing.T, dial boardconn.Dial) {
	// A password: the lean client sends AUTH as go-redis does, and a database other than 0.
	r := testservers.StartRedis(t, "s3cret-pw")
	b := newBoardWith(t, strings.TrimSuffix(r.URL(), "/0")+"/3", "gen", dial)
	id := remote("gen", "m", "u")
	ctx := context.Background()
	keys := ledger.Key("mcp__s__t").Circuits()
	c := &states.Circuit{Key: "mcp__s__t", State: ledger.Closed, FailureCount: 1, LastAt: t0}
	if err := b.Write(ctx, id, t0, []Write{{Key: "mcp__s__t", Scope: "ep", Gen: 0, Circuit: c}}); err != nil {
		t.Fatal(err)
	}
	got, err := b.Read(ctx, id, keys, t0)
	if err != nil {
		t.Fatal(err)
	}
	if sh := got["mcp__s__t"][0]; sh.Gen != 1 || sh.Circuit.FailureCount != 1 {
		t.Fatalf("read %+v, want gen 1 count 1", sh)
	}
	if sh := got["mcp__s__*"][0]; sh.Circuit != nil || sh.Gen != 0 {
		t.Fatalf("server key read %+v, want no record", sh)
	}
	// A second writer that decided on generation 0 loses, and changes nothing (server key too).
	c2 := *c
	c2.FailureCount = 7
	sk := &states.Circuit{Key: "mcp__s__*", State: ledger.Closed, FailureCount: 1}
	err = b.Write(ctx, id, t0, []Write{{Key: "mcp__s__*", Scope: "ep", Gen: 0, Circuit: sk}, {Key: "mcp__s__t", Scope: "ep", Gen: 0, Circuit: &c2}})
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("stale write: err = %v, want ErrConflict", err)
	}
	got, _ = b.Read(ctx, id, keys, t0)
	if got["mcp__s__t"][0].Circuit.FailureCount != 1 || got["mcp__s__*"][0].Circuit != nil {
		t.Fatalf("a refused write changed the board: %+v", got)
	}
	// Blocked counts need no generation: they commute.
	if err := b.Write(ctx, id, t0, []Write{{Key: "mcp__s__t", Scope: "ep", Blocked: 2}}); err != nil {
		t.Fatal(err)
	}
	got, _ = b.Read(ctx, id, keys, t0)
	if got["mcp__s__t"][0].Circuit.Blocked != 2 || got["mcp__s__t"][0].Gen != 1 {
		t.Fatalf("after blocked: %+v", got["mcp__s__t"][0])
	}
	// Keys carry a TTL and the hash tag of their server.
	raw := redis.NewClient(&redis.Options{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(r.Port)), Password: r.Password, DB: 3})
	defer raw.Close()
	ttl, err := raw.PTTL(ctx, "mcb:{gen:"+id.Group+"}:ep:t").Result()
	if err != nil || ttl <= 0 || ttl > keyTTL {
		t.Fatalf("PTTL = %v, %v; want a TTL of at most %v", ttl, err, keyTTL)
	}
}

// testProject is one project directory with its own ledger.
type testProject struct {
	store *states.Store
	board *Board
	sess  string
	id    Identity
	loc   Local
}

func newProject(t *testing.T, b *Board, sess string) *testProject {
	return newUserProject(t, b, sess, remote(b.Config().Namespace, "m-"+sess, "/home/"+sess), Local{Machine: "m-" + sess, User: "/home/" + sess})
}

func newUserProject(t *testing.T, b *Board, sess string, id Identity, loc Local) *testProject {
	dir := filepath.Join(t.TempDir(), ".claude", "mcp_circuit")
	s := newStore(dir, sess)
	if _, err := s.Ledger.EnsureDir(); err != nil {
		t.Fatal(err)
	}
	return &testProject{store: s, board: b, sess: sess, id: id, loc: loc}
}

// newStore is a project's store with its user's provenance key: what its gate writes is verified
// (and so shared), as for a user whose gate wrote the ledger.
func newStore(dir, user string) *states.Store {
	s := states.NewStore(dir, 5*time.Second)
	s.Ledger.Provenance = ledger.NewProvenanceKey([]byte("provenance key of the user " + user))
	return s
}

var timeout = failure.Classify(failure.Evidence{Text: "MCP error -32001: Request timed out"}, t0)

func (p *testProject) fail(t *testing.T, tool string, now time.Time) (states.Outcome, Result) {
	t.Helper()
	var out states.Outcome
	call := states.Call{Tool: tool, SessionID: p.sess, Source: ledger.SourceHook}
	bd := p.board.Bind(context.Background(), p.id, ledger.Key(tool).Circuits(), now, p.sess, p.loc)
	p.store.Shared = bd
	_, err := p.store.Update(func(b *states.Board) ([]ledger.Entry, error) {
		out = b.Failure(call, states.Failure{Type: timeout.Type, Cause: timeout.Cause, Fault: timeout.Fault, Error: "timed out"}, now, nil)
		return out.Entries, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, bd.Last
}

func (p *testProject) gate(t *testing.T, tool string, now time.Time) (states.Decision, Result) {
	t.Helper()
	var d states.Decision
	call := states.Call{Tool: tool, SessionID: p.sess, Source: ledger.SourceHook}
	bd := p.board.Bind(context.Background(), p.id, ledger.Key(tool).Circuits(), now, p.sess, p.loc)
	p.store.Shared = bd
	_, err := p.store.Update(func(b *states.Board) ([]ledger.Entry, error) {
		d = b.Gate(call, now, nil, false)
		return d.Entries, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return d, bd.Last
}

func TestFailuresSpreadOverProjectsTripForAll(t *testing.T) {
	r := testservers.StartRedis(t, "")
	b := newBoard(t, r, "trip")
	a, c := newProject(t, b, "A"), newProject(t, b, "C")
	tool := "mcp__s__t"
	a.fail(t, tool, t0)
	c.fail(t, tool, t0.Add(time.Second))
	out, res := a.fail(t, tool, t0.Add(2*time.Second))
	if !res.Shared || len(out.Tripped) == 0 || out.Tool.FailureCount != 3 {
		t.Fatalf("third failure over two projects: shared=%v tripped=%v count=%d, want a trip at 3", res.Shared, out.Tripped, out.Tool.FailureCount)
	}
	d, res := c.gate(t, tool, t0.Add(3*time.Second))
	if d.Allowed || !res.Shared {
		t.Fatalf("the other project's call: allowed=%v shared=%v, want denied from the board", d.Allowed, res.Shared)
	}
	// C's ledger records what it learned from the board and its deny, marked shared.
	c.store.Shared = nil
	board, err := c.store.View()
	if err != nil {
		t.Fatal(err)
	}
	if got := board.Get(tool); got == nil || got.State != ledger.Open {
		t.Fatalf("C's local circuit = %+v, want OPEN recorded from the board", got)
	}
	entries, err := c.store.Ledger.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var sources []string
	for _, e := range entries {
		sources = append(sources, string(e.Event)+"/"+e.Source)
	}
	// What C learned from the board is marked shared; its own calls keep their source.
	want := "failure/shared failure/hook trip/shared blocked/hook"
	if got := strings.Join(sources, " "); got != want {
		t.Fatalf("C's ledger: %s; want %s", got, want)
	}
	sh, _ := b.Read(context.Background(), c.id, ledger.Key(tool).Circuits(), t0)
	if got := recordAt(sh[tool], "ep").Circuit.Blocked; got != 1 {
		t.Fatalf("fleet blocked count = %d, want 1", got)
	}
}

func TestOneTrialFleetWide(t *testing.T) {
	r := testservers.StartRedis(t, "")
	c := testservers.StartRedisCluster(t, 3)
	for _, d := range dials {
		for _, url := range []string{r.URL(), c.URL()} {
			b := newBoardWith(t, url, "trial-"+d.name, d.dial)
			if b.Cluster() != (url == c.URL()) {
				t.Fatalf("%s: Cluster() = %v", url, b.Cluster())
			}
			t.Run(d.name+"/"+strconv.FormatBool(b.Cluster()), func(t *testing.T) { oneTrial(t, b) })
		}
	}
}

func oneTrial(t *testing.T, b *Board) {
	tool := "mcp__s__t"
	var projects []*testProject
	for i := range 4 {
		projects = append(projects, newProject(t, b, "P"+strconv.Itoa(i)))
	}
	for i := range 3 {
		projects[i].fail(t, tool, t0.Add(time.Duration(i)*time.Second))
	}
	after := t0.Add(2*time.Second + states.DefaultCooldown + time.Second)
	var mu sync.Mutex
	trials, denied, local := 0, 0, 0
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A store per caller, as each hook process has its own.
			p := *projects[i%4]
			p.store = newStore(p.store.Ledger.Dir, p.sess)
			d, res := p.gate(t, tool, after)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case !res.Shared:
				local++
			case d.Trial:
				trials++
			case !d.Allowed:
				denied++
			}
		}()
	}
	wg.Wait()
	if trials != 1 || denied != 31 || local != 0 {
		t.Fatalf("32 callers over 4 projects at the end of the cooldown: %d trials, %d denied, %d decided locally; want 1, 31, 0", trials, denied, local)
	}
}

func TestBoardAwayDecidesLocally(t *testing.T) {
	for _, d := range dials {
		t.Run(d.name, func(t *testing.T) { boardAway(t, d.dial) })
	}
}

func boardAway(t *testing.T, dial boardconn.Dial) {
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	b, err := Open(Config{URL: "redis://:pw@" + addr, Namespace: "x", Timeout: 50 * time.Millisecond, From: EnvURL}, dial)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	p := newProject(t, b, "A")
	tool := "mcp__s__t"
	for i := range 3 {
		out, res := p.fail(t, tool, t0.Add(time.Duration(i)*time.Second))
		if res.Away == nil || res.Shared {
			t.Fatalf("failure %d: %+v, want decided locally with the board away", i, res)
		}
		if i == 2 && len(out.Tripped) == 0 {
			t.Fatal("three local failures did not trip locally")
		}
	}
	d, res := p.gate(t, tool, t0.Add(3*time.Second))
	if d.Allowed || res.Away == nil {
		t.Fatalf("gate with the board away: allowed=%v away=%v; want the local OPEN circuit denied", d.Allowed, res.Away)
	}
	if strings.Contains(res.Away.Error(), ":pw@") {
		t.Fatalf("error leaks the password: %v", res.Away)
	}
}

func TestLocalTripUnseenByBoardIsPushed(t *testing.T) {
	r := testservers.StartRedis(t, "")
	b := newBoard(t, r, "push")
	p := newProject(t, b, "A")
	tool := "mcp__s__t"
	// The board knows count 1 from before; the session then tripped while the board was away.
	p.fail(t, tool, t0)
	p.store.Shared = nil
	if _, err := p.store.Update(func(bd *states.Board) ([]ledger.Entry, error) {
		return bd.Trip(states.Call{Tool: tool, Source: ledger.SourceCLI}, ledger.Timeout, t0.Add(time.Minute)), nil
	}); err != nil {
		t.Fatal(err)
	}
	d, res := p.gate(t, tool, t0.Add(2*time.Minute))
	if d.Allowed || !res.Shared {
		t.Fatalf("allowed=%v shared=%v; want the local trip to deny and reach the board", d.Allowed, res.Shared)
	}
	sh, _ := b.Read(context.Background(), p.id, ledger.Key(tool).Circuits(), t0.Add(2*time.Minute))
	if c := recordAt(sh[tool], "ep").Circuit; c == nil || c.State != ledger.Open {
		t.Fatalf("board after push: %+v, want OPEN", c)
	}
}

// TestUnverifiedTripNeverReachesTheBoard: a trip in the ledger that this user's gate did not
// write (a committed or merged-in item) denies here but is never pushed: not as a trip the board
// has not seen, not with the calls it blocks, not as a trial permit. Write refuses such a circuit
// whatever a caller planned.
func TestUnverifiedTripNeverReachesTheBoard(t *testing.T) {
	r := testservers.StartRedis(t, "")
	b := newBoard(t, r, "unverified")
	p := newProject(t, b, "A")
	tool := "mcp__s__t"
	committed := ledger.Entry{Tool: tool, State: ledger.Open, FailureType: ledger.AdminGated, FailureCount: 1, TrippedAt: t0,
		Event: ledger.EventTrip, At: t0, Source: ledger.SourceShared, Provenance: "h1-0123456789abcdef0123456789abcdef"}
	if err := os.WriteFile(p.store.Ledger.Path(), ledger.Encode(committed), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := func(when string, now time.Time) {
		t.Helper()
		sh, err := b.Read(context.Background(), p.id, ledger.Key(tool).Circuits(), now)
		if err != nil {
			t.Fatal(err)
		}
		for k, rs := range sh {
			for _, rec := range rs {
				if rec.Circuit != nil {
					t.Fatalf("%s: the board holds %s %+v", when, k, rec.Circuit)
				}
			}
		}
	}
	d, res := p.gate(t, tool, t0.Add(10*time.Second))
	if d.Allowed || !res.Shared || d.Block != states.BlockOpen {
		t.Fatalf("within the cooldown: %+v shared=%v; want a local deny with the ordinary cooldown", d, res.Shared)
	}
	empty("after the deny", t0.Add(10*time.Second))
	if d, _ = p.gate(t, tool, t0.Add(time.Hour)); !d.Allowed || !d.Trial {
		t.Fatalf("an hour on: %+v, want a trial (never held for a person)", d)
	}
	empty("after the trial permit", t0.Add(time.Hour))
	c := &states.Circuit{Key: tool, State: ledger.Open, FailureType: ledger.AdminGated, TrippedAt: t0, Unverified: true}
	if err := b.Write(context.Background(), p.id, t0, []Write{{Key: tool, Scope: "ep", Circuit: c}}); err != nil {
		t.Fatal(err)
	}
	empty("after a Write of an unverified circuit", t0)
}

func TestSyncEntry(t *testing.T) {
	trip := t0.Add(-time.Minute)
	open := &states.Circuit{Key: "mcp__s__t", State: ledger.Open, FailureType: ledger.Timeout, FailureCount: 3, TrippedAt: trip, OpenUntil: t0.Add(time.Minute), LastAt: trip}
	tests := []struct {
		name          string
		local, shared *states.Circuit
		want          string // event/state/count/reset_method, "" for no entry
	}{
		{"the same record: nothing to write", open, open, ""},
		{"unknown locally, counting on the board", nil,
			&states.Circuit{Key: "mcp__s__t", State: ledger.Closed, FailureCount: 2}, "failure/CLOSED/2/"},
		{"closed locally, tripped on the board", &states.Circuit{Key: "mcp__s__t", State: ledger.Closed, FailureCount: 1}, open, "trip/OPEN/3/"},
		{"the same trip, a count grown by blocked-through calls", &states.Circuit{Key: "mcp__s__t", State: ledger.Open, FailureCount: 3, TrippedAt: trip, OpenUntil: open.OpenUntil},
			&states.Circuit{Key: "mcp__s__t", State: ledger.Open, FailureCount: 4, TrippedAt: trip, OpenUntil: open.OpenUntil}, "failure/OPEN/4/"},
		{"open locally, closed on the board by another session's trial", open,
			&states.Circuit{Key: "mcp__s__t", State: ledger.Closed, ResetAt: t0, ResetMethod: ledger.ResetProbeSuccess}, "success/CLOSED/0/probe_success"},
		{"open locally, reset by hand elsewhere", open,
			&states.Circuit{Key: "mcp__s__t", State: ledger.Closed, ResetAt: t0, ResetMethod: ledger.ResetUserForced}, "success/CLOSED/0/user_forced"},
		{"another session holds the trial permit", open,
			&states.Circuit{Key: "mcp__s__t", State: ledger.HalfOpen, FailureCount: 3, TrippedAt: trip, LeaseUntil: t0.Add(2 * time.Minute)}, "half_open/HALF-OPEN/3/"},
		{"the same permit read again, its end seen 40 ms later by this clock",
			&states.Circuit{Key: "mcp__s__t", State: ledger.HalfOpen, FailureCount: 3, TrippedAt: trip, LeaseUntil: t0.Add(30 * time.Second)},
			&states.Circuit{Key: "mcp__s__t", State: ledger.HalfOpen, FailureCount: 3, TrippedAt: trip, LeaseUntil: t0.Add(30*time.Second + 40*time.Millisecond)}, ""},
		{"a new permit after the last one ran out",
			&states.Circuit{Key: "mcp__s__t", State: ledger.HalfOpen, FailureCount: 3, TrippedAt: trip, LeaseUntil: t0.Add(-time.Second)},
			&states.Circuit{Key: "mcp__s__t", State: ledger.HalfOpen, FailureCount: 3, TrippedAt: trip, LeaseUntil: t0.Add(29 * time.Second)}, "half_open/HALF-OPEN/3/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, ok := syncEntry(tt.local, tt.shared, t0, "S")
			got := ""
			if ok {
				got = fmt.Sprintf("%s/%s/%d/%s", e.Event, e.State, e.FailureCount, e.ResetMethod)
				if e.Source != ledger.SourceShared || e.SessionID != "S" || !e.At.Equal(t0) {
					t.Errorf("entry %+v: want source shared, session S, at now", e)
				}
			}
			if got != tt.want {
				t.Fatalf("syncEntry = %q, want %q", got, tt.want)
			}
			if ok {
				// Applying the entry brings the local circuit to the board's state.
				var b states.Board
				if tt.local != nil {
					c := *tt.local
					b.Circuits = map[string]*states.Circuit{c.Key: &c}
				}
				b.Apply(e)
				if c := b.Get(tt.shared.Key); c.State != tt.shared.State || c.FailureCount != tt.shared.FailureCount {
					t.Fatalf("after the entry the local circuit is %s/%d, want %s/%d", c.State, c.FailureCount, tt.shared.State, tt.shared.FailureCount)
				}
			}
		})
	}
}

func TestLocalWins(t *testing.T) {
	id := remote("w", "m", "u")
	board := func(c *states.Circuit, future bool) []Record {
		return []Record{{Scope: "ep", Gen: 3, Circuit: c, Future: future}, {Scope: id.Credential}}
	}
	closed := &states.Circuit{Key: "k", State: ledger.Closed, FailureCount: 2, LastAt: t0}
	trip := &states.Circuit{Key: "k", State: ledger.Open, FailureType: ledger.Timeout, TrippedAt: t0.Add(time.Second)}
	for _, tt := range []struct {
		name  string
		local *states.Circuit
		recs  []Record
		want  bool
	}{
		{"no record on the board: a local trip decides", trip, board(nil, false), true},
		{"a closed local circuit never decides", &states.Circuit{Key: "k", State: ledger.Closed, FailureCount: 1}, board(closed, false), false},
		{"a trip this session made after the board's last change stays", trip, board(closed, false), true},
		{"an older local trip yields to the board", &states.Circuit{Key: "k", State: ledger.Open, FailureType: ledger.Timeout, TrippedAt: t0.Add(-time.Second)}, board(closed, false), false},
		{"a future-dated record does not undo a trip the board has not seen", trip,
			board(&states.Circuit{Key: "k", State: ledger.Closed, LastAt: t0.Add(time.Hour)}, true), true},
		{"the board has seen the trip: it decides", trip, board(&states.Circuit{Key: "k", State: ledger.Closed, TrippedAt: trip.TrippedAt, LastAt: t0.Add(time.Minute)}, false), false},
		{"the board holds the same trip, still open: it decides", trip, board(&states.Circuit{Key: "k", State: ledger.Open, FailureType: ledger.Timeout, TrippedAt: trip.TrippedAt, LastAt: trip.TrippedAt}, false), false},
		// Issue 27: a forged CLOSED record naming the trip's time, dated before it, was obeyed.
		{"a CLOSED record naming this trip's time, dated before it, never undoes it", trip,
			board(&states.Circuit{Key: "k", State: ledger.Closed, TrippedAt: trip.TrippedAt, ResetAt: t0.Add(-time.Hour), LastAt: t0.Add(-time.Hour)}, false), true},
		{"a CLOSED record naming this trip's time with no date never undoes it", trip,
			board(&states.Circuit{Key: "k", State: ledger.Closed, TrippedAt: trip.TrippedAt}, false), true},
		{"the close of this trip by a clock a little behind decides", trip,
			board(&states.Circuit{Key: "k", State: ledger.Closed, TrippedAt: trip.TrippedAt, LastAt: trip.TrippedAt.Add(-2 * time.Second)}, false), false},
		{"a record of another scope is no change to this trip", trip,
			[]Record{{Scope: "ep"}, {Scope: id.Credential, Gen: 2, Circuit: &states.Circuit{Key: "k", State: ledger.Closed, LastAt: t0.Add(time.Minute)}}}, true},
	} {
		if got := localWins(tt.local, tt.recs, id); got != tt.want {
			t.Errorf("%s: localWins = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestCallErrorsNeverShared: a call that failed on its own terms, a loop-guard denial and the
// success that only forgets a call are this session's own: nothing of them is written to the board,
// and the loop guard's memory never travels with a circuit.
func TestCallErrorsNeverShared(t *testing.T) {
	key := "mcp__gh__get_file_contents"
	call := states.Call{Tool: key, Hash: "h1", Source: ledger.SourceHook}
	var b states.Board
	missing := states.Failure{Type: ledger.NotFound, Cause: "http_404", Fault: ledger.FaultCall, Error: "404"}
	var entries []ledger.Entry
	for range 3 {
		out := b.Failure(call, missing, t0, nil)
		b.Replay(out.Entries)
		entries = append(entries, out.Entries...)
	}
	d := b.Gate(call, t0, nil, false)
	if d.Allowed || d.Block != states.BlockLoop {
		t.Fatalf("want a loop-guard deny: %+v", d)
	}
	entries = append(entries, d.Entries...)
	before := &states.Board{}
	id := IdentityOf("gh", mcpconfig.Server{Transport: mcpconfig.TransportHTTP, URL: "https://gh.example/mcp"}, true, Keys{Namespace: "ns", Secret: testSecret}, Local{Machine: "m"})
	bd := &Binding{id: id, keys: []string{key}, now: t0}
	if w := bd.plan(map[string][]Record{}, map[string]choice{}, entries, before, &b); len(w) != 0 {
		t.Fatalf("call errors and loop-guard denials were written to the board: %+v", w)
	}
	// A counted failure is shared, without the loop guard's memory.
	deadline := states.Failure{Type: ledger.Timeout, Cause: "deadline", Fault: ledger.FaultTool, Error: "timed out"}
	out := b.Failure(call, deadline, t0, nil)
	after := b.Clone()
	after.Replay(out.Entries)
	w := bd.plan(map[string][]Record{}, map[string]choice{}, out.Entries, &b, after)
	if len(w) != 1 || w[0].Circuit == nil || len(w[0].Circuit.Repeats) != 0 || w[0].Circuit.FailureCount != 1 {
		t.Fatalf("writes: %+v", w)
	}
}

// TestStreakNeverShared: the streak guard's denial, the calls that made the streak, and the success
// that ends it are this session's own calls; the streak never travels with a circuit either.
func TestStreakNeverShared(t *testing.T) {
	key := "mcp__gh__search_issues"
	var b states.Board
	bad := states.Failure{Type: ledger.Malformed, Cause: "http_400", Fault: ledger.FaultCall, Error: "400 Bad Request"}
	var entries []ledger.Entry
	for _, h := range []string{"a", "b", "c", "d", "e"} {
		out := b.Failure(states.Call{Tool: key, Hash: h, Source: ledger.SourceHook}, bad, t0, nil)
		b.Replay(out.Entries)
		entries = append(entries, out.Entries...)
	}
	d := b.Gate(states.Call{Tool: key, Hash: "f", Source: ledger.SourceHook}, t0, nil, false)
	if d.Allowed || d.Block != states.BlockStreak {
		t.Fatalf("want a streak-guard deny: %+v", d)
	}
	b.Replay(d.Entries)
	entries = append(entries, d.Entries...)
	for _, h := range []string{"g", "h"} {
		out := b.Failure(states.Call{Tool: key, Hash: h, Source: ledger.SourceHook}, bad, t0, nil)
		b.Replay(out.Entries)
		entries = append(entries, out.Entries...)
	}
	before := b.Clone()
	ok := b.Success(states.Call{Tool: key, Hash: "i", Source: ledger.SourceHook}, t0)
	if len(ok.Entries) != 1 {
		t.Fatalf("the success that ends the streak: %+v", ok.Entries)
	}
	id := IdentityOf("gh", mcpconfig.Server{Transport: mcpconfig.TransportHTTP, URL: "https://gh.example/mcp"}, true, Keys{Namespace: "ns", Secret: testSecret}, Local{Machine: "m"})
	bd := &Binding{id: id, keys: []string{key}, now: t0}
	if w := bd.plan(map[string][]Record{}, map[string]choice{}, entries, &states.Board{}, &b); len(w) != 0 {
		t.Fatalf("call errors and the streak guard's denial were written to the board: %+v", w)
	}
	after := b.Clone()
	after.Replay(ok.Entries)
	if w := bd.plan(map[string][]Record{}, map[string]choice{}, ok.Entries, before, after); len(w) != 0 {
		t.Fatalf("the success that ended the streak was written to the board: %+v", w)
	}
	// A trial permit is shared, without the streak of the calls that failed on their own terms
	// during the trial before it.
	deadline := states.Failure{Type: ledger.Timeout, Cause: "deadline", Fault: ledger.FaultTool, Error: "timed out"}
	now := t0
	for range 3 {
		b.Replay(b.Failure(states.Call{Tool: key, Source: ledger.SourceHook}, deadline, now, nil).Entries)
	}
	now = now.Add(2 * time.Minute)
	b.Replay(b.Gate(states.Call{Tool: key, Hash: "k", Source: ledger.SourceHook}, now, nil, false).Entries)
	b.Replay(b.Failure(states.Call{Tool: key, Hash: "k", Source: ledger.SourceHook}, bad, now, nil).Entries)
	pre := b.Clone()
	permit := b.Gate(states.Call{Tool: key, Hash: "l", Source: ledger.SourceHook}, now, nil, false)
	b.Replay(permit.Entries)
	if !permit.Trial || b.Get(key).Streak.Count != 1 {
		t.Fatalf("want a trial on a circuit with a streak: %+v, %+v", permit, b.Get(key))
	}
	w := bd.plan(map[string][]Record{}, map[string]choice{}, permit.Entries, pre, &b)
	if len(w) != 1 || w[0].Circuit == nil || w[0].Circuit.State != ledger.HalfOpen || w[0].Circuit.Streak.Count != 0 {
		t.Fatalf("writes: %+v", w)
	}
}

// TestHeldNeverShared: a failure held (weak evidence, from a tool that worked) is this session's
// own until the next failure settles it: nothing of it, nor the success that clears it, is written
// to the board; a circuit the board decides keeps this ledger's memory of its calls.
func TestHeldNeverShared(t *testing.T) {
	key := "mcp__gh__search_issues"
	var b states.Board
	call := func(h string) states.Call { return states.Call{Tool: key, Hash: h, Source: ledger.SourceHook} }
	weak := states.Failure{Type: ledger.Unknown, Cause: "unknown", Fault: ledger.FaultTool, Weak: true, Shape: "s", Error: "boom"}
	strong := states.Failure{Type: ledger.Timeout, Cause: "tool_deadline", Fault: ledger.FaultTool, Error: "timed out"}
	b.Replay(b.Failure(call("a"), strong, t0, nil).Entries)
	b.Replay(b.Success(call("a"), t0).Entries)
	before := b.Clone()
	out := b.Failure(call("b"), weak, t0, nil)
	if !out.Held {
		t.Fatalf("want the failure held: %+v", out)
	}
	b.Replay(out.Entries)
	id := IdentityOf("gh", mcpconfig.Server{Transport: mcpconfig.TransportHTTP, URL: "https://gh.example/mcp"}, true, Keys{Namespace: "ns", Secret: testSecret}, Local{Machine: "m"})
	bd := &Binding{id: id, keys: []string{key}, now: t0}
	if w := bd.plan(map[string][]Record{}, map[string]choice{}, out.Entries, before, &b); len(w) != 0 {
		t.Fatalf("the failure held was written to the board: %+v", w)
	}
	if w := failureScopes(out.Entries, map[string]choice{key: {rec: &Record{Scope: "other"}}}, id); len(w) != 0 {
		t.Fatalf("the failure held asks for a scope: %v", w)
	}
	before = b.Clone()
	ok := b.Success(call("c"), t0)
	b.Replay(ok.Entries)
	if w := bd.plan(map[string][]Record{}, map[string]choice{}, ok.Entries, before, &b); len(ok.Entries) != 1 || len(w) != 0 {
		t.Fatalf("the success that clears it: entries %+v, writes %+v", ok.Entries, w)
	}
	// A circuit the board decides keeps what this ledger knows of the calls; what the board holds
	// never carries it.
	shared := states.Circuit{Key: key, State: ledger.Closed, Worked: true, Held: states.Held{Shape: "x"}, Streak: states.Streak{Count: 2}}.Shared()
	if shared.Worked || shared.Held.Shape != "" || shared.Streak.Count != 0 {
		t.Fatalf("shared: %+v", shared)
	}
	shared.KeepCalls(b.Get(key))
	if !shared.Worked || shared.Held != b.Get(key).Held {
		t.Fatalf("kept: %+v, local %+v", shared, b.Get(key))
	}
}

// TestBindingLockWaitNotBoardTime: the time a run waited for the ledger lock is given back to
// the board's exchange that follows it, never past the latest the hook allows.
func TestBindingLockWaitNotBoardTime(t *testing.T) {
	spent, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	bd := &Binding{ctx: spent}
	ctx, stop := bd.after(time.Hour)
	defer stop()
	if ctx.Err() != nil {
		t.Fatalf("after an hour's wait for the lock the exchange has no time: %v", ctx.Err())
	}
	bd.SetLatest(time.Now().Add(-time.Millisecond))
	ctx, stop = bd.after(time.Hour)
	defer stop()
	if ctx.Err() == nil {
		t.Fatal("the exchange may end past the latest the hook allows")
	}
	if ctx, _ := bd.after(0); ctx.Err() == nil {
		t.Fatal("without a wait for the lock the run's spent bound was not kept")
	}
}
