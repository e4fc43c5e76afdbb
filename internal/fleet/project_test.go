package fleet

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
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
