package fleet

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/testservers"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// TestFleetIdentityCache: the identity of a server is cached in the user's cache directory, used
// while the configuration files and the variables they expand are unchanged, and recomputed as
// soon as one changes.
func TestFleetIdentityCache(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	env := map[string]string{"HOME": home, "MCP_CIRCUIT_MACHINE": "m1", "GH_TOKEN": "tok-1"}
	getenv := func(k string) string { return env[k] }
	write := func(token string) {
		cfg := `{"mcpServers":{"gh":{"type":"http","url":"https://api.example/mcp","headers":{"Authorization":"Bearer ` + token + `"}}}}`
		if err := os.WriteFile(filepath.Join(home, ".claude.json"), []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	id := func() (string, bool) {
		p := project.New(dir, getenv, os.Stderr, project.Decoder{})
		var ids map[string]Identity
		hit := p.CachedDerived(idsCache, idsKey(Keys{Namespace: "ns", Secret: testSecret}, LocalOf(getenv)), &ids)
		return ProjectIdentity(p, "gh", Keys{Namespace: "ns", Secret: testSecret}).Credential, hit
	}
	write("${GH_TOKEN}")
	first, hit := id()
	if hit {
		t.Fatal("a cache hit before anything was cached")
	}
	again, hit := id()
	if !hit || again != first {
		t.Fatalf("second call: hit %v, %q vs %q; want the cached identity", hit, again, first)
	}
	if matches, _ := filepath.Glob(filepath.Join(home, ".cache", "mcp-circuit-breaker", "fleet-ids", "*.json")); len(matches) != 1 {
		t.Fatalf("cache files %v, want one in the user's cache directory", matches)
	}
	if _, err := os.Stat(filepath.Join(dir, project.StateDirName)); err == nil {
		t.Fatal("the cache went into the project")
	}
	env["GH_TOKEN"] = "tok-2"
	changed, hit := id()
	if hit || changed == first {
		t.Fatalf("after the variable changed: hit %v, credential %q (was %q); want a new one", hit, changed, first)
	}
	time.Sleep(10 * time.Millisecond) // a new mtime even on coarse clocks
	write("literal-token")
	edited, hit := id()
	if hit || edited == changed {
		t.Fatalf("after the file changed: hit %v, credential %q (was %q); want a new one", hit, edited, changed)
	}
	if _, hit := id(); !hit {
		t.Fatal("no cache hit after the recomputation")
	}
}

// TestBindProjectKeysWidensForTheServerOnly: a call of a tool binds its circuit and its server's,
// without listing the board (a scan of the whole namespace, on the hook's path every call); a
// decision about the server (a reset or a healthy probe of mcp__s__*) binds every circuit the
// board holds for the server, also those this project never saw.
func TestBindProjectKeysWidensForTheServerOnly(t *testing.T) {
	r := testservers.StartRedis(t, "")
	home, dir := t.TempDir(), t.TempDir()
	cfg := `{"mcpServers":{"s":{"type":"http","url":"https://mcp.example/v1"}}}`
	if err := os.WriteFile(filepath.Join(home, ".claude.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": home, EnvURL: r.URL(), EnvNamespace: "widen", EnvTimeout: "1s"}
	getenv := func(k string) string { return env[k] }
	p := project.New(dir, getenv, os.Stderr, project.Decoder{})
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	id := ProjectIdentity(p, "s", Keys{Namespace: "widen", Secret: testSecret})
	b := newBoardAt(t, r.URL(), "widen")
	other := &states.Circuit{Key: "mcp__s__other", Server: "s", State: ledger.Open, FailureType: ledger.Timeout, FailureCount: 3,
		TrippedAt: now.Add(-time.Minute), OpenUntil: now.Add(time.Minute), LastAt: now.Add(-time.Minute)}
	if err := b.Write(context.Background(), id, now, []Write{{Key: other.Key, Scope: id.Outage, Circuit: other}}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		key  string
		want []string
	}{
		{"mcp__s__call", []string{"mcp__s__call", "mcp__s__*"}},
		{"mcp__s__*", []string{"mcp__s__*", "mcp__s__other"}},
	} {
		for _, d := range dials {
			bd, err := Client{Unmarshal: yaml.Unmarshal, Dial: d.dial}.BindProject(context.Background(), p, tt.key, now, "")
			if err != nil || bd == nil {
				t.Fatalf("%s: BindProject(%s) = %v, %v", d.name, tt.key, bd, err)
			}
			if !slices.Equal(bd.keys, tt.want) {
				t.Errorf("%s: BindProject(%s) bound %v, want %v", d.name, tt.key, bd.keys, tt.want)
			}
			bd.Board().Close()
		}
	}
}
