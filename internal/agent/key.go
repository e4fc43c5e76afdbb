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
// when it is known. ok is false when name is not an MCP tool name of that naming. It is the best
// of [CanonicalReadings].
func Canonical(name string, n Naming, servers gate.Servers) (key, server string, ok bool) {
	rs, ok := CanonicalReadings(name, n, servers)
	if !ok {
		return "", "", false
	}
	return rs[0].Key, rs[0].Server, true
}

// CanonicalReadings is every way name, an MCP tool's name as an agent writes it, splits into a
// server and its tool, best first (Reading.better), each key once. ok is false when name is not an
// MCP tool name of that naming.
//
// When Sep can also occur inside a server's name ("-", "_"), the split is ambiguous: each
// configured server (real or sanitized name) that name starts with, followed by Sep, is a reading,
// so "my-db-query" is server "my-db", tool "query" when a server "my-db" exists, and also server
// "my", tool "db-query" when a server "my" exists too; servers is read only then. Without a
// configured match the name is cut at the first Sep, which is right whenever the server's name
// does not hold Sep.
func CanonicalReadings(name string, n Naming, servers gate.Servers) ([]Reading, bool) {
	rest, ok := strings.CutPrefix(name, n.Prefix)
	if !ok || n.Sep == "" || rest == "" {
		return nil, false
	}
	if n.Sep == "__" && n.Prefix == "mcp__" {
		// Claude Code's own grammar: the server part cannot hold "__" (ledger.Key.Split).
		if _, _, ok := ledger.Key(name).Split(); !ok {
			return nil, false
		}
		return []Reading{{Key: name}}, true
	}
	if servers != nil && sepInNames(n.Sep) {
		var rs []Reading
		for _, s := range servers() {
			for _, cand := range []string{s.Name, s.Sanitized, ledger.Sanitize(s.Name)} {
				if tool, found := strings.CutPrefix(rest, cand+n.Sep); cand != "" && found && tool != "" {
					rs = append(rs, Reading{Key: string(ledger.NameKey(s.Name, tool)), Server: s.Name,
						User: userOwned(s), Exact: cand == s.Name, n: len(cand)})
				}
			}
		}
		if rs = sortReadings(rs); len(rs) > 0 {
			return rs, true
		}
	}
	srv, tool, found := strings.Cut(rest, n.Sep)
	if !found || srv == "" || tool == "" {
		return nil, false
	}
	return []Reading{{Key: string(ledger.NameKey(srv, tool))}}, true
}

// Reading is one way an agent's name of a tool splits into a configured server and its tool.
type Reading struct {
	// Key is the tool's canonical key; Server the server's real name ("" when no configured
	// server was found and the name was cut where the agent's grammar says).
	Key, Server string
	// User is set when the server is in the user's own configuration, not a repository's file.
	User bool
	// Exact is set when the name holds the server's real name, not the agent's rewriting of it.
	Exact bool
	// n is the length of the server's part of the name.
	n int
}

// userOwned reports whether the user defined s, rather than a file a repository carries: one of
// Claude Code's definitions that needs no approval (user scope, ~/.claude.json's local one,
// --mcp-config), or one in an agent's user-level file. .claude/settings.local.json is local scope
// but lies in the repository's tree, and is the repository's.
func userOwned(s mcpconfig.Server) bool {
	if s.Approval != "" {
		return s.Approval == mcpconfig.ApprovalTrusted
	}
	return s.Scope.Trusted()
}

// better reports whether r is a better reading of a name than o: the user's own server before a
// repository's (a repository must not capture a name your configuration resolves, and with it the
// call from your OPEN circuit), then the server's real name before the agent's rewriting of another
// name, then the longer server part (a server "my-db" before "my" for "my-db-query").
func (r Reading) better(o Reading) bool {
	switch {
	case r.User != o.User:
		return r.User
	case r.Exact != o.Exact:
		return r.Exact
	}
	return r.n > o.n
}

// sortReadings orders rs best first and keeps each key once, at its best reading.
func sortReadings(rs []Reading) []Reading {
	slices.SortStableFunc(rs, func(a, b Reading) int {
		switch {
		case a.better(b):
			return -1
		case b.better(a):
			return 1
		}
		return 0
	})
	out := rs[:0]
	for _, r := range rs {
		if !slices.ContainsFunc(out, func(o Reading) bool { return o.Key == r.Key }) {
			out = append(out, r)
		}
	}
	return out
}

// applyReadings sets ev's Key, Server and Readings from rs, best first and not empty. An event
// before a call takes the best reading, and lists the others in Readings: the gate denies the call
// when one of them is not CLOSED, since the agent may be calling that one. An event after a call
// (its success or failure, which is counted) takes the reading whose server the agent says
// answered (answered, "" when it does not say), else the last: the one a repository could have
// chosen, so that a repository's server whose tool's name reads as one of yours cannot open your
// circuits by failing on purpose.
func applyReadings(ev *gate.Event, rs []Reading, answered string) {
	pick := 0
	if ev.Kind != gate.Before && len(rs) > 1 {
		pick = len(rs) - 1
		if i := slices.IndexFunc(rs, func(r Reading) bool { return answered != "" && r.Server == answered }); i >= 0 {
			pick = i
		}
	}
	ev.Key, ev.Server, ev.Readings = rs[pick].Key, rs[pick].Server, nil
	for i, r := range rs {
		if i != pick {
			ev.Readings = append(ev.Readings, r.Key)
		}
	}
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

// resolveAll is every reading of name, a hashed tool name, among servers: two servers whose names
// join their tools' into one name hash alike, and either may be the one called.
func (h hashedNaming) resolveAll(name string, servers gate.Servers) []Reading {
	cut := len(name) - h.sumLen - 1
	if cut <= 0 || name[cut] != '_' || servers == nil {
		return nil
	}
	prefix, sum := name[:cut], name[cut+1:]
	for _, c := range sum {
		if !strings.ContainsRune(h.digits, c) {
			return nil
		}
	}
	var rs []Reading
	for _, s := range servers() {
		server := h.sanitize(h.join(s.Name, ""))
		t, found := strings.CutPrefix(prefix, server)
		if found && t != "" && h.sum(h.join(s.Name, t)) == sum {
			rs = append(rs, Reading{Key: string(ledger.NameKey(s.Name, t)), Server: s.Name, User: userOwned(s), Exact: true, n: len(server)})
		}
	}
	return rs
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
