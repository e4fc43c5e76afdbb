package mcpconfig

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// layout writes files (path relative to root → content) and returns root.
func layout(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func byName(t *testing.T, servers []Server, name string) Server {
	t.Helper()
	for _, s := range servers {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("server %q not found among %v", name, names(servers))
	return Server{}
}

func names(servers []Server) []string {
	var out []string
	for _, s := range servers {
		out = append(out, s.Name)
	}
	return out
}

// claudeJSON builds a ~/.claude.json with a local-scope server for dir and a user-scope server.
func claudeJSON(dir, local, user string) string {
	return `{"numStartups": 3, "projects": {"/elsewhere": {"mcpServers": {"other": {"command": "x"}}},` +
		`"` + dir + `": {"allowedTools": [], "hasTrustDialogAccepted": true, "enableAllProjectMcpServers": true, "mcpServers": ` + local + `}}, "mcpServers": ` + user + `}`
}

func TestDiscoverScopes(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "proj")
	home := filepath.Join(root, "home")
	files := map[string]string{
		"home/.claude.json":                claudeJSON(dir, `{"loc": {"command": "loc-cmd"}}`, `{"usr": {"type": "http", "url": "https://u.example/mcp"}}`),
		"home/.claude/settings.json":       `{"mcpServers": {"usrset": {"type": "sse", "url": "https://s.example/sse"}}}`,
		"proj/.mcp.json":                   `{"mcpServers": {"proj": {"type": "stdio", "command": "proj-cmd", "args": ["a", "b"], "env": {"K": "V"}}}}`,
		"proj/.claude/settings.json":       `{"permissions": {}, "mcpServers": {"projset": {"command": "ps"}}}`,
		"proj/.claude/settings.local.json": `{"mcpServers": {"locset": {"command": "ls"}}}`,
		"extra.json":                       `{"mcpServers": {"dyn": {"command": "dyn-cmd"}}}`,
	}
	for name, content := range files {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Discover(Options{
		Dir:       dir,
		Home:      home,
		MCPConfig: []string{filepath.Join(root, "extra.json"), `{"mcpServers": {"inline": {"command": "i"}}}`},
	})
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	tests := []struct {
		name      string
		scope     Scope
		source    string
		transport Transport
	}{
		{"dyn", ScopeDynamic, filepath.Join(root, "extra.json"), TransportStdio},
		{"inline", ScopeDynamic, "--mcp-config", TransportStdio},
		{"loc", ScopeLocal, filepath.Join(home, ".claude.json"), TransportStdio},
		{"locset", ScopeLocal, filepath.Join(dir, ".claude", "settings.local.json"), TransportStdio},
		{"proj", ScopeProject, filepath.Join(dir, ".mcp.json"), TransportStdio},
		{"projset", ScopeProject, filepath.Join(dir, ".claude", "settings.json"), TransportStdio},
		{"usr", ScopeUser, filepath.Join(home, ".claude.json"), TransportHTTP},
		{"usrset", ScopeUser, filepath.Join(home, ".claude", "settings.json"), TransportSSE},
	}
	if len(got) != len(tests) {
		t.Fatalf("got servers %v, want %d (the other project's server must not appear)", names(got), len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := byName(t, got, tt.name)
			if s.Scope != tt.scope || s.Source != tt.source || s.Transport != tt.transport {
				t.Errorf("got scope %q source %q transport %q, want %q %q %q", s.Scope, s.Source, s.Transport, tt.scope, tt.source, tt.transport)
			}
		})
	}
	p := byName(t, got, "proj")
	if p.Command != "proj-cmd" || !reflect.DeepEqual(p.Args, []string{"a", "b"}) || p.Env["K"] != "V" {
		t.Errorf("proj fields: %+v", p)
	}
	if u := byName(t, got, "usr"); u.URL != "https://u.example/mcp" {
		t.Errorf("usr url = %q", u.URL)
	}
	if !slices.IsSortedFunc(got, func(a, b Server) int { return strings.Compare(a.Name, b.Name) }) {
		t.Errorf("not sorted: %v", names(got))
	}
}

func TestDiscoverPrecedence(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "proj")
	home := filepath.Join(root, "home")
	def := func(cmd string) string { return `{"mcpServers": {"dup": {"command": "` + cmd + `"}}}` }
	all := map[string]string{
		"dynamic":     def("dynamic"),
		"local":       "",
		"local-set":   def("local-set"),
		"project":     def("project"),
		"project-set": def("project-set"),
		"user":        "",
		"user-set":    def("user-set"),
	}
	paths := map[string]string{
		"dynamic":     filepath.Join(root, "dyn.json"),
		"local-set":   filepath.Join(dir, ".claude", "settings.local.json"),
		"project":     filepath.Join(dir, ".mcp.json"),
		"project-set": filepath.Join(dir, ".claude", "settings.json"),
		"user-set":    filepath.Join(home, ".claude", "settings.json"),
	}
	order := []string{"dynamic", "local", "local-set", "project", "project-set", "user", "user-set"}
	for i, winner := range order {
		t.Run(winner, func(t *testing.T) {
			os.RemoveAll(root)
			present := order[i:] // the winner and everything weaker
			var local, user = `{}`, `{}`
			for _, k := range present {
				switch k {
				case "local":
					local = `{"dup": {"command": "local"}}`
				case "user":
					user = `{"dup": {"command": "user"}}`
				default:
					os.MkdirAll(filepath.Dir(paths[k]), 0o700)
					if err := os.WriteFile(paths[k], []byte(all[k]), 0o600); err != nil {
						t.Fatal(err)
					}
				}
			}
			os.MkdirAll(home, 0o700)
			if err := os.WriteFile(filepath.Join(home, ".claude.json"), []byte(claudeJSON(dir, local, user)), 0o600); err != nil {
				t.Fatal(err)
			}
			opts := Options{Dir: dir, Home: home}
			if winner == "dynamic" {
				opts.MCPConfig = []string{paths["dynamic"]}
			}
			got, err := Discover(opts)
			if err != nil {
				t.Fatal(err)
			}
			s := byName(t, got, "dup")
			if s.Command != winner {
				t.Errorf("winner command = %q, want %q", s.Command, winner)
			}
			if len(s.Shadowed) != len(present)-1 {
				t.Errorf("shadowed = %v, want %d entries", s.Shadowed, len(present)-1)
			}
		})
	}
}

