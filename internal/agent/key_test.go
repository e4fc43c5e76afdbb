package agent

import (
	"testing"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/mcpconfig"
)

func TestCanonical(t *testing.T) {
	servers := func() []mcpconfig.Server {
		return []mcpconfig.Server{
			{Name: "my-db", Sanitized: "my-db"},
			{Name: "my", Sanitized: "my"},
			{Name: "git hub", Sanitized: "git_hub"},
		}
	}
	claude := Naming{"mcp__", "__"}
	dash := Naming{"", "-"}
	under := Naming{"mcp_", "_"}
	cases := []struct {
		name    string
		n       Naming
		servers bool
		key     string
		server  string
		ok      bool
	}{
		{"mcp__s__t", claude, true, "mcp__s__t", "", true},
		{"mcp__s__a__b", claude, true, "mcp__s__a__b", "", true},
		{"mcp____t", claude, true, "", "", false},
		{"Bash", claude, true, "", "", false},
		// <server>-<tool>: the longest configured server wins, else the first separator.
		{"my-db-query", dash, true, "mcp__my-db__query", "my-db", true},
		{"my-list", dash, true, "mcp__my__list", "my", true},
		{"my-db-query", dash, false, "mcp__my__db-query", "", true},
		{"other-x-y", dash, true, "mcp__other__x-y", "", true},
		{"my-db-", dash, true, "mcp__my__db-", "my", true},
		{"-x", dash, true, "", "", false},
		{"nosep", dash, true, "", "", false},
		// mcp_<server>_<tool>, with a real name holding a blank matched by its sanitized form.
		{"mcp_git_hub_list_issues", under, true, "mcp__git_hub__list_issues", "git hub", true},
		{"mcp_fs_read", under, true, "mcp__fs__read", "", true},
		{"read_file", under, true, "", "", false},
	}
	for _, c := range cases {
		var s func() []mcpconfig.Server
		if c.servers {
			s = servers
		}
		key, server, ok := Canonical(c.name, c.n, s)
		if key != c.key || server != c.server || ok != c.ok {
			t.Errorf("Canonical(%q, %+v) = %q, %q, %v; want %q, %q, %v", c.name, c.n, key, server, ok, c.key, c.server, c.ok)
		}
	}
}

func TestCanonicalURL(t *testing.T) {
	servers := func() []mcpconfig.Server {
		return []mcpconfig.Server{
			{Name: "docs", URL: "https://Docs.example.com:443/mcp/"},
			{Name: "fs", Command: "/usr/bin/npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/tmp"}},
			{Name: "twin-a", URL: "http://twin.example/mcp"},
			{Name: "twin-b", URL: "http://twin.example/mcp"},
		}
	}
	cases := []struct {
		tool string
		e    Endpoint
		key  string
		ok   bool
	}{
		{"search", Endpoint{URL: "https://docs.example.com/mcp"}, "mcp__docs__search", true},
		{"read file", Endpoint{Command: "/usr/bin/npx -y @modelcontextprotocol/server-filesystem /tmp"}, "mcp__fs__read_file", true},
		{"read", Endpoint{Command: "npx -y @modelcontextprotocol/server-filesystem /tmp"}, "mcp__fs__read", true},
		{"x", Endpoint{URL: "http://twin.example/mcp"}, "", false}, // two servers: unknowable
		{"x", Endpoint{URL: "https://elsewhere.example/mcp"}, "", false},
		{"", Endpoint{URL: "https://docs.example.com/mcp"}, "", false},
	}
	for _, c := range cases {
		key, _, ok := CanonicalURL(c.tool, c.e, servers)
		if key != c.key || ok != c.ok {
			t.Errorf("CanonicalURL(%q, %+v) = %q, %v; want %q, %v", c.tool, c.e, key, ok, c.key, c.ok)
		}
	}
}

// TestCanonicalURLPlantedTwin: a repository's server that copies the URL or command of one of
// yours does not make yours unknowable (and its OPEN circuit let through): the copy, which no
// approval lets run, gives way; two servers of yours with one endpoint stay unknowable.
func TestCanonicalURLPlantedTwin(t *testing.T) {
	servers := func() []mcpconfig.Server {
		return []mcpconfig.Server{
			{Name: "github", URL: "https://api.example.com/mcp", Scope: mcpconfig.ScopeUser, Approval: mcpconfig.ApprovalTrusted},
			{Name: "evil", URL: "https://api.example.com/mcp", Scope: mcpconfig.ScopeProject, Approval: mcpconfig.ApprovalPending},
			{Name: "mine-a", URL: "http://twin.example/mcp", Scope: mcpconfig.ScopeUser, Approval: mcpconfig.ApprovalTrusted},
			{Name: "mine-b", URL: "http://twin.example/mcp", Scope: mcpconfig.ScopeLocal, Approval: mcpconfig.ApprovalTrusted},
		}
	}
	if key, _, ok := CanonicalURL("issues", Endpoint{URL: "https://api.example.com/mcp"}, servers); !ok || key != "mcp__github__issues" {
		t.Errorf("planted twin: %q, %v; want mcp__github__issues", key, ok)
	}
	if _, _, ok := CanonicalURL("x", Endpoint{URL: "http://twin.example/mcp"}, servers); ok {
		t.Error("two usable servers with one endpoint were told apart")
	}
}
