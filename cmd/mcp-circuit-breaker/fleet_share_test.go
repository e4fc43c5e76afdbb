package main

// The done-when tests of "share only what is shared": several users (HOMEs with their own MCP
// configurations, machines and credentials) run real hook processes against one real board, a
// single redis-server and a 3-node Redis Cluster, and each failure blocks exactly those who would
// fail the same way.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/fleet"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/mcpconfig"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/testservers"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// userServers is one user's ~/.claude.json servers: the remote GitHub endpoint under name with
// token, and a local stdio server fs.
func userServers(name, url, token string) string {
	return fmt.Sprintf(`{%q:{"type":"http","url":%q,"headers":{"Authorization":"Bearer %s","X-Client":"cli"}},`+
		`"fs":{"command":"node","args":["/opt/fs-server.js","--root","/srv"]}}`, name, url, token)
}

func sessionFailure(tool, server, session, text string) string {
	return fmt.Sprintf(`{"session_id":%q,"transcript_path":"/t.jsonl","cwd":"/p","permission_mode":"default",`+
		`"hook_event_name":"PostToolUseFailure","tool_name":%q,"tool_input":{},"tool_use_id":"toolu_f",`+
		`"error":%q,"is_interrupt":false,"mcp_server":{"name":%q,"source":"user"}}`, session, tool, text, server)
}

// fleetBoards starts the boards the suite runs on: a single node and a 3-node cluster.
func fleetBoards(t *testing.T) []struct{ name, url string } {
	r := testservers.StartRedis(t, "")
	c := testservers.StartRedisCluster(t, 3)
	return []struct{ name, url string }{{"single", r.URL()}, {"cluster", c.URL()}}
}

// rawClient is a plain client of the board, to plant records as another version or an attacker
// could.
func rawClient(t *testing.T, url string) redis.UniversalClient {
	var c redis.UniversalClient
	if strings.Contains(url, "addr=") {
		o, err := redis.ParseClusterURL(url)
		if err != nil {
			t.Fatal(err)
		}
		c = redis.NewClusterClient(o)
	} else {
		o, err := redis.ParseURL(url)
		if err != nil {
			t.Fatal(err)
		}
		c = redis.NewClient(o)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// boardKeys returns the board's circuit keys of namespace ns.
func boardKeys(t *testing.T, c redis.UniversalClient, ns string) []string {
	ctx := context.Background()
	var keys []string
	scan := func(ctx context.Context, cl redis.Cmdable) error {
		iter := cl.Scan(ctx, 0, "mcb:{"+ns+":*", 100).Iterator()
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		return iter.Err()
	}
	var err error
	if cc, ok := c.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, cl *redis.Client) error { return scan(ctx, cl) })
	} else {
		err = scan(ctx, c)
	}
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	return keys
}