func TestDiscoverLaterMCPConfigWins(t *testing.T) {
	root := layout(t, map[string]string{
		"a.json": `{"mcpServers": {"s": {"command": "a"}}}`,
		"b.json": `{"mcpServers": {"s": {"command": "b"}}}`,
	})
	got, err := Discover(Options{Dir: root, MCPConfig: []string{"a.json", "b.json"}})
	if err != nil {
		t.Fatal(err)
	}
	if s := byName(t, got, "s"); s.Command != "b" || s.Source != filepath.Join(root, "b.json") {
		t.Errorf("got %+v, want b.json's entry (relative paths resolved against Dir)", s)
	}
}

func TestDiscoverConfigDir(t *testing.T) {
	root := layout(t, map[string]string{
		"cfg/.claude.json":  `{"mcpServers": {"a": {"command": "a"}}}`,
		"cfg/settings.json": `{"mcpServers": {"b": {"command": "b"}}}`,
		"home/.claude.json": `{"mcpServers": {"ignored": {"command": "x"}}}`,
	})
	got, err := Discover(Options{Home: filepath.Join(root, "home"), ConfigDir: filepath.Join(root, "cfg")})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"a", "b"}; !reflect.DeepEqual(names(got), want) {
		t.Errorf("got %v, want %v", names(got), want)
	}
}

func TestDiscoverEmpty(t *testing.T) {
	root := t.TempDir()
	got, err := Discover(Options{Dir: root, Home: root})
	if err != nil || len(got) != 0 {
		t.Errorf("got %v, %v; want nothing and no error", got, err)
	}
	root = layout(t, map[string]string{".mcp.json": `{"mcpServers": null}`, ".claude/settings.json": `{"hooks": {}}`})
	got, err = Discover(Options{Dir: root})
	if err != nil || len(got) != 0 {
		t.Errorf("null mcpServers / settings without servers: got %v, %v", got, err)
	}
}

