package fallbacks

import (
	"strings"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// A tool whose server circuit is open too (a 401 opens both) still finds similar tools on other
// servers by its own name, even when nothing of the failing server is cached.
func TestServerWideToolStillMatchesByName(t *testing.T) {
	opts := Propose(Request{
		Tool: "mcp__github__search_issues", Type: ledger.Auth, Now: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC),
		Tools:  map[string][]Tool{"gitlab": {{Name: "search_issues", Description: "Search issues in a project"}}},
		IsOpen: func(key string) bool { return key == "mcp__github__*" || key == "mcp__github__search_issues" },
	})
	for _, o := range opts {
		if strings.Contains(o.Title, "mcp__gitlab__search_issues") && !o.Blocked {
			return
		}
	}
	t.Fatalf("no usable mcp__gitlab__search_issues substitute in %+v", opts)
}
