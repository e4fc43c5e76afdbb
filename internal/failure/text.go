package failure

import (
	"strings"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// The specificity of a hit within its type. When one text holds two hits of the same type, the more
// specific cause is kept: "Connection closed: connect ECONNREFUSED" is a refused connection, and
// "401 Unauthorized" is better named http_401 than unauthorized. Between equals the first one wins.
const (
	specGeneric = 1 // a reason phrase or a bare word: "Unauthorized", "timed out", "rate limit"
	specStatus  = 2 // an HTTP status or a JSON-RPC code
	specExact   = 3 // a name for exactly what happened: ECONNREFUSED, token_expired, quota exceeded
)

// hit is one piece of evidence: a type, a cause, and how far the failure reaches.
type hit struct {
	t     ledger.FailureType
	cause string
	spec  int
	scope scope
}

func (h hit) ok() bool { return h.t != "" }

// found holds the best hit of each type, indexed by precedence rank.
type found [numTypes]hit

func (f *found) add(h hit) {
	r := h.t.Rank()
	if f[r].t == "" || h.spec > f[r].spec {
		f[r] = h
	}
}

func (f *found) get(t ledger.FailureType) hit { return f[t.Rank()] }

// best returns the hit of highest precedence (docs/classification.md), with one refinement: a bare 403 or
// "Forbidden" gives way to rate-limit evidence, because GitHub and others answer an exhausted rate
// limit with 403 ("403 Forbidden: API rate limit exceeded"), and treating that as AUTH would trip the
// circuit at once and send the user to refresh credentials that are fine.
func (f *found) best() hit {
	for _, h := range f {
		if !h.ok() {
			continue
		}
		if h.t == ledger.Auth && (h.cause == "http_403" || h.cause == "forbidden") && f.get(ledger.RateLimit).ok() {
			return f.get(ledger.RateLimit)
		}
		return h
	}
	return hit{}
}

// word is one word of a text: a maximal run of ASCII letters, digits, '_' and non-ASCII bytes.
// Snake-case identifiers such as insufficient_scope stay one word; "rate-limited" is two.
type word struct {
	start, end int // byte offsets in the text
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c >= 0x80
}

// lowerASCII lower-cases ASCII letters only, so byte offsets into the result are offsets into s.
func lowerASCII(s string) string {
	i := 0
	for i < len(s) && !(s[i] >= 'A' && s[i] <= 'Z') {
		i++
	}
	if i == len(s) {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if c := b[i]; c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// splitWords returns the words of lower. Every classification runs it over the whole text, so its
// loop is written out here rather than calling nextWord for each word.
func splitWords(lower string) []word {
	ws := make([]word, 0, len(lower)/6+1)
	for i := 0; i < len(lower); {
		if !isWordByte(lower[i]) {
			i++
			continue
		}
		j := i + 1
		for j < len(lower) && isWordByte(lower[j]) {
			j++
		}
		ws = append(ws, word{start: i, end: j})
		i = j
	}
	return ws
}

// nextWord returns the byte offsets of the first word of s at or after offset i; start == end
// when there is none.
func nextWord(s string, i int) (start, end int) {
	for i < len(s) && !isWordByte(s[i]) {
		i++
	}
	end = i
	for end < len(s) && isWordByte(s[end]) {
		end++
	}
	return i, end
}

// textScan finds the evidence in one failure text.
type textScan struct {
	text  string // lower-cased
	orig  string // as written, for the case of setting names (APIFY_TOKEN)
	tool  string // the tool's own name without its server, lower-cased and without underscores
	words []word
	f     found
	// call is the strongest evidence that the request itself was at fault (fault.go).
	call hit
	// endpoint is set when the text is about the MCP endpoint itself (isEndpointWord).
	endpoint bool
	// url is set when the text names an http(s) URL: a status next to it is that resource's.
	url bool
	// output is set when the text is about the tool's own failure: its output failing its schema,
	// or "something went wrong" on its side.
	output bool
	// status: the text holds an HTTP status in context; statusCall: the call evidence is such a
	// status (callStatus), which a URL that is not the call's voids.
	status, statusCall bool
	// exitStatus: a command's own exit status ("exited with code 1", "exit status 2"), not the
	// server's process; spawn: a program could not be started ("command not found").
	exitStatus, spawn bool
	// runtime: a JavaScript or Python runtime error ("is not a function", "has no attribute").
	runtime bool
	// exitCode: an exit status that names no server, whoever ran it (a shell tool's command).
	exitCode bool
	// config: the server's own configuration is missing (APIFY_TOKEN is required).
	config hit
	// sessionLost: the words say the MCP session is gone ("Session not found", "No valid session
	// ID provided"), whatever status or code sits beside them.
	sessionLost bool
	rules       []rule
	index       map[string][]int32
}

// scanned is what a text says: the best hit of each type, the call evidence, and where a status
// in it sits.
type scanned struct {
	found
	call       hit
	config     hit
	endpoint   bool
	output     bool
	url        bool
	status     bool
	statusCall bool
	exitStatus bool
	exitCode   bool
	spawn      bool
	// sessionLost: see textScan.
	sessionLost bool
}

// scanText returns the evidence found in lower, the text orig lower-cased by lowerASCII.
func scanText(orig, lower, tool string) scanned {
	if lower == "" {
		return scanned{}
	}
	s := textScan{text: lower, orig: orig, tool: toolWord(tool), rules: rules(), index: ruleIndex()}
	s.url = strings.Contains(lower, "http://") || strings.Contains(lower, "https://")
	s.words = splitWords(s.text)
	for i := range s.words {
		s.at(i)
	}
	if s.runtime && s.call.cause != "script_error" {
		// The server's own code threw: whatever the text goes on to say about the request is the
		// tool's failure. The model's own script throwing in a page is the call's.
		s.output = true
	}
	if s.output && s.call.t == ledger.Malformed {
		// The tool's own output failed its schema: a response that does not fit, the tool's.
		s.f.add(hit{t: ledger.Malformed, cause: "schema_mismatch", spec: specExact, scope: perCall})
	}
	if s.output || s.endpoint || strings.Contains(lower, "node_modules") || strings.Contains(lower, "site-packages") {
		// About the tool's output, the MCP endpoint, or the server's own installed files: what the
		// words say is missing or refused is not the request's.
		s.call = hit{}
	}
	if s.config.cause == "config_missing" && namesCredential(&s) {
		// The missing setting is a credential ("Missing required Databricks API credentials in
		// .env file", a config file to create "with clientId, clientSecret"): AUTH.
		s.config = hit{t: ledger.Auth, cause: "credential_missing", spec: specExact, scope: serverWide}
	}
	if s.f.get(ledger.Timeout).cause == "spawn_failed" {
		s.spawn = true
	}
	return scanned{found: s.f, call: s.call, config: s.config, endpoint: s.endpoint, output: s.output, url: s.url,
		status: s.status, statusCall: s.statusCall && s.call.ok() && s.call.spec == specStatus,
		exitStatus: s.exitStatus, exitCode: s.exitCode, spawn: s.spawn, sessionLost: s.sessionLost}
}

// at records the evidence that starts at word i: the first rule of the table that matches there,
// or, for a word no rule names, a number that reads as an HTTP status or a JSON-RPC code.
func (s *textScan) at(i int) {
	w := s.w(i)
	if isEndpointWord(w) || (w == "mcp" || w == "sse") && s.words[i].start > 0 && s.text[s.words[i].start-1] == '/' && s.pathEnd(i) {
		s.endpoint = true
	}
	if w == "wrong" && s.is(i-1, "went") || w == "panic" && s.is(i+1, "runtime") || w == "traceback" && s.is(i+1, "most") ||
		w == "nullpointerexception" || w == "segmentation" && s.is(i+1, "fault") {
		// "Something went wrong while executing your query", a Go panic, a Python traceback: the
		// server's own failure, whatever else the text goes on to say about the request.
		s.output = true
	}
	if w == "schema" && s.is(i-1, "output") || w == "outputschema" || w == "structured" && s.is(i+1, "content", "output") ||
		w == "output" && (s.is(i+1, "validation", "schema") || s.is(i-1, "tool") && s.is(i-2, "validating")) {
		// The tool's own output failed its schema: whatever the validation says was missing is the
		// tool's, not the call's.
		s.output = true
	}
	if w == "exit" && s.is(i+1, "status", "code") && isDigits(s.w(i+2)) || w == "exited" && s.is(i+1, "with") && s.is(i+2, "code", "status", "exit") ||
		w == "non" && s.is(i+1, "zero") && s.after(i+1, 2, "exit", "status", "code") || w == "nonzero" && s.after(i, 2, "exit", "status", "code") {
		// A command's own exit status, when the words say a command ran ("Command failed with exit
		// code 1", "script exited with code 2") and not that the server's process did.
		if !s.before(i, 4, "server", "mcp", "servers") {
			s.exitCode = true
			s.exitStatus = s.exitStatus || s.before(i, 10, "command", "commands", "script", "cmd", "subprocess", "test", "tests", "build")
		}
	}
	if s.orig != "" {
		s.setting(i)
	}
	if w == "validation" && s.is(i+1, "error", "errors") && s.is(i+2, "for") {
		// pydantic: "1 validation error for X". The tool's own result failing its model, unless X is
		// the call's input (FastMCP names it <tool>Arguments).
		if m := s.w(i + 3); m != "" && m != "call" && strings.ReplaceAll(m, "_", "") != s.tool && !strings.HasSuffix(m, "arguments") && !strings.HasSuffix(m, "args") &&
			!strings.HasSuffix(m, "input") && !strings.HasSuffix(m, "params") && !strings.HasSuffix(m, "request") {
			s.output = true
		}
	}
	if runtimeError(s, i) {
		s.runtime = true
	}
	if w == "response" && s.is(i-1, "invalid", "malformed", "unexpected", "unparseable", "bad") {
		// "Invalid response from the API": what the tool got back is wrong, not what it was asked.
		s.output = true
	}
	if w == "validation" && s.is(i-1, "response", "output", "result", "reply") {
		// "Response validation failed": what the tool got back does not fit, the tool's.
		s.output = true
	}
	if w == "session" && s.is(i+1, "not") && s.is(i+2, "found") {
		// An MCP session the server no longer knows: a status beside it is the endpoint's.
		s.endpoint = true
	}
	ns, ok := s.index[w]
	if !ok {
		if strings.Contains(w, "_") && credentialCode(w) {
			s.f.add(hit{t: ledger.Auth, cause: "invalid_credentials", spec: specExact, scope: serverWide})
			return
		}
		if strings.Contains(w, "unauth") {
			// NetlifyUnauthError, UnauthenticatedException, "Unauthedenticated request"
			s.f.add(hit{t: ledger.Auth, cause: "unauthorized", spec: specGeneric, scope: serverWide})
			return
		}
		if h, ok := exceptionName(w); ok {
			if h.cause == "rate_limited" {
				s.f.add(h)
			} else {
				s.addCall(h)
			}
			return
		}
		if strings.HasSuffix(w, "_not_found") && !strings.HasPrefix(w, "tool") && !strings.HasPrefix(w, "method") &&
			!strings.HasPrefix(w, "session") {
			s.addCall(hit{t: ledger.NotFound, cause: "resource_missing", spec: specExact, scope: perCall})
			return
		}
		if callCode(w) {
			// Slack's and others' error codes for what the call asked: invalid_cursor, cant_update_message,
			// already_reacted, channel_is_archived, msg_too_long.
			s.addCall(hit{t: ledger.Malformed, cause: "invalid_params", spec: specExact, scope: perCall})
			return
		}
		if strings.HasPrefix(w, "err_") && s.is(i-1, "net") {
			// A browser's net::ERR_NAME_NOT_RESOLVED, net::ERR_CONNECTION_REFUSED: the page the call
			// navigated to, not the MCP server.
			s.addCall(hit{t: ledger.Unknown, cause: "target_failed", spec: specTarget, scope: perCall})
			return
		}
		s.number(i)
		return
	}
	if n := s.match(ns, i); n >= 0 {
		r := &s.rules[n]
		h := hit{t: r.Type, cause: r.Cause, spec: r.Spec, scope: r.Scope}
		if r.Fault == ledger.FaultCall {
			s.addCall(h)
			return
		}
		if h.t == ledger.Auth && s.hedged(i) {
			// "This may be caused by an expired token": a list of possible causes, not a verdict.
			return
		}
		if h.cause == "session_expired" {
			s.sessionLost = true
		}
		if h.cause == "credential_missing" || h.cause == "config_missing" {
			s.addConfig(h)
			return
		}
		s.f.add(h)
	}
}

// pathEnd reports whether word i ends a URL path segment ("…/mcp", "…/mcp/", "…/sse?x"), not a
// name that goes on ("user/mcp-dynamo").
func (s *textScan) pathEnd(i int) bool {
	end := s.words[i].end
	return end == len(s.text) || strings.IndexByte("/?# \t\n\"'`)]}>,:;", s.text[end]) >= 0
}

// addConfig keeps h as the evidence that the server's own configuration is missing: a missing
// credential before any other missing setting.
func (s *textScan) addConfig(h hit) {
	if !s.config.ok() || h.t == ledger.Auth && s.config.t != ledger.Auth {
		s.config = h
	}
}

// hedged reports whether the words before word i offer a possibility rather than say what
// happened: "this may be caused by", "possible causes:", "check that your token", "if the key".
func (s *textScan) hedged(i int) bool {
	for j := i - 1; j >= 0 && j >= i-20; j-- {
		if gap := s.text[s.words[j].end:s.words[j+1].start]; strings.Contains(gap, ". ") || strings.ContainsAny(gap, "!?\n") {
			return false // the sentence starts after word j
		}
		switch s.w(j) {
		case "may", "might", "possibly", "perhaps", "possible", "likely", "ensure", "verify", "check", "reasons",
			"causes", "either", "if", "whether", "sure", "e", "eg", "including":
			return true
		case "could":
			return !s.is(j+1, "not", "t")
		}
	}
	return false
}

// setting records the evidence of word i when it is the name of a setting or environment variable
// (APIFY_TOKEN, CHROMA_API_KEY, DATABASE_URL: upper case in the original text, with an
// underscore) that the words around it say is missing or invalid. The server cannot work until
// someone edits its configuration: a missing credential is AUTH, any other setting UNKNOWN, and
// both are the server's, never the call's.
func (s *textScan) setting(i int) {
	wd := s.words[i]
	name := s.orig[wd.start:wd.end]
	if !isSettingName(name) && !(isUpperName(name) && s.before(i, 3, "variable", "var", "env", "environment")) {
		// An upper-case name without an underscore is a setting only where the text says it is
		// one: "Environment variable TOKEN is not set".
		return
	}
	missing := s.after(i, 4, "required", "missing", "unset", "undefined", "empty", "needed") ||
		s.after(i, 4, "not") && s.after(i, 6, "set", "configured", "provided", "defined", "found", "specified", "present") ||
		s.after(i, 3, "must", "should") && s.after(i, 6, "set", "provided", "specified", "configured", "defined") ||
		s.is(i-1, "missing", "no", "without") || s.before(i, 2, "requires", "require") ||
		s.before(i, 3, "ensure", "check", "verify") && s.after(i, 6, "configured", "set", "provided", "defined") ||
		s.before(i, 4, "set", "provide", "define", "configure", "export") && s.before(i, 6, "please", "must", "need", "forgot") ||
		s.before(i, 3, "variable", "var", "env", "environment") && s.after(i, 6, "not", "required", "missing")
	invalid := s.after(i, 4, "invalid", "incorrect", "expired", "rejected", "revoked", "wrong", "malformed") ||
		s.before(i, 3, "invalid", "incorrect", "expired", "rejected", "revoked", "wrong")
	if !missing && !invalid {
		return
	}
	cred := isCredentialName(name)
	switch {
	case cred && missing:
		s.addConfig(hit{t: ledger.Auth, cause: "credential_missing", spec: specExact, scope: serverWide})
	case cred:
		s.f.add(hit{t: ledger.Auth, cause: "invalid_credentials", spec: specExact, scope: serverWide})
	default:
		s.addConfig(hit{t: ledger.Unknown, cause: "config_missing", spec: specExact, scope: serverWide})
	}
}

// namesCredential reports whether the text names a credential: a key, token, secret, password
// or credentials, as a word or as the last part of a name (clientSecret, api_key).
func namesCredential(s *textScan) bool {
	for i := range s.words {
		w := s.w(i)
		switch w {
		case "credentials", "credential", "token", "apikey", "api_key", "secret", "password", "clientsecret", "client_secret":
			return true
		case "key":
			if s.is(i-1, "api", "access", "secret", "private") {
				return true
			}
		}
		if strings.HasSuffix(w, "secret") || strings.HasSuffix(w, "_token") || strings.HasSuffix(w, "apikey") {
			return true
		}
	}
	return false
}

// exceptionName reads an exception's or error code's name (AWS's ConditionalCheckFailedException,
// ValidationException, ProvisionedThroughputExceededException; ZERO_RESULTS, MAX_ELEMENTS_EXCEEDED)
// by its family: the call's (a conflict, invalid input, an empty result, a size limit) or a rate.
func exceptionName(w string) (hit, bool) {
	switch {
	case strings.HasSuffix(w, "throughputexceededexception"), strings.HasSuffix(w, "limitexceededexception"),
		w == "over_query_limit", w == "quota_limit_exceeded":
		return hit{t: ledger.RateLimit, cause: "rate_limited", spec: specExact, scope: serverWide}, true
	case strings.HasSuffix(w, "conditionalcheckfailedexception"), strings.HasSuffix(w, "conflictexception"),
		strings.HasSuffix(w, "alreadyexistsexception"), strings.HasSuffix(w, "inuseexception"):
		return hit{t: ledger.Unknown, cause: "conflict", spec: specExact, scope: perCall}, true
	case strings.HasSuffix(w, "validationexception"), strings.HasSuffix(w, "invalidparameterexception"),
		strings.HasSuffix(w, "invalidrequestexception"):
		return hit{t: ledger.Malformed, cause: "invalid_params", spec: specExact, scope: perCall}, true
	case w == "zero_results", w == "no_results", w == "no_result", w == "noresults", w == "empty_result":
		return hit{t: ledger.Unknown, cause: "empty_result", spec: specExact, scope: perCall}, true
	case strings.HasPrefix(w, "max_") && strings.HasSuffix(w, "_exceeded"):
		return hit{t: ledger.Unknown, cause: "too_large", spec: specExact, scope: perCall}, true
	}
	return hit{}, false
}

// toolWord is a tool's own name as one word of a text: the part after its server, lower-cased,
// without underscores or dashes ("mcp__web__fetch" → "fetch", "get_file" → "getfile").
func toolWord(tool string) string {
	t := lowerASCII(tool)
	if i := strings.LastIndex(t, "__"); i >= 0 {
		t = t[i+2:]
	}
	return strings.NewReplacer("_", "", "-", "").Replace(t)
}

// runtimeError reports whether word i starts the words of a JavaScript or Python runtime error:
// "x is not a function", "is not defined", "has no attribute", "is not subscriptable", "object is
// not callable", "Cannot read properties of undefined", a NoneType.
func runtimeError(s *textScan, i int) bool {
	switch s.w(i) {
	case "nonetype", "attributeerror", "referenceerror", "keyerror", "indexerror", "unboundlocalerror", "nameerror":
		return true
	case "is":
		return s.is(i+1, "not") && (s.is(i+2, "defined", "subscriptable", "callable", "iterable") ||
			s.is(i+2, "a") && s.is(i+3, "function", "constructor"))
	case "has":
		return s.is(i+1, "no") && s.is(i+2, "attribute")
	case "properties", "property":
		return s.is(i-1, "read", "set") && s.is(i+1, "of") && s.is(i+2, "undefined", "null")
	}
	return false
}

// credentialCode reports whether w, an error code in snake case (SUBSCRIPTION_TOKEN_INVALID,
// api_key_expired), joins a credential and a verdict on it.
func credentialCode(w string) bool {
	var cred, verdict bool
	parts := strings.Split(w, "_")
	for k, p := range parts {
		switch p {
		case "token", "apikey", "credential", "credentials", "secret", "password", "authorization", "auth":
			cred = true
		case "key":
			cred = cred || k > 0 && (parts[k-1] == "api" || parts[k-1] == "access" || parts[k-1] == "secret")
		case "invalid", "expired", "revoked", "rejected", "unauthorized", "incorrect", "bad", "wrong", "missing":
			verdict = true
		}
	}
	return cred && verdict
}

// isSettingName reports whether w reads as a setting or environment variable: upper-case letters
// and digits with at least one underscore, five bytes or more, starting with a letter.
func isSettingName(w string) bool {
	if len(w) < 5 || !strings.Contains(w, "_") || w[0] < 'A' || w[0] > 'Z' || strings.HasSuffix(w, "_") {
		return false
	}
	for _, code := range []string{"_ERROR", "_EXCEPTION", "_FAILED", "_FAILURE", "_DENIED", "_INVALID", "_EXCEEDED",
		"_FOUND", "_LIMIT", "_RESULTS", "_EXPIRED", "_REQUIRED", "_MISSING"} {
		if strings.HasSuffix(w, code) {
			return false // an error code (SQLITE_ERROR, OVER_QUERY_LIMIT), not a setting
		}
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// isUpperName reports whether w is three or more upper-case letters and digits, starting with a
// letter (TOKEN, HOST, APIKEY).
func isUpperName(w string) bool {
	if len(w) < 3 || w[0] < 'A' || w[0] > 'Z' {
		return false
	}
	for i := 0; i < len(w); i++ {
		if c := w[i]; !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// isCredentialName reports whether a setting's name names a credential.
func isCredentialName(w string) bool {
	for _, part := range strings.Split(w, "_") {
		switch part {
		case "KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASS", "PWD", "PASSWD", "CREDENTIAL", "CREDENTIALS",
			"AUTH", "PAT", "BEARER", "JWT", "CLIENTSECRET", "ACCESSTOKEN":
			return true
		}
	}
	return false
}

// addCall keeps h as the call evidence when it is the first, or more specific than what was found.
func (s *textScan) addCall(h hit) {
	if !s.call.ok() || h.spec > s.call.spec {
		s.call = h
	}
}

// match returns the position of the first of the rules ns whose context holds at word i, or -1.
func (s *textScan) match(ns []int32, i int) int {
next:
	for _, n := range ns {
		r := &s.rules[n]
		for j := range r.When {
			if !s.holds(&r.When[j], i) {
				continue next
			}
		}
		return int(n)
	}
	return -1
}

// w returns word i, or "" outside the text.
func (s *textScan) w(i int) string {
	if i < 0 || i >= len(s.words) {
		return ""
	}
	return s.text[s.words[i].start:s.words[i].end]
}

// is reports whether word i is one of ws.
func (s *textScan) is(i int, ws ...string) bool {
	w := s.w(i)
	if w == "" {
		return false
	}
	for _, x := range ws {
		if w == x {
			return true
		}
	}
	return false
}

// seq reports whether the words from i on are ws, in order.
func (s *textScan) seq(i int, ws ...string) bool {
	for k, x := range ws {
		if s.w(i+k) != x {
			return false
		}
	}
	return true
}

// before reports whether one of the n words before i is one of ws.
func (s *textScan) before(i, n int, ws ...string) bool {
	for j := i - 1; j >= 0 && j >= i-n; j-- {
		if s.is(j, ws...) {
			return true
		}
	}
	return false
}

// after reports whether one of the n words after i is one of ws.
func (s *textScan) after(i, n int, ws ...string) bool {
	for j := i + 1; j < len(s.words) && j <= i+n; j++ {
		if s.is(j, ws...) {
			return true
		}
	}
	return false
}

// rest returns the text after word i.
func (s *textScan) rest(i int) string { return s.text[s.words[i].end:] }

// isOrgWord reports whether w names who gates a mount: an admin or an organization.
func isOrgWord(w string) bool {
	switch w {
	case "admin", "admins", "administrator", "administrators", "organization", "organisation", "org",
		"workspace", "enterprise", "tenant", "instance", "owner", "owners":
		return true
	}
	return false
}

// orgNear reports whether an org word is among the back words before i or the ahead words after it.
func (s *textScan) orgNear(i, back, ahead int) bool {
	for j := i - back; j <= i+ahead; j++ {
		if j != i && isOrgWord(s.w(j)) {
			return true
		}
	}
	return false
}

// toolNameThenMissing reports whether rest, the text after the word "tool", is " NAME not found" or
// " NAME does not exist": one name, then the verdict. A looser match would take "tool call failed:
// file not found" for a missing tool.
func toolNameThenMissing(rest string) bool {
	if len(rest) < 2 || rest[0] != ' ' {
		return false
	}
	name := strings.IndexByte(rest[1:min(len(rest), 130)], ' ') // tool names are at most 128 long
	if name <= 0 {
		return false
	}
	tail := rest[1+name:]
	return strings.HasPrefix(tail, " not found") || strings.HasPrefix(tail, " was not found") ||
		strings.HasPrefix(tail, " does not exist")
}

// number handles a number at word i: an HTTP status in context, or a JSON-RPC code written -32xxx.
func (s *textScan) number(i int) {
	w, start := s.w(i), s.words[i].start
	if !isDigits(w) {
		return
	}
	switch len(w) {
	case 3:
		n := atoi(w)
		if n < 400 || n > 599 || !s.statusContext(i) {
			return
		}
		if h, ok := statusHit(n); ok {
			s.f.add(h)
			s.status = true
		}
		if h, ok := callStatus(n, s.url); ok {
			if !s.call.ok() || h.spec > s.call.spec {
				s.statusCall = true
			}
			s.addCall(h)
		}
	case 5:
		if start == 0 || s.text[start-1] != '-' || w[0] != '3' || w[1] != '2' {
			return
		}
		if h, ok := codeHit(-atoi(w)); ok {
			if h.cause == "invalid_request" && strings.TrimSpace(s.rest(i)) != "" {
				// Servers put their own refusals of a call under -32600 ("MCP error -32600: File not
				// found: …"): the words after it say what it was.
				h.cause = "bad_request"
			}
			s.f.add(h)
		}
	}
}

// statusContext reports whether the 3-digit number at word i reads as an HTTP status: the whole text,
// after "HTTP", "HTTP/1.1", "status", "code", "error" ("HTTP 401", "status code: 403", "Error 429"), or
// followed by its reason phrase ("401 Unauthorized", "502 Bad Gateway"). "processed 401 items" and
// "exit code 404" are not statuses.
func (s *textScan) statusContext(i int) bool {
	if len(s.words) == 1 {
		return true
	}
	if st := s.words[i].start; s.url && st >= 2 && s.text[st-1] == ' ' && s.text[st-2] == ':' && s.before(i, 40, "get", "post", "put", "patch", "delete", "head") {
		return true // go-github: "GET https://api.github.com/…: 410 This issue was deleted []"
	}
	j := i - 1
	for k := 0; k < 2 && j >= 0 && len(s.w(j)) == 1 && isDigits(s.w(j)); k++ {
		j-- // HTTP/1.1 429
	}
	if j >= 0 && len(s.w(j)) == 5 && s.words[j].start > 0 && s.text[s.words[j].start-1] == '-' && strings.HasPrefix(s.w(j), "32") {
		return true // MCP error -32603: 429 You've exceeded …
	}
	switch s.w(j) {
	case "http", "https", "status", "statuscode", "status_code", "httpstatus", "http_status", "error", "err",
		"response", "returned", "responded", "returning", "answered":
		return true
	case "code":
		return s.w(j-1) != "exit"
	}
	switch s.w(i + 1) {
	case "unauthorized", "forbidden", "not", "too", "bad", "service", "gateway", "internal", "client",
		"server", "error", "payment", "conflict", "gone", "precondition", "unprocessable", "method",
		"unavailable", "proxy", "request", "misdirected", "locked", "unsupported", "insufficient":
		return true
	case "page", "file", "resource":
		return s.is(i+2, "not") // "404 page not found"
	}
	if end, start := s.words[i].end, s.words[i].start; strings.HasPrefix(s.text[end:], " {") || s.is(i-1, "failed", "failure") ||
		start >= 2 && s.text[start-2:start] == ": " && strings.TrimRight(s.text[end:], ".!\n \"'") == "" {
		return true // "Error listing KV namespaces: 500 {"result":null,…}", "Response failed: 500"
	}
	return false
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// atoi converts a short run of ASCII digits; callers check isDigits and the length first.
func atoi(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// callCode reports whether w, a word no rule names, is an API error code for what the call asked
// (invalid_cursor, cant_update_message, already_reacted, channel_is_archived, msg_too_long). The
// codes about credentials (invalid_auth, invalid_token, …) are the table's own words and never get
// here; a code that names a token or an auth is left alone anyway.
func callCode(w string) bool {
	if !strings.Contains(w, "_") || strings.Contains(w, "token") || strings.Contains(w, "auth") ||
		strings.Contains(w, "scope") || strings.Contains(w, "key") || strings.Contains(w, "session") {
		return false
	}
	if strings.HasPrefix(w, "unknown_") && !strings.HasSuffix(w, "_error") && !strings.HasSuffix(w, "_exception") &&
		!strings.HasPrefix(w, "unknown_tool") && !strings.HasPrefix(w, "unknown_method") && !strings.HasPrefix(w, "unknown_host") {
		return true // UNKNOWN_FIELD_NAME, unknown_column: a name the call used that the service does not know
	}
	for _, p := range []string{"invalid_", "cant_", "cannot_", "already_", "duplicate_"} {
		if strings.HasPrefix(w, p) {
			return true
		}
	}
	for _, x := range []string{"_already_exists", "_too_long", "_is_archived", "_not_allowed", "_in_use", "_taken", "_exists",
		"_conflict", "_too_large", "_out_of_range"} {
		if strings.HasSuffix(w, x) {
			return true
		}
	}
	if strings.HasSuffix(w, "_required") && !strings.Contains(w, "approval") && !strings.Contains(w, "payment") &&
		!strings.Contains(w, "login") && !strings.Contains(w, "billing") {
		return true // confirmation_required, field_required
	}
	return false
}