func TestDiscoverMalformed(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "proj")
	home := filepath.Join(root, "home")
	files := map[string]string{
		// A syntax error on line 3: the whole file is unusable, as with JSON.parse.
		"proj/.mcp.json": "{\n  \"mcpServers\": {\n    \"broken\": {\"command\": \"x\",}\n  }\n}\n",
		// One bad entry does not hide the good one next to it.
		"home/.claude.json":                "{\"mcpServers\": {\n  \"good\": {\"command\": \"g\"},\n  \"badargs\": {\"command\": \"b\", \"args\": [1]},\n  \"nocmd\": {\"args\": []}\n}}",
		"proj/.claude/settings.local.json": `[1, 2]`,
	}
	for name, content := range files {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o700)
		os.WriteFile(p, []byte(content), 0o600)
	}
	got, err := Discover(Options{Dir: dir, Home: home})
	if err == nil {
		t.Fatal("no error for malformed files")
	}
	if want := []string{"good"}; !reflect.DeepEqual(names(got), want) {
		t.Errorf("servers = %v, want %v", names(got), want)
	}
	msg := err.Error()
	for _, want := range []string{
		filepath.Join(dir, ".mcp.json") + ":3:",
		filepath.Join(home, ".claude.json") + ":3:",
		`server "badargs"`,
		`server "nocmd"`,
		filepath.Join(dir, ".claude", "settings.local.json") + ":1:1: top level is a JSON array",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error does not contain %q:\n%s", want, msg)
		}
	}
	if n := strings.Count(msg, "badargs"); n != 1 {
		t.Errorf("~/.claude.json problems reported %d times, want once:\n%s", n, msg)
	}
	var fe *FileError
	if !errors.As(err, &fe) {
		t.Errorf("error is not a *FileError: %T", err)
	}
}

func TestExpand(t *testing.T) {
	vars := env(map[string]string{"SET": "v", "EMPTY": "", "TOKEN": "s3cret"})
	tests := []struct {
		in, want string
		missing  []string
	}{
		{"plain", "plain", nil},
		{"${SET}", "v", nil},
		{"a-${SET}-b", "a-v-b", nil},
		{"${UNSET}", "${UNSET}", []string{"UNSET"}},
		{"${UNSET:-dflt}", "dflt", nil},
		{"${SET:-dflt}", "v", nil},
		{"${EMPTY:-dflt}", "", nil}, // set wins even when empty, as in Claude Code
		{"${UNSET:-}", "", nil},
		{"${UNSET:-a:-b}", "a", nil}, // JS split(':-', 2) drops the rest
		{"$SET", "$SET", nil},
		{"${}", "${}", nil},
		{"${SET", "${SET", nil},
		{"Bearer ${TOKEN}", "Bearer s3cret", nil},
		{"${A}${B:-x}${A}", "${A}x${A}", []string{"A"}},
		{"${UNSET:-${SET}}", "${SET}", nil}, // no nesting: the default ends at the first '}'
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, missing := Expand(tt.in, vars)
			if got != tt.want || !reflect.DeepEqual(missing, tt.missing) {
				t.Errorf("Expand(%q) = %q, %v; want %q, %v", tt.in, got, missing, tt.want, tt.missing)
			}
		})
	}
}

func TestExpandFields(t *testing.T) {
	root := layout(t, map[string]string{".mcp.json": `{"mcpServers": {
		"s": {"command": "${BIN:-node}", "args": ["${DIR}/x", "--k=${UNSET}"], "env": {"T": "${TOKEN}"}},
		"h": {"type": "http", "url": "https://${HOST:-localhost}/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}
	}}`})
	// The servers are not approved: AllowUnapproved stands for the user's explicit override.
	got, err := Discover(Options{Dir: root, AllowUnapproved: true, LookupEnv: env(map[string]string{"DIR": "/d", "TOKEN": "tok"})})
	if err != nil {
		t.Fatal(err)
	}
	s := byName(t, got, "s")
	if s.Command != "node" || !reflect.DeepEqual(s.Args, []string{"/d/x", "--k=${UNSET}"}) || s.Env["T"] != "tok" {
		t.Errorf("stdio expansion: %+v", s)
	}
	if !reflect.DeepEqual(s.Missing, []string{"UNSET"}) {
		t.Errorf("missing = %v", s.Missing)
	}
	h := byName(t, got, "h")
	if h.URL != "https://localhost/mcp" || h.Headers["Authorization"] != "Bearer tok" || len(h.Missing) != 0 {
		t.Errorf("http expansion: %+v", h)
	}
}

