package failure

import (
	"sync"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// scope says how far a failure reaches (docs/circuits.md). Every rule, HTTP status and JSON-RPC code
// states its own; a failure known only by its type takes typeScope.
//
// Server-wide: transport causes (refused, failed, closed, reset, process exited, DNS, broken pipe,
// 502/503, unreachable network, TLS, spawn failure, overload, an expired MCP session), HTTP 401 and
// every AUTH cause that is about the credentials rather than one tool's permission, ADMIN_GATED and
// RATE_LIMIT.
//
// Per call: NOT_FOUND, MALFORMED, UNKNOWN, a 403 or missing scope on one tool, and every deadline:
// Claude Code's per-tool timeout, a generic "deadline exceeded"/"Request timed out", a 504 and a bare
// 500. A 504 means the gateway is up and the upstream did not answer this request in time, which is
// what one slow tool looks like; putting it on the server key would let one slow tool block its
// healthy siblings. A server that is hung for every call still opens its server circuit through the
// multi-tool rule of docs/circuits.md once two of its tools are OPEN.
type scope uint8

const (
	perCall    scope = iota // the failure is this call's or this tool's: only the tool's circuit counts it
	serverWide              // the failure is the server's: every tool of the server is affected
)

// rule is one row of the classifier's table: when a word of a failure text is one of Words and the
// context around it holds, the text is evidence of Type with Cause.
//
// Words are matched as whole words of the lower-cased text (see splitWords), never as substrings, so
// that "ENOTFOUND" is a DNS failure and "author" is no "auth". When is the context: every condition
// must hold. At one word the first rule that matches, in table order, is the only evidence recorded;
// so a rule that must not fire where an earlier one did not either (a certificate that expired is
// TLS, not a token) says so with [not].
type rule struct {
	Words []string
	When  []cond
	Type  ledger.FailureType
	Cause string
	// Spec is the specificity within the type: between two hits of one type in one text the more
	// specific cause is kept (specGeneric, specExact).
	Spec  int
	Scope scope
	// Fault is FaultCall for the rules that say the request itself was at fault (fault.go): their
	// hits are call evidence, kept apart from the type evidence. Empty for every other rule.
	Fault ledger.Fault
	// Examples are the real texts the rule was written for; TestRuleExamples checks that each one
	// classifies to exactly this rule.
	Examples []string
}

// cond is a condition on the words around the anchor, word i of a text. It is data, not a closure:
// matching then stays a loop over the table with no indirect call, and the scan stays on the stack.
type cond struct {
	op    condOp
	k, n  int      // offsets and counts, as each op says
	words []string // the words the op looks for
	sub   []cond   // the conditions of not, anyOf and allOf
}

type condOp uint8

const (
	opAt          condOp = iota // the word k places from the anchor (negative: before it) is one of words
	opPhrase                    // the words from k places after the anchor on are words, in order
	opWithin                    // one of the n words before the anchor is one of words
	opAhead                     // one of the n words after the anchor is one of words
	opOrg                       // a word naming an admin or an organization is among the n words before or the k after
	opDigits                    // the word k places after the anchor is a number
	opNameMissing               // the anchor is followed by one name and a verdict that it is missing
	opWordAt                    // there is a word k places from the anchor, none of words
	opNot                       // sub[0] does not hold
	opAny                       // one of sub holds
	opAll                       // every one of sub holds
)

// next holds when the word after the anchor is one of ws.
func next(ws ...string) cond { return at(1, ws...) }

// at holds when the word k places from the anchor (negative: before it) is one of ws.
func at(k int, ws ...string) cond { return cond{op: opAt, k: k, words: ws} }

// phrase holds when the words from k places after the anchor (negative: before it) on are ws, in order.
func phrase(k int, ws ...string) cond { return cond{op: opPhrase, k: k, words: ws} }

// within holds when one of the n words before the anchor is one of ws.
func within(n int, ws ...string) cond { return cond{op: opWithin, n: n, words: ws} }

// ahead holds when one of the n words after the anchor is one of ws.
func ahead(n int, ws ...string) cond { return cond{op: opAhead, n: n, words: ws} }

// org holds when a word naming who gates a mount (an admin, an organization) is among the back words
// before the anchor or the fwd words after it.
func org(back, fwd int) cond { return cond{op: opOrg, n: back, k: fwd} }

// digitsAt holds when the word k places after the anchor is a number.
func digitsAt(k int) cond { return cond{op: opDigits, k: k} }

// wordAt holds when there is a word k places from the anchor and it is none of ws.
func wordAt(k int, ws ...string) cond { return cond{op: opWordAt, k: k, words: ws} }

// nameThenMissing holds when the anchor is followed by one name and a verdict that it is missing:
// "Tool get-file not found" (see toolNameThenMissing).
var nameThenMissing = cond{op: opNameMissing}

// not holds when c does not.
func not(c cond) cond { return cond{op: opNot, sub: []cond{c}} }

// anyOf holds when one of cs does.
func anyOf(cs ...cond) cond { return cond{op: opAny, sub: cs} }

// allOf holds when every one of cs does.
func allOf(cs ...cond) cond { return cond{op: opAll, sub: cs} }

// afterHeader holds when the word after the anchor, skipping one "header" or one "is", "was",
// "has" or "are", is one of ws: "authorization header missing" and "authentication is required"
// read as "authorization missing" and "authentication required".
func afterHeader(ws ...string) cond {
	return anyOf(next(ws...), allOf(next("header", "is", "was", "has", "are"), at(2, ws...)))
}

// holds reports whether c holds at word i of s.
func (s *textScan) holds(c *cond, i int) bool {
	switch c.op {
	case opAt:
		return s.is(i+c.k, c.words...)
	case opPhrase:
		return s.seq(i+c.k, c.words...)
	case opWithin:
		return s.before(i, c.n, c.words...)
	case opAhead:
		return s.after(i, c.n, c.words...)
	case opOrg:
		return s.orgNear(i, c.n, c.k)
	case opDigits:
		return isDigits(s.w(i + c.k))
	case opNameMissing:
		return toolNameThenMissing(s.rest(i))
	case opWordAt:
		return s.w(i+c.k) != "" && !s.is(i+c.k, c.words...)
	case opNot:
		return !s.holds(&c.sub[0], i)
	case opAny:
		for j := range c.sub {
			if s.holds(&c.sub[j], i) {
				return true
			}
		}
		return false
	case opAll:
		for j := range c.sub {
			if !s.holds(&c.sub[j], i) {
				return false
			}
		}
		return true
	}
	return false
}

// credentialNoun holds at a word that names a credential: "token" and "key" only as an API's,
// an access's or an OAuth's (a "key not found" is a row of a store; a "token limit" a model's
// budget), the others as they are.
var credentialNoun = anyOf(
	allOf(at(0, "key", "keys"), at(-1, "api", "access", "secret", "license", "subscription", "private", "auth", "consumer")),
	allOf(at(0, "token", "tokens"), at(-1, "api", "access", "oauth", "bearer", "auth", "personal", "refresh", "session", "security", "valid",
		"id", "the", "your", "jwt", "authentication", "integration", "bot", "user", "app"),
		not(next("limit", "limits", "count", "usage", "budget"))),
	at(0, "credentials", "credential", "apikey", "api_key"),
	allOf(at(0, "secret"), at(-1, "client", "api", "app")))

// Word lists the table shares.
var (
	credentialWords = []string{"token", "tokens", "credentials", "credential", "password", "apikey", "api_key",
		"authentication", "auth", "bearer", "jwt", "username", "login", "secret", "signature"}
	invalidWords = []string{"invalid", "incorrect", "wrong", "bad", "malformed"}
)

// table is the classifier's rules and their index by word, built on first use (about 0.1 ms).
// A zero sync.Once, not sync.OnceValue, so that nothing at all runs at package initialisation, and
// a hook process pays for the table only when a call failed.
var table struct {
	once  sync.Once
	rules []rule
	index map[string][]int32 // each word of the table → the positions of its rules, in table order
}

// rules returns the classifier's table.
func rules() []rule {
	table.once.Do(buildTable)
	return table.rules
}

// ruleIndex returns the positions of the rules of each word, in table order.
func ruleIndex() map[string][]int32 {
	table.once.Do(buildTable)
	return table.index
}

func buildTable() {
	table.rules = buildRules()
	table.index = map[string][]int32{}
	for n, r := range table.rules {
		for _, w := range r.Words {
			table.index[w] = append(table.index[w], int32(n))
		}
	}
}

// buildRules writes out the table. Within one word the order is the order of trial.
func buildRules() []rule {
	return append(callRules(), typeRules()...)
}

// typeRules are the rules that name a failure's type.
func typeRules() []rule {
	return []rule{
		// ADMIN_GATED: the mount or tool waits for an admin. Kept tight: it trips at once and never
		// half-opens by itself.
		{Words: []string{"approval"}, When: []cond{anyOf(org(2, 0),
			within(1, "requires", "require", "required", "pending", "awaiting", "needs", "need"), next("required", "pending"))},
			Type: ledger.AdminGated, Cause: "admin_approval", Spec: specExact, Scope: serverWide,
			Examples: []string{"This tool requires admin approval", "Instance admin approval required", "pending approval"}},
		{Words: []string{"approved"}, When: []cond{anyOf(within(1, "until"), allOf(within(3, "not"), org(0, 4)))},
			Type: ledger.AdminGated, Cause: "admin_approval", Spec: specExact, Scope: serverWide,
			Examples: []string{"Tool unavailable until approved", "This app has not been approved by your administrator"}},
		{Words: []string{"enablement"}, When: []cond{anyOf(within(3, "pending", "awaiting"), org(2, 0))},
			Type: ledger.AdminGated, Cause: "admin_approval", Spec: specExact, Scope: serverWide,
			Examples: []string{"Pending org enablement"}},
		{Words: []string{"enabled"}, When: []cond{within(3, "not", "t"), org(0, 4)},
			Type: ledger.AdminGated, Cause: "admin_approval", Spec: specExact, Scope: serverWide,
			Examples: []string{"This connector is not enabled for your organization", "It has not been enabled by your administrator"}},
		{Words: []string{"disabled", "blocked", "restricted"}, When: []cond{next("by", "for"), org(0, 4)},
			Type: ledger.AdminGated, Cause: "org_policy", Spec: specExact, Scope: serverWide,
			Examples: []string{"This app has been disabled by your administrator", "blocked by organization policy"}},
		// The organization switched it off: "Your organization has disabled this integration".
		{Words: []string{"disabled", "blocked", "restricted"}, When: []cond{within(3, "has", "have", "had"), org(4, 0)},
			Type: ledger.AdminGated, Cause: "org_policy", Spec: specExact, Scope: serverWide,
			Examples: []string{"Your organization has disabled this integration"}},
		// The plan does not include it: "This feature requires a paid plan", "your plan does not
		// include this feature". Someone who owns the account must upgrade it.
		{Words: []string{"plan", "plans"}, When: []cond{anyOf(within(3, "paid", "premium", "enterprise", "higher", "business", "pro"),
			ahead(3, "does", "doesn", "include", "includes")), anyOf(within(5, "requires", "require", "required", "upgrade", "available"),
			ahead(3, "does", "doesn", "include", "includes"))},
			Type: ledger.AdminGated, Cause: "plan_required", Spec: specExact, Scope: serverWide,
			Examples: []string{"This feature requires a paid plan", "Forbidden (403) — your plan does not include this feature."}},
		// The same in other words: "This feature is not available on your current plan", a trial
		// that ended, a subscription the account does not have.
		{Words: []string{"plan", "plans", "tier"}, When: []cond{within(3, "your", "current"), within(7, "not", "isn", "unavailable", "excluded"),
			not(within(12, "limit", "limits", "quota", "rate", "requests"))},
			Type: ledger.AdminGated, Cause: "plan_required", Spec: specExact, Scope: serverWide,
			Examples: []string{"This feature is not available on your current plan"}},
		{Words: []string{"trial"}, When: []cond{ahead(3, "expired", "ended", "over")},
			Type: ledger.AdminGated, Cause: "plan_required", Spec: specExact, Scope: serverWide,
			Examples: []string{"Your trial has expired"}},
		{Words: []string{"subscription"}, When: []cond{anyOf(next("required", "needed", "expired", "inactive", "cancelled", "canceled", "lapsed"),
			within(3, "requires", "require", "active", "paid", "valid"))},
			Type: ledger.AdminGated, Cause: "plan_required", Spec: specExact, Scope: serverWide,
			Examples: []string{"Subscription required", "This endpoint requires an active subscription"}},
		// A license or an account feature the plan lacks: "This operation requires an Enterprise
		// license", "Feature not enabled for this account".
		{Words: []string{"license", "licence"}, When: []cond{anyOf(within(4, "requires", "require", "required", "enterprise", "premium", "paid"),
			ahead(3, "required", "expired"))},
			Type: ledger.AdminGated, Cause: "plan_required", Spec: specExact, Scope: serverWide,
			Examples: []string{"Error: This operation requires an Enterprise license"}},
		{Words: []string{"enabled"}, When: []cond{within(3, "not"), within(4, "feature", "features", "product", "capability", "addon"),
			ahead(4, "account", "plan", "subscription", "tier")},
			Type: ledger.AdminGated, Cause: "plan_required", Spec: specExact, Scope: serverWide,
			Examples: []string{"Error: Feature not enabled for this account"}},
		// An API or billing a project's owner must enable: "Google Drive API has not been used in
		// project … or it is disabled. Enable it by visiting …", "You must enable Billing on the project".
		{Words: []string{"disabled", "enable", "enabled"}, When: []cond{anyOf(within(14, "api", "service"), ahead(3, "api", "billing")),
			anyOf(within(14, "project"), ahead(10, "project")),
			not(within(3, "tool", "feature", "parameter", "option"))},
			Type: ledger.AdminGated, Cause: "admin_approval", Spec: specExact, Scope: serverWide,
			Examples: []string{"Google Drive API has not been used in project 123456789012 before or it is disabled. Enable it by visiting https://console.developers.google.com/",
				"You must enable Billing on the Google Cloud Project"}},
		{Words: []string{"blocks", "prohibits", "forbids", "disallows"}, When: []cond{within(4, "policy", "policies"), org(4, 8)},
			Type: ledger.AdminGated, Cause: "org_policy", Spec: specExact, Scope: serverWide,
			Examples: []string{"Your organization's access policy blocks the MCP server. Contact your IT admin to adjust the policy for this connector."}},
		{Words: []string{"consent"}, When: []cond{org(2, 0)},
			Type: ledger.AdminGated, Cause: "admin_approval", Spec: specExact, Scope: serverWide,
			Examples: []string{"AADSTS90094: administrator consent required"}},
		{Words: []string{"restrictions"}, When: []cond{within(3, "oauth", "app")},
			Type: ledger.AdminGated, Cause: "org_policy", Spec: specExact, Scope: serverWide,
			Examples: []string{"Although you appear to have the correct authorization credentials, the `acme` organization has enabled OAuth App access restrictions"}},
		{Words: []string{"admin_approval", "admin_approval_required", "approval_required", "pending_approval", "admin_gated",
			"pending_enablement"},
			Type: ledger.AdminGated, Cause: "admin_approval", Spec: specExact, Scope: serverWide,
			Examples: []string{`{"error":"admin_approval_required"}`}},

		{Words: []string{"restricted_action", "team_access_not_granted", "ekm_access_denied"},
			Type: ledger.AdminGated, Cause: "org_policy", Spec: specExact, Scope: serverWide,
			Examples: []string{`{"ok":false,"error":"restricted_action"}`, "team_access_not_granted"}},

		// AUTH
		// GitHub: "403 Resource protected by organization SAML enforcement": the token, for every call.
		{Words: []string{"saml", "sso"}, When: []cond{ahead(3, "enforcement", "authorization", "authorize", "required", "session")},
			Type: ledger.Auth, Cause: "sso_required", Spec: specExact, Scope: serverWide,
			Examples: []string{"403 Resource protected by organization SAML enforcement. You must grant your Personal Access token access to this organization."}},
		{Words: []string{"unauthorized", "unauthorised", "unauthenticated", "not_authed", "auth_required", "login_required",
			"authentication_required", "unauthorizedexception", "reauthenticate", "reauthorize"},
			Type: ledger.Auth, Cause: "unauthorized", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"unauthorized", `calling "initialize": sending "initialize": Unauthorized`, `{"ok":false,"error":"not_authed"}`}},
		{Words: []string{"forbidden", "access_denied", "accessdenied", "accessdeniedexception", "permission_denied",
			"permissiondenied", "permission_error", "insufficient_permissions", "forbiddenexception"},
			Type: ledger.Auth, Cause: "forbidden", Spec: specGeneric, Scope: perCall,
			Examples: []string{"forbidden", `calling "initialize": sending "initialize": Forbidden`}},
		{Words: []string{"denied"}, When: []cond{within(1, "permission", "access")},
			Type: ledger.Auth, Cause: "forbidden", Spec: specGeneric, Scope: perCall,
			Examples: []string{"permission denied", "Access denied"}},
		{Words: []string{"permission", "permissions", "privileges"}, When: []cond{anyOf(
			within(1, "insufficient", "missing", "lacks", "lack", "lacking"),
			allOf(within(1, "have", "has", "no"), within(3, "not", "t", "no", "without")))},
			Type: ledger.Auth, Cause: "forbidden", Spec: specGeneric, Scope: perCall,
			Examples: []string{"You do not have permission to perform this action", "insufficient permissions"}},
		{Words: []string{"bad_credentials", "invalid_credentials", "invalid_auth", "invalid_token", "invalid_api_key",
			"invalid_grant", "invalid_client", "token_revoked", "account_inactive", "authentication_failed",
			"authentication_error", "incorrect_api_key", "invalidtoken", "invalidapikey"},
			Type: ledger.Auth, Cause: "invalid_credentials", Spec: specExact, Scope: serverWide,
			Examples: []string{`{"ok":false,"error":"invalid_auth"}`, `{"error":"invalid_grant"}`}},
		{Words: []string{"token_expired", "expired_token", "tokenexpired", "tokenexpirederror", "expiredtoken",
			"expiredtokenexception"},
			Type: ledger.Auth, Cause: "token_expired", Spec: specExact, Scope: serverWide,
			Examples: []string{"TokenExpiredError: jwt expired", `{"error":"token_expired"}`}},
		{Words: []string{"insufficient_scope", "missing_scope", "insufficientscope"},
			Type: ledger.Auth, Cause: "insufficient_scope", Spec: specExact, Scope: perCall,
			Examples: []string{`Bearer error="insufficient_scope", scope="files:read"`}},
		{Words: []string{"scope", "scopes"}, When: []cond{within(1, "insufficient", "missing")},
			Type: ledger.Auth, Cause: "insufficient_scope", Spec: specExact, Scope: perCall,
			Examples: []string{"missing scopes: repo"}},
		// OAuth device flow: the user has not finished signing in; a person must act.
		{Words: []string{"authorization_pending"},
			Type: ledger.Auth, Cause: "auth_pending", Spec: specExact, Scope: serverWide,
			Examples: []string{`{"error":"authorization_pending"}`}},
		// "expired" after a certificate is TLS, not a token.
		{Words: []string{"expired"}, When: []cond{not(within(3, "certificate", "cert", "x509")), anyOf(
			within(3, "token", "tokens", "credential", "credentials", "jwt", "session", "authentication",
				"auth", "password", "apikey", "api_key", "login", "oauth"),
			phrase(-2, "api", "key"), phrase(-3, "api", "key"),
			next("token", "tokens", "credential", "credentials", "jwt", "session", "access", "oauth", "refresh",
				"bearer", "api", "authentication"))},
			Type: ledger.Auth, Cause: "token_expired", Spec: specExact, Scope: serverWide,
			Examples: []string{"token has expired", "The access token provided has expired.", "Your session has expired, please log in again", "expired token"}},
		{Words: []string{"credentials", "credential", "password"}, When: []cond{within(1, "bad", "invalid", "incorrect", "wrong")},
			Type: ledger.Auth, Cause: "invalid_credentials", Spec: specExact, Scope: serverWide,
			Examples: []string{"Bad credentials", `{"message":"Bad credentials","documentation_url":"https://docs.github.com/rest"}`}},
		{Words: []string{"credentials", "credential", "password"}, When: []cond{within(1, "missing", "no")},
			Type: ledger.Auth, Cause: "unauthorized", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"missing credentials"}},
		{Words: []string{"authentication", "authorization", "authorisation", "auth", "authn"},
			When: []cond{afterHeader("failed", "failure", "invalid", "error", "rejected", "malformed")},
			Type: ledger.Auth, Cause: "invalid_credentials", Spec: specExact, Scope: serverWide,
			Examples: []string{"authentication failed", "Authorization header invalid"}},
		{Words: []string{"authentication", "authorization", "authorisation", "auth", "authn"},
			When: []cond{afterHeader("required", "needed", "missing")},
			Type: ledger.Auth, Cause: "unauthorized", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"authorization header missing", "authentication required"}},
		{Words: []string{"authentication", "authorization", "authorisation", "auth", "authn"}, When: []cond{afterHeader("expired")},
			Type: ledger.Auth, Cause: "token_expired", Spec: specExact, Scope: serverWide,
			Examples: []string{"Authentication expired"}},
		{Words: []string{"authentication", "authorization", "authorisation", "auth", "authn"}, When: []cond{afterHeader("denied")},
			Type: ledger.Auth, Cause: "forbidden", Spec: specGeneric, Scope: perCall,
			Examples: []string{"authorization denied"}},
		// "invalid X", "incorrect X", "bad X", "malformed X", and "X is invalid".
		{Words: invalidWords, When: []cond{
			anyOf(within(4, "token", "credentials", "password", "jwt"), phrase(-4, "api", "key"), phrase(-3, "api", "key")),
			within(2, "is", "are", "was", "or")},
			Type: ledger.Auth, Cause: "invalid_credentials", Spec: specExact, Scope: serverWide,
			Examples: []string{"Access token is missing or invalid", "API key is invalid"}},
		{Words: invalidWords, When: []cond{next(credentialWords...)},
			Type: ledger.Auth, Cause: "invalid_credentials", Spec: specExact, Scope: serverWide,
			Examples: []string{"invalid token", "Invalid bearer token"}},
		{Words: invalidWords, When: []cond{next("api", "access", "oauth", "refresh", "client"), at(2, "key", "token", "credentials", "secret")},
			Type: ledger.Auth, Cause: "invalid_credentials", Spec: specExact, Scope: serverWide,
			Examples: []string{"Incorrect API key provided: sk-abc***xyz.", "invalid access token"}},
		{Words: []string{"bad"}, When: []cond{next("request")},
			Type: ledger.Malformed, Cause: "http_400", Spec: specGeneric, Scope: perCall,
			Examples: []string{"Bad Request: missing field"}},
		// "Invalid request" in a tool's text: this request, as an API words it; the JSON-RPC -32600
		// (invalid_request) is the protocol's.
		{Words: invalidWords, When: []cond{next("request")},
			Type: ledger.Malformed, Cause: "bad_request", Spec: specGeneric, Scope: perCall,
			Examples: []string{"Invalid request"}},
		{Words: invalidWords, When: []cond{next("json", "response", "character", "utf")},
			Type: ledger.Malformed, Cause: "parse_error", Spec: specGeneric, Scope: perCall,
			Examples: []string{"invalid character 'S' looking for beginning of value", "Malformed response from server"}},
		{Words: invalidWords, When: []cond{next("params", "parameters", "parameter", "argument", "arguments", "input", "arg", "args")},
			Type: ledger.Malformed, Cause: "invalid_params", Spec: specGeneric, Scope: perCall,
			Examples: []string{"MCP error -32602: Invalid params", "invalid arguments for tool"}},
		{Words: []string{"malformed"}, When: []cond{not(next("api", "access", "oauth", "refresh", "client"))},
			Type: ledger.Malformed, Cause: "parse_error", Spec: specGeneric, Scope: perCall,
			Examples: []string{"malformed body"}},
		{Words: []string{"missing"}, When: []cond{anyOf(next("authorization", "credentials", "bearer", "api_key", "apikey",
			"access_token", "auth", "authentication"), phrase(1, "api", "key"))},
			Type: ledger.Auth, Cause: "unauthorized", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"missing API key", "Missing bearer token"}},
		{Words: []string{"missing"}, When: []cond{next("required", "parameter", "parameters", "argument", "arguments", "field", "property")},
			Type: ledger.Malformed, Cause: "invalid_params", Spec: specGeneric, Scope: perCall,
			Examples: []string{"missing required argument 'path'"}},
		{Words: []string{"not"}, When: []cond{next("authorized", "authorised")},
			Type: ledger.Auth, Cause: "forbidden", Spec: specGeneric, Scope: perCall,
			Examples: []string{"User is not authorized to access this resource"}},
		{Words: []string{"not"}, When: []cond{anyOf(next("authenticated"), phrase(1, "logged", "in"), phrase(1, "logged", "into"))},
			Type: ledger.Auth, Cause: "unauthorized", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"Not authenticated", "You are not logged in"}},
		{Words: []string{"not"}, When: []cond{next("acceptable")},
			Type: ledger.Malformed, Cause: "not_acceptable", Spec: specGeneric, Scope: perCall,
			Examples: []string{`sending "initialize": Not Acceptable`}},
		{Words: []string{"login", "log"}, When: []cond{anyOf(next("required"), phrase(1, "in", "again"), next("again"))},
			Type: ledger.Auth, Cause: "unauthorized", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"login required", "please log in again"}},

		// Credential prose: a key, token or credentials and a verdict on them, in any order of words
		// ("The API key you provided was rejected", "API key not valid", "OAuth token not found",
		// "the credentials supplied are invalid"). A missing one is the configuration's.
		{Words: []string{"key", "keys", "token", "tokens", "credentials", "credential", "apikey", "api_key", "secret"},
			When: []cond{credentialNoun, ahead(6, "rejected", "invalid", "incorrect", "revoked", "disabled",
				"deactivated", "unrecognized", "unrecognised", "wrong", "bad", "refused", "denied", "unauthorized")},
			Type: ledger.Auth, Cause: "invalid_credentials", Spec: specExact, Scope: serverWide,
			Examples: []string{"The API key you provided was rejected", "The access token supplied was revoked"}},
		{Words: []string{"key", "keys", "token", "tokens", "credentials", "credential", "apikey", "api_key", "secret"},
			When: []cond{credentialNoun, anyOf(allOf(ahead(3, "not"), ahead(5, "valid", "recognized", "recognised", "authorized", "accepted")),
				allOf(ahead(4, "no"), ahead(5, "longer")))},
			Type: ledger.Auth, Cause: "invalid_credentials", Spec: specExact, Scope: serverWide,
			Examples: []string{"API key not valid. Please pass a valid API key.",
				"MCP error -32600: Authentication tokens are no longer valid. Please restart the server to re-authenticate."}},
		{Words: []string{"key", "keys", "token", "tokens", "credentials", "credential", "apikey", "api_key", "secret"},
			When: []cond{credentialNoun, anyOf(ahead(4, "required", "missing", "needed"),
				allOf(ahead(3, "not"), ahead(5, "found", "set", "provided", "configured", "present", "supplied", "specified")),
				allOf(ahead(3, "must", "should"), ahead(6, "provided", "set", "configured", "specified", "supplied")))},
			Type: ledger.Auth, Cause: "credential_missing", Spec: specExact, Scope: serverWide,
			Examples: []string{"OAuth token not found", "API key is required", "An API token must be provided"}},
		// A credential that cannot be found or is configured nowhere: "Unable to locate credentials",
		// "No refresh token is set", "No LLM API key or LLM Client configured".
		{Words: []string{"credentials", "credential", "key", "keys", "token", "tokens", "apikey", "api_key"},
			When: []cond{credentialNoun, anyOf(
				allOf(within(3, "locate", "find", "load", "obtain", "retrieve", "read"), within(5, "unable", "could", "cannot", "failed", "not")),
				allOf(within(3, "no"), ahead(6, "set", "configured", "provided", "found", "present", "available")))},
			Type: ledger.Auth, Cause: "credential_missing", Spec: specExact, Scope: serverWide,
			Examples: []string{"Unable to locate credentials", "MCP error -32603: No refresh token is set."}},
		// The account or its connection went stale: "This account connection is no longer valid".
		{Words: []string{"account", "connection", "login", "authorization"}, When: []cond{ahead(4, "no"), ahead(5, "longer"), ahead(6, "valid")},
			Type: ledger.Auth, Cause: "invalid_credentials", Spec: specExact, Scope: serverWide,
			Examples: []string{"This Firecrawl account connection is no longer valid."}},
		// Told to get a credential first: "You must use an API key to authenticate each request".
		{Words: []string{"use", "create", "get", "obtain"}, When: []cond{within(2, "must", "please", "need", "needs", "first", "fix"),
			ahead(2, "api", "access", "an", "a"), ahead(3, "key", "token")},
			Type: ledger.Auth, Cause: "credential_missing", Spec: specExact, Scope: serverWide,
			Examples: []string{"Place search failed: You must use an API key to authenticate each request to Google Maps Platform APIs."}},
		// Asked for a credential: "Please provide a user token", "provide an API key".
		{Words: []string{"provide", "supply", "set"}, When: []cond{within(2, "please", "must", "need", "to"),
			anyOf(ahead(3, "token", "credentials", "credential", "apikey", "api_key", "password"), allOf(ahead(3, "api"), ahead(4, "key")))},
			Type: ledger.Auth, Cause: "credential_missing", Spec: specExact, Scope: serverWide,
			Examples: []string{"Cannot add responders with account level auth. Please provide a user token."}},
		// A credential without the access it needs: "API key does not have access to any organizations".
		{Words: []string{"key", "keys", "token", "tokens", "apikey", "api_key"},
			When: []cond{credentialNoun, ahead(3, "not", "lacks", "lack"), ahead(5, "access", "permission", "permissions", "scope", "scopes")},
			Type: ledger.Auth, Cause: "insufficient_scope", Spec: specExact, Scope: serverWide,
			Examples: []string{"API key does not have access to any organizations."}},
		// "Silent token acquisition failed", "token refresh failed": getting a credential failed.
		{Words: []string{"token", "tokens", "credential", "credentials"}, When: []cond{next("acquisition", "refresh", "exchange", "renewal", "validation", "verification"),
			ahead(4, "failed", "failure", "error")},
			Type: ledger.Auth, Cause: "invalid_credentials", Spec: specExact, Scope: serverWide,
			Examples: []string{"Silent token acquisition failed"}},
		{Words: invalidWords, When: []cond{next("authorization", "authentication", "auth"), ahead(3, "header", "token", "credentials", "scheme")},
			Type: ledger.Auth, Cause: "invalid_credentials", Spec: specExact, Scope: serverWide,
			Examples: []string{"failed to get principal: invalid authorization header: expected 'Bearer <token>' format"}},
		// A configured key of the wrong shape: "API key must start with "sk_"".
		{Words: []string{"key", "keys", "token", "tokens", "apikey", "api_key", "secret"},
			When: []cond{credentialNoun, ahead(2, "must", "should"), ahead(4, "start", "begin", "match", "be", "contain", "have")},
			Type: ledger.Auth, Cause: "invalid_credentials", Spec: specExact, Scope: serverWide,
			Examples: []string{`API key must start with "sk_".`}},
		// "unknown API key - check your credentials": a key the service does not know.
		{Words: []string{"unknown", "unrecognized", "unrecognised"}, When: []cond{anyOf(next(credentialWords...),
			allOf(ahead(2, "api", "access", "oauth", "bearer", "consumer", "secret"), ahead(3, "key", "token", "keys", "tokens")))},
			Type: ledger.Auth, Cause: "invalid_credentials", Spec: specExact, Scope: serverWide,
			Examples: []string{"Honeycomb API error: unknown API key - check your credentials"}},
		// "Invalid Tavily API key", "incorrect Acme token": a vendor's name between the verdict and the key.
		{Words: invalidWords, When: []cond{ahead(3, "api", "access", "oauth", "bearer", "consumer"), ahead(4, "key", "token", "keys", "tokens")},
			Type: ledger.Auth, Cause: "invalid_credentials", Spec: specExact, Scope: serverWide,
			Examples: []string{"Invalid Tavily API key: the value does not start with 'tvly-'"}},
		{Words: []string{"authorization", "authentication", "auth"}, When: []cond{next("header"), ahead(4, "malformed", "badly", "invalid", "incorrectly", "improperly")},
			Type: ledger.Auth, Cause: "invalid_credentials", Spec: specExact, Scope: serverWide,
			Examples: []string{"bad request: Authorization header is badly formatted"}},
		{Words: []string{"scope", "scopes"}, When: []cond{within(5, "requires", "require", "required", "needs", "need")},
			Type: ledger.Auth, Cause: "insufficient_scope", Spec: specExact, Scope: perCall,
			Examples: []string{"`manage_organizations` requires `ai:execute_admin` scope in production"}},
		{Words: []string{"authenticate", "authenticated", "authorize"}, When: []cond{within(3, "failed", "unable", "could", "cannot", "couldn", "not"),
			not(within(3, "was", "were"))},
			Type: ledger.Auth, Cause: "invalid_credentials", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"Unable to authenticate with the service", "Could not authenticate"}},
		{Words: []string{"authenticated", "authorized"}, When: []cond{within(2, "no"), ahead(2, "accounts", "account", "user", "users", "session", "sessions", "clients")},
			Type: ledger.Auth, Cause: "unauthorized", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"MCP error -32600: No authenticated accounts available. Please run authentication first."}},
		{Words: []string{"authenticate", "authorize", "login", "auth"}, When: []cond{anyOf(at(-1, "re"), allOf(at(-1, "run"), within(3, "please", "must", "need")))},
			Type: ledger.Auth, Cause: "unauthorized", Spec: specGeneric, Scope: serverWide,
			Examples: []string{`Failed to refresh access token. Please run "npm run auth" to re-authenticate.`}},
		{Words: []string{"configuration", "config", "credentials"}, When: []cond{next("file"), ahead(4, "not", "missing"), not(within(2, "run", "launch"))},
			Type: ledger.Unknown, Cause: "config_missing", Spec: specExact, Scope: serverWide,
			Examples: []string{"Spotify configuration file not found at /home/alex/spotify-mcp-server/spotify-config.json. Please create one."}},
		// Told to sign in first: "You must be logged in to do that", "you need to be signed in".
		{Words: []string{"logged", "signed"}, When: []cond{next("in", "into"), within(3, "must", "need", "needs", "have", "has", "be")},
			Type: ledger.Auth, Cause: "unauthorized", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"You must be logged in to do that"}},
		// "Login failed for user 'sa'": the configured login, refused.
		{Words: []string{"login", "logon", "signin"}, When: []cond{next("failed", "failure", "incorrect", "invalid", "denied", "rejected")},
			Type: ledger.Auth, Cause: "invalid_credentials", Spec: specExact, Scope: serverWide,
			Examples: []string{"Error: Login failed for user 'sa'"}},
		// The account itself is switched off: "Your account has been suspended", "Account disabled".
		{Words: []string{"account"}, When: []cond{anyOf(next("disabled", "suspended", "deactivated", "locked", "banned", "inactive", "blocked"),
			ahead(4, "suspended", "deactivated", "banned")), not(within(3, "service"))},
			Type: ledger.Auth, Cause: "account_disabled", Spec: specExact, Scope: serverWide,
			Examples: []string{"Error: Your account has been suspended", "Error: Account disabled"}},
		{Words: []string{"sign"}, When: []cond{next("in"), within(3, "please", "must", "need", "again")},
			Type: ledger.Auth, Cause: "unauthorized", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"Please sign in again"}},

		// Quota prose: credits, balances and plan limits.
		{Words: []string{"credits", "credit", "balance", "funds"}, When: []cond{anyOf(within(3, "insufficient", "out", "no", "exhausted",
			"exceeded", "enough", "low", "remaining", "depleted"), ahead(4, "exhausted", "exceeded", "low", "depleted", "insufficient"))},
			Type: ledger.RateLimit, Cause: "quota_exceeded", Spec: specExact, Scope: serverWide,
			Examples: []string{"Insufficient credits to perform this request", "Your credit balance is too low"}},
		{Words: []string{"limit", "limits"}, When: []cond{anyOf(next("exceeded", "reached", "hit"), within(3, "reached", "exceeded", "hit")),
			within(2, "monthly", "daily", "hourly", "plan", "account", "free", "tier", "subscription", "quota")},
			Type: ledger.RateLimit, Cause: "quota_exceeded", Spec: specExact, Scope: serverWide,
			Examples: []string{"Monthly limit reached for your plan"}},
		// The account's own allowance: "You have reached your droplet limit", "exceeded your seat limit".
		{Words: []string{"limit", "limits"}, When: []cond{within(3, "your"), within(5, "reached", "exceeded", "hit"),
			not(within(2, "usage", "spend", "spending", "credit", "billing", "monthly", "daily", "hourly", "plan", "account", "free",
				"tier", "subscription", "quota", "request", "requests", "api", "call", "calls", "concurrency", "rate"))},
			Type: ledger.RateLimit, Cause: "quota_exceeded", Spec: specExact, Scope: serverWide,
			Examples: []string{"You have reached your droplet limit. Please contact support to increase your limit."}},
		{Words: []string{"exceeds", "exceeded", "exceed", "over"}, When: []cond{ahead(7, "limit", "limits", "quota", "allowance", "cap"),
			ahead(6, "plan", "usage", "account", "subscription", "billing", "pay", "credit", "monthly", "daily", "tier")},
			Type: ledger.RateLimit, Cause: "quota_exceeded", Spec: specExact, Scope: serverWide,
			Examples: []string{"This request exceeds your plan's set usage limit.", "This request exceeds the pay-as-you-go limit."}},
		{Words: []string{"quickly", "fast", "frequently", "often"}, When: []cond{at(-1, "too"), within(5, "requests", "request", "calls", "querying", "requesting")},
			Type: ledger.RateLimit, Cause: "rate_limited", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"DDG detected an anomaly in the request, you are likely making requests too quickly."}},
		{Words: []string{"payment"}, When: []cond{next("required")},
			Type: ledger.RateLimit, Cause: "quota_exceeded", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"402 Payment Required"}},

		// RATE_LIMIT
		{Words: []string{"rate"}, When: []cond{next("limit", "limited", "limits", "limiting", "exceeded")},
			Type: ledger.RateLimit, Cause: "rate_limited", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"API rate limit exceeded for user ID 1234.", "ThrottlingException: Rate exceeded", "rate limited, retry after 30s"}},
		{Words: []string{"ratelimit", "ratelimited", "rate_limit", "rate_limited", "rate_limit_exceeded", "ratelimitexceeded",
			"rate_limit_error", "ratelimiterror", "ratelimitexception", "rate_limit_reached", "too_many_requests",
			"toomanyrequests", "toomanyrequestsexception", "throttled", "throttling", "throttlingexception",
			"slowdown", "requestlimitexceeded", "request_limit_exceeded"},
			Type: ledger.RateLimit, Cause: "rate_limited", Spec: specGeneric, Scope: serverWide,
			Examples: []string{`{"ok":false,"error":"ratelimited"}`, "throttled: retry in 5 seconds", `{"error":"too_many_requests","retry_after_seconds":12}`}},
		{Words: []string{"too"}, When: []cond{next("many"), at(2, "requests", "calls")},
			Type: ledger.RateLimit, Cause: "rate_limited", Spec: specGeneric, Scope: serverWide,
			Examples: []string{`calling "initialize": rejected by transport: sending "initialize": Too Many Requests`}},
		{Words: []string{"slow"}, When: []cond{next("down")},
			Type: ledger.RateLimit, Cause: "rate_limited", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"SlowDown: Please reduce your request rate. slow down"}},
		{Words: []string{"quota"}, When: []cond{anyOf(next("exceeded", "exhausted", "reached", "exceed", "limit"),
			within(3, "exceeded", "exceed", "insufficient", "exhausted", "reached", "out", "over"))},
			Type: ledger.RateLimit, Cause: "quota_exceeded", Spec: specExact, Scope: serverWide,
			Examples: []string{"upstream said: quota exceeded", "You exceeded your current quota, please check your plan and billing details."}},
		{Words: []string{"quota_exceeded", "quotaexceeded", "insufficient_quota", "resource_exhausted", "resourceexhausted",
			"quota_exhausted", "usage_limit_exceeded"},
			Type: ledger.RateLimit, Cause: "quota_exceeded", Spec: specExact, Scope: serverWide,
			Examples: []string{`{"error":{"code":"insufficient_quota"}}`}},
		{Words: []string{"resource"}, When: []cond{next("exhausted")},
			Type: ledger.RateLimit, Cause: "quota_exceeded", Spec: specExact, Scope: serverWide,
			Examples: []string{"Resource exhausted"}},
		{Words: []string{"limit", "limits", "cap"}, When: []cond{anyOf(next("exceeded", "reached", "hit"), within(3, "reached", "exceeded", "hit")),
			within(1, "usage", "spend", "spending", "credit", "billing")},
			Type: ledger.RateLimit, Cause: "quota_exceeded", Spec: specExact, Scope: serverWide,
			Examples: []string{"You have reached your usage limit for this month", "spend limit exceeded"}},
		{Words: []string{"limit"}, When: []cond{anyOf(next("exceeded", "reached", "hit"), within(3, "reached", "exceeded", "hit")),
			within(1, "request", "requests", "api", "call", "calls", "concurrency")},
			Type: ledger.RateLimit, Cause: "rate_limited", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"API limit exceeded", "concurrency limit reached"}},

		// NOT_FOUND: the tool, not whatever the tool looked for ("file not found" is the call's business).
		// The TypeScript SDK answers a call of a disabled tool with -32602 "Tool X disabled".
		{Words: []string{"active", "enabled"}, When: []cond{within(4, "tool"), within(2, "not"), not(within(8, "project", "api", "billing"))},
			Type: ledger.NotFound, Cause: "tool_disabled", Spec: specExact, Scope: perCall,
			Examples: []string{"Tool 'execute_shell_command' is not active. Active tools: ['activate_project']"}},
		{Words: []string{"available"}, When: []cond{within(2, "not", "no", "longer"), within(4, "tool"), not(next("for", "on", "in", "with", "to"))},
			Type: ledger.NotFound, Cause: "tool_missing", Spec: specExact, Scope: perCall,
			Examples: []string{"Error: This tool is not available"}},
		{Words: []string{"disabled"}, When: []cond{within(3, "tool"), not(next("by", "for"))},
			Type: ledger.NotFound, Cause: "tool_disabled", Spec: specExact, Scope: perCall,
			Examples: []string{"MCP error -32602: Tool deploy_preview disabled"}},
		{Words: []string{"no"}, When: []cond{phrase(1, "such", "tool")},
			Type: ledger.NotFound, Cause: "tool_missing", Spec: specExact, Scope: perCall,
			Examples: []string{"<tool_use_error>Error: No such tool available: mcp__probe__nope</tool_use_error>"}},
		{Words: []string{"no"}, When: []cond{phrase(1, "such", "host")},
			Type: ledger.Timeout, Cause: "dns", Spec: specExact, Scope: serverWide,
			Examples: []string{"dial tcp: lookup api.example.invalid on 127.0.0.53:53: no such host"}},
		{Words: []string{"no"}, When: []cond{phrase(1, "route", "to", "host")},
			Type: ledger.Timeout, Cause: "network_unreachable", Spec: specExact, Scope: serverWide,
			Examples: []string{"dial tcp 10.0.0.9:443: connect: no route to host"}},
		{Words: []string{"no"}, When: []cond{anyOf(next("credentials"), phrase(1, "api", "key"))},
			Type: ledger.Auth, Cause: "unauthorized", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"No API key found in request"}},
		{Words: []string{"unknown"}, When: []cond{next("tool", "method")},
			Type: ledger.NotFound, Cause: "tool_missing", Spec: specExact, Scope: perCall,
			Examples: []string{`unknown tool "search_v2"`}},
		{Words: []string{"method"}, When: []cond{anyOf(phrase(1, "not", "found"), nameThenMissing)},
			Type: ledger.NotFound, Cause: "tool_missing", Spec: specExact, Scope: perCall,
			Examples: []string{"MCP error -32601: Method not found"}},
		{Words: []string{"tool"}, When: []cond{anyOf(phrase(1, "not", "found"), nameThenMissing)},
			Type: ledger.NotFound, Cause: "tool_missing", Spec: specExact, Scope: perCall,
			Examples: []string{"MCP error -32602: Tool get-file not found", "Tool not found"}},
		{Words: []string{"tool_missing", "unknown_tool", "unknowntool", "toolnotfound", "tool_not_found", "method_not_found",
			"methodnotfound"},
			Type: ledger.NotFound, Cause: "tool_missing", Spec: specExact, Scope: perCall,
			Examples: []string{"tool_missing: search not in tools/list"}},
		{Words: []string{"no_tools"},
			Type: ledger.NotFound, Cause: "no_tools", Spec: specExact, Scope: perCall,
			Examples: []string{"no_tools"}},

		// TIMEOUT: transport causes first.
		{Words: []string{"econnrefused"},
			Type: ledger.Timeout, Cause: "connection_refused", Spec: specExact, Scope: serverWide,
			Examples: []string{"Error: connect ECONNREFUSED 127.0.0.1:3000"}},
		{Words: []string{"refused"}, When: []cond{within(2, "connection", "actively")},
			Type: ledger.Timeout, Cause: "connection_refused", Spec: specExact, Scope: serverWide,
			Examples: []string{`calling "initialize": rejected by transport: dial tcp 127.0.0.1:9: connect: connection refused`,
				"No connection could be made because the target machine actively refused it."}},
		{Words: []string{"econnreset"},
			Type: ledger.Timeout, Cause: "connection_reset", Spec: specExact, Scope: serverWide,
			Examples: []string{"Error: read ECONNRESET"}},
		{Words: []string{"reset"}, When: []cond{anyOf(within(1, "connection"), phrase(1, "by", "peer"))},
			Type: ledger.Timeout, Cause: "connection_reset", Spec: specExact, Scope: serverWide,
			Examples: []string{"ConnectionResetError: [Errno 104] Connection reset by peer"}},
		{Words: []string{"hang"}, When: []cond{within(1, "socket"), next("up")},
			Type: ledger.Timeout, Cause: "connection_reset", Spec: specExact, Scope: serverWide,
			Examples: []string{"Error: socket hang up"}},
		{Words: []string{"epipe"},
			Type: ledger.Timeout, Cause: "broken_pipe", Spec: specExact, Scope: serverWide,
			Examples: []string{"Error: write EPIPE"}},
		{Words: []string{"pipe"}, When: []cond{within(1, "broken")},
			Type: ledger.Timeout, Cause: "broken_pipe", Spec: specExact, Scope: serverWide,
			Examples: []string{"BrokenPipeError: [Errno 32] Broken pipe"}},
		{Words: []string{"enotfound", "eai_fail", "eai_noname", "getaddrinfo", "nodename"}, When: []cond{not(next("eai_again"))},
			Type: ledger.Timeout, Cause: "dns", Spec: specExact, Scope: serverWide,
			Examples: []string{"getaddrinfo ENOTFOUND api.example.com", "ENOTFOUND"}},
		{Words: []string{"resolve"}, When: []cond{next("host", "hostname")},
			Type: ledger.Timeout, Cause: "dns", Spec: specExact, Scope: serverWide,
			Examples: []string{"curl: (6) Could not resolve host: api.example.com"}},
		{Words: []string{"resolution"}, When: []cond{within(1, "name"), within(4, "temporary", "temporarily")},
			Type: ledger.Timeout, Cause: "dns_unavailable", Spec: specExact, Scope: serverWide,
			Examples: []string{"[Errno -3] Temporary failure in name resolution"}},
		{Words: []string{"eai_again"},
			Type: ledger.Timeout, Cause: "dns_unavailable", Spec: specExact, Scope: serverWide,
			Examples: []string{"getaddrinfo EAI_AGAIN api.example.com"}},
		{Words: []string{"resolution"}, When: []cond{within(1, "name")},
			Type: ledger.Timeout, Cause: "dns", Spec: specExact, Scope: serverWide,
			Examples: []string{"Name resolution failed for api.example.com"}},
		{Words: []string{"name"}, When: []cond{phrase(1, "or", "service", "not", "known")},
			Type: ledger.Timeout, Cause: "dns", Spec: specExact, Scope: serverWide,
			Examples: []string{"Name or service not known"}},
		{Words: []string{"dns"}, When: []cond{next("lookup", "error", "failure", "failed", "resolution")},
			Type: ledger.Timeout, Cause: "dns", Spec: specExact, Scope: serverWide,
			Examples: []string{"DNS lookup failed for api.example.com"}},
		{Words: []string{"etimedout"},
			Type: ledger.Timeout, Cause: "connect_timeout", Spec: specExact, Scope: serverWide,
			Examples: []string{"connect ETIMEDOUT 10.0.0.5:443"}},
		{Words: []string{"ehostunreach", "enetunreach", "enetdown"},
			Type: ledger.Timeout, Cause: "network_unreachable", Spec: specExact, Scope: serverWide,
			Examples: []string{"connect EHOSTUNREACH 10.0.0.5:443"}},
		{Words: []string{"unreachable"}, When: []cond{anyOf(within(1, "host", "network", "server"), next("host", "hosts", "server", "servers", "network", "endpoint", "backend"))},
			Type: ledger.Timeout, Cause: "network_unreachable", Spec: specExact, Scope: serverWide,
			Examples: []string{"Destination Host Unreachable", "ssh: connect to host example.com port 22: Network unreachable"}},
		// "Unable to connect to the remote server", "failed to connect", "Could not connect to …"
		{Words: []string{"connect"}, When: []cond{anyOf(at(-1, "to"), at(-1, "not"), at(-1, "t"), at(-1, "cannot")),
			within(3, "failed", "unable", "could", "cannot", "couldn", "can", "not")},
			Type: ledger.Timeout, Cause: "connection_failed", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"Unable to connect to the remote server", "failed to connect"}},
		{Words: []string{"connection", "connect"}, When: []cond{anyOf(phrase(1, "timed", "out"), next("timeout"))},
			Type: ledger.Timeout, Cause: "connect_timeout", Spec: specExact, Scope: serverWide,
			Examples: []string{"connection timed out", "connect timeout"}},
		// Claude Code: "Connection closed"; the TS SDK's -32000
		{Words: []string{"connection", "connect"}, When: []cond{next("closed", "lost", "dropped", "terminated", "aborted")},
			Type: ledger.Timeout, Cause: "connection_closed", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"Connection closed", "MCP error -32000: Connection closed"}},
		// Qwen Code, when the server died on the call: "MCP tool execution may have completed before
		// the connection failed. Automatic replay was skipped …" (its words only: a "database
		// connection failed" inside a tool's answer says nothing of the MCP server).
		{Words: []string{"connection"}, When: []cond{next("failed"), phrase(-2, "before", "the")},
			Type: ledger.Timeout, Cause: "connection_failed", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"MCP tool execution may have completed before the connection failed."}},
		// Transport prose: what every client library says, in its own words, when it cannot reach
		// the other side ("All connection attempts failed", "Request failed to reach …", "could not
		// be reached", "upstream connect error", "Failed to establish a new connection", "Max
		// retries exceeded with url", "Network error").
		{Words: []string{"attempts", "attempt"}, When: []cond{within(2, "connection", "reconnection", "reconnect", "connect"),
			ahead(3, "failed", "failure", "exceeded")},
			Type: ledger.Timeout, Cause: "connection_failed", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"All connection attempts failed", "Maximum reconnection attempts (2) exceeded."}},
		// The other side went away: "Target page, context or browser has been closed", "server is
		// closing", "write to closed stream", "terminating connection due to administrator command".
		{Words: []string{"closed", "terminated", "terminating"}, When: []cond{anyOf(
			allOf(within(6, "browser", "context", "connection", "session", "server", "stream", "socket", "pipe", "channel"),
				within(2, "been", "was", "is", "has")),
			next("stream", "connection", "pipe", "socket", "channel", "transport", "session"))},
			Type: ledger.Timeout, Cause: "connection_closed", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"Target page, context or browser has been closed", "rejected by transport: write to closed stream",
				"terminating connection due to administrator command"}},
		{Words: []string{"too"}, When: []cond{next("many"), at(2, "clients", "connections", "sessions")},
			Type: ledger.Timeout, Cause: "overloaded", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"sorry, too many clients already", "too many connections"}},
		{Words: []string{"locked", "busy"}, When: []cond{at(-1, "is", "are"), within(3, "database", "db", "table", "resource")},
			Type: ledger.Timeout, Cause: "overloaded", Spec: specGeneric, Scope: perCall,
			Examples: []string{"Database error: database is locked"}},
		{Words: []string{"reach"}, When: []cond{within(3, "failed", "unable", "could", "cannot", "couldn", "not", "t")},
			Type: ledger.Timeout, Cause: "connection_failed", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"Request failed to reach the API", "Unable to reach the server"}},
		{Words: []string{"reached", "contacted"}, When: []cond{at(-1, "be"), within(3, "cannot", "not", "couldn", "t")},
			Type: ledger.Timeout, Cause: "connection_failed", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"The service could not be reached"}},
		{Words: []string{"connection"}, When: []cond{next("error", "errors", "failed", "failure", "problem", "issue")},
			Type: ledger.Timeout, Cause: "connection_failed", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"Connection error.", "connection failure"}},
		{Words: []string{"connect", "connecting"}, When: []cond{anyOf(next("error", "failed", "failure"), at(-1, "upstream"),
			allOf(next("to"), within(2, "error", "failed", "failure", "while")))},
			Type: ledger.Timeout, Cause: "connection_failed", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"upstream connect error or disconnect/reset before headers", "Error connecting to the backend"}},
		{Words: []string{"establish"}, When: []cond{within(3, "failed", "unable", "could", "cannot", "couldn"), ahead(4, "connection")},
			Type: ledger.Timeout, Cause: "connection_failed", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"Failed to establish a new connection"}},
		{Words: []string{"retries"}, When: []cond{at(-1, "max"), next("exceeded")},
			Type: ledger.Timeout, Cause: "connection_failed", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"HTTPSConnectionPool(host='api.example.com', port=443): Max retries exceeded with url: /v1/items"}},
		{Words: []string{"network"}, When: []cond{next("error", "failure", "request", "unreachable", "issue", "problem")},
			Type: ledger.Timeout, Cause: "connection_failed", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"Network error", "network request failed"}},
		{Words: []string{"connecterror", "connectionerror", "apiconnectionerror", "networkerror", "connecttimeout",
			"connecttimeouterror", "connectionrefusederror", "newconnectionerror", "serverdisconnectederror", "clientconnectorerror"},
			Type: ledger.Timeout, Cause: "connection_failed", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"httpx.ConnectError: All connection attempts failed", "APIConnectionError: Connection error."}},
		{Words: []string{"unreachable"}, When: []cond{within(3, "is", "was", "be", "api", "service", "endpoint", "backend", "upstream",
			"remote", "currently")},
			Type: ledger.Timeout, Cause: "network_unreachable", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"The API is unreachable"}},
		// The other side is there but does not answer, or is down: "The upstream server is not
		// responding", "No response from server", "Host not reachable", "Server is down for
		// maintenance", "The server is temporarily unable to service your request".
		{Words: []string{"responding", "unresponsive"}, When: []cond{anyOf(at(0, "unresponsive"), within(2, "not", "stopped", "t"))},
			Type: ledger.Timeout, Cause: "unresponsive", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"The upstream server is not responding"}},
		{Words: []string{"response"}, When: []cond{at(-1, "no"), next("from", "received")},
			Type: ledger.Timeout, Cause: "unresponsive", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"No response from server"}},
		{Words: []string{"reachable"}, When: []cond{within(2, "not", "isn", "t")},
			Type: ledger.Timeout, Cause: "network_unreachable", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"Host not reachable"}},
		{Words: []string{"maintenance"}, When: []cond{anyOf(within(2, "for", "under", "in", "scheduled", "undergoing"), next("mode", "window"))},
			Type: ledger.Timeout, Cause: "unavailable", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"Server is down for maintenance"}},
		{Words: []string{"down"}, When: []cond{within(2, "is", "are", "be", "went", "currently"),
			within(4, "server", "service", "api", "backend", "upstream", "database", "db", "instance", "cluster"),
			not(within(2, "slow", "shut", "shutting", "scale", "scaled", "scaling", "broken", "narrow", "drill"))},
			Type: ledger.Timeout, Cause: "unavailable", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"The API server appears to be down"}},
		{Words: []string{"unable"}, When: []cond{within(2, "temporarily", "currently"), ahead(2, "service", "handle", "process", "serve", "accept")},
			Type: ledger.Timeout, Cause: "unavailable", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"The server is temporarily unable to service your request"}},
		// Gave up after retrying: "Request failed after 3 retries". Per call: it says nothing of
		// where the request went.
		{Words: []string{"retries", "attempts", "tries"}, When: []cond{within(3, "after"), within(5, "failed", "failure", "error", "giving", "gave")},
			Type: ledger.Timeout, Cause: "retries_exhausted", Spec: specGeneric, Scope: perCall,
			Examples: []string{"Error: Request failed after 3 retries"}},
		{Words: []string{"server"}, When: []cond{next("error", "errors"), not(within(2, "mcp", "internal", "language", "lsp", "api")),
			not(ahead(4, "backend", "upstream"))},
			Type: ledger.Timeout, Cause: "http_5xx", Spec: specGeneric, Scope: perCall,
			Examples: []string{"Error: Server error"}},
		// The browser's "Failed to fetch" with nothing after it: the request did not get an answer.
		{Words: []string{"fetch"}, When: []cond{within(2, "failed"), not(wordAt(1))},
			Type: ledger.Timeout, Cause: "request_failed", Spec: specGeneric, Scope: perCall,
			Examples: []string{"Error: Failed to fetch"}},
		// The server's backend out of memory: "OOM command not allowed", "out of memory".
		{Words: []string{"backend", "upstream"}, When: []cond{next("error", "failure", "unavailable", "timeout", "down")},
			Type: ledger.Timeout, Cause: "unavailable", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"MCP error -32603: Google API server error: Backend Error"}},
		// The request to the server's upstream failed, in no more words: "An error occurred while
		// making the request", "Error during request to server".
		{Words: []string{"request"}, When: []cond{anyOf(phrase(-2, "making", "the"), phrase(-2, "sending", "the"), at(-1, "during", "making", "sending")),
			within(6, "error", "failed", "failure")},
			Type: ledger.Timeout, Cause: "request_failed", Spec: specGeneric, Scope: perCall,
			Examples: []string{"MCP error -32603: An error occurred while making the request", "Error executing tool run_sql_query: Error during request to server"}},
		{Words: []string{"unexpected"}, When: []cond{next("error", "exception", "failure", "server")},
			Type: ledger.Unknown, Cause: "internal_error", Spec: specGeneric, Scope: perCall,
			Examples: []string{"An unexpected error occurred. Please check the server logs for details."}},
		{Words: []string{"aborted"}, When: []cond{within(3, "operation", "request", "fetch")},
			Type: ledger.Timeout, Cause: "deadline", Spec: specGeneric, Scope: perCall,
			Examples: []string{"This operation was aborted"}},
		{Words: []string{"breaker"}, When: []cond{at(-1, "circuit"), ahead(3, "open")},
			Type: ledger.Timeout, Cause: "unavailable", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"Graph circuit breaker is open (cooldown 27412 ms). Upstream has failed repeatedly"}},
		// The server's own settings file: "Missing required Databricks connection details in .env file".
		{Words: []string{"missing", "required"}, When: []cond{ahead(8, "env", "dotenv", "environment", "settings", "configuration", "config"),
			not(ahead(3, "argument", "arguments", "parameter", "parameters", "field", "property"))},
			Type: ledger.Unknown, Cause: "config_missing", Spec: specExact, Scope: serverWide,
			Examples: []string{"Error executing tool run_sql_query: Missing required Databricks connection details in .env file"}},
		{Words: []string{"oom", "outofmemoryerror", "enomem", "maxmemory"},
			Type: ledger.Timeout, Cause: "overloaded", Spec: specExact, Scope: serverWide,
			Examples: []string{"OOM command not allowed when used memory > 'maxmemory'."}},
		{Words: []string{"memory"}, When: []cond{phrase(-2, "out", "of")},
			Type: ledger.Timeout, Cause: "overloaded", Spec: specExact, Scope: serverWide,
			Examples: []string{"JavaScript heap out of memory"}},
		// The database the server is configured with: "Unknown database 'analytics'", "database
		// "analytics" does not exist".
		{Words: []string{"database"}, When: []cond{anyOf(at(-1, "unknown"), allOf(ahead(3, "not"), ahead(4, "exist", "exists")))},
			Type: ledger.NotFound, Cause: "database_missing", Spec: specExact, Scope: perCall,
			Examples: []string{"Error: Unknown database 'analytics'", `database "analytics" does not exist`}},
		// The server's own configuration said wrong: "The configured connection string is not valid".
		{Words: []string{"configured"}, When: []cond{anyOf(
			allOf(ahead(6, "not"), ahead(7, "valid", "set", "found", "reachable")),
			ahead(6, "invalid", "incorrect", "wrong", "missing", "malformed")), not(within(2, "not", "no"))},
			Type: ledger.Unknown, Cause: "config_missing", Spec: specExact, Scope: serverWide,
			Examples: []string{"The configured connection string is not valid. Please check the connection string."}},
		{Words: []string{"terminated"}, When: []cond{within(3, "response", "body", "stream", "socket", "request", "reading", "read")},
			Type: ledger.Timeout, Cause: "connection_closed", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"Failed to read Netlify API response body: terminated"}},
		{Words: []string{"ended"}, When: []cond{within(2, "stream", "connection", "socket", "session", "sse")},
			Type: ledger.Timeout, Cause: "connection_closed", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"Error: Failed to observe: Stream ended without completion signal"}},
		{Words: []string{"connection"}, When: []cond{within(5, "error", "problem", "issue", "failure"), next("to", "with")},
			Type: ledger.Timeout, Cause: "connection_failed", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"An error occurred with our connection to Stripe. Request was retried 1 times."}},
		{Words: []string{"found"}, When: []cond{next("no"), ahead(4, "service", "server", "instance", "endpoint", "backend", "worker", "ide")},
			Type: ledger.Timeout, Cause: "unavailable", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"ServerNotFoundError: Found no Serena service in a JetBrains IDE instance for the project"}},
		{Words: []string{"closed"}, When: []cond{within(8, "connection", "socket"), not(next("connection", "socket"))},
			Type: ledger.Timeout, Cause: "connection_closed", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"Error running find: connection 4 to 10.12.0.31:27017 closed"}},
		{Words: []string{"running"}, When: []cond{within(2, "not", "isn", "t"), not(within(6, "command", "script", "test", "tests", "job", "query"))},
			Type: ledger.Timeout, Cause: "unavailable", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"Docker is not running", "Is the daemon running? The server is not running."}},
		{Words: []string{"available"}, When: []cond{within(5, "no"), within(4, "endpoint", "endpoints", "server", "servers", "connection",
			"connections", "backend", "instance", "instances", "worker", "workers", "ide", "service", "host", "hosts")},
			Type: ledger.Timeout, Cause: "unavailable", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"MCP error -32603: No working IDE endpoint available."}},
		{Words: []string{"transport"}, When: []cond{next("error", "failure", "failed")},
			Type: ledger.Timeout, Cause: "connection_failed", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"transport error: unexpected nil response"}},
		{Words: []string{"communicating", "communicate", "communication"}, When: []cond{anyOf(
			within(4, "problem", "error", "failed", "unable", "failure", "cannot", "couldn", "not", "trouble", "issue"),
			next("error", "failure", "failed"))},
			Type: ledger.Timeout, Cause: "connection_failed", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"It looks like there was a problem communicating with the API.", "communication error"}},
		// Node's undici: "TypeError: fetch failed" (the cause, when given, names the errno)
		{Words: []string{"fetch"}, When: []cond{next("failed")},
			Type: ledger.Timeout, Cause: "connection_failed", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"TypeError: fetch failed"}},
		{Words: []string{"disconnected"}, When: []cond{within(2, "server", "client", "peer", "socket", "transport", "stream", "sse", "connection", "session")},
			Type: ledger.Timeout, Cause: "connection_closed", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"httpx.RemoteProtocolError: Server disconnected without sending a response."}},
		// Gemini CLI's and Qwen Code's "Not connected", Cline's `MCP server "x" is not connected.`:
		// what every later call to a server that died meets (none of them restarts it).
		{Words: []string{"connected"}, When: []cond{at(-1, "not")},
			Type: ledger.Timeout, Cause: "connection_closed", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"Not connected", `MCP server "e2e" is not connected.`}},
		{Words: []string{"closed"}, When: []cond{within(1, "transport", "stream", "socket", "channel")},
			Type: ledger.Timeout, Cause: "connection_closed", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"transport closed"}},
		{Words: []string{"closing"}, When: []cond{at(-1, "is"), within(2, "client", "server", "connection", "transport", "session")},
			Type: ledger.Timeout, Cause: "connection_closed", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"client is closing: EOF", "server is closing"}},
		// A parser's list of what it expected ("expected 'RETURN', 'WITH' or <EOF>") names the end
		// of the query, not a closed stream.
		{Words: []string{"eof"}, When: []cond{not(within(3, "or", "expected", "expecting"))},
			Type: ledger.Timeout, Cause: "connection_closed", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"unexpected EOF"}},
		{Words: []string{"transport_closed", "connection_closed", "connectionclosed", "errconnectionclosed"},
			Type: ledger.Timeout, Cause: "connection_closed", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"transport_closed"}},
		// Transport failures spelled as error codes: CONNECTION_FAILED, NETWORK_ERROR, ECONNABORTED.
		{Words: []string{"connection_failed", "connection_error", "connection_refused", "connection_reset", "connection_timeout",
			"network_error", "networkerror_", "econnaborted", "service_unavailable", "serviceunavailable", "upstream_error",
			"upstream_unavailable", "backend_unavailable", "connect_error"},
			Type: ledger.Timeout, Cause: "connection_failed", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"CONNECTION_FAILED: HTTP error: "}},
		{Words: []string{"transport_down"},
			Type: ledger.Timeout, Cause: "transport_down", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"transport_down: spawn failed"}},
		{Words: []string{"exited", "process_exited", "crashed", "sigkill", "sigterm", "sigsegv"},
			Type: ledger.Timeout, Cause: "process_exited", Spec: specExact, Scope: serverWide,
			Examples: []string{"MCP server process exited with code 1", "MCP server crashed"}},
		// Go exec: "exit status 3"; "exit code 1"
		{Words: []string{"exit"}, When: []cond{next("status", "code"), digitsAt(2)},
			Type: ledger.Timeout, Cause: "process_exited", Spec: specExact, Scope: serverWide,
			Examples: []string{"exit status 3"}},
		{Words: []string{"killed", "terminated"}, When: []cond{within(1, "signal")},
			Type: ledger.Timeout, Cause: "process_exited", Spec: specExact, Scope: serverWide,
			Examples: []string{"signal: killed"}},
		{Words: []string{"spawn"}, When: []cond{ahead(3, "enoent", "eacces")},
			Type: ledger.Timeout, Cause: "spawn_failed", Spec: specExact, Scope: serverWide,
			Examples: []string{"Error: spawn npx ENOENT"}},
		{Words: []string{"executable", "command"}, When: []cond{anyOf(phrase(1, "file", "not", "found"), phrase(1, "not", "found"))},
			Type: ledger.Timeout, Cause: "spawn_failed", Spec: specExact, Scope: serverWide,
			Examples: []string{`exec: "no-such-server": executable file not found in $PATH`, "sh: 1: uvx: command not found"}},
		{Words: []string{"x509", "certificate_verify_failed", "cert_has_expired", "unable_to_get_issuer_cert_locally", "self_signed_cert_in_chain",
			"depth_zero_self_signed_cert", "unable_to_verify_leaf_signature", "err_tls_cert_altname_invalid"},
			Type: ledger.Timeout, Cause: "tls", Spec: specExact, Scope: serverWide,
			Examples: []string{"x509: certificate has expired or is not yet valid", "CERT_HAS_EXPIRED"}},
		{Words: []string{"handshake"}, When: []cond{within(1, "tls", "ssl")},
			Type: ledger.Timeout, Cause: "tls", Spec: specExact, Scope: serverWide,
			Examples: []string{"remote error: tls handshake failure"}},
		{Words: []string{"certificate"}, When: []cond{anyOf(next("verify", "expired", "signed", "has", "invalid", "unknown", "is"),
			within(1, "self", "untrusted", "issuer"))},
			Type: ledger.Timeout, Cause: "tls", Spec: specExact, Scope: serverWide,
			Examples: []string{"Error: unable to get local issuer certificate",
				"[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: self signed certificate in certificate chain"}},
		// Claude Code's per-tool deadline: `MCP server "probe" tool "slow" timed out after 3s`. A
		// connection that timed out is the "connection" rule's.
		{Words: []string{"timed"}, When: []cond{next("out"), not(within(1, "connection", "connect")), at(2, "after"), within(12, "tool")},
			Type: ledger.Timeout, Cause: "tool_deadline", Spec: specExact, Scope: perCall,
			Examples: []string{`MCP server "probe" tool "slow" timed out after 3s`, `MCP server "my.server" tool "get-file-contents" timed out after 30s`}},
		{Words: []string{"timed"}, When: []cond{next("out"), not(within(1, "connection", "connect"))},
			Type: ledger.Timeout, Cause: "deadline", Spec: specGeneric, Scope: perCall,
			Examples: []string{"SdkError: Request timed out", "the operation timed out"}},
		{Words: []string{"timeout"}, When: []cond{within(1, "gateway")},
			Type: ledger.Timeout, Cause: "http_504", Spec: specGeneric, Scope: perCall,
			Examples: []string{"Gateway Timeout"}},
		// Go: "dial tcp 10.0.0.1:443: i/o timeout"
		{Words: []string{"timeout"}, When: []cond{phrase(-2, "i", "o"), within(16, "dial")},
			Type: ledger.Timeout, Cause: "connect_timeout", Spec: specExact, Scope: serverWide,
			Examples: []string{"dial tcp 10.255.255.1:443: i/o timeout"}},
		// "timeout of 30000ms exceeded", "i/o timeout", the probe's "timeout"
		{Words: []string{"timeout"}, When: []cond{not(within(1, "connect", "connection"))},
			Type: ledger.Timeout, Cause: "deadline", Spec: specGeneric, Scope: perCall,
			Examples: []string{"timeout of 30000ms exceeded", "read tcp 10.0.0.2:5555->10.0.0.1:443: i/o timeout", "timeout in phase handshake after 5000ms"}},
		{Words: []string{"deadline"}, When: []cond{next("exceeded")},
			Type: ledger.Timeout, Cause: "deadline", Spec: specGeneric, Scope: perCall,
			Examples: []string{"context deadline exceeded"}},
		{Words: []string{"deadline_exceeded", "deadlineexceeded", "timeouterror", "timeoutexception", "timeout_error",
			"request_timeout", "esockettimedout", "econnaborted", "etime"},
			Type: ledger.Timeout, Cause: "deadline", Spec: specGeneric, Scope: perCall,
			Examples: []string{"rpc error: code = DeadlineExceeded desc = context deadline exceeded", "ESOCKETTIMEDOUT"}},
		{Words: []string{"gateway"}, When: []cond{within(1, "bad")},
			Type: ledger.Timeout, Cause: "http_502", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"Bad Gateway"}},
		// "503 Service Unavailable"; gRPC "UNAVAILABLE"; the probe's "unavailable"
		{Words: []string{"unavailable"}, When: []cond{within(1, "service")},
			Type: ledger.Timeout, Cause: "http_503", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"Service Unavailable", `sending "initialize": Service Unavailable`}},
		{Words: []string{"unavailable"},
			Type: ledger.Timeout, Cause: "unavailable", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"unavailable", "rpc error: code = Unavailable desc = connection error"}},
		{Words: []string{"server_unavailable", "service_unavailable", "serviceunavailable", "serviceunavailableexception"},
			Type: ledger.Timeout, Cause: "unavailable", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"server_unavailable"}},
		// Anthropic: "Overloaded", "The model is overloaded"
		{Words: []string{"overloaded", "overloaded_error", "overload"},
			Type: ledger.Timeout, Cause: "overloaded", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"The model is overloaded. Please try again later.", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}},
		{Words: []string{"capacity"}, When: []cond{within(1, "at", "over")},
			Type: ledger.Timeout, Cause: "overloaded", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"The service is over capacity"}},
		{Words: []string{"busy"}, When: []cond{within(2, "server")},
			Type: ledger.Timeout, Cause: "overloaded", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"server is busy"}},
		{Words: []string{"internal"}, When: []cond{phrase(1, "server", "error")},
			Type: ledger.Timeout, Cause: "http_5xx", Spec: specGeneric, Scope: perCall,
			Examples: []string{"Internal Server Error"}},
		{Words: []string{"internal"}, When: []cond{next("error")},
			Type: ledger.Unknown, Cause: "internal_error", Spec: specGeneric, Scope: perCall,
			Examples: []string{"internal error"}},
		// Streamable HTTP: 404 "Session not found" on a stale Mcp-Session-Id; the client re-initialises.
		{Words: []string{"session"}, When: []cond{phrase(1, "not", "found")},
			Type: ledger.Timeout, Cause: "session_expired", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"Bad Request: Session not found"}},
		// The same lost session in other words: "No valid session ID provided", "Transport not found
		// for sessionId …", "session expired", "invalid session id".
		{Words: []string{"session", "sessionid", "session_id"}, When: []cond{anyOf(
			next("expired", "invalid", "terminated", "unknown", "is"),
			allOf(anyOf(next("id", "ids"), at(0, "sessionid", "session_id")), within(4, "no", "invalid", "unknown", "expired", "missing", "not", "valid")))},
			Type: ledger.Timeout, Cause: "session_expired", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"No valid session ID provided", "Error POSTing to endpoint (HTTP 404): Transport not found for sessionId 0b1a1fb1"}},
		{Words: []string{"session_expired", "session_not_found"},
			Type: ledger.Timeout, Cause: "session_expired", Spec: specGeneric, Scope: serverWide,
			Examples: []string{"session_expired"}},

		// MALFORMED
		{Words: []string{"parse"}, When: []cond{next("error", "failure", "failed")},
			Type: ledger.Malformed, Cause: "parse_error", Spec: specGeneric, Scope: perCall,
			Examples: []string{"MCP error -32700: Parse error", "parse failed"}},
		{Words: []string{"parse_error", "parseerror", "jsondecodeerror", "syntaxerror", "jsonexception"},
			Type: ledger.Malformed, Cause: "parse_error", Spec: specGeneric, Scope: perCall,
			Examples: []string{"SyntaxError: Invalid or unexpected token", "json.decoder.JSONDecodeError: Expecting value"}},
		{Words: []string{"unexpected"}, When: []cond{next("token", "end", "character", "char")},
			Type: ledger.Malformed, Cause: "parse_error", Spec: specGeneric, Scope: perCall,
			Examples: []string{"Unexpected token < in JSON at position 0", "failed to decode response: unexpected end of JSON input"}},
		{Words: []string{"unexpected"}, When: []cond{anyOf(ahead(6, "json"), next("response", "reply", "format", "result", "output", "payload"))},
			Type: ledger.Malformed, Cause: "parse_error", Spec: specGeneric, Scope: perCall,
			Examples: []string{"Unexpected non-whitespace character after JSON at position 175", "Unexpected response type"}},
		{Words: []string{"unexpected"}, When: []cond{phrase(1, "content", "type")},
			Type: ledger.Malformed, Cause: "protocol_error", Spec: specGeneric, Scope: perCall,
			Examples: []string{"unexpected content type text/html"}},
		// go-sdk: "unsupported content type \"text/html\""
		{Words: []string{"unsupported"}, When: []cond{phrase(1, "content", "type")},
			Type: ledger.Malformed, Cause: "protocol_error", Spec: specGeneric, Scope: perCall,
			Examples: []string{`unsupported content type "text/html"`}},
		{Words: []string{"unsupported"}, When: []cond{phrase(1, "protocol", "version")},
			Type: ledger.Malformed, Cause: "version_mismatch", Spec: specExact, Scope: perCall,
			Examples: []string{"Unsupported protocol version: 2023-01-01"}},
		{Words: []string{"json"}, When: []cond{anyOf(next("parse", "decode", "syntax"), phrase(-2, "not", "valid"))},
			Type: ledger.Malformed, Cause: "parse_error", Spec: specGeneric, Scope: perCall,
			Examples: []string{"JSON parse error", "the body is not valid JSON"}},
		// Go: "json: cannot unmarshal string into Go value of type int" is a shape mismatch.
		{Words: []string{"unmarshal"}, When: []cond{within(1, "cannot")},
			Type: ledger.Malformed, Cause: "schema_mismatch", Spec: specExact, Scope: perCall,
			Examples: []string{"json: cannot unmarshal string into Go struct field Page.total of type int"}},
		{Words: []string{"unmarshal"}, When: []cond{within(2, "failed", "unable", "could")},
			Type: ledger.Malformed, Cause: "parse_error", Spec: specGeneric, Scope: perCall,
			Examples: []string{"failed to unmarshal body"}},
		// go-sdk: "failed to decode response"
		{Words: []string{"decode"}, When: []cond{within(2, "failed", "unable", "cannot", "could")},
			Type: ledger.Malformed, Cause: "parse_error", Spec: specGeneric, Scope: perCall,
			Examples: []string{"failed to decode response"}},
		{Words: []string{"schema"}, When: []cond{anyOf(next("mismatch", "validation", "violation", "error", "invalid"),
			within(6, "match", "conform", "violates", "against"))},
			Type: ledger.Malformed, Cause: "schema_mismatch", Spec: specExact, Scope: perCall,
			Examples: []string{"Structured content does not match the tool's output schema: data must have required property 'id'", "schema validation failed"}},
		{Words: []string{"schema_mismatch", "schema_error", "schemaerror"},
			Type: ledger.Malformed, Cause: "schema_mismatch", Spec: specExact, Scope: perCall,
			Examples: []string{"schema_mismatch"}},
		{Words: []string{"validation"}, When: []cond{next("failed", "error", "errors"), within(1, "token", "signature", "jwt")},
			Type: ledger.Auth, Cause: "invalid_credentials", Spec: specExact, Scope: serverWide,
			Examples: []string{"JWT validation failed"}},
		{Words: []string{"validation"}, When: []cond{next("failed", "error", "errors")},
			Type: ledger.Malformed, Cause: "invalid_params", Spec: specGeneric, Scope: perCall,
			Examples: []string{"Validation error: limit must be a number"}},
		{Words: []string{"invalid_params", "invalidparams", "invalid_arguments", "invalid_argument", "validation_error",
			"validationerror", "zoderror"},
			Type: ledger.Malformed, Cause: "invalid_params", Spec: specGeneric, Scope: perCall,
			Examples: []string{"ZodError: expected string, received number"}},
		// An API's own error type for a request it refused (Meilisearch's "invalid_request"): this
		// request's; the JSON-RPC -32600 code stays the protocol's.
		{Words: []string{"invalid_request", "invalidrequest", "bad_request", "badrequest"},
			Type: ledger.Malformed, Cause: "bad_request", Spec: specGeneric, Scope: perCall,
			Examples: []string{`{"error":"invalid_request"}`}},
		{Words: []string{"protocol"}, When: []cond{next("error")},
			Type: ledger.Malformed, Cause: "protocol_error", Spec: specGeneric, Scope: perCall,
			Examples: []string{"protocol error: unexpected message"}},
		{Words: []string{"protocol_error"},
			Type: ledger.Malformed, Cause: "protocol_error", Spec: specGeneric, Scope: perCall,
			Examples: []string{"protocol_error: non-JSON line on stdout"}},
		{Words: []string{"version_mismatch"},
			Type: ledger.Malformed, Cause: "version_mismatch", Spec: specExact, Scope: perCall,
			Examples: []string{"version_mismatch: supported 2025-06-18, 2025-11-25"}},
		{Words: []string{"not_acceptable"},
			Type: ledger.Malformed, Cause: "not_acceptable", Spec: specGeneric, Scope: perCall,
			Examples: []string{"not_acceptable"}},
		{Words: []string{"not_mcp_endpoint", "endpoint_not_mcp"},
			Type: ledger.Malformed, Cause: "not_mcp_endpoint", Spec: specGeneric, Scope: perCall,
			Examples: []string{"not_mcp_endpoint: 200 text/html on initialize (login page?)", "endpoint_not_mcp"}},

		// UNKNOWN with a name
		{Words: []string{"tool_error"},
			Type: ledger.Unknown, Cause: "tool_error", Spec: specGeneric, Scope: perCall,
			Examples: []string{"tool_error"}},
	}
}

// typeScope is the reach of a failure known only by its type: credentials, an admin's gate and a
// rate limit belong to the server; the rest to the call.
func typeScope(t ledger.FailureType) scope {
	switch t {
	case ledger.AdminGated, ledger.RateLimit, ledger.Auth:
		return serverWide
	}
	return perCall
}
