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

// hit is one piece of evidence: a type and a cause.
type hit struct {
	t     ledger.FailureType
	cause string
	spec  int
}

func (h hit) ok() bool { return h.t != "" }

// found holds the best hit of each type, indexed by precedence rank.
type found [numTypes]hit

func (f *found) add(t ledger.FailureType, cause string, spec int) {
	r := t.Rank()
	if f[r].t == "" || spec > f[r].spec {
		f[r] = hit{t: t, cause: cause, spec: spec}
	}
}

func (f *found) get(t ledger.FailureType) hit { return f[t.Rank()] }

// best returns the hit of highest precedence (SPEC §4), with one refinement: a bare 403 or
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

// textScan finds the evidence in one failure text.
type textScan struct {
	text  string // lower-cased
	words []word
	f     found
}

// scanText returns the best hit of each type found in lower, a text lower-cased by lowerASCII.
func scanText(lower string) found {
	if lower == "" {
		return found{}
	}
	s := textScan{text: lower}
	s.words = splitWords(s.text)
	for i := range s.words {
		s.at(i)
	}
	return s.f
}

func (s *textScan) add(t ledger.FailureType, cause string, spec int) { s.f.add(t, cause, spec) }

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

// at records the evidence that starts at word i. Each case names the texts it is for.
func (s *textScan) at(i int) {
	w := s.w(i)
	switch w {
	// ADMIN_GATED: the mount or tool waits for an admin. Kept tight: it trips at once and never
	// half-opens by itself.
	case "approval":
		// "requires admin approval", "instance admin approval required", "pending approval"
		if s.orgNear(i, 2, 0) || s.before(i, 1, "requires", "require", "required", "pending", "awaiting", "needs", "need") ||
			s.is(i+1, "required", "pending") {
			s.add(ledger.AdminGated, "admin_approval", specExact)
		}
	case "approved":
		// "unavailable until approved", "has not been approved by your administrator"
		if s.before(i, 1, "until") || s.before(i, 3, "not") && s.orgNear(i, 0, 4) {
			s.add(ledger.AdminGated, "admin_approval", specExact)
		}
	case "enablement":
		// "Pending org enablement"
		if s.before(i, 3, "pending", "awaiting") || s.orgNear(i, 2, 0) {
			s.add(ledger.AdminGated, "admin_approval", specExact)
		}
	case "enabled":
		// "not enabled for your organization", "has not been enabled by your administrator"
		if s.before(i, 3, "not", "t") && s.orgNear(i, 0, 4) {
			s.add(ledger.AdminGated, "admin_approval", specExact)
		}
	case "disabled", "blocked", "restricted":
		// "disabled by your administrator", "blocked by organization policy"
		if s.is(i+1, "by", "for") && s.orgNear(i, 0, 4) {
			s.add(ledger.AdminGated, "org_policy", specExact)
		}
	case "consent":
		// Microsoft Entra: "Need admin approval", "administrator consent required"
		if s.orgNear(i, 2, 0) {
			s.add(ledger.AdminGated, "admin_approval", specExact)
		}
	case "restrictions":
		// GitHub: "the org organization has enabled OAuth App access restrictions"
		if s.before(i, 3, "oauth", "app") {
			s.add(ledger.AdminGated, "org_policy", specExact)
		}
	case "admin_approval", "admin_approval_required", "approval_required", "pending_approval", "admin_gated",
		"pending_enablement":
		s.add(ledger.AdminGated, "admin_approval", specExact)

	// AUTH
	case "unauthorized", "unauthorised", "unauthenticated", "not_authed", "auth_required", "login_required",
		"authentication_required", "unauthorizedexception", "reauthenticate", "reauthorize":
		s.add(ledger.Auth, "unauthorized", specGeneric)
	case "forbidden", "access_denied", "accessdenied", "accessdeniedexception", "permission_denied",
		"permissiondenied", "permission_error", "insufficient_permissions", "forbiddenexception":
		s.add(ledger.Auth, "forbidden", specGeneric)
	case "denied":
		// "permission denied", "access denied"
		if s.before(i, 1, "permission", "access") {
			s.add(ledger.Auth, "forbidden", specGeneric)
		}
	case "permission", "permissions", "privileges":
		// "insufficient permissions", "you do not have permission", "has no permission"
		if s.before(i, 1, "insufficient", "missing", "lacks", "lack", "lacking") ||
			s.before(i, 1, "have", "has", "no") && s.before(i, 3, "not", "t", "no", "without") {
			s.add(ledger.Auth, "forbidden", specGeneric)
		}
	case "accessible":
		// GitHub Apps: "Resource not accessible by integration"
		if s.before(i, 1, "not") {
			s.add(ledger.Auth, "forbidden", specGeneric)
		}
	case "bad_credentials", "invalid_credentials", "invalid_auth", "invalid_token", "invalid_api_key",
		"invalid_grant", "invalid_client", "token_revoked", "account_inactive", "authentication_failed",
		"authentication_error", "incorrect_api_key", "invalidtoken", "invalidapikey":
		s.add(ledger.Auth, "invalid_credentials", specExact)
	case "token_expired", "expired_token", "tokenexpired", "tokenexpirederror", "expiredtoken",
		"expiredtokenexception":
		s.add(ledger.Auth, "token_expired", specExact)
	case "insufficient_scope", "missing_scope", "insufficientscope":
		s.add(ledger.Auth, "insufficient_scope", specExact)
	case "scope", "scopes":
		if s.before(i, 1, "insufficient", "missing") {
			s.add(ledger.Auth, "insufficient_scope", specExact)
		}
	case "authorization_pending":
		// OAuth device flow: the user has not finished signing in; a person must act.
		s.add(ledger.Auth, "auth_pending", specExact)
	case "expired":
		// "token has expired", "The access token provided has expired", "expired token", "jwt expired";
		// but not "certificate has expired" (TLS).
		if s.before(i, 3, "certificate", "cert", "x509") {
			break
		}
		if s.before(i, 3, "token", "tokens", "credential", "credentials", "jwt", "session", "authentication",
			"auth", "password", "apikey", "api_key", "login", "oauth") ||
			s.seq(i-2, "api", "key") || s.is(i+1, "token", "tokens", "credential", "credentials", "jwt", "session",
			"access", "oauth", "refresh", "bearer", "api", "authentication") {
			s.add(ledger.Auth, "token_expired", specExact)
		}
	case "credentials", "credential", "password":
		// "Bad credentials" (GitHub), "invalid credentials", "missing credentials"
		switch {
		case s.before(i, 1, "bad", "invalid", "incorrect", "wrong"):
			s.add(ledger.Auth, "invalid_credentials", specExact)
		case s.before(i, 1, "missing", "no"):
			s.add(ledger.Auth, "unauthorized", specGeneric)
		}
	case "authentication", "authorization", "authorisation", "auth", "authn":
		// "authentication failed", "authorization required", "auth error"
		next := s.w(i + 1)
		if next == "header" {
			next = s.w(i + 2) // "authorization header missing"
		}
		switch next {
		case "failed", "failure", "invalid", "error", "rejected", "malformed":
			s.add(ledger.Auth, "invalid_credentials", specExact)
		case "required", "needed", "missing":
			s.add(ledger.Auth, "unauthorized", specGeneric)
		case "expired":
			s.add(ledger.Auth, "token_expired", specExact)
		case "denied":
			s.add(ledger.Auth, "forbidden", specGeneric)
		}
	case "invalid", "incorrect", "wrong", "bad", "malformed":
		s.invalid(i)
	case "missing":
		switch {
		case s.is(i+1, "authorization", "credentials", "bearer", "api_key", "apikey", "access_token", "auth",
			"authentication") || s.seq(i+1, "api", "key"):
			s.add(ledger.Auth, "unauthorized", specGeneric)
		case s.is(i+1, "required", "parameter", "parameters", "argument", "arguments", "field", "property"):
			// "missing required argument 'path'"
			s.add(ledger.Malformed, "invalid_params", specGeneric)
		}
	case "not":
		switch {
		case s.is(i+1, "authorized", "authorised"):
			s.add(ledger.Auth, "forbidden", specGeneric)
		case s.is(i+1, "authenticated") || s.seq(i+1, "logged", "in"):
			s.add(ledger.Auth, "unauthorized", specGeneric)
		case s.is(i+1, "acceptable"):
			// "406 Not Acceptable: Client must accept both application/json and text/event-stream"
			s.add(ledger.Malformed, "not_acceptable", specGeneric)
		}
	case "login", "log":
		// "login required", "please log in again"
		if s.is(i+1, "required") || s.seq(i+1, "in", "again") || s.seq(i+1, "again") {
			s.add(ledger.Auth, "unauthorized", specGeneric)
		}

	// RATE_LIMIT
	case "rate":
		if s.is(i+1, "limit", "limited", "limits", "limiting", "exceeded") {
			s.add(ledger.RateLimit, "rate_limited", specGeneric)
		}
	case "ratelimit", "ratelimited", "rate_limit", "rate_limited", "rate_limit_exceeded", "ratelimitexceeded",
		"rate_limit_error", "ratelimiterror", "ratelimitexception", "rate_limit_reached", "too_many_requests",
		"toomanyrequests", "toomanyrequestsexception", "throttled", "throttling", "throttlingexception",
		"slowdown", "requestlimitexceeded", "request_limit_exceeded":
		s.add(ledger.RateLimit, "rate_limited", specGeneric)
	case "too":
		// "429 Too Many Requests"
		if s.is(i+1, "many") && s.is(i+2, "requests", "calls") {
			s.add(ledger.RateLimit, "rate_limited", specGeneric)
		}
	case "slow":
		if s.is(i+1, "down") {
			s.add(ledger.RateLimit, "rate_limited", specGeneric)
		}
	case "quota":
		// "quota exceeded", "You exceeded your current quota", "insufficient quota"
		if s.is(i+1, "exceeded", "exhausted", "reached", "exceed", "limit") ||
			s.before(i, 3, "exceeded", "exceed", "insufficient", "exhausted", "reached", "out", "over") {
			s.add(ledger.RateLimit, "quota_exceeded", specExact)
		}
	case "quota_exceeded", "quotaexceeded", "insufficient_quota", "resource_exhausted", "resourceexhausted",
		"quota_exhausted", "usage_limit_exceeded":
		s.add(ledger.RateLimit, "quota_exceeded", specExact)
	case "resource":
		if s.is(i+1, "exhausted") {
			s.add(ledger.RateLimit, "quota_exceeded", specExact)
		}
	case "limit":
		// "usage limit reached", "API limit exceeded", "You have reached your usage limit"
		if s.is(i+1, "exceeded", "reached", "hit") || s.before(i, 3, "reached", "exceeded", "hit") {
			switch {
			case s.before(i, 1, "usage", "spend", "spending", "credit", "billing"):
				s.add(ledger.RateLimit, "quota_exceeded", specExact)
			case s.before(i, 1, "request", "requests", "api", "call", "calls", "concurrency"):
				s.add(ledger.RateLimit, "rate_limited", specGeneric)
			}
		}

	// NOT_FOUND: the tool, not whatever the tool looked for ("file not found" is the call's business).
	case "no":
		switch {
		case s.seq(i+1, "such", "tool"):
			s.add(ledger.NotFound, "tool_missing", specExact)
		case s.seq(i+1, "such", "host"):
			s.add(ledger.Timeout, "dns", specExact)
		case s.seq(i+1, "route", "to", "host"):
			s.add(ledger.Timeout, "network_unreachable", specExact)
		case s.is(i+1, "credentials") || s.seq(i+1, "api", "key"):
			s.add(ledger.Auth, "unauthorized", specGeneric)
		}
	case "unknown":
		if s.is(i+1, "tool", "method") {
			s.add(ledger.NotFound, "tool_missing", specExact)
		}
	case "method":
		if s.seq(i+1, "not", "found") {
			s.add(ledger.NotFound, "tool_missing", specExact)
		}
	case "tool":
		// "Tool not found", and the TS SDK's "MCP error -32602: Tool get-file not found"
		if s.seq(i+1, "not", "found") || toolNameThenMissing(s.rest(i)) {
			s.add(ledger.NotFound, "tool_missing", specExact)
		}
	case "tool_missing", "unknown_tool", "unknowntool", "toolnotfound", "tool_not_found", "method_not_found",
		"methodnotfound":
		s.add(ledger.NotFound, "tool_missing", specExact)
	case "no_tools":
		s.add(ledger.NotFound, "no_tools", specExact)

	// TIMEOUT: transport causes first.
	case "econnrefused":
		s.add(ledger.Timeout, "connection_refused", specExact)
	case "refused":
		// "connect: connection refused", "the target machine actively refused it"
		if s.before(i, 2, "connection", "actively") {
			s.add(ledger.Timeout, "connection_refused", specExact)
		}
	case "econnreset":
		s.add(ledger.Timeout, "connection_reset", specExact)
	case "reset":
		if s.before(i, 1, "connection") || s.seq(i+1, "by", "peer") {
			s.add(ledger.Timeout, "connection_reset", specExact)
		}
	case "hang":
		// Node: "socket hang up"
		if s.before(i, 1, "socket") && s.is(i+1, "up") {
			s.add(ledger.Timeout, "connection_reset", specExact)
		}
	case "epipe":
		s.add(ledger.Timeout, "broken_pipe", specExact)
	case "pipe":
		if s.before(i, 1, "broken") {
			s.add(ledger.Timeout, "broken_pipe", specExact)
		}
	case "enotfound", "eai_again", "eai_fail", "eai_noname", "getaddrinfo", "nodename":
		s.add(ledger.Timeout, "dns", specExact)
	case "resolve":
		// curl: "Could not resolve host"
		if s.is(i+1, "host", "hostname") {
			s.add(ledger.Timeout, "dns", specExact)
		}
	case "resolution":
		// "Temporary failure in name resolution"
		if s.before(i, 1, "name") {
			s.add(ledger.Timeout, "dns", specExact)
		}
	case "name":
		if s.seq(i+1, "or", "service", "not", "known") {
			s.add(ledger.Timeout, "dns", specExact)
		}
	case "dns":
		if s.is(i+1, "lookup", "error", "failure", "failed", "resolution") {
			s.add(ledger.Timeout, "dns", specExact)
		}
	case "etimedout":
		s.add(ledger.Timeout, "connect_timeout", specExact)
	case "ehostunreach", "enetunreach", "enetdown":
		s.add(ledger.Timeout, "network_unreachable", specExact)
	case "unreachable":
		if s.before(i, 1, "host", "network", "server") {
			s.add(ledger.Timeout, "network_unreachable", specExact)
		}
	case "connection", "connect":
		switch {
		case w == "connect" && s.is(i-1, "to") && s.before(i, 3, "failed", "unable", "could", "cannot", "couldn"):
			// "Unable to connect to the remote server", "failed to connect"
			s.add(ledger.Timeout, "connection_failed", specGeneric)
		case s.seq(i+1, "timed", "out") || s.is(i+1, "timeout"):
			s.add(ledger.Timeout, "connect_timeout", specExact)
		case s.is(i+1, "closed", "lost", "dropped", "terminated", "aborted"):
			// Claude Code: "Connection closed"; the TS SDK's -32000
			s.add(ledger.Timeout, "connection_closed", specGeneric)
		}
	case "fetch":
		// Node's undici: "TypeError: fetch failed" (the cause, when given, names the errno)
		if s.is(i+1, "failed") {
			s.add(ledger.Timeout, "connection_failed", specGeneric)
		}
	case "disconnected":
		// "Server disconnected without sending a response"
		if s.before(i, 1, "server", "client", "peer", "socket", "transport") {
			s.add(ledger.Timeout, "connection_closed", specGeneric)
		}
	case "closed":
		// mark3labs: "transport closed"
		if s.before(i, 1, "transport", "stream", "socket", "channel") {
			s.add(ledger.Timeout, "connection_closed", specGeneric)
		}
	case "closing":
		// go-sdk: "client is closing: EOF"
		if s.seq(i-2, "client", "is") {
			s.add(ledger.Timeout, "connection_closed", specGeneric)
		}
	case "eof", "transport_closed", "connection_closed", "connectionclosed", "errconnectionclosed":
		s.add(ledger.Timeout, "connection_closed", specGeneric)
	case "transport_down":
		s.add(ledger.Timeout, "transport_down", specGeneric)
	case "exited", "process_exited", "crashed", "sigkill", "sigterm", "sigsegv":
		// "server process exited with code 1", "MCP server crashed"
		s.add(ledger.Timeout, "process_exited", specExact)
	case "exit":
		// Go exec: "exit status 3"; "exit code 1"
		if s.is(i+1, "status", "code") && isDigits(s.w(i+2)) {
			s.add(ledger.Timeout, "process_exited", specExact)
		}
	case "killed", "terminated":
		// Go exec: "signal: killed"
		if s.before(i, 1, "signal") {
			s.add(ledger.Timeout, "process_exited", specExact)
		}
	case "spawn":
		// Node: "spawn npx ENOENT"
		if s.after(i, 3, "enoent", "eacces") {
			s.add(ledger.Timeout, "spawn_failed", specExact)
		}
	case "executable", "command":
		// Go: "exec: \"uvx\": executable file not found in $PATH"; sh: "command not found"
		if s.seq(i+1, "file", "not", "found") || s.seq(i+1, "not", "found") {
			s.add(ledger.Timeout, "spawn_failed", specExact)
		}
	case "x509", "cert_has_expired", "unable_to_get_issuer_cert_locally", "self_signed_cert_in_chain", "depth_zero_self_signed_cert",
		"unable_to_verify_leaf_signature", "err_tls_cert_altname_invalid":
		s.add(ledger.Timeout, "tls", specExact)
	case "handshake":
		if s.before(i, 1, "tls", "ssl") {
			s.add(ledger.Timeout, "tls", specExact)
		}
	case "certificate":
		if s.is(i+1, "verify", "expired", "signed", "has", "invalid", "unknown", "is") ||
			s.before(i, 1, "self", "untrusted", "issuer") {
			s.add(ledger.Timeout, "tls", specExact)
		}
	case "timed":
		if s.is(i+1, "out") {
			s.timedOut(i)
		}
	case "timeout":
		switch {
		case s.before(i, 1, "gateway"):
			s.add(ledger.Timeout, "http_504", specGeneric)
		case s.before(i, 1, "connect", "connection"):
			// recorded by the "connection" case
		case s.seq(i-2, "i", "o") && s.before(i, 16, "dial"):
			// Go: "dial tcp 10.0.0.1:443: i/o timeout"
			s.add(ledger.Timeout, "connect_timeout", specExact)
		default:
			// "timeout of 30000ms exceeded", "i/o timeout", the probe's "timeout"
			s.add(ledger.Timeout, "deadline", specGeneric)
		}
	case "deadline":
		if s.is(i+1, "exceeded") {
			s.add(ledger.Timeout, "deadline", specGeneric)
		}
	case "deadline_exceeded", "deadlineexceeded", "timeouterror", "timeoutexception", "timeout_error",
		"request_timeout", "esockettimedout", "econnaborted", "etime":
		s.add(ledger.Timeout, "deadline", specGeneric)
	case "gateway":
		if s.before(i, 1, "bad") {
			s.add(ledger.Timeout, "http_502", specGeneric)
		}
	case "unavailable":
		// "503 Service Unavailable"; gRPC "UNAVAILABLE"; the probe's "unavailable"
		if s.before(i, 1, "service") {
			s.add(ledger.Timeout, "http_503", specGeneric)
		} else {
			s.add(ledger.Timeout, "unavailable", specGeneric)
		}
	case "server_unavailable", "service_unavailable", "serviceunavailable", "serviceunavailableexception":
		s.add(ledger.Timeout, "unavailable", specGeneric)
	case "overloaded", "overloaded_error", "overload":
		// Anthropic: "Overloaded", "The model is overloaded"
		s.add(ledger.Timeout, "overloaded", specGeneric)
	case "capacity":
		if s.before(i, 1, "at", "over") {
			s.add(ledger.Timeout, "overloaded", specGeneric)
		}
	case "busy":
		if s.before(i, 2, "server") {
			s.add(ledger.Timeout, "overloaded", specGeneric)
		}
	case "internal":
		switch {
		case s.seq(i+1, "server", "error"):
			s.add(ledger.Timeout, "http_5xx", specGeneric)
		case s.is(i+1, "error"):
			s.add(ledger.Unknown, "internal_error", specGeneric)
		}
	case "session":
		// Streamable HTTP: 404 "Session not found" on a stale Mcp-Session-Id; the client re-initialises.
		if s.seq(i+1, "not", "found") {
			s.add(ledger.Timeout, "session_expired", specGeneric)
		}
	case "session_expired", "session_not_found":
		s.add(ledger.Timeout, "session_expired", specGeneric)

	// MALFORMED
	case "parse":
		// "Parse error" (-32700)
		if s.is(i+1, "error", "failure", "failed") {
			s.add(ledger.Malformed, "parse_error", specGeneric)
		}
	case "parse_error", "parseerror", "jsondecodeerror", "syntaxerror", "jsonexception":
		s.add(ledger.Malformed, "parse_error", specGeneric)
	case "unexpected":
		// "Unexpected token < in JSON at position 0", "Unexpected end of JSON input"
		switch {
		case s.is(i+1, "token", "end", "character", "char"):
			s.add(ledger.Malformed, "parse_error", specGeneric)
		case s.seq(i+1, "content", "type"):
			s.add(ledger.Malformed, "protocol_error", specGeneric)
		}
	case "unsupported":
		switch {
		case s.seq(i+1, "content", "type"):
			// go-sdk: "unsupported content type \"text/html\""
			s.add(ledger.Malformed, "protocol_error", specGeneric)
		case s.seq(i+1, "protocol", "version"):
			s.add(ledger.Malformed, "version_mismatch", specExact)
		}
	case "json":
		// "JSON parse error", "is not valid JSON"
		if s.is(i+1, "parse", "decode", "syntax") || s.seq(i-2, "not", "valid") {
			s.add(ledger.Malformed, "parse_error", specGeneric)
		}
	case "unmarshal":
		// Go: "json: cannot unmarshal string into Go value of type int" is a shape mismatch.
		switch {
		case s.before(i, 1, "cannot"):
			s.add(ledger.Malformed, "schema_mismatch", specExact)
		case s.before(i, 2, "failed", "unable", "could"):
			s.add(ledger.Malformed, "parse_error", specGeneric)
		}
	case "decode":
		// go-sdk: "failed to decode response"
		if s.before(i, 2, "failed", "unable", "cannot", "could") {
			s.add(ledger.Malformed, "parse_error", specGeneric)
		}
	case "schema":
		// "does not match the tool's output schema", "schema mismatch", "schema validation failed"
		if s.is(i+1, "mismatch", "validation", "violation", "error", "invalid") ||
			s.before(i, 6, "match", "conform", "violates", "against") {
			s.add(ledger.Malformed, "schema_mismatch", specExact)
		}
	case "schema_mismatch", "schema_error", "schemaerror":
		s.add(ledger.Malformed, "schema_mismatch", specExact)
	case "validation":
		if s.is(i+1, "failed", "error", "errors") {
			if s.before(i, 1, "token", "signature", "jwt") {
				s.add(ledger.Auth, "invalid_credentials", specExact)
			} else {
				s.add(ledger.Malformed, "invalid_params", specGeneric)
			}
		}
	case "invalid_params", "invalidparams", "invalid_arguments", "invalid_argument", "validation_error",
		"validationerror", "zoderror":
		s.add(ledger.Malformed, "invalid_params", specGeneric)
	case "invalid_request", "invalidrequest", "bad_request", "badrequest":
		s.add(ledger.Malformed, "invalid_request", specGeneric)
	case "protocol":
		if s.is(i+1, "error") {
			s.add(ledger.Malformed, "protocol_error", specGeneric)
		}
	case "protocol_error":
		s.add(ledger.Malformed, "protocol_error", specGeneric)
	case "version_mismatch":
		s.add(ledger.Malformed, "version_mismatch", specExact)
	case "not_acceptable":
		s.add(ledger.Malformed, "not_acceptable", specGeneric)
	case "not_mcp_endpoint", "endpoint_not_mcp":
		s.add(ledger.Malformed, "not_mcp_endpoint", specGeneric)

	// UNKNOWN with a name
	case "tool_error":
		s.add(ledger.Unknown, "tool_error", specGeneric)

	default:
		s.number(i)
	}
}