func TestScopeTrusted(t *testing.T) {
	for scope, want := range map[Scope]bool{ScopeDynamic: true, ScopeLocal: true, ScopeUser: true, ScopeProject: false} {
		if scope.Trusted() != want {
			t.Errorf("%s.Trusted() = %v", scope, !want)
		}
	}
}

func TestLookup(t *testing.T) {
	servers := []Server{
		{Name: "my.dotted server", Sanitized: "my_dotted_server"},
		{Name: "a_b", Sanitized: "a_b"},
		{Name: "a.b", Sanitized: "a_b"},
	}
	tests := []struct{ q, want string }{
		{"my.dotted server", "my.dotted server"},
		{"my_dotted_server", "my.dotted server"},
		{"a.b", "a.b"},
		{"a_b", "a_b"}, // the real name wins over another server's sanitized name
	}
	for _, tt := range tests {
		s, ok := Lookup(servers, tt.q)
		if !ok || s.Name != tt.want {
			t.Errorf("Lookup(%q) = %q, %v; want %q", tt.q, s.Name, ok, tt.want)
		}
	}
	if _, ok := Lookup(servers, "nope"); ok {
		t.Error("Lookup(nope) found something")
	}
}

func TestFingerprint(t *testing.T) {
	base := Server{
		Name: "s", Scope: ScopeProject, Source: "/a/.mcp.json", Transport: TransportHTTP,
		Command: "c", Args: []string{"x"}, Env: map[string]string{"A": "1", "B": "2"},
		URL: "https://h/mcp", Headers: map[string]string{"Authorization": "Bearer old"},
	}
	fp := base.Fingerprint()
	if len(fp) != 16 || strings.Contains(fp, "old") {
		t.Fatalf("fingerprint %q", fp)
	}
	same := base
	same.Name, same.Scope, same.Source, same.Sanitized = "renamed", ScopeUser, "/b/.claude.json", "renamed"
	same.Env = map[string]string{"B": "2", "A": "1"}
	same.Shadowed = []Origin{{ScopeUser, "/x"}}
	if same.Fingerprint() != fp {
		t.Error("fingerprint changed with name, scope, source or map order")
	}
	changes := map[string]func(*Server){
		"header":    func(s *Server) { s.Headers = map[string]string{"Authorization": "Bearer new"} },
		"env":       func(s *Server) { s.Env = map[string]string{"A": "1", "B": "3"} },
		"args":      func(s *Server) { s.Args = []string{"y"} },
		"command":   func(s *Server) { s.Command = "d" },
		"url":       func(s *Server) { s.URL = "https://h/other" },
		"arg split": func(s *Server) { s.Args = []string{"", "x"} },
	}
	for name, change := range changes {
		c := base
		change(&c)
		if c.Fingerprint() == fp {
			t.Errorf("fingerprint unchanged after %s change", name)
		}
	}
}

// TestApprovalExactName: Claude Code approves and disables servers by the name as written, so
// an approval of good_srv must not approve a repository's good.srv, although both servers' tools
// are named mcp__good_srv__*.
func TestApprovalExactName(t *testing.T) {
	for _, tc := range []struct {
		name    string
		project string // projects[DIR] keys of ~/.claude.json
		server  string // the name .mcp.json defines
		want    Approval
	}{
		{"exact approval", `"enabledMcpjsonServers": ["good_srv"]`, "good_srv", ApprovalApproved},
		{"look-alike of an approval", `"enabledMcpjsonServers": ["good_srv"]`, "good.srv", ApprovalPending},
		{"look-alike with a space", `"enabledMcpjsonServers": ["good_srv"]`, "good srv", ApprovalPending},
		{"dotted approval", `"enabledMcpjsonServers": ["good.srv"]`, "good.srv", ApprovalApproved},
		{"exact disable", `"enableAllProjectMcpServers": true, "disabledMcpjsonServers": ["good.srv"]`, "good.srv", ApprovalDisabled},
		{"look-alike of a disable", `"enableAllProjectMcpServers": true, "disabledMcpjsonServers": ["good_srv"]`, "good.srv", ApprovalApproved},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "proj")
			home := layout(t, map[string]string{
				".claude.json": `{"projects": {"` + dir + `": {` + tc.project + `}}}`,
			})
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(`{"mcpServers": {"`+tc.server+`": {"command": "x"}}}`), 0o600); err != nil {
				t.Fatal(err)
			}
			servers, err := Discover(Options{Dir: dir, Home: home})
			if err != nil {
				t.Fatal(err)
			}
			if got := byName(t, servers, tc.server).Approval; got != tc.want {
				t.Errorf("%s defined, %s: approval %q, want %q", tc.server, tc.project, got, tc.want)
			}
		})
	}
}

