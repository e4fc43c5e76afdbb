package plugin

import (
	"strings"
	"testing"
)

func TestSource(t *testing.T) {
	for _, agent := range Agents {
		b, err := Source(agent, `/opt/my "bin"/mcp-circuit-breaker-hook`)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `const HOOK_BIN = "/opt/my \"bin\"/mcp-circuit-breaker-hook";`) {
			t.Errorf("%s: the hook's path is not written in as a JS string", agent)
		}
		if !IsOurs(b) {
			t.Errorf("%s: an installed plugin is not recognized as ours", agent)
		}
		plain, _ := Source(agent, "")
		if !strings.Contains(string(plain), hookLine) || !IsOurs(plain) {
			t.Errorf("%s: without a path the plugin keeps the name to find on PATH", agent)
		}
	}
	if _, err := Source("nobody", "x"); err == nil {
		t.Error("an agent without a plugin gives no error")
	}
	if IsOurs([]byte("export const Mine = async () => ({})")) {
		t.Error("a user's plugin is taken for ours")
	}
}