func TestFleetSharesWhatFailsTogether(t *testing.T) {
	bin := buildHookBinary(t)
	cli := buildBinary(t)
	const (
		ghURL   = "https://api.github.example/mcp/"
		ghURLB  = "HTTPS://API.github.example:443/mcp" // the same endpoint, written otherwise
		e401    = "HTTP 401 Unauthorized: Bad credentials"
		e429    = "HTTP 429 Too Many Requests: API rate limit exceeded for this token"
		e503    = "HTTP 503 Service Unavailable"
		crashed = "MCP error -32000: Connection closed"
	)
	for _, bd := range fleetBoards(t) {
		t.Run(bd.name, func(t *testing.T) {
			ns := 0
			// users makes, in a fresh namespace: A (two projects, one HOME), B on another machine
			// naming the server gh, and two CI jobs on their own machines sharing one token.
			type users struct{ a, a2, b, ci1, ci2 *fleetProject }
			mk := func() users {
				ns++
				n := fmt.Sprintf("%s-%d", bd.name, ns)
				a := newFleetUser(t, bd.url, n, "laptop-a", "", userServers("github", ghURL, "tok-A"))
				return users{
					a:   a,
					a2:  newFleetUser(t, bd.url, n, "laptop-a", a.home, ""),
					b:   newFleetUser(t, bd.url, n, "laptop-b", "", userServers("gh", ghURLB, "tok-B")),
					ci1: newFleetUser(t, bd.url, n, "ci-1", "", userServers("github", ghURL, "tok-CI")),
					ci2: newFleetUser(t, bd.url, n, "ci-2", "", userServers("github", ghURL, "tok-CI")),
				}
			}
			now := fleetT0
			tick := func() time.Time { now = now.Add(time.Second); return now }
			pre := func(p *fleetProject, tool, server string) hookRun {
				return p.run(t, bin, preToolUse(tool, server, "toolu_p"), tick())
			}
			expect := func(what string, r hookRun, denied bool) {
				t.Helper()
				if r.denied() != denied {
					t.Fatalf("%s: denied = %v, want %v: %s %s", what, r.denied(), denied, r.stdout, r.stderr)
				}
			}

			t.Run("user A's 401 does not block user B", func(t *testing.T) {
				u := mk()
				u.a.run(t, bin, sessionFailure("mcp__github__search", "github", "sA", e401), tick())
				expect("A's other session (same token)", pre(u.a2, "mcp__github__search", "github"), true)
				expect("B (own token, same URL)", pre(u.b, "mcp__gh__search", "gh"), false)
				expect("a CI job (another token)", pre(u.ci1, "mcp__github__search", "github"), false)
			})

			t.Run("the CI token's 429 blocks both CI jobs and not user B", func(t *testing.T) {
				u := mk()
				for range 3 {
					u.ci1.run(t, bin, sessionFailure("mcp__github__search", "github", "sCI1", e429), tick())
				}
				expect("the other CI job", pre(u.ci2, "mcp__github__list_issues", "github"), true)
				expect("user B", pre(u.b, "mcp__gh__search", "gh"), false)
				expect("user A", pre(u.a, "mcp__github__search", "github"), false)
			})

			t.Run("A's stdio crash blocks A's other sessions and not B", func(t *testing.T) {
				u := mk()
				for range 3 {
					u.a.run(t, bin, sessionFailure("mcp__fs__read_file", "fs", "sA", crashed), tick())
				}
				expect("A's other session", pre(u.a2, "mcp__fs__read_file", "fs"), true)
				expect("B's own fs process", pre(u.b, "mcp__fs__read_file", "fs"), false)
			})

			t.Run("a remote 503 x3 blocks every user of that URL whatever they named it", func(t *testing.T) {
				u := mk()
				u.a.run(t, bin, sessionFailure("mcp__github__search", "github", "sA", e503), tick())
				u.ci1.run(t, bin, sessionFailure("mcp__github__search", "github", "sCI1", e503), tick())
				u.a2.run(t, bin, sessionFailure("mcp__github__search", "github", "sA2", e503), tick())
				r := pre(u.b, "mcp__gh__search", "gh")
				expect("B, who names it gh", r, true)
				reason := r.answer.HookSpecificOutput.PermissionDecisionReason
				if !strings.Contains(reason, "opened by 3 sessions on 2 machines since 12:00 UTC") {
					t.Errorf("B's deny does not say it came from the board: %s", reason)
				}
				expect("the other CI job", pre(u.ci2, "mcp__github__search", "github"), true)
				// B's ledger keeps B's own names.
				for _, e := range ledgerEntries(t, u.b.sd) {
					if !strings.HasPrefix(e.Tool, "mcp__gh__") {
						t.Fatalf("B's ledger names %s, not B's own server name", e.Tool)
					}
				}
			})

			t.Run("clocks 0.5 s apart take one trial", func(t *testing.T) {
				for _, aheadFirst := range []bool{true, false} {
					u := mk()
					t1 := now.Add(time.Hour)
					for i := range 3 {
						u.a.run(t, bin, sessionFailure("mcp__github__search", "github", "sA", e503), t1.Add(time.Duration(i)*time.Second))
					}
					due := t1.Add(2*time.Second + 61*time.Second)
					ahead, behind := u.a, u.b
					tools := [2]string{"mcp__github__search", "mcp__gh__search"}
					servers := [2]string{"github", "gh"}
					order := []int{0, 1}
					if !aheadFirst {
						order = []int{1, 0}
					}
					var res [2]hookRun
					for _, i := range order {
						p, at := ahead, due.Add(500*time.Millisecond)
						if i == 1 {
							p, at = behind, due
						}
						res[i] = p.run(t, bin, preToolUse(tools[i], servers[i], "toolu_t"), at)
					}
					trials := 0
					for _, r := range res {
						if !r.denied() && r.answer.HookSpecificOutput != nil && strings.Contains(r.answer.HookSpecificOutput.AdditionalContext, "HALF-OPEN trial") {
							trials++
						}
					}
					if trials != 1 || !(res[0].denied() || res[1].denied()) {
						t.Fatalf("ahead first %v: %d trials, want 1 (and the other denied): %s | %s", aheadFirst, trials, res[0].stdout, res[1].stdout)
					}
				}
			})

			t.Run("a 50 MB board record gives a clipped local entry and a working gate", func(t *testing.T) {
				u := mk()
				u.a.run(t, bin, sessionFailure("mcp__github__search", "github", "sA", e401), tick())
				raw := rawClient(t, bd.url)
				keys := boardKeys(t, raw, fmt.Sprintf("%s-%d", bd.name, ns))
				if len(keys) == 0 {
					t.Fatal("no circuit on the board after A's trip")
				}
				// The server circuit's record (A's AUTH trip) becomes 50 MB; the tool's holds a 12 KB
				// error, under the record bound, which must reach A2's ledger clipped.
				ctx := context.Background()
				var serverKey, toolKey string
				for _, k := range keys {
					if strings.Contains(k, "}:c=") && strings.HasSuffix(k, ":*") {
						serverKey = k
						toolKey = strings.TrimSuffix(k, "*") + "search"
					}
				}
				if serverKey == "" {
					t.Fatalf("no credential-scoped server circuit among %v", keys)
				}
				at := now.Format(time.RFC3339)
				huge := `{"key":"mcp__github__*","state":"OPEN","failure_type":"AUTH","failure_count":1,"error":"` +
					strings.Repeat("x", 50<<20) + `","tripped_at":"` + at + `","last_at":"` + at + `"}`
				long := `{"key":"mcp__github__search","state":"OPEN","failure_type":"AUTH","failure_count":1,"error":"` +
					strings.Repeat("y", 12<<10) + `","tripped_at":"` + at + `","open_until":"` + now.Add(time.Hour).Format(time.RFC3339) + `","last_at":"` + at + `"}`
				if err := raw.HSet(ctx, serverKey, "c", huge).Err(); err != nil {
					t.Fatal(err)
				}
				if err := raw.HSet(ctx, toolKey, "gen", "1", "c", long).Err(); err != nil {
					t.Fatal(err)
				}
				r := pre(u.a2, "mcp__github__search", "github")
				expect("A's other session, on the clipped tool record", r, true)
				fi, err := os.Stat(filepath.Join(u.a2.sd, ledger.FileName))
				if err != nil || fi.Size() > 64<<10 {
					t.Fatalf("A2's ledger after the huge record: %v, %d bytes", err, fi.Size())
				}
				clipped := false
				for _, e := range ledgerEntries(t, u.a2.sd) {
					if n := len([]rune(e.Error)); n > 500 {
						t.Fatalf("an entry with a %d-character error reached the ledger", n)
					}
					clipped = clipped || e.Tool == "mcp__github__search" && strings.HasPrefix(e.Error, "yyyy") && strings.HasSuffix(e.Error, "…")
				}
				if !clipped {
					t.Errorf("A2's ledger has no clipped entry of the board's tool record: %v", ledgerEntries(t, u.a2.sd))
				}
				if !strings.Contains(r.answer.SystemMessage, "refused (the record is larger than 16 KB)") {
					t.Errorf("A2's hook did not say it refused the 50 MB record: %q", r.answer.SystemMessage)
				}
				st := exec.Command(cli, "status", "--fleet")
				st.Env = append(slices.Clip(u.a2.env), "MCP_CIRCUIT_NOW="+tick().Format(time.RFC3339))
				if out, _ := st.CombinedOutput(); !strings.Contains(string(out), "was refused: the record is larger than 16 KB") {
					t.Errorf("status --fleet does not list the refused record:\n%s", out)
				}
				// A, who tripped the server circuit itself, still denies it and heals the board.
				expect("A on its own trip", pre(u.a, "mcp__github__list_issues", "github"), true)
				if n, err := raw.HStrLen(ctx, serverKey, "c").Result(); err != nil || n > 16<<10 {
					t.Errorf("the 50 MB record was not replaced: %d bytes, %v", n, err)
				}
				expect("a healthy tool with the huge record on the board", pre(u.a2, "mcp__fs__read_file", "fs"), false)
			})

			t.Run("a future-dated record does not undo an offline trip", func(t *testing.T) {
				u := mk()
				// A trips while the board is away: its URL points at a closed port.
				away := slices.Clone(u.a.env)
				for i, kv := range away {
					if strings.HasPrefix(kv, "MCP_CIRCUIT_SHARED=") {
						away[i] = "MCP_CIRCUIT_SHARED=redis://127.0.0.1:1"
					}
				}
				off := *u.a
				off.env = away
				off.run(t, bin, sessionFailure("mcp__github__search", "github", "sA", e401), tick())
				// Meanwhile a record dated 2099, in A's own credential scope, says the circuit is
				// CLOSED: a clock far ahead, or someone with access to the Redis.
				raw := rawClient(t, bd.url)
				ctx := context.Background()
				id := fleet.IdentityOf("github", mcpconfig.Server{Transport: mcpconfig.TransportHTTP, URL: ghURL,
					Headers: map[string]string{"Authorization": "Bearer tok-A", "X-Client": "cli"}}, true, fleet.Keys{Namespace: fmt.Sprintf("%s-%d", bd.name, ns), Secret: fleetSecret}, fleet.Local{})
				future := `{"key":"K","state":"CLOSED","failure_count":0,"last_at":"2099-01-01T00:00:00Z","reset_at":"2099-01-01T00:00:00Z"}`
				prefix := "mcb:{" + fmt.Sprintf("%s-%d", bd.name, ns) + ":" + id.Group + "}:" + id.Credential + ":"
				for _, tool := range []string{"*", "search"} {
					if err := raw.HSet(ctx, prefix+tool, "gen", "7", "c", strings.Replace(future, "K", "mcp__github__"+tool, 1)).Err(); err != nil {
						t.Fatal(err)
					}
				}
				expect("A with the board back", pre(u.a, "mcp__github__search", "github"), true)
				expect("A's other session learns the pushed trip", pre(u.a2, "mcp__github__search", "github"), true)
				if c, err := raw.HGet(ctx, prefix+"*", "c").Result(); err != nil || !strings.Contains(c, `"state":"OPEN"`) {
					t.Errorf("the board after A's push: %v %s, want A's OPEN trip", err, c)
				}
			})

			t.Run("reset --all reaches the board", func(t *testing.T) {
				u := mk()
				for range 3 {
					u.a.run(t, bin, sessionFailure("mcp__github__search", "github", "sA", e503), tick())
				}
				expect("B before the reset", pre(u.b, "mcp__gh__search", "gh"), true)
				c := exec.Command(cli, "reset", "--all")
				c.Env = append(slices.Clip(u.a.env), "MCP_CIRCUIT_NOW="+tick().Format(time.RFC3339))
				if out, err := c.CombinedOutput(); err != nil || !strings.Contains(string(out), "Circuit CLOSED") {
					t.Fatalf("reset --all: %v\n%s", err, out)
				}
				expect("B after A's reset --all", pre(u.b, "mcp__gh__search", "gh"), false)
			})
		})
	}
}
