package agent

// One canonical circuit key per server and tool, whatever the agent calls the tool: a failure seen
// by one agent trips the circuit the next agent's call meets in the same project.

import (
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/mcpconfig"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// Naming is how an agent writes an MCP tool's name: Prefix, the server, Sep, the tool
// (Claude Code: "mcp__" and "__"; Gemini CLI: "mcp_" and "_"; Copilot CLI: "" and "-").
type Naming struct {
	Prefix string
	Sep    string
}

// Canonical maps name, an MCP tool's name as an agent writes it, to the canonical key
// mcp__<server>__<tool> (both parts sanitized as Claude Code does) and the server's real name
// when it is known. ok is false when name is not an MCP tool name of that naming.
//
// When Sep can also occur inside a server's name ("-", "_"), the split is ambiguous: the server is
// then the longest configured server (real or sanitized name) that name starts with, followed by
// Sep, so "my-db-query" is server "my-db", tool "query" when a server "my-db" exists; servers is read
// only then. Without a configured match the name is cut at the first Sep, which is right whenever
// the server's name does not hold Sep.
func Canonical(name string, n Naming, servers gate.Servers) (key, server string, ok bool) {
	rest, ok := strings.CutPrefix(name, n.Prefix)
	if !ok || n.Sep == "" || rest == "" {
		return "", "", false
	}
	if n.Sep == "__" && n.Prefix == "mcp__" {
		// Claude Code's own grammar: the server part cannot hold "__" (ledger.Key.Split).
		if _, _, ok := ledger.Key(name).Split(); !ok {
			return "", "", false
		}
		return name, "", true
	}
	if servers != nil && sepInNames(n.Sep) {
		best, bestLen := "", 0
		for _, s := range servers() {
			for _, cand := range []string{s.Name, s.Sanitized, ledger.Sanitize(s.Name)} {
				if cand == "" || len(cand) <= bestLen {
					continue
				}
				if tool, found := strings.CutPrefix(rest, cand+n.Sep); found && tool != "" {
					best, bestLen = s.Name, len(cand)
				}
			}
		}
		if best != "" {
			tool := rest[bestLen+len(n.Sep):]
			return string(ledger.NameKey(best, tool)), best, true
		}
	}
	srv, tool, found := strings.Cut(rest, n.Sep)
	if !found || srv == "" || tool == "" {
		return "", "", false
	}
	return string(ledger.NameKey(srv, tool)), "", true
}

// sepInNames reports whether sep can occur inside a sanitized server name.
func sepInNames(sep string) bool {
	return strings.Trim(sep, "_-") == "" && sep != "__"
}

// Endpoint is how an agent names the server of a call when it gives no server name (Cursor's
// beforeMCPExecution): the URL of a remote server or the command line of a stdio one.
type Endpoint struct {
	URL     string
	Command string
}

// CanonicalURL finds the configured server that e names and returns the canonical key of its tool.
// A URL matches after normalization (scheme and host case, default port, trailing slash); a command
// matches a stdio server's command and arguments joined by spaces, or its command alone when the
// agent sends only the program. ok is false when no server, or more than one (by name), matches:
// the gate then cannot know the circuit and lets the call through.
func CanonicalURL(tool string, e Endpoint, servers gate.Servers) (key, server string, ok bool) {
	if tool == "" || servers == nil || (e.URL == "" && e.Command == "") {
		return "", "", false
	}
	var match []mcpconfig.Server
	for _, s := range servers() {
		// The same server in the agent's files and in Claude Code's is one server.
		if endpointMatches(s, e) && !slices.ContainsFunc(match, func(m mcpconfig.Server) bool { return m.Name == s.Name }) {
			match = append(match, s)
		}
	}
	if len(match) > 1 {
		// A repository's server that copies the endpoint of one of yours would otherwise make
		// yours unknowable, and its OPEN circuit be let through: one that Claude Code's approvals
		// would not run gives way to those that are usable.
		var usable []mcpconfig.Server
		for _, m := range match {
			if m.Approval.Usable() || m.Scope.Trusted() {
				usable = append(usable, m)
			}
		}
		match = usable
	}
	if len(match) != 1 {
		return "", "", false
	}
	return string(ledger.NameKey(match[0].Name, tool)), match[0].Name, true
}

func endpointMatches(s mcpconfig.Server, e Endpoint) bool {
	if e.URL != "" {
		return s.URL != "" && normalURL(s.URL) == normalURL(e.URL)
	}
	if s.Command == "" {
		return false
	}
	want := strings.Join(strings.Fields(e.Command), " ")
	full := strings.Join(append([]string{s.Command}, s.Args...), " ")
	return want == full || want == s.Command || want == filepath.Base(s.Command)+" "+strings.Join(s.Args, " ")
}

// normalURL is u with the parts that do not change the endpoint made uniform.
func normalURL(u string) string {
	p, err := url.Parse(strings.TrimSpace(u))
	if err != nil || p.Host == "" {
		return strings.TrimRight(strings.TrimSpace(u), "/")
	}
	p.Scheme = strings.ToLower(p.Scheme)
	host := strings.ToLower(p.Hostname())
	port := p.Port()
	if port == "" || (p.Scheme == "https" && port == "443") || (p.Scheme == "http" && port == "80") {
		p.Host = host
	} else {
		p.Host = host + ":" + port
	}
	p.Path = strings.TrimRight(p.Path, "/")
	p.Fragment = ""
	return p.String()
}

// hashedNaming is how an agent names an MCP tool whose name it had to change (a character outside
// [A-Za-z0-9_-], or too long): the sanitized name, cut, then "_" and a hash of the name it would
// have had (Cline: <server>__<tool>, sha1; Qwen Code: mcp__<server>__<tool>, FNV-1a). The server's
// and tool's real names are found by trying each configured server and checking the hash, so a
// match is exact; a tool whose own name was changed too, or cut, is not found.
type hashedNaming struct {
	// join is the name before sanitizing, of tool of server.
	join func(server, tool string) string
	// sanitize is how the agent changes a name's characters.
	sanitize func(string) string
	// sum is the agent's hash of a name, as it writes it: sumLen characters of digits.
	sum    func(string) string
	sumLen int
	digits string
}

// resolve returns the server and tool that name, a hashed tool name, stands for among servers,
// which are read only when name ends like one.
func (h hashedNaming) resolve(name string, servers gate.Servers) (server, tool string, ok bool) {
	cut := len(name) - h.sumLen - 1
	if cut <= 0 || name[cut] != '_' {
		return "", "", false
	}
	prefix, sum := name[:cut], name[cut+1:]
	for _, c := range sum {
		if !strings.ContainsRune(h.digits, c) {
			return "", "", false
		}
	}
	for _, s := range serverNames(servers) {
		t, found := strings.CutPrefix(prefix, h.sanitize(h.join(s, "")))
		if found && t != "" && h.sum(h.join(s, t)) == sum {
			return s, t, true
		}
	}
	return "", "", false
}

// serverNames are the names of servers, read only when asked.
func serverNames(servers gate.Servers) []string {
	if servers == nil {
		return nil
	}
	var names []string
	for _, s := range servers() {
		names = append(names, s.Name)
	}
	return names
}
