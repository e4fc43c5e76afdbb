package fleet

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/failure"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/mcpconfig"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/testservers"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

func TestNormalizeURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://api.github.example/mcp/":             "https://api.github.example/mcp",
		"HTTPS://API.GitHub.example:443/mcp":          "https://api.github.example/mcp",
		"https://u:pw@api.github.example/mcp#frag":    "https://api.github.example/mcp",
		"http://h:80//a/./b/../c/":                    "http://h/a/c",
		"http://h:8080/mcp?b=2&a=1":                   "http://h:8080/mcp?a=1&b=2",
		"https://h/mcp?access_token=s3cret&region=eu": "https://h/mcp?region=eu",
		"https://[::1]:443/mcp":                       "https://[::1]/mcp",
		"https://[::1]:8443":                          "https://[::1]:8443",
		" https://h ":                                 "https://h",
		"not a url":                                   "raw:not a url",
	} {
		if got := NormalizeURL(in); got != want {
			t.Errorf("NormalizeURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestNormalizeURLKeepsEndpointsApart (issue 27): what tells two servers apart survives
// normalization: an escaped slash is not a slash, a query parameter is not dropped (one that
// carries a credential goes to the credential's identity, not away), the order of parameters and
// the spelling of the host do not matter.
func TestNormalizeURLKeepsEndpointsApart(t *testing.T) {
	for _, tc := range []struct{ a, b string }{
		{"https://h/repos/a%2Fb/mcp", "https://h/repos/a/b/mcp"},
		{"https://h/mcp?project=alpha", "https://h/mcp?project=beta"},
		{"https://h/mcp?project=alpha", "https://h/mcp"},
		{"https://h/mcp?mode=a%2Fb", "https://h/mcp?mode=a/b"},
		{"https://h/x%2F..%2Fy", "https://h/y"},
	} {
		if NormalizeURL(tc.a) == NormalizeURL(tc.b) {
			t.Errorf("%q and %q normalize alike: %q", tc.a, tc.b, NormalizeURL(tc.a))
		}
	}
	for _, tc := range []struct{ a, b string }{
		{"https://h/mcp?b=2&a=1", "HTTPS://H:443/mcp/?a=1&b=2"},
		{"https://h/mcp?key=k1&region=eu", "https://h/mcp?region=eu&key=k2"},
	} {
		if NormalizeURL(tc.a) != NormalizeURL(tc.b) {
			t.Errorf("%q and %q normalize apart: %q vs %q", tc.a, tc.b, NormalizeURL(tc.a), NormalizeURL(tc.b))
		}
	}
}

// TestIdentityKeepsServersApart (issue 27): a stdio server with the user's command and arguments
// but an environment of its own is another program; a URL's credential parameters and user
// information are in the identity, never dropped, and never in a key name a guess can be tested
// against without the board's secret; without a secret nothing of a credential is shared.
func TestIdentityKeepsServersApart(t *testing.T) {
	keys := Keys{Namespace: "ns", Secret: testSecret}
	loc := Local{Machine: "m", User: "/home/u"}
	of := func(cfg mcpconfig.Server) Identity { return IdentityOf("s", cfg, true, keys, loc) }
	stdio := func(env map[string]string) mcpconfig.Server {
		return mcpconfig.Server{Transport: mcpconfig.TransportStdio, Command: "npx", Args: []string{"-y", "@mcp/github"}, Env: env}
	}
	user, planted := of(stdio(map[string]string{"GITHUB_TOKEN": "t"})), of(stdio(map[string]string{"GITHUB_TOKEN": "t", "HTTPS_PROXY": "http://evil:8080"}))
	if user.Group == planted.Group {
		t.Errorf("a stdio server with another environment shares the user's group %q", user.Group)
	}
	if of(stdio(map[string]string{"GITHUB_TOKEN": "t"})).Group != user.Group {
		t.Error("one stdio server with one environment: two groups")
	}
	remote := func(url string) mcpconfig.Server {
		return mcpconfig.Server{Transport: mcpconfig.TransportHTTP, URL: url}
	}
	for _, tc := range []struct {
		what, a, b  string
		group, cred bool // the same?
	}{
		{"two users in the URL", "https://alice@h/mcp", "https://bob@h/mcp", false, false},
		{"a user in the URL or none", "https://alice@h/mcp", "https://h/mcp", false, false},
		{"two keys in the query", "https://h/mcp?key=k1", "https://h/mcp?key=k2", true, false},
		{"two project keys in the query", "https://h/mcp?project_key=p1", "https://h/mcp?project_key=p2", true, false},
		{"two auth modes in the query", "https://h/mcp?auth_mode=oauth", "https://h/mcp?auth_mode=api_key", true, false},
		{"one user, one key", "https://alice@h/mcp?key=k1", "https://alice@h/mcp?key=k1", true, true},
	} {
		a, b := of(remote(tc.a)), of(remote(tc.b))
		if (a.Group == b.Group) != tc.group || (a.Credential == b.Credential) != tc.cred {
			t.Errorf("%s: same group %v (want %v), same credential %v (want %v)", tc.what, a.Group == b.Group, tc.group, a.Credential == b.Credential, tc.cred)
		}
	}
	// The credential's hash is keyed by the board's secret: another secret, another hash; no
	// secret, no credential scope on the board at all (this machine and user).
	hdr := mcpconfig.Server{Transport: mcpconfig.TransportHTTP, URL: "https://h/mcp", Headers: map[string]string{"X-Api-Key": "hunter2"}}
	k1 := IdentityOf("s", hdr, true, keys, loc).Credential
	k2 := IdentityOf("s", hdr, true, Keys{Namespace: "ns", Secret: "another"}, loc).Credential
	none := IdentityOf("s", hdr, true, Keys{Namespace: "ns"}, loc)
	if k1 == k2 || !strings.HasPrefix(k1, "c=") || strings.HasPrefix(none.Credential, "c=") {
		t.Errorf("credential scopes %q / %q / %q: want keyed by the secret, and none without one", k1, k2, none.Credential)
	}
	// The namespace, printed in every key, does not make the hash: the old HMAC keyed by it can
	// be recomputed by anyone who lists the keys, this one cannot.
	if IdentityOf("s", hdr, true, Keys{Namespace: "ns", Secret: "x"}, loc).Credential == IdentityOf("s", hdr, true, Keys{Namespace: "ns", Secret: "y"}, loc).Credential {
		t.Error("the credential's hash does not depend on the secret")
	}
	// User information without a secret stays this machine's and user's.
	if id := IdentityOf("s", remote("https://tok@h/mcp"), true, Keys{Namespace: "ns"}, loc); id.Kind != "machine and user" {
		t.Errorf("a URL with user information and no secret: %+v, want this machine and user", id)
	}
	if got := ShownKey("mcb:{ns:e1234}:c=abcdef0123456789:mcp__s__t"); strings.Contains(got, "abcdef") {
		t.Errorf("ShownKey printed the credential's hash: %s", got)
	}
}

func TestIdentityOf(t *testing.T) {
	gh := func(url, token string) mcpconfig.Server {
		return mcpconfig.Server{Transport: mcpconfig.TransportHTTP, URL: url, Headers: map[string]string{"Authorization": "Bearer " + token, "X-Client": "a"}}
	}
	fs := mcpconfig.Server{Transport: mcpconfig.TransportStdio, Command: "npx", Args: []string{"-y", "@mcp/fs", "--token", "t0k3n-1"}}
	oauth := mcpconfig.Server{Transport: mcpconfig.TransportHTTP, URL: "https://mcp.example/mcp"}
	a, b := Local{Machine: "laptop-a", User: "/home/a"}, Local{Machine: "laptop-b", User: "/home/b"}
	ns := Keys{Namespace: "ns", Secret: testSecret}
	same := func(what string, x, y string, want bool) {
		t.Helper()
		if (x == y) != want {
			t.Errorf("%s: %q vs %q: same = %v, want %v", what, x, y, x == y, want)
		}
	}
	ghA, ghB := IdentityOf("github", gh("https://api.gh.example/mcp/", "A"), true, ns, a), IdentityOf("gh", gh("HTTPS://api.gh.example:443/mcp", "B"), true, ns, b)
	same("one endpoint, two names: group", ghA.Group, ghB.Group, true)
	same("one endpoint: outage scope", ghA.Outage, ghB.Outage, true)
	same("two tokens: credential scope", ghA.Credential, ghB.Credential, false)
	ci1, ci2 := IdentityOf("github", gh("https://api.gh.example/mcp", "CI"), true, ns, Local{Machine: "ci-1"}), IdentityOf("github", gh("https://api.gh.example/mcp", "CI"), true, ns, Local{Machine: "ci-2"})
	same("one token on two machines", ci1.Credential, ci2.Credential, true)
	same("one token, another namespace", ci1.Credential, IdentityOf("github", gh("https://api.gh.example/mcp", "CI"), true, Keys{Namespace: "other", Secret: testSecret}, a).Credential, false)
	if strings.Contains(ci1.Credential, "CI") || !strings.HasPrefix(ci1.Credential, "c=") {
		t.Errorf("credential scope %q: want an HMAC, never the token", ci1.Credential)
	}
	fsA, fsB := IdentityOf("fs", fs, true, ns, a), IdentityOf("fs", fs, true, ns, b)
	same("a stdio server's group (its launch line)", fsA.Group, fsB.Group, true)
	same("a stdio server on two machines", fsA.Outage, fsB.Outage, false)
	same("a stdio server on one machine, two users", fsA.Outage, IdentityOf("fs", fs, true, ns, Local{Machine: "laptop-a", User: "/home/c"}).Outage, true)
	oA, oB := IdentityOf("x", oauth, true, ns, a), IdentityOf("x", oauth, true, ns, b)
	same("a credential the configuration does not show (OAuth)", oA.Credential, oB.Credential, false)
	same("its outage", oA.Outage, oB.Outage, true)
	unknown := IdentityOf("plugin_srv", mcpconfig.Server{}, false, ns, a)
	if unknown.Outage != unknown.Credential || unknown.Kind != "machine and user" {
		t.Errorf("a server in no configuration: %+v, want one scope of this machine and user", unknown)
	}
	for _, tt := range []struct {
		t    ledger.FailureType
		want string
	}{{ledger.Auth, ghA.Credential}, {ledger.RateLimit, ghA.Credential}, {ledger.Timeout, ghA.Outage}, {ledger.NotFound, ghA.Outage}, {ledger.AdminGated, ghA.Outage}, {ledger.Unknown, ghA.Outage}} {
		if got := ghA.ScopeFor(tt.t); got != tt.want {
			t.Errorf("ScopeFor(%s) = %q, want %q", tt.t, got, tt.want)
		}
	}
}

func TestClean(t *testing.T) {
	now := t0
	c := states.Circuit{Key: "mcp__theirs__t", Server: "theirs", State: ledger.Open, FailureType: "BOGUS", FailureCount: -3, Level: 99,
		Error: strings.Repeat("é", 3000) + "\x00", Cause: strings.Repeat("c", 300), TrippedAt: now.Add(time.Hour), LastAt: now.Add(24 * 365 * time.Hour),
		OpenUntil: now.Add(100 * 24 * time.Hour), RetryAfter: 99 * time.Hour, Fingerprint: "f", HandWritten: true, ResetMethod: "magic"}
	future, err := clean(&c, "mcp__mine__t", "mine", -5, now)
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case !future:
		t.Error("dates a year ahead: future = false")
	case c.Key != "mcp__mine__t" || c.Server != "mine":
		t.Errorf("names %s/%s, want this machine's", c.Key, c.Server)
	case c.FailureType != ledger.Unknown || c.FailureCount != 0 || c.Level != 16 || c.Blocked != 0:
		t.Errorf("type/count/level/blocked %s/%d/%d/%d", c.FailureType, c.FailureCount, c.Level, c.Blocked)
	case len([]rune(c.Error)) > 500 || strings.ContainsRune(c.Error, 0) || len(c.Cause) > 64*4:
		t.Errorf("texts not clipped: %d runes of error, %d bytes of cause", len([]rune(c.Error)), len(c.Cause))
	case !c.TrippedAt.Equal(now) || !c.LastAt.Equal(now) || !c.OpenUntil.Equal(now.Add(maxDateAhead)):
		t.Errorf("dates not clamped: tripped %v last %v open_until %v", c.TrippedAt, c.LastAt, c.OpenUntil)
	case c.RetryAfter != states.MaxRetryHint || c.Fingerprint != "" || c.HandWritten || c.ResetMethod != "":
		t.Errorf("retry/fingerprint/handwritten/reset method kept: %+v", c)
	}
	ok := states.Circuit{State: ledger.Closed, LastAt: now.Add(ClockSlack / 2)}
	if future, _ := clean(&ok, "k", "s", 0, now); future || !ok.LastAt.Equal(now.Add(ClockSlack/2)) {
		t.Errorf("a date within the clock slack was clamped")
	}
	bad := states.Circuit{State: "WIDE-OPEN"}
	if _, err := clean(&bad, "k", "s", 0, now); err == nil {
		t.Error("an invalid state was accepted")
	}
}

// TestCallFaultNeverShared: a failure of the call itself (fault: call) is recorded locally and
// never reaches the board.
func TestCallFaultNeverShared(t *testing.T) {
	r := testservers.StartRedis(t, "")
	b := newBoard(t, r, "call")
	p := newProject(t, b, "A")
	tool := "mcp__s__t"
	bd := b.Bind(context.Background(), p.id, ledger.Key(tool).Circuits(), t0, "A", p.loc)
	p.store.Shared = bd
	_, err := p.store.Update(func(sb *states.Board) ([]ledger.Entry, error) {
		out := sb.Failure(states.Call{Tool: tool, Source: ledger.SourceHook},
			states.Failure{Type: ledger.NotFound, Cause: "http_404", Fault: ledger.FaultCall, Error: "no such row"}, t0, nil)
		return out.Entries, nil
	})
	if err != nil || !bd.Last.Shared {
		t.Fatalf("update: %v, shared %v", err, bd.Last.Shared)
	}
	recs, _ := b.Read(context.Background(), p.id, ledger.Key(tool).Circuits(), t0)
	for k, rs := range recs {
		for _, rec := range rs {
			if rec.Circuit != nil {
				t.Fatalf("a call's own failure reached the board: %s %+v", k, rec.Circuit)
			}
		}
	}
	// Without the fault it is shared.
	p.fail(t, tool, t0.Add(time.Second))
	recs, _ = b.Read(context.Background(), p.id, ledger.Key(tool).Circuits(), t0)
	if c := recordAt(recs[tool], "ep").Circuit; c == nil {
		t.Fatal("a server's failure did not reach the board")
	}
}

// TestLeaseByBoardClock: a permit granted by a machine whose clock runs 0.5 s (or an hour) ahead
// still runs for a machine behind it, because the board ends it by its own clock; and the board
// refuses a second permit while one runs.
func TestLeaseByBoardClock(t *testing.T) {
	r := testservers.StartRedis(t, "")
	b := newBoard(t, r, "lease")
	id := remote("lease", "m", "u")
	ctx := context.Background()
	tool := "mcp__s__t"
	for _, ahead := range []time.Duration{500 * time.Millisecond, time.Hour} {
		key := tool + strings.ReplaceAll(ahead.String(), ".", "_")
		open := &states.Circuit{Key: key, State: ledger.Open, FailureType: ledger.Timeout, FailureCount: 3, TrippedAt: t0, OpenUntil: t0.Add(time.Minute), LastAt: t0}
		if err := b.Write(ctx, id, t0, []Write{{Key: key, Scope: "ep", Circuit: open}}); err != nil {
			t.Fatal(err)
		}
		// The machine ahead takes the permit at its now.
		at := t0.Add(time.Minute + ahead)
		half := *open
		half.State, half.LeaseUntil = ledger.HalfOpen, at.Add(states.DefaultLease)
		if err := b.Write(ctx, id, at, []Write{{Key: key, Scope: "ep", Gen: 1, Circuit: &half, Lease: states.DefaultLease}}); err != nil {
			t.Fatal(err)
		}
		// The machine behind reads it at its own now: the lease runs about DefaultLease from now.
		behind := t0.Add(time.Minute)
		recs, err := b.Read(ctx, id, []string{key}, behind)
		if err != nil {
			t.Fatal(err)
		}
		c := recordAt(recs[key], "ep").Circuit
		if left := c.LeaseUntil.Sub(behind); left < states.DefaultLease-5*time.Second || left > states.DefaultLease {
			t.Fatalf("ahead %v: the lease seen behind ends in %v, want about %v", ahead, left, states.DefaultLease)
		}
		if !c.LeaseLive(nil, behind) {
			t.Fatalf("ahead %v: the lease is not live for the machine behind", ahead)
		}
		// A second permit on the same generation is refused while the first runs.
		again := half
		err = b.Write(ctx, id, behind, []Write{{Key: key, Scope: "ep", Gen: 2, Circuit: &again, Lease: states.DefaultLease}})
		if !errors.Is(err, ErrPermitHeld) || !errors.Is(err, ErrConflict) {
			t.Fatalf("ahead %v: a second permit: %v, want ErrPermitHeld", ahead, err)
		}
	}
}

// TestFailureCountsOnItsScope: user A's two timeouts count on the endpoint; user B's first 429
// counts one on B's credential (no trip at three from A's timeouts), and A's third timeout trips
// the endpoint for both.
func TestFailureCountsOnItsScope(t *testing.T) {
	r := testservers.StartRedis(t, "")
	b := newBoard(t, r, "scope")
	a, bb := newProject(t, b, "A"), newProject(t, b, "B")
	tool := "mcp__s__t"
	a.fail(t, tool, t0)
	a.fail(t, tool, t0.Add(time.Second))
	rl := failure.Classify(failure.Evidence{Text: "HTTP 429 Too Many Requests"}, t0)
	var out states.Outcome
	bd := b.Bind(context.Background(), bb.id, ledger.Key(tool).Circuits(), t0.Add(2*time.Second), "B", bb.loc)
	bb.store.Shared = bd
	if _, err := bb.store.Update(func(sb *states.Board) ([]ledger.Entry, error) {
		out = sb.Failure(states.Call{Tool: tool, Source: ledger.SourceHook},
			states.Failure{Type: rl.Type, Cause: rl.Cause, Fault: rl.Fault, RetryAfter: rl.RetryAfter, ServerWide: rl.ServerWide, Error: "429"}, t0.Add(2*time.Second), nil)
		return out.Entries, nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(out.Tripped) > 0 || out.Tool.FailureCount != 1 {
		t.Fatalf("B's first 429 after A's two timeouts: tripped %v, count %d; want count 1 on B's credential", out.Tripped, out.Tool.FailureCount)
	}
	if d, _ := bb.gate(t, tool, t0.Add(3*time.Second)); !d.Allowed {
		t.Fatal("B's call denied after one 429")
	}
	o, _ := a.fail(t, tool, t0.Add(4*time.Second))
	if len(o.Tripped) == 0 {
		t.Fatalf("A's third timeout: count %d, no trip", o.Tool.FailureCount)
	}
	if d, _ := bb.gate(t, tool, t0.Add(5*time.Second)); d.Allowed {
		t.Fatal("B let through an endpoint A's timeouts tripped")
	}
}

// TestPermitHeldUnderShorterLease: a session whose policy lease (5s) is shorter than the permit
// another took (120s) still sees the trial in flight: the board refuses its permit by its own
// clock, and it then denies instead of taking a second trial.
func TestPermitHeldUnderShorterLease(t *testing.T) {
	r := testservers.StartRedis(t, "")
	b := newBoard(t, r, "held")
	a, c := newProject(t, b, "A"), newProject(t, b, "C")
	tool := "mcp__s__t"
	for i := range 3 {
		a.fail(t, tool, t0.Add(time.Duration(i)*time.Second))
	}
	due := t0.Add(2*time.Second + states.DefaultCooldown + time.Second)
	if d, _ := a.gate(t, tool, due); !d.Trial {
		t.Fatalf("A at the end of the cooldown: %+v, want the trial", d)
	}
	short := &states.Policy{Defaults: states.Rule{Lease: 5 * time.Second}} // policy.yaml "defaults: {lease: 5s}"
	var d states.Decision
	bd := b.Bind(context.Background(), c.id, ledger.Key(tool).Circuits(), due.Add(time.Second), "C", c.loc)
	c.store.Shared = bd
	if _, err := c.store.Update(func(sb *states.Board) ([]ledger.Entry, error) {
		d = sb.Gate(states.Call{Tool: tool, Source: ledger.SourceHook}, due.Add(time.Second), short, false)
		return d.Entries, nil
	}); err != nil {
		t.Fatal(err)
	}
	if d.Allowed || d.Block != states.BlockInFlight || !bd.Last.Shared {
		t.Fatalf("C with a 5s lease: allowed %v block %q shared %v; want denied, a trial in flight, on the board", d.Allowed, d.Block, bd.Last.Shared)
	}
}