// invalid handles "invalid X", "incorrect X", "bad X", "malformed X" at word i, and "X is invalid".
func (s *textScan) invalid(i int) {
	if s.before(i, 4, "token", "credentials", "password", "jwt") || s.seq(i-4, "api", "key") || s.seq(i-3, "api", "key") {
		// "Access token is missing or invalid", "API key is invalid", "credentials are incorrect"
		if s.before(i, 2, "is", "are", "was", "or") {
			s.add(ledger.Auth, "invalid_credentials", specExact)
			return
		}
	}
	next := s.w(i + 1)
	switch next {
	case "token", "tokens", "credentials", "credential", "password", "apikey", "api_key", "authentication",
		"auth", "bearer", "jwt", "username", "login", "secret", "signature":
		s.add(ledger.Auth, "invalid_credentials", specExact)
		return
	case "api", "access", "oauth", "refresh", "client":
		// "Incorrect API key provided", "invalid access token"
		if s.is(i+2, "key", "token", "credentials", "secret") {
			s.add(ledger.Auth, "invalid_credentials", specExact)
		}
		return
	case "request":
		if s.w(i) == "bad" {
			s.add(ledger.Malformed, "http_400", specGeneric)
		} else {
			s.add(ledger.Malformed, "invalid_request", specGeneric)
		}
		return
	case "json", "response", "character", "utf":
		s.add(ledger.Malformed, "parse_error", specGeneric)
		return
	case "params", "parameters", "parameter", "argument", "arguments", "input", "arg", "args":
		s.add(ledger.Malformed, "invalid_params", specGeneric)
		return
	}
	if s.w(i) == "malformed" {
		s.add(ledger.Malformed, "parse_error", specGeneric)
	}
}

