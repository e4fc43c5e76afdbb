package agent

import (
	"slices"
	"testing"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
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

// TestReadingsYoursFirst: when a repository's server and one of yours both start a tool's name
// (Copilot CLI's <server>-<tool>, Gemini CLI's mcp_<server>_<tool> without mcp_context, Qwen Code's
// mcp__<server>__<tool> with a server holding "__"), the call before it is read as your server's
// tool, however long the repository's name, with the repository's reading beside it (the gate
// checks both); what follows a call is counted against the repository's reading, so that its
// server cannot open yours by failing on purpose.
func TestReadingsYoursFirst(t *testing.T) {
	servers := func() []mcpconfig.Server {
		return []mcpconfig.Server{
			{Name: "ctx_resolve", Sanitized: "ctx_resolve", Scope: mcpconfig.ScopeProject, Approval: mcpconfig.ApprovalApproved},
			{Name: "ctx", Sanitized: "ctx", Scope: mcpconfig.ScopeUser, Approval: mcpconfig.ApprovalTrusted},
			{Name: "github__create", Sanitized: "github__create", Scope: mcpconfig.ScopeProject},
			{Name: "github", Sanitized: "github", Scope: mcpconfig.ScopeUser},
			{Name: "local.one", Sanitized: "local_one", Scope: mcpconfig.ScopeLocal, Approval: mcpconfig.ApprovalPending},
			{Name: "local", Sanitized: "local", Scope: mcpconfig.ScopeProject, Approval: mcpconfig.ApprovalApproved},
		}
	}
	rs, ok := CanonicalReadings("mcp_ctx_resolve_library_id", geminiNaming, servers)
	if !ok || len(rs) != 2 || rs[0].Key != "mcp__ctx__resolve_library_id" || rs[1].Key != "mcp__ctx_resolve__library_id" {
		t.Errorf("Gemini CLI's mcp_ctx_resolve_library_id: %+v, want your ctx's tool first, then the repository's ctx_resolve's", rs)
	}
	// .claude/settings.local.json is in the repository's tree: local scope, not yours.
	if rs, _ := CanonicalReadings("mcp_local_one_x", geminiNaming, servers); len(rs) != 2 || rs[0].Key != "mcp__local__one_x" {
		t.Errorf("mcp_local_one_x: %+v, want the exact name before the longer rewritten one", rs)
	}
	for _, c := range []struct {
		kind     gate.Kind
		event    string
		key      string
		readings []string
	}{
		{gate.Before, "PreToolUse", "mcp__github__create__issue", []string{"mcp__github_-_create__issue"}},
		{gate.Failure, "PostToolUseFailure", "mcp__github_-_create__issue", []string{"mcp__github__create__issue"}},
	} {
		in := `{"hook_event_name":"` + c.event + `","tool_name":"mcp__github__create__issue","tool_input":{},"error":"HTTP 503"}`
		ev := decodeWire(t, Qwen, in, servers)
		if ev.Kind != c.kind || ev.Key != c.key || !slices.Equal(ev.Readings, c.readings) {
			t.Errorf("Qwen Code's %s of mcp__github__create__issue: key %q readings %q, want %q and %q", c.event, ev.Key, ev.Readings, c.key, c.readings)
		}
	}
	// A plain name reads no server.
	if ev := decodeWire(t, Qwen, `{"hook_event_name":"PreToolUse","tool_name":"mcp__github__issues"}`,
		func() []mcpconfig.Server { t.Fatal("servers read for a plain name"); return nil }); ev.Key != "mcp__github__issues" {
		t.Errorf("mcp__github__issues: key %q", ev.Key)
	}
}
