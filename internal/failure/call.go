package failure

import (
	"strings"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// The evidence of the call itself (docs/classification.md, "Evidence from the call"): what kind
// of tool it is, what it named, and what of that the failure text echoes. It is weighed before
// the words: a failure to reach a host, URL or command the call named is the call's, whatever the
// status or errno; a command's own exit status is the command's result.

// callView is what one call says about its failure.
type callView struct {
	// fetcher: the tool fetches, browses or requests what its arguments name.
	fetcher bool
	// shell: the tool runs a command its arguments name.
	shell bool
	// hosts are the hosts the call named (of its URL arguments, or given as a host), lower-cased.
	hosts []string
	// urls are the URL arguments, lower-cased, without a trailing slash.
	urls []string
	// commands are the first words of the command arguments (the program a shell tool ran).
	commands []string
	// values are the lower-cased values the call passed that are long enough to be told apart in
	// a text (see echoable).
	values []string
	// segs are all the call's values, lower-cased: looked for only as whole segments of a URL's
	// path or query, where a plain word ("acme", "web") is as good as an id.
	segs []string
	// keys are the names of the call's arguments that a text can be told to name: at least three
	// bytes, and a snake_case or camelCase name ("space_id", "fileKey") unless the text quotes it.
	keys, quotableKeys []string
	// nums are the call's short numeric values (an issue number, a page id): they are looked for
	// only as a segment of a URL path in the text.
	nums []string
	// paths: the call passed a file-system path (a path, file or directory argument, or a value
	// with a slash that is no URL).
	paths bool
	// passed are the lower-cased names of the arguments the call gave a value.
	passed []string
	// writes: the tool's name says it changes something (create, update, delete, post, send, …).
	writes bool
	// resource: the call named one object by an identifier (an id, key, path, name, slug or URL
	// argument with a value): a refusal that names nothing else is that object's.
	resource bool
	// queries are the values of the call's query-language arguments (sql, query, cypher, expr, …),
	// lower-cased: a syntax error that quotes a piece of one is about the query the call wrote.
	queries []string
	// args reports whether the call's arguments are known at all.
	args bool
	// name is the tool's own name, lower-cased, without its server.
	name string
}

// viewCall reads the tool's name and the call's arguments.
func viewCall(tool string, args []Arg) callView {
	v := callView{args: args != nil}
	name := lowerASCII(tool)
	if i := strings.LastIndex(name, "__"); i >= 0 {
		name = name[i+2:]
	}
	v.name = name
	for _, w := range nameWords(name) {
		switch w {
		case "fetch", "browse", "browser", "navigate", "goto", "scrape", "crawl", "crawler", "url", "urls", "http",
			"https", "request", "curl", "wget", "download", "screenshot", "visit", "webpage", "page", "web",
			"webfetch", "open_url", "read_url", "get_url", "link":
			v.fetcher = true
		case "shell", "exec", "execute", "run", "command", "cmd", "terminal", "bash", "sh", "zsh", "powershell",
			"process", "spawn", "script", "interact":
			v.shell = true
		case "clone":
			v.fetcher = true
		case "create", "update", "delete", "remove", "post", "add", "send", "set", "edit", "move", "assign", "merge",
			"close", "comment", "publish", "archive", "transition", "write", "patch", "put", "upload", "rename", "manage",
			"insert", "invite", "approve", "cancel", "trigger", "deploy", "creator", "updater", "deleter", "writer", "editor",
			"sender", "uploader", "publisher", "poster":
			v.writes = true
		}
	}
	for _, a := range args {
		key := lowerASCII(a.Key)
		if len(key) >= 3 {
			v.quotableKeys = appendNew(v.quotableKeys, key)
			if strings.Contains(key, "_") || key != a.Key {
				v.keys = appendNew(v.keys, key)
			}
		}
		val := strings.TrimSpace(a.Value)
		low := lowerASCII(val)
		if h, ok := urlHost(low); ok {
			v.hosts = appendNew(v.hosts, h)
			v.urls = appendNew(v.urls, strings.TrimRight(low, "/"))
		}
		switch key {
		case "host", "hostname", "domain", "server", "address", "addr", "ip":
			if low != "" && !strings.ContainsAny(low, " /") {
				v.hosts = appendNew(v.hosts, strings.TrimSuffix(low, "."))
			}
		case "command", "cmd", "commandline", "command_line", "script", "shell_command", "program", "exec":
			if f := strings.Fields(low); len(f) > 0 {
				v.commands = appendNew(v.commands, baseName(f[0]))
				v.shell = true
			}
		}
		if _, isURL := urlHost(low); !isURL && low != "" && (strings.ContainsAny(low, `/\`) || isPathKey(key)) {
			v.paths = true
		}
		if low != "" {
			v.passed = appendNew(v.passed, key)
		}
		if low != "" && isResourceKey(a.Key) {
			v.resource = true
		}
		if isQueryKey(key) && len(low) >= 2 {
			v.queries = appendNew(v.queries, low)
		}
		if len(low) >= 2 {
			v.segs = appendNew(v.segs, low)
		}
		switch {
		case echoable(low):
			v.values = appendNew(v.values, low)
		case isDigits(low) && len(low) <= 12:
			v.nums = appendNew(v.nums, low)
		}
	}
	return v
}

// isResourceKey reports whether an argument's name says it identifies one object: its last word
// (snake_case, camelCase or kebab-case) is id, key, path, name, slug, url, number or an object's
// noun (issue_number, channelId, file_path, repo).
func isResourceKey(key string) bool {
	last := ""
	for i := len(key) - 1; i >= 0; i-- {
		c := key[i]
		if c == '_' || c == '-' || c == '.' {
			last = key[i+1:]
			break
		}
		if c >= 'A' && c <= 'Z' && i > 0 {
			last = key[i:]
			break
		}
		if i == 0 {
			last = key
		}
	}
	switch lowerASCII(last) {
	case "id", "ids", "uid", "gid", "key", "path", "name", "slug", "url", "uri", "number", "repo", "repository", "channel",
		"table", "file", "project", "page", "issue", "ticket", "database", "collection", "bucket", "index", "board", "folder",
		"site", "card", "document", "doc", "owner", "org", "team", "workspace", "space", "dashboard":
		return true
	}
	return false
}

// isPathKey reports whether an argument's name says it holds a file-system path.
func isPathKey(key string) bool {
	for _, w := range []string{"path", "file", "dir", "directory", "folder", "cwd", "root"} {
		if strings.Contains(key, w) {
			return true
		}
	}
	return false
}

// missingKeys returns the names a validation report says are missing: the last element of each
// zod "path" array, and the last segment before "should be defined".
func missingKeys(lower string) []string {
	var out []string
	for off := 0; ; {
		i := strings.Index(lower[off:], `"path"`)
		if i < 0 {
			break
		}
		i += off + len(`"path"`)
		j := strings.IndexByte(lower[i:], ']')
		if j < 0 {
			break
		}
		if qs := quotedIn(lower[i : i+j]); len(qs) > 0 {
			out = append(out, qs[len(qs)-1])
		}
		off = i + j
	}
	for off := 0; ; {
		i := strings.Index(lower[off:], " should be defined")
		if i < 0 {
			break
		}
		i += off
		start := strings.LastIndexAny(lower[:i], " \t\n:")
		if seg := lower[start+1 : i]; seg != "" {
			if k := strings.LastIndexByte(seg, '.'); k >= 0 {
				seg = seg[k+1:]
			}
			out = append(out, seg)
		}
		off = i + 1
	}
	return out
}

// osPathError reports whether a lower-cased text is an operating system's refusal or miss of a
// file (ENOENT, EACCES, "No such file or directory", Python's [Errno 2] and [Errno 13]).
func osPathError(lower string) bool {
	for _, w := range []string{"enoent", "eacces", "eperm", "erofs", "no such file or directory", "[errno 2]", "[errno 13]", "[errno 30]",
		"read-only file system"} {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// configNouns are the kinds of object a server is configured with rather than asked for: a
// missing one is missing for every call, unless the call named one of its kind.
var configNouns = []string{"zone", "warehouse", "graph", "database", "db", "catalog", "schema", "organization", "organisation",
	"org", "workspace", "tenant", "instance", "environment", "profile", "dir", "cluster", "region"}

// missingOwnObject reports whether the lower-cased text says an object of a config kind is missing
// (in the four words before "found" or "exist") while no argument of the call is of that kind.
func (v callView) missingOwnObject(lower string) bool {
	ws := splitWords(lower)
	for i, w := range ws {
		word := lower[w.start:w.end]
		if word != "found" && word != "exist" && word != "exists" {
			continue
		}
		for j := max(0, i-4); j < i; j++ {
			noun := lower[ws[j].start:ws[j].end]
			for _, n := range configNouns {
				if noun != n {
					continue
				}
				named := false
				for _, k := range v.passed {
					if strings.Contains(k, n) || n == "database" && strings.Contains(k, "db") ||
						(n == "organization" || n == "organisation") && strings.Contains(k, "org") {
						named = true
					}
				}
				if !named {
					return true
				}
			}
		}
	}
	return false
}

// fileInUse reports whether a lower-cased text says a file or directory it names by path is
// locked or already in use ("Browser is already in use for /root/.cache/ms-playwright/…",
// "Could not set lock on file \"/data/analytics.duckdb\"").
func fileInUse(lower string) bool {
	if !strings.Contains(lower, "already in use") && !strings.Contains(lower, "lock on") && !strings.Contains(lower, "is locked") {
		return false
	}
	for i := 0; i+2 < len(lower); i++ {
		c := lower[i]
		if (c == ' ' || c == '"' || c == '\'' || c == '\\') && lower[i+1] == '/' && isWordByte(lower[i+2]) &&
			strings.IndexByte(lower[i+2:min(len(lower), i+80)], '/') > 0 {
			return true
		}
		if c == ':' && lower[i+1] == '\\' && i > 0 && lower[i-1] >= 'a' && lower[i-1] <= 'z' {
			return true
		}
	}
	return false
}

// isQueryKey reports whether an argument's name says it holds a query in some query language.
func isQueryKey(key string) bool {
	switch key {
	case "query", "sql", "sqlquery", "sql_query", "sql-query", "cypher", "cypherquery", "cypher_query", "statement",
		"expr", "expression", "promql", "logql", "apl", "kql", "jql", "cql", "hql", "graphql", "gql", "filter", "where",
		"pipeline", "aggregation":
		return true
	}
	return false
}

// nameWords splits a tool name into its words: snake_case, kebab-case, dotted and slashed.
func nameWords(name string) []string {
	return strings.FieldsFunc(name, func(r rune) bool { return r == '_' || r == '-' || r == '.' || r == ' ' || r == '/' })
}

// urlHost returns the host of an http(s), ws(s) or git URL, lower-cased.
func urlHost(s string) (string, bool) {
	for _, scheme := range []string{"https://", "http://", "wss://", "ws://", "git://", "ssh://"} {
		if !strings.HasPrefix(s, scheme) {
			continue
		}
		rest := s[len(scheme):]
		if i := strings.IndexAny(rest, "/?#"); i >= 0 {
			rest = rest[:i]
		}
		if i := strings.LastIndexByte(rest, '@'); i >= 0 {
			rest = rest[i+1:]
		}
		if strings.HasPrefix(rest, "[") {
			if i := strings.IndexByte(rest, ']'); i > 0 {
				return rest[1:i], true
			}
		}
		if i := strings.LastIndexByte(rest, ':'); i >= 0 {
			rest = rest[:i]
		}
		return rest, rest != ""
	}
	return "", false
}

// baseName is the last path element of a program name ("/usr/bin/npm" → "npm").
func baseName(s string) string {
	if i := strings.LastIndexAny(s, `/\`); i >= 0 {
		return s[i+1:]
	}
	return s
}

func appendNew(list []string, s string) []string {
	if s == "" {
		return list
	}
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// echoable reports whether a value is distinctive enough that a text naming it is about it: an
// identifier, a path, a URL or a phrase (a digit, a separator or a space in it), never a plain
// word ("prometheus", "instant": a text naming one may be naming the server), a boolean or a bare
// number.
func echoable(v string) bool {
	switch {
	case len(v) < 3, v == "true", v == "false", v == "null", isDigits(v):
		return false
	}
	return strings.ContainsAny(v, "0123456789./-_:#@ ")
}

// callEvidence is what the call tells about a failure text.
type callEvidence struct {
	// target: the text is about a host, URL or command the call named failing.
	target bool
	// command: a command the call ran exited with its own status.
	command bool
	// echo: the text names a value the call passed.
	echo bool
	// keyEcho: the text names one of the call's arguments ("'uid' was provided without
	// 'operations'"): it is about what the call passed.
	keyEcho bool
	// foreignURL: the text names an http(s) URL none of whose parts the call passed, so a status
	// next to it is about the server's own endpoint or base URL, not the call's target.
	foreignURL bool
	// dropped: a validation report says an argument is missing ("received undefined", "Required")
	// that the call passed with a value: the tool lost it on the way, for every call.
	dropped bool
	// ownFiles: an OS error on a file while the call named no path and the text names nothing the
	// call passed: the server's own store, cache or install, for every call.
	ownFiles bool
	// ownObject: the text says an object of a kind the call named nowhere (a zone, a warehouse, a
	// graph, a workspace, the project directory) is missing: the server's configured one.
	ownObject bool
	// resource: a tool that changes things was called on one object (callView.resource, writes).
	resource bool
	// queryEcho: the text quotes a piece of a query the call passed ("Invalid input 'RETRN'"):
	// a parse error in it is the query's.
	queryEcho bool
	// namedToolMissing: the text says a tool is missing and names a value the call passed, not
	// the tool called: the call asked about a tool that does not exist ("Tool not found:
	// list-pages" from get_tool_schema {"tool_name": "list-pages"}).
	namedToolMissing bool
	// bareWrite: a tool that changes things says only that the change failed ("Failed to create
	// customer", "Error calling tool 'create_issue'"), with no reason: the service refused this
	// write, which is what a write's own arguments look like when the server keeps the reason.
	bareWrite bool
}

// weigh reads the call's evidence out of lower, the lower-cased failure text, given sc, what its
// words say.
func (v callView) weigh(lower string, sc *scanned) callEvidence {
	var ce callEvidence
	wrapped := !v.writes && (v.resource || v.args) && writeWrapper(lower)
	ce.resource = v.resource && (v.writes || wrapped)
	ce.bareWrite = (v.writes || wrapped && v.args) && bareFailure(lower, v.name)
	if h := sc.get(ledger.NotFound); h.cause == "tool_missing" {
		for _, val := range v.segs {
			if val != v.name && len(val) >= 3 && !strings.ContainsAny(val, " /") && containsToken(lower, val) {
				ce.namedToolMissing = true
			}
		}
	}
	if !v.args && !v.fetcher && !v.shell || sc.output {
		// Nothing known of the call; or the tool's own failure (a runtime error, its output failing
		// its schema), which voids what the call named.
		return ce
	}
	for _, val := range v.values {
		if containsToken(lower, val) {
			ce.echo = true
			break
		}
	}
	if !ce.echo {
		// A plain word the call passed counts when the text quotes it: "Table 'orders' not found".
		for _, q := range quotedIn(lower) {
			for _, x := range v.segs {
				if q == x {
					ce.echo = true
				}
			}
		}
	}
	for _, k := range v.keys {
		if containsToken(lower, k) {
			ce.keyEcho = true
		}
	}
	if !ce.keyEcho {
		for _, q := range quotedIn(lower) {
			for _, k := range v.quotableKeys {
				if q == k {
					ce.keyEcho = true
				}
			}
		}
	}
	if len(v.queries) > 0 {
		for _, q := range quotedIn(lower) {
			if len(strings.TrimSpace(q)) < 2 || strings.Contains(q, "<!doctype") {
				continue
			}
			for _, x := range v.queries {
				if strings.Contains(x, q) {
					ce.queryEcho = true
				}
			}
		}
	}
	if strings.Contains(lower, `"received": "undefined"`) || strings.Contains(lower, `"received":"undefined"`) ||
		strings.Contains(lower, "instead was `undefined`") {
		for _, k := range missingKeys(lower) {
			for _, p := range v.passed {
				if k == p {
					ce.dropped = true
				}
			}
		}
	}
	if v.args && !ce.echo && sc.call.cause == "resource_missing" {
		ce.ownObject = v.missingOwnObject(lower)
	}
	if v.args && !v.paths && !ce.echo && (osPathError(lower) || fileInUse(lower)) && !sc.spawn {
		ce.ownFiles = true
	}
	named := false
	for _, h := range v.hosts {
		if containsToken(lower, h) {
			named = true
			break
		}
	}
	textHosts := hostsIn(lower)
	foreign := false
	for _, th := range textHosts {
		if !v.namesHost(th) {
			foreign = true
		}
	}
	if v.args && sc.url && v.hasPlainURL(lower) {
		ce.foreignURL = !v.echoesURL(lower)
	}
	failedToReach := sc.transport() || sc.status
	switch {
	case named && failedToReach && !v.foreignFirst(lower, textHosts):
		// A host the call named could not be reached, or answered with an error status.
		ce.target = true
	case v.fetcher && len(v.hosts) > 0 && sc.status && !foreign && !sc.accountStatus():
		// A fetch or browse tool reports a status and names no other host: the page it was asked
		// for. Not a 401, 402, 407 or 429 named by no host: an API-backed fetcher's own account.
		ce.target = true
	}
	if v.shell && (sc.exitStatus || sc.exitCode) {
		ce.command = true
	}
	if sc.exitStatus && !v.shell && v.args && !ce.echo {
		// "Command '['npm', 'install']' returned non-zero exit status 1" from a tool that runs no
		// command of the call's: the server's own subprocess failed.
		sc.exitStatus = false
	}
	if len(v.commands) > 0 && (sc.spawn || sc.exitStatus) {
		for _, c := range v.commands {
			if len(c) >= 2 && containsToken(lower, c) {
				ce.command = true
			}
		}
	}
	return ce
}

// namesHost reports whether h, a host named in a text, is one the call named (or a subdomain
// of one).
func (v callView) namesHost(h string) bool {
	for _, x := range v.hosts {
		if h == x || strings.HasSuffix(h, "."+x) || strings.HasSuffix(x, "."+h) {
			return true
		}
	}
	return false
}

// foreignFirst reports whether the text names another host before the one the call named: the
// server's own API failed while it worked on the call's URL ("POST https://api.scraper.dev/v1:
// 503 … for https://a.example").
func (v callView) foreignFirst(lower string, textHosts []string) bool {
	if len(textHosts) == 0 {
		return false
	}
	return !v.namesHost(textHosts[0])
}

// echoesURL reports whether some http(s) URL of the text holds a value the call passed (in its
// path, query or host), or is a URL the call passed.
func (v callView) echoesURL(lower string) bool {
	for _, u := range urlsIn(lower) {
		if docURL(u) {
			continue
		}
		for _, x := range v.urls {
			if strings.HasPrefix(u, x) || strings.HasPrefix(x, u) {
				return true
			}
		}
		dec := pathUnescape(u)
		for _, val := range v.values {
			if strings.Contains(dec, val) || strings.Contains(u, val) {
				return true
			}
		}
		for _, seg := range strings.FieldsFunc(dec, func(r rune) bool { return r == '/' || r == '?' || r == '&' || r == '=' || r == '#' }) {
			for _, x := range v.segs {
				if seg == x {
					return true
				}
			}
			for _, n := range v.nums {
				if seg == n {
					return true
				}
			}
		}
	}
	return false
}

// quotedIn returns the strings a lower-cased text quotes ('x', "x", `x`), each at most 200 bytes.
func quotedIn(lower string) []string {
	var out []string
	for i := 0; i < len(lower); i++ {
		q := lower[i]
		if q != '\'' && q != '"' && q != '`' {
			continue
		}
		if q == '\'' && i > 0 && isWordByte(lower[i-1]) {
			continue // an apostrophe: "can't", "server's"
		}
		j := strings.IndexByte(lower[i+1:], q)
		if j < 0 || j > 200 {
			continue
		}
		if j > 0 {
			out = append(out, lower[i+1:i+1+j])
		}
		i += j + 1
	}
	return out
}

// docURL reports whether u is a documentation link a server puts beside its error ("more_info":
// "https://www.twilio.com/docs/errors/20404"), which says nothing of where the failure sits.
func docURL(u string) bool {
	h, _ := urlHost(u)
	return strings.HasPrefix(h, "docs.") || strings.HasPrefix(h, "help.") || strings.HasPrefix(h, "support.") ||
		strings.HasPrefix(h, "developer.") || strings.HasPrefix(h, "developers.") || strings.HasPrefix(h, "learn.") ||
		strings.Contains(u, "/docs/") || strings.Contains(u, "/errors/") || strings.Contains(u, "/reference/") ||
		strings.Contains(u, "/help/")
}

// hasPlainURL reports whether the text names a URL that is not a documentation link.
func (v callView) hasPlainURL(lower string) bool {
	for _, u := range urlsIn(lower) {
		if !docURL(u) {
			return true
		}
	}
	return false
}

// containsToken reports whether needle occurs in s not as a part of a longer word.
func containsToken(s, needle string) bool {
	for off := 0; ; {
		i := strings.Index(s[off:], needle)
		if i < 0 {
			return false
		}
		i += off
		j := i + len(needle)
		before := i == 0 || !isWordByte(s[i-1]) || !isWordByte(needle[0])
		after := j == len(s) || !isWordByte(s[j]) || !isWordByte(needle[len(needle)-1])
		if before && after {
			return true
		}
		off = i + 1
	}
}

// urlsIn returns the http(s) URLs of a lower-cased text, each up to the first space, quote or
// bracket.
func urlsIn(lower string) []string {
	var out []string
	for off := 0; off < len(lower); {
		i := strings.Index(lower[off:], "http")
		if i < 0 {
			break
		}
		i += off
		rest := lower[i:]
		if !strings.HasPrefix(rest, "http://") && !strings.HasPrefix(rest, "https://") {
			off = i + 4
			continue
		}
		j := strings.IndexAny(rest, " \t\n\"'`<>()[]{},")
		if j < 0 {
			j = len(rest)
		}
		u := strings.TrimRight(rest[:j], ".:;/")
		out = append(out, u)
		off = i + j
	}
	return out
}

// hostsIn returns the hosts a lower-cased text names: those of its URLs, and the name after a DNS
// or connection failure's errno (getaddrinfo ENOTFOUND a.example, connect ECONNREFUSED 10.0.0.1:443).
func hostsIn(lower string) []string {
	var out []string
	for _, u := range urlsIn(lower) {
		if h, ok := urlHost(u); ok {
			out = appendNew(out, h)
		}
	}
	for _, marker := range []string{"enotfound ", "eai_again ", "econnrefused ", "etimedout ", "ehostunreach ",
		"resolve host: ", "resolve host ", "lookup ", "connect to "} {
		for off := 0; ; {
			i := strings.Index(lower[off:], marker)
			if i < 0 {
				break
			}
			i += off + len(marker)
			j := i
			for j < len(lower) && (isWordByte(lower[j]) || lower[j] == '.' || lower[j] == '-') {
				j++
			}
			if h := strings.Trim(lower[i:j], ".-"); strings.Contains(h, ".") {
				out = appendNew(out, h)
			}
			off = j
			if off >= len(lower) {
				break
			}
		}
	}
	return out
}

// pathUnescape decodes %XX escapes for comparison; malformed ones are kept as they are.
func pathUnescape(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHexDigit(s[i+1]) && isHexDigit(s[i+2]) {
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		if s[i] == '+' {
			b = append(b, ' ')
			continue
		}
		b = append(b, s[i])
	}
	return string(b)
}

func unhex(c byte) byte {
	if c >= 'a' {
		return c - 'a' + 10
	}
	return c - '0'
}

// transportCause reports whether a cause is a failure to reach something: what a fetch of a dead
// link or an unreachable host looks like.
func transportCause(cause string) bool {
	switch cause {
	case "connection_refused", "connection_reset", "connection_failed", "connection_closed", "dns", "connect_timeout",
		"network_unreachable", "tls", "broken_pipe", "http_502", "http_503", "http_504", "http_5xx", "unavailable",
		"deadline", "overloaded":
		return true
	}
	return false
}

// accountStatus reports whether the text's status is about an account rather than a page: 401,
// 402, 407, 429, or credential, quota or admin words.
func (sc *scanned) accountStatus() bool {
	for _, t := range []ledger.FailureType{ledger.Auth, ledger.RateLimit, ledger.AdminGated} {
		if h := sc.get(t); h.ok() && h.cause != "http_403" && h.cause != "forbidden" {
			return true
		}
	}
	return false
}

// transport reports whether the words say something could not be reached.
func (sc *scanned) transport() bool {
	h := sc.get(ledger.Timeout)
	return h.ok() && transportCause(h.cause)
}

// isWriteVerb reports whether w is a word of a change: "Failed to create", "Error updating",
// "Deletion failed". A switch, not a list: it runs for every word of a failure text.
func isWriteVerb(w string) bool {
	switch w {
	case "create", "creating", "creation", "update", "updating", "delete", "deleting", "deletion", "add",
		"adding", "send", "sending", "post", "posting", "insert", "inserting", "remove", "removing", "edit", "editing", "upload",
		"uploading", "publish", "publishing", "assign", "assigning", "modify", "modifying", "save", "saving", "submit", "submitting":
		return true
	}
	return false
}

// isFailWord reports whether w says an action failed, without saying why.
func isFailWord(w string) bool {
	switch w {
	case "failed", "failure", "fail", "unable", "could", "couldn", "cannot", "error", "errors", "while":
		return true
	}
	return false
}

// writeWrapper reports whether a lower-cased text says a change failed: a write verb with a
// failure word among the three words before it, or "failed" right after it ("Failed to create
// project", "Error creating item", "Item creation failed", "Email failed to send").
func writeWrapper(lower string) bool {
	// A walk over the words without a slice of them: this runs on every failure of a call that
	// named an object, whatever the text's length.
	var last [3]string // the three words before the current one, the nearest first
	prevVerb := false
	for i := 0; ; {
		start, end := nextWord(lower, i)
		if start == end {
			return false
		}
		word := lower[start:end]
		i = end
		if prevVerb && isFailWord(word) {
			return true
		}
		prevVerb = isWriteVerb(word)
		if prevVerb && (isFailWord(last[0]) || isFailWord(last[1]) || isFailWord(last[2])) {
			return true
		}
		last[2], last[1], last[0] = last[1], last[0], word
	}
}

// bareFailure reports whether a lower-cased text says that a change failed and nothing more:
// at most eight words, none a number, and every word a failure word, a write verb, a word of the
// tool's own name, or one of at most two other words (the object: "customer", "pull request").
// An empty error object ("{}") is the server's own exception without a message, not a reason.
func bareFailure(lower, tool string) bool {
	if len(lower) > 300 || strings.Contains(lower, "{}") {
		return false // eight words, quoted names among them, are never this long
	}
	ws := splitWords(lower)
	if len(ws) == 0 || len(ws) > 8 {
		return false
	}
	toolWords := nameWords(tool)
	other, verb := 0, false
	for _, w := range ws {
		word := lower[w.start:w.end]
		switch {
		case isDigits(word):
			return false
		case isWriteVerb(word):
			verb = true
		case word == tool || isOneOf(word, toolWords):
			verb = verb || hasWriteVerb(toolWords)
		case isFailWord(word), isOneOf(word, []string{"to", "the", "a", "an", "calling", "executing", "tool", "mcp", "not", "t",
			"occurred", "from", "for", "of"}):
		default:
			other++
		}
	}
	return verb && other <= 2
}

// hasWriteVerb reports whether one of the words of a tool's name is a write verb.
func hasWriteVerb(words []string) bool {
	for _, w := range words {
		if isWriteVerb(w) {
			return true
		}
	}
	return false
}

// isOneOf reports whether w is one of list.
func isOneOf(w string, list []string) bool {
	for _, x := range list {
		if w == x {
			return true
		}
	}
	return false
}