// Another agent's file (Cursor's mcp.json) names a remote server by "url" alone: read as an http
// server there, while Claude Code's rules (Parse) reject the entry. Variables are never expanded.
func TestParseAgentFile(t *testing.T) {
	data := []byte(`{"mcpServers":{"docs":{"url":"https://docs.example.com/mcp","headers":{"Authorization":"Bearer ${TOKEN}"}},` +
		`"fs":{"command":"npx","args":["-y","server-fs","${HOME}"]},"sse":{"type":"sse","url":"https://s.example.com/sse"},"bad":{"args":["x"]}}}`)
	got, err := ParseAgentFile(".cursor/mcp.json", data, ScopeProject)
	if err == nil || !strings.Contains(err.Error(), "bad") {
		t.Errorf("error %v, want the entry with neither command nor url reported", err)
	}
	if !slices.Equal(names(got), []string{"docs", "fs", "sse"}) {
		t.Fatalf("servers %v, want docs, fs, sse", names(got))
	}
	docs, fs, sse := byName(t, got, "docs"), byName(t, got, "fs"), byName(t, got, "sse")
	if docs.Transport != TransportHTTP || docs.URL != "https://docs.example.com/mcp" || docs.Scope != ScopeProject {
		t.Errorf("docs: %+v, want an http server at its url, project scope", docs)
	}
	if fs.Transport != TransportStdio || fs.Command != "npx" || !slices.Equal(fs.Args, []string{"-y", "server-fs", "${HOME}"}) {
		t.Errorf("fs: %+v, want stdio with its arguments unexpanded", fs)
	}
	if sse.Transport != TransportSSE {
		t.Errorf("sse: %+v, want its own type kept", sse)
	}
	claude, err := Parse(".mcp.json", data, ScopeProject, env(nil))
	if err == nil || !strings.Contains(err.Error(), `needs "type"`) || slices.Contains(names(claude), "docs") {
		t.Errorf("Parse: servers %v, error %v; want docs rejected as Claude Code does", names(claude), err)
	}
}

// Crush keeps its servers in crush.json's "mcp" member, entries in the same shape (its
// docs/hooks/README.md's config and internal/config/config.go's MCPConfig at 37f36e9); a
// "mcpServers" member of that file is not Crush's and is not read.
func TestParseAgentMember(t *testing.T) {
	data := []byte(`{"$schema":"https://charm.land/crush.json","mcpServers":{"other":{"command":"x"}},` +
		`"mcp":{"my_db":{"type":"stdio","command":"db-mcp","args":["--ro"]},"docs":{"type":"http","url":"https://docs.example.com/mcp"}}}`)
	got, err := ParseAgentMember("crush.json", data, ScopeProject, "mcp")
	if err != nil || !slices.Equal(names(got), []string{"my_db", "docs"}) {
		t.Fatalf("servers %v, error %v; want my_db, docs (file order)", names(got), err)
	}
	if db := byName(t, got, "my_db"); db.Transport != TransportStdio || db.Command != "db-mcp" {
		t.Errorf("my_db: %+v, want its stdio command", db)
	}
	if none, err := ParseAgentMember("crush.json", []byte(`{"hooks":{}}`), ScopeUser, "mcp"); err != nil || len(none) != 0 {
		t.Errorf("a file without \"mcp\": %v, %v; want no servers, no error", none, err)
	}
}