// timedOut handles "timed out" at word i: Claude Code's per-tool deadline
// (`MCP server "probe" tool "slow" timed out after 3s`), a connect timeout, or a generic deadline.
func (s *textScan) timedOut(i int) {
	switch {
	case s.before(i, 1, "connection", "connect"):
		// recorded by the "connection" case
	case s.is(i+2, "after") && s.before(i, 12, "tool"):
		s.add(ledger.Timeout, "tool_deadline", specExact)
	default:
		s.add(ledger.Timeout, "deadline", specGeneric)
	}
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
			s.add(h.t, h.cause, specStatus)
		}
	case 5:
		if start == 0 || s.text[start-1] != '-' || w[0] != '3' || w[1] != '2' {
			return
		}
		if h, ok := codeHit(-atoi(w)); ok {
			s.add(h.t, h.cause, specStatus)
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
	j := i - 1
	for k := 0; k < 2 && j >= 0 && len(s.w(j)) == 1 && isDigits(s.w(j)); k++ {
		j-- // HTTP/1.1 429
	}
	switch s.w(j) {
	case "http", "https", "status", "statuscode", "status_code", "httpstatus", "http_status", "error", "err",
		"response":
		return true
	case "code":
		return s.w(j-1) != "exit"
	}
	switch s.w(i + 1) {
	case "unauthorized", "forbidden", "not", "too", "bad", "service", "gateway", "internal", "client",
		"server", "error", "payment", "conflict", "gone", "precondition", "unprocessable", "method",
		"unavailable", "proxy", "request", "misdirected", "locked", "unsupported", "insufficient":
		return true
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
