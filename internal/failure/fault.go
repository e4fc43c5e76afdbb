package failure

import (
	"strings"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// Whose fault a failure is (docs/classification.md, "Whose fault").
//
// The type says what kind of failure it is; the fault says whether it counts. Every hit names a
// fault through faultOf, from its type, cause and scope, and says how sure that is: a fault from
// the MCP layer or about the server, its credentials, its quota or an admin is strong; one that
// a tool's free text could as well mean for one request (a generic "forbidden", an internal error,
// a deadline, an unknown text) is weak. Evidence that the request itself was at fault (the call
// rules below, and a 4xx on an upstream resource) turns a weak fault into the call's, never a
// strong one: a text that says both "Bad credentials" and "not found" is the credentials'.

// faultContext is what the text says about where a status sits.
type faultContext struct {
	// probe: the evidence is a probe's outcome, which has no request of its own.
	probe bool
	// endpoint: the text is about the MCP endpoint itself (initialize, POSTing to the endpoint,
	// an SSE stream, a path ending in /mcp or /sse), so a 4xx in it is the server's, not the call's.
	endpoint bool
	// output: the text is about the tool's own output failing its schema.
	output bool
	// foreign: a status in the text sits next to a URL the call did not name (the server's own
	// base URL), so it is the server's, not the call's.
	foreign bool
}

// specTarget marks call evidence about where the failure sits rather than what it says: the
// upstream that failed is the one the call named ("Failed to fetch https://…: 503"). It makes the
// failure the call's whatever the failure was, since the tool did its work.
const specTarget = specExact + 1

// isCallCause reports whether cause is one the call rules name (callRules, callStatus): the
// request's own. A switch, not a map: nothing in this package runs at initialisation.
func isCallCause(cause string) bool {
	switch cause {
	case "resource_missing", "object_forbidden", "path_outside_roots", "path_forbidden", "not_allowed",
		"invalid_params", "conflict", "element_missing", "too_large", "target_failed", "script_error", "query_timeout",
		"command_failed", "empty_result", "bad_request", "write_refused":
		return true
	}
	return false
}

// faultOf returns the fault that hit h means on its own, and whether that is weak. A hit known only
// by its type (an explicit --type, a cause no rule names) takes the likely cause of the skill's
// table: a NOT_FOUND is the tool's, an AUTH the credentials'.
func faultOf(h hit, ctx faultContext) (ledger.Fault, bool) {
	if h.cause == "config_missing" {
		return ledger.FaultServer, false
	}
	if isCallCause(h.cause) {
		if ctx.probe || ctx.endpoint {
			return ledger.FaultServer, false
		}
		return ledger.FaultCall, true
	}
	switch h.t {
	case ledger.AdminGated:
		return ledger.FaultAdmin, false
	case ledger.RateLimit:
		return ledger.FaultQuota, false
	case ledger.Auth:
		switch h.cause {
		case "http_403", "forbidden", "insufficient_scope":
			// One tool's permission: the token's for every call of it, unless the words say the
			// request asked for what it may not touch.
			return ledger.FaultCredential, true
		}
		return ledger.FaultCredential, false
	case ledger.NotFound:
		switch h.cause {
		case "tool_missing", "no_tools", "tool_disabled":
			return ledger.FaultTool, false
		case "http_404", "http_410", "jsonrpc_-32002":
			if ctx.probe || ctx.endpoint || ctx.foreign {
				return ledger.FaultServer, false
			}
			return ledger.FaultCall, true
		}
		return ledger.FaultTool, true
	case ledger.Timeout:
		if h.scope == serverWide {
			return ledger.FaultServer, false
		}
		return ledger.FaultTool, true
	case ledger.Malformed:
		switch h.cause {
		case "http_400", "http_422", "http_413", "http_414":
			if ctx.probe || ctx.endpoint || ctx.foreign {
				return ledger.FaultServer, false
			}
			return ledger.FaultCall, true
		case "http_405", "http_406", "http_415":
			// The probe's not_mcp_endpoint and not_acceptable; in a tool's answer, the upstream's
			// refusal of this request ("405 Pull Request is not mergeable").
			if ctx.probe || ctx.endpoint {
				return ledger.FaultServer, false
			}
			return ledger.FaultCall, true
		case "protocol_error", "version_mismatch", "not_acceptable", "not_mcp_endpoint", "invalid_request",
			"jsonrpc_-32020", "jsonrpc_-32021":
			return ledger.FaultServer, false
		}
		return ledger.FaultTool, true // a response that does not parse or fit its schema
	}
	// UNKNOWN: a 4xx the table does not name is the request's (409 Conflict, 412, …).
	if strings.HasPrefix(h.cause, "http_4") && !ctx.probe && !ctx.endpoint && !ctx.foreign {
		return ledger.FaultCall, true
	}
	return ledger.FaultTool, true
}

// settleFault completes the hit that classifies a failure with its fault, and whether that fault
// rests on weak evidence only (Result.Weak): the explicit fault, else
// the hit's own, turned into the call's when it is weak and the text holds call evidence. The call
// evidence then names the failure, unless the caller named the type or a status of the same type
// does: "Issue does not exist or you do not have permission to see it" is a missing issue, "path
// outside allowed directories" names the cause of an "Access denied" better than "forbidden".
func settleFault(ev Evidence, h hit, call hit, ctx faultContext) (hit, ledger.Fault, bool) {
	if ev.Fault.Valid() {
		return h, ev.Fault, false
	}
	fault, weak := faultOf(h, ctx)
	if (ctx.output || ctx.endpoint) && fault == ledger.FaultCall {
		// The tool's output failed its schema, or the MCP endpoint answered: not the request's.
		if ctx.output {
			return h, ledger.FaultTool, false
		}
		return h, ledger.FaultServer, false
	}
	if ctx.probe {
		// A probe sends no arguments: whatever failed, failed for every call.
		if fault == ledger.FaultCall {
			fault = ledger.FaultServer
		}
		return h, fault, false
	}
	if fault == ledger.FaultCall {
		return h, fault, false // already the call's: its own type names it (a 422 with "already exists")
	}
	if call.spec == specTarget && fault != ledger.FaultAdmin {
		if h.t == ledger.Unknown {
			return call, ledger.FaultCall, false
		}
		return h, ledger.FaultCall, false
	}
	if weak && call.ok() {
		if ev.Type.Valid() || h.t == call.t && h.spec == specStatus {
			return h, ledger.FaultCall, false // the type (and the status naming it) stands; only whose fault it is changes
		}
		return call, ledger.FaultCall, false
	}
	return h, fault, weak && fault != ledger.FaultCall
}

// deniedObjects are the objects a call may be refused one of while the credentials are fine.
var deniedObjects = []string{"table", "tables", "schema", "relation", "database", "sequence", "function", "view", "column", "type",
	"tablespace", "bucket", "object", "file", "directory", "path", "repository", "repo", "project", "channel",
	"resource", "page", "folder", "large", "materialized", "procedure", "foreign", "dashboard", "document", "issue",
	"item", "record", "space", "board", "collection", "index", "key", "branch", "team", "site"}

// cannotVerbs are what a server cannot do for any call (connect, reach, start, authenticate, …):
// "cannot" before one of them is no business rule of the call's.
var cannotVerbs = []string{"connect", "reach", "operate", "read", "allocate", "start", "spawn", "load", "initialize", "establish",
	"contact", "communicate", "find", "resolve", "open", "not", "t", "be_found", "get", "authenticate", "verify", "access", "convert"}

// callRules are the words that say the request itself was at fault: what it asked for does not
// exist, it may not touch it, its arguments or its query are wrong, a business rule refused it.
// They come first in the table so that, at the words they share with the type rules ("denied",
// "no", "invalid", "unknown"), the narrower context is tried first; their exclusions keep the
// transport, spawn and credential texts of those words to the type rules.
func callRules() []rule {
	// What a missing binary, module or tool looks like: the server cannot run, nothing the call did.
	install := []string{"tool", "tools", "method", "session", "command", "executable", "module", "package", "binary",
		"browser", "browsers", "chromium", "chrome", "firefox", "webkit", "interpreter", "python", "node", "npx", "uvx",
		"docker", "host", "route", "plugin", "server", "endpoint", "credentials", "token", "key", "keys", "apikey", "api_key",
		"secret", "password", "env", "environment", "variable", "config", "configuration", "certificate", "driver", "library"}
	call := func(r rule) rule {
		r.Fault = ledger.FaultCall
		r.Scope = perCall
		if r.Spec == 0 {
			r.Spec = specExact
		}
		return r
	}
	return []rule{
		// NOT_FOUND: what the call asked for does not exist.
		call(rule{Words: []string{"found", "located"}, When: []cond{anyOf(at(-1, "not"), phrase(-2, "was", "not"), phrase(-2, "wasn", "t"),
			phrase(-2, "not", "be"), phrase(-2, "t", "be")),
			not(within(3, install...)), not(within(12, "spawn", "exec"))},
			Type: ledger.NotFound, Cause: "resource_missing",
			Examples: []string{"Entity with name Alice not found", "Error: Issue not found", "Branch feature-x not found",
				"The resource you requested could not be found"}}),
		call(rule{Words: []string{"find"}, When: []cond{within(2, "not", "t", "cannot", "unable", "couldn"),
			not(ahead(3, install...))},
			Type: ledger.NotFound, Cause: "resource_missing",
			Examples: []string{"Could not find page with ID: 59833787-2cf9-4fdf-8782-e53db20768a5."}}),
		call(rule{Words: []string{"exist", "exists"}, When: []cond{within(2, "not", "t"), not(within(4, install...)),
			not(within(4, "database", "schema")),
			not(within(12, "spawn", "exec"))},
			Type: ledger.NotFound, Cause: "resource_missing",
			Examples: []string{`relation "payrolls" does not exist`, "Issue does not exist or you do not have permission to see it.",
				"Parent directory does not exist: /home/dev/proj/missing"}}),
		call(rule{Words: []string{"no"}, When: []cond{next("such"), not(at(2, "tool", "host", "method")), not(within(8, "spawn", "exec", "sh", "bash"))},
			Type: ledger.NotFound, Cause: "resource_missing",
			Examples: []string{"Error: ENOENT: no such file or directory, open '/home/dev/proj/docs/INSTALL.md'", "SQLITE_ERROR: no such table: payroll"}}),
		call(rule{Words: []string{"enoent", "filenotfounderror", "enotdir", "not_found", "notfound", "object_not_found",
			"resource_not_found", "channel_not_found", "user_not_found", "file_not_found", "repo_not_found", "page_not_found",
			"issue_not_found", "project_not_found", "entity_not_found", "nosuchkey", "nosuchbucket", "no_such_key",
			"notfounderror", "recordnotfound", "resourcenotfoundexception", "notfoundexception", "repository_not_found"},
			When: []cond{not(within(3, "spawn", "exec"))},
			Type: ledger.NotFound, Cause: "resource_missing",
			Examples: []string{`{"ok":false,"error":"channel_not_found"}`, `{"object":"error","status":404,"code":"object_not_found"}`}}),
		call(rule{Words: []string{"unknown"}, When: []cond{wordAt(1, "tool", "tools", "method", "error", "errors", "exception",
			"failure", "reason", "status", "server", "host", "protocol", "response", "message", "cause", "issue", "problem",
			"authority", "certificate", "ca", "signal", "system", "internal", "state", "type", "database"),
			not(ahead(3, credentialWords...)), not(allOf(ahead(2, "api", "access", "secret", "private"), ahead(3, "key", "keys")))},
			Type: ledger.NotFound, Cause: "resource_missing",
			Examples: []string{"fatal: unknown revision or path not in the working tree."}}),
		call(rule{Words: []string{"pathspec"},
			Type: ledger.NotFound, Cause: "resource_missing",
			Examples: []string{"error: pathspec 'docs/missing.md' did not match any file(s) known to git"}}),
		call(rule{Words: []string{"repository"}, When: []cond{anyOf(phrase(-2, "not", "a"), phrase(-3, "not", "a"))},
			Type: ledger.NotFound, Cause: "resource_missing",
			Examples: []string{"fatal: not a git repository (or any of the parent directories): .git"}}),

		call(rule{Words: []string{"resolve"}, When: []cond{within(2, "not", "t", "cannot", "couldn", "unable", "failed"),
			not(next("host", "hostname", "address", "dns", "proxy")), not(within(6, "dns", "getaddrinfo", "lookup", "host", "hostname"))},
			Type: ledger.NotFound, Cause: "resource_missing",
			Examples: []string{"Ref 'feature/login' did not resolve to an object"}}),
		// Python: [Errno 13] Permission denied, [Errno 21] Is a directory, … on the call's path.
		call(rule{Words: []string{"errno"}, When: []cond{next("1", "13", "17", "20", "21", "39")},
			Type: ledger.Auth, Cause: "path_forbidden",
			Examples: []string{"Error executing tool read_note: [Errno 13] Permission denied: '/home/dev/notes/private/salaries.md'"}}),
		// The fetch server: the upstream that failed is the URL the call asked for.
		call(rule{Words: []string{"fetch"}, When: []cond{within(3, "failed", "unable", "could", "cannot", "error"),
			next("https", "http", "robots", "url")},
			Type: ledger.Unknown, Cause: "target_failed", Spec: specTarget,
			Examples: []string{"Failed to fetch https://status.acme.dev/ - status code 503",
				"Failed to fetch https://staging.acme.internal/health: ConnectError('[Errno -2] Name or service not known')"}}),

		// AUTH: the call asked for something it may not touch; the credentials are fine.
		call(rule{Words: []string{"denied"}, When: []cond{within(1, "permission", "access"), next("for", "to", "on"),
			anyOf(at(2, deniedObjects...), allOf(at(2, "this", "that", "the", "these", "those"), at(3, deniedObjects...)))},
			Type: ledger.Auth, Cause: "object_forbidden",
			Examples: []string{"permission denied for table payroll", "ERROR: permission denied for schema finance",
				`{"message":"Access denied to this dashboard"}`}}),
		// MySQL: "SELECT command denied to user 'ro'@'10.0.0.5' for table 'salaries'".
		call(rule{Words: []string{"denied"}, When: []cond{ahead(10, "for"), ahead(12, "table", "column", "database", "schema", "routine", "view")},
			Type: ledger.Auth, Cause: "object_forbidden",
			Examples: []string{"Error: SELECT command denied to user 'mcp_ro'@'172.18.0.5' for table 'salaries'"}}),
		call(rule{Words: []string{"outside"}, When: []cond{anyOf(within(6, "path", "paths", "file", "directory"),
			ahead(3, "allowed", "permitted", "root", "roots", "workspace", "sandbox", "repository", "repo", "project", "directory"))},
			Type: ledger.Auth, Cause: "path_outside_roots",
			Examples: []string{"Error: Access denied - path outside allowed directories: /etc/hosts not in /home/dev/proj"}}),
		call(rule{Words: []string{"eacces", "eperm"}, When: []cond{not(within(3, "spawn", "exec"))},
			Type: ledger.Auth, Cause: "path_forbidden",
			Examples: []string{"EACCES: permission denied, open '/etc/shadow'"}}),
		call(rule{Words: []string{"accessible"}, When: []cond{within(1, "not")},
			Type: ledger.Auth, Cause: "object_forbidden",
			Examples: []string{"Error: 403 Forbidden - Resource not accessible by integration",
				"Resource not accessible by personal access token"}}),
		call(rule{Words: []string{"rights"}, When: []cond{within(3, "admin", "push", "write", "read", "maintain", "owner")},
			Type: ledger.Auth, Cause: "object_forbidden",
			Examples: []string{"Must have admin rights to Repository."}}),
		call(rule{Words: []string{"owner"}, When: []cond{phrase(-2, "must", "be")},
			Type: ledger.Auth, Cause: "object_forbidden",
			Examples: []string{"must be owner of table payroll"}}),
		call(rule{Words: []string{"allowed", "permitted"}, When: []cond{within(3, "not"), not(within(3, "method"))},
			Type: ledger.Auth, Cause: "not_allowed",
			Examples: []string{"The sites robots.txt specifies that autonomous fetching of this page is not allowed", "Operation not permitted"}}),
		call(rule{Words: []string{"only"}, When: []cond{at(-1, "read"), not(within(3, "file", "system"))},
			Type: ledger.Auth, Cause: "not_allowed",
			Examples: []string{"cannot execute INSERT in a read-only transaction"}}),
		// The same read-only mode in one word, and a write switched off: "not available in readonly
		// mode", "MCP write access is disabled".
		call(rule{Words: []string{"readonly"}, When: []cond{next("mode", "transaction", "session", "connection"), not(within(3, "file", "system"))},
			Type: ledger.Auth, Cause: "not_allowed",
			Examples: []string{"QStash is not available in readonly mode yet."}}),
		call(rule{Words: []string{"disabled"}, When: []cond{phrase(-3, "write", "access", "is"), not(org(4, 4))},
			Type: ledger.Auth, Cause: "not_allowed",
			Examples: []string{"tool execution failed: MCP write access is disabled: to enable, set MCP_SERVER_WRITE_ACCESS_ENABLED=true"}}),
		// A privilege on one object: "Insufficient privileges: User does not have SELECT on Table
		// 'main.hr.salaries'", "insufficient permissions to read_data [[Domain: data, Collection: Orders]]".
		call(rule{Words: []string{"privileges", "privilege", "permissions"}, When: []cond{within(2, "insufficient", "missing", "lacks", "lack", "no"),
			ahead(12, "table", "schema", "database", "collection", "view", "column", "warehouse", "bucket", "index", "object")},
			Type: ledger.Auth, Cause: "object_forbidden",
			Examples: []string{"Error executing query: [INSUFFICIENT_PERMISSIONS] Insufficient privileges:\nUser does not have SELECT on Table 'main.hr.salaries'."}}),
		call(rule{Words: []string{"not_in_channel", "is_archived", "cant_invite_self"},
			Type: ledger.Auth, Cause: "object_forbidden",
			Examples: []string{`{"ok":false,"error":"not_in_channel"}`}}),

		// MALFORMED: the arguments, the query or the input are wrong.
		// "invalid path", "Invalid target: '-p'": anything but what the credential and protocol rules name.
		call(rule{Words: []string{"invalid", "incorrect", "wrong"}, When: []cond{wordAt(1, append([]string{"params", "parameters",
			"parameter", "argument", "arguments", "input", "arg", "args", "or", "gateway", "body", "data", "json",
			"memory", "pointer", "opcode", "instruction", "handle", "configuration", "config", "environment", "response", "character", "utf", "request", "consumer",
			"session", "certificate", "cert", "signature", "grant", "client", "api", "access", "oauth", "refresh", "header",
			"authorization", "authentication", "protocol", "content", "message", "reply", "result", "output", "state",
			"scope", "scopes", "mcp", "jsonrpc"}, credentialWords...)...),
			not(allOf(ahead(5, "api", "access", "oauth", "bearer"), ahead(6, "key", "token", "keys", "tokens")))},
			Type: ledger.Malformed, Cause: "invalid_params",
			Examples: []string{"Invalid path: ../../etc", "Invalid URL: htp:/example", "Invalid value for field 'state'"}}),
		// go-sdk: validating "arguments": validating root: required: missing properties: ["owner"]
		call(rule{Words: []string{"validating"}, When: []cond{ahead(2, "arguments", "argument", "input", "params", "parameters", "root",
			"query", "sql", "statement", "request")},
			Type: ledger.Malformed, Cause: "invalid_params",
			Examples: []string{`validating "arguments": validating root: required: missing properties: ["owner"]`}}),
		call(rule{Words: []string{"unmarshal"}, When: []cond{within(2, "cannot", "failed", "unable"),
			ahead(10, "input", "args", "arguments", "params", "request", "argument")},
			Type: ledger.Malformed, Cause: "invalid_params",
			Examples: []string{"json: cannot unmarshal string into Go struct field Input.issue_number of type int"}}),
		call(rule{Words: []string{"both"}, When: []cond{within(3, "cannot", "can", "t", "not", "either")},
			Type: ledger.Malformed, Cause: "invalid_params",
			Examples: []string{"Cannot specify both head and tail parameters simultaneously"}}),
		call(rule{Words: []string{"syntax"}, When: []cond{anyOf(next("error"), within(2, "sql", "query", "your", "cypher", "graphql")), not(within(1, "json"))},
			Type: ledger.Malformed, Cause: "invalid_params",
			Examples: []string{`syntax error at or near "FORM"`}}),
		call(rule{Words: []string{"required"}, When: []cond{anyOf(within(2, "is", "are"), next("property", "field", "parameter", "argument")),
			not(within(3, "auth", "authentication", "authorization", "login", "approval", "token", "credentials", "payment"))},
			Type: ledger.Malformed, Cause: "invalid_params",
			Examples: []string{"'owner' is a required property", "Input validation error: 'path' is required"}}),
		call(rule{Words: []string{"expected", "expecting"}, When: []cond{anyOf(ahead(4, "received", "got", "but"), next("string", "number", "integer",
			"boolean", "array", "object"))},
			Type: ledger.Malformed, Cause: "invalid_params",
			Examples: []string{"Expected string, received number"}}),
		call(rule{Words: []string{"must"}, When: []cond{next("be", "have", "not", "match", "contain", "start", "end", "include"),
			not(ahead(3, "owner", "authenticated", "logged", "admin", "rights"))},
			Type: ledger.Malformed, Cause: "invalid_params",
			Examples: []string{"limit must be less than or equal to 100"}}),

		// "No item found with id release-2.4", "No element found for selector: #submit"
		call(rule{Words: []string{"no"}, When: []cond{ahead(6, "found", "visible", "matching", "matches"),
			not(ahead(5, install...)), not(next("api", "credentials", "token", "auth", "authentication", "key", "keys", "valid"))},
			Type: ledger.NotFound, Cause: "resource_missing",
			Examples: []string{"No item found with id release-2.4", "Error: No dialog visible"}}),
		call(rule{Words: []string{"match", "matches"}, When: []cond{within(2, "not", "t"),
			not(within(8, "certificate", "cert", "hostname", "x509", "tls", "ssl", "signature", "password", "credentials", "token"))},
			Type: ledger.NotFound, Cause: "resource_missing",
			Examples: []string{`Error: "button:has-text('Checkout')" does not match any elements.`,
				`Repository name confirmation did not match "acme/web". The repository was not deleted.`}}),
		// The page or URL the call navigated to did not answer: the call's target (a browser tool).
		call(rule{Words: []string{"navigating", "navigation"}, When: []cond{anyOf(next("to", "timeout"), ahead(3, "timeout", "failed"))},
			Type: ledger.Unknown, Cause: "target_failed", Spec: specTarget,
			Examples: []string{"Navigation timeout of 30000 ms exceeded",
				"TimeoutError: page.goto: Timeout 60000ms exceeded.\nCall log:\n  - navigating to \"https://reports.acme.dev/q3\", waiting until \"load\""}}),
		// The model's own script, run in the page.
		call(rule{Words: []string{"evaluate", "evaluation"}, When: []cond{anyOf(at(-1, "page", "frame", "locator"), next("failed", "error"))},
			Type: ledger.Unknown, Cause: "script_error",
			Examples: []string{"page.evaluate: TypeError: Cannot read properties of null (reading 'textContent')"}}),
		call(rule{Words: []string{"script"}, When: []cond{next("execution", "error", "failed", "threw")},
			Type: ledger.Unknown, Cause: "script_error",
			Examples: []string{"Script execution failed: foo is not defined"}}),
		// Sentry: "**Input Error** … a problem with the input you provided".
		call(rule{Words: []string{"input"}, When: []cond{anyOf(next("error"), phrase(1, "you", "provided"))},
			Type: ledger.Malformed, Cause: "invalid_params",
			Examples: []string{"**Input Error**\n\nIt looks like there was a problem with the input you provided."}}),
		call(rule{Words: []string{"parameter", "parameters", "param", "params", "argument", "arguments", "field", "fields",
			"option", "options", "property", "properties", "filter", "filters"},
			When: []cond{ahead(10, "not", "must", "cannot", "required", "invalid", "missing", "expected", "unknown",
				"unsupported", "only", "instead", "conflicts", "exclusive")},
			Type: ledger.Malformed, Cause: "invalid_params",
			Examples: []string{"parameter ref is not of type string, is float64",
				"This tool uses cursor-based pagination. Use the 'after' parameter with the 'endCursor' value from the previous response instead of 'page'."}}),
		call(rule{Words: []string{"parse"}, When: []cond{ahead(3, "sql", "statement", "query", "input", "expression", "date",
			"url", "jql", "filter", "arguments", "argument", "params", "regex", "selector")},
			Type: ledger.Malformed, Cause: "invalid_params",
			Examples: []string{"Error: Failed to parse SQL statement"}}),
		call(rule{Words: []string{"ambiguous"},
			Type: ledger.Malformed, Cause: "invalid_params",
			Examples: []string{`column reference "id" is ambiguous`}}),
		call(rule{Words: []string{"provide", "specify"}, When: []cond{anyOf(within(2, "please", "must", "need", "to"),
			ahead(2, "exactly", "either", "both", "one", "at", "only"), not(wordAt(-1)), at(-1, "error")),
			not(ahead(3, "token", "credentials", "credential", "apikey", "api_key", "password", "key"))},
			Type: ledger.Malformed, Cause: "invalid_params",
			Examples: []string{"Error: Please provide a list of up to 10 queries to analyze.",
				"Error: Provide exactly ONE of: space_id (new doc in space), list_id (new doc in list), or doc_id (page in existing doc)",
				"Error: Specify the userId or set the DESTINATION_USER_ID in the environment variables of this MCP Server."}}),
		call(rule{Words: []string{"unsupported"}, When: []cond{wordAt(1, "content", "protocol", "media", "transport", "version", "tool", "method")},
			Type: ledger.Malformed, Cause: "invalid_params",
			Examples: []string{"Error: Unsupported object type: trigger"}}),
		call(rule{Words: []string{"unsupported_item_type", "unsupported_type", "unsupported_operation", "invalid_arguments_error"},
			Type: ledger.Malformed, Cause: "invalid_params",
			Examples: []string{`{"error":"unsupported_item_type","name":"DraftIssue"}`}}),
		// A query that ran past its own deadline: the query's, not the server's.
		call(rule{Words: []string{"statement", "query"}, When: []cond{anyOf(next("timeout"), ahead(3, "timed", "timeout")),
			not(at(-1, "tool")), not(within(6, "mcp"))},
			Type: ledger.Unknown, Cause: "query_timeout",
			Examples: []string{"canceling statement due to statement timeout",
				"Error: Query execution timed out after 30 seconds in restricted mode. Consider simplifying your query or increasing the timeout."}}),
		call(rule{Words: []string{"division"}, When: []cond{next("by")},
			Type: ledger.Unknown, Cause: "conflict",
			Examples: []string{"division by zero"}}),
		call(rule{Words: []string{"constraint"}, When: []cond{anyOf(next("failed", "violation", "violated"), within(1, "unique", "foreign", "check"))},
			Type: ledger.Unknown, Cause: "conflict",
			Examples: []string{"Database error: UNIQUE constraint failed: users.email"}}),
		call(rule{Words: []string{"only"}, When: []cond{anyOf(next("be"), ahead(5, "allowed", "supported", "permitted", "accepted", "valid", "used"),
			allOf(within(2, "valid", "allowed", "supported", "available"), next("for", "with", "on", "when"))),
			not(at(-1, "read"))},
			Type: ledger.Unknown, Cause: "not_allowed",
			Examples: []string{"Error: Only SELECT queries are allowed for read_query",
				`Error: The tool "browser_file_upload" can only be used when there is related modal state present.`}}),
		call(rule{Words: []string{"handle"}, When: []cond{within(2, "not", "t")},
			Type: ledger.Unknown, Cause: "not_allowed",
			Examples: []string{`Error: Tool "browser_click" does not handle the modal state.`}}),
		call(rule{Words: []string{"blocked"}, When: []cond{within(5, "protocol", "url", "domain", "site", "path", "scheme"), not(org(4, 4))},
			Type: ledger.Auth, Cause: "not_allowed",
			Examples: []string{`Error: Access to "file:" protocol is blocked. Attempted URL: "file:///etc/passwd"`}}),
		// "Start date cannot be in the past", "Branch name cannot contain '..'": a business rule.
		// What the server cannot do for any call (connect, operate, read a property of undefined,
		// allocate, start) is not the call's.
		call(rule{Words: []string{"cannot", "can"}, When: []cond{anyOf(
			allOf(at(0, "cannot"), wordAt(1, cannotVerbs...)),
			allOf(next("not", "t"), wordAt(2, cannotVerbs...))),
			not(ahead(4, "undefined", "null", "none", "nil")),
			not(ahead(3, "connect", "reach", "operate", "read", "allocate", "start", "spawn", "load", "initialize",
				"establish", "authenticate", "verify", "module", "properties", "property")),
			not(next("unmarshal", "decode", "parse", "deserialize"))},
			Type: ledger.Unknown, Cause: "not_allowed", Spec: specGeneric,
			Examples: []string{"Error calling tool 'create_sprint': Start date cannot be in the past.", "Branch name cannot contain '..'",
				"Error: Cannot use analyze and hypothetical indexes together"}}),

		call(rule{Words: []string{"valid"}, When: []cond{within(3, "not", "isn", "t"), not(next("json", "utf", "response")),
			not(within(8, "certificate", "cert", "x509", "token", "credentials", "session", "key", "signature", "json", "response"))},
			Type: ledger.Malformed, Cause: "invalid_params",
			Examples: []string{"'2026-13-01' is not a valid date", "owner is not a valid GitHub login"}}),
		call(rule{Words: []string{"should"}, When: []cond{next("be", "have", "not", "match", "contain")},
			Type: ledger.Malformed, Cause: "invalid_params",
			Examples: []string{"per_page should be between 1 and 100"}}),
		// A version conflict of the object the call wrote is a conflict too ("Version conflict: the
		// entry has changed since you read it"); one of packages is the install's.
		call(rule{Words: []string{"conflict", "conflicts", "conflicting"}, When: []cond{not(within(3, "dependency", "port", "peer")),
			not(allOf(within(3, "version", "versions"), anyOf(within(8, "package", "packages", "module", "modules", "dependency",
				"dependencies", "npm", "pip", "library", "requirement", "requirements"), ahead(8, "package", "packages", "module",
				"modules", "dependency", "dependencies", "npm", "pip", "library", "requirement", "requirements"))))},
			Type: ledger.Unknown, Cause: "conflict",
			Examples: []string{"Conflict: the branch was modified since it was read", "merge conflict in src/app.ts",
				"Error updating entry: Version conflict: the entry has changed since you read it (your version: 7, current version: 9)."}}),

		// UNKNOWN: a business rule refused this request.
		call(rule{Words: []string{"already"}, When: []cond{next("exists", "exist", "taken", "in", "been", "archived", "merged", "closed", "a",
			"allocated", "used", "running", "registered", "started", "stopped", "deleted", "removed", "assigned", "locked", "published")},
			Type: ledger.Unknown, Cause: "conflict",
			Examples: []string{"Reference already exists", "A file with that name already exists"}}),
		call(rule{Words: []string{"duplicate"}, When: []cond{next("key", "entry", "name", "value", "entity")},
			Type: ledger.Unknown, Cause: "conflict",
			Examples: []string{`duplicate key value violates unique constraint "users_email_key"`}}),
		call(rule{Words: []string{"violates", "violation"}, When: []cond{ahead(4, "constraint", "policy", "rule")},
			Type: ledger.Unknown, Cause: "conflict",
			Examples: []string{`new row for relation "orders" violates check constraint "positive_total"`}}),
		call(rule{Words: []string{"already_exists", "name_taken", "conflict_error", "merge_conflict", "unprocessable",
			"unprocessable_entity"},
			Type: ledger.Unknown, Cause: "conflict",
			Examples: []string{`{"error":"name_taken"}`}}),
		call(rule{Words: []string{"eisdir", "eexist", "enotempty"},
			Type: ledger.Unknown, Cause: "conflict",
			Examples: []string{"EISDIR: illegal operation on a directory, read", "EEXIST: file already exists, mkdir '/home/dev/proj/src'"}}),
		call(rule{Words: []string{"empty"}, When: []cond{phrase(-2, "is", "not"), not(within(4, "response", "body"))},
			Type: ledger.Unknown, Cause: "conflict",
			Examples: []string{"Directory is not empty"}}),
		call(rule{Words: []string{"directory"}, When: []cond{anyOf(phrase(-2, "is", "a"), phrase(-2, "not", "a"))},
			Type: ledger.Unknown, Cause: "conflict",
			Examples: []string{"Path is a directory", "fatal: not a directory: src/main.go"}}),
		call(rule{Words: []string{"waiting"}, When: []cond{next("for"), at(2, "locator", "selector", "element", "getbyrole",
			"getbytext", "getbylabel", "frame")},
			Type: ledger.Unknown, Cause: "element_missing",
			Examples: []string{"TimeoutError: locator.click: Timeout 5000ms exceeded. waiting for locator('#submit')"}}),
		call(rule{Words: []string{"strict"}, When: []cond{phrase(1, "mode", "violation")},
			Type: ledger.Unknown, Cause: "element_missing",
			Examples: []string{"Error: strict mode violation: locator('button') resolved to 3 elements"}}),
		call(rule{Words: []string{"too"}, When: []cond{next("large", "long", "big")},
			Type: ledger.Unknown, Cause: "too_large",
			Examples: []string{"File too large to read: 52428800 bytes"}}),
		call(rule{Words: []string{"msg_too_long", "too_large", "payload_too_large", "invalid_blocks", "no_text"},
			Type: ledger.Unknown, Cause: "too_large",
			Examples: []string{`{"ok":false,"error":"msg_too_long"}`}}),
		call(rule{Words: []string{"exceeds"}, When: []cond{ahead(3, "maximum", "max", "size", "length", "allowed", "bytes",
			"characters", "chars", "tokens", "lines", "limit"), not(ahead(3, "rate", "quota", "usage", "spend"))},
			Type: ledger.Unknown, Cause: "too_large",
			Examples: []string{"Response exceeds maximum allowed tokens (25000)"}}),
		// An empty result: nothing matched what the call asked for; nothing is broken.
		call(rule{Words: []string{"results", "result", "rows", "row", "matches", "records", "hits", "documents", "entries", "items"},
			When: []cond{anyOf(at(-1, "no", "0", "zero"), phrase(-2, "no", "matching"), phrase(-2, "returned", "no"),
				phrase(-2, "found", "no"), phrase(-2, "returned", "0")), not(within(4, "tool", "tools", "server", "response"))},
			Type: ledger.Unknown, Cause: "empty_result",
			Examples: []string{"No results for query", "Query returned no rows", "Found 0 results"}}),
		call(rule{Words: []string{"nothing"}, When: []cond{next("found", "matched", "matches", "returned")},
			Type: ledger.Unknown, Cause: "empty_result",
			Examples: []string{"Nothing found for the given filters"}}),
		call(rule{Words: []string{"empty"}, When: []cond{next("result", "results", "resultset", "list", "set")},
			Type: ledger.Unknown, Cause: "empty_result",
			Examples: []string{"Search returned an empty result set"}}),
		// "There is no content with the given id": the id the call passed.
		call(rule{Words: []string{"given", "specified", "provided", "supplied"}, When: []cond{wordAt(1, append([]string{"by", "to", "in", "for"}, install...)...),
			not(ahead(2, credentialWords...)), anyOf(at(0, "given", "specified"), at(-1, "the"))},
			Type: ledger.NotFound, Cause: "resource_missing",
			Examples: []string{"There is no content with the given id", "Error 40060: Specified period is not enabled."}}),
		// "Unrecognized pipeline stage name: '$lookUp'": a name the call used that the service does not know.
		call(rule{Words: []string{"unrecognized", "unrecognised", "unsupported"}, When: []cond{
			not(ahead(2, "tool", "method", "protocol", "content", "transport", "media", "version")), not(ahead(3, credentialWords...))},
			Type: ledger.Malformed, Cause: "invalid_params",
			Examples: []string{"Unrecognized pipeline stage name: '$lookUp'"}}),
		// The operation's own time limit: "operation exceeded time limit", "time limit exceeded".
		call(rule{Words: []string{"time"}, When: []cond{next("limit", "limits"), anyOf(within(3, "exceeded", "exceeds", "over"), ahead(3, "exceeded", "reached"))},
			Type: ledger.Unknown, Cause: "query_timeout",
			Examples: []string{"PlanExecutor error during aggregation :: caused by :: operation exceeded time limit"}}),
		// The work the call asked for ran past its own time limit: a command, a script, a job.
		call(rule{Words: []string{"timed", "timeout"}, When: []cond{within(3, "command", "execution", "script", "code", "job", "crawl",
			"process", "subprocess", "wait", "lifecycle", "navigation", "task"), not(within(4, "tool", "server", "connection", "connect", "request"))},
			Type: ledger.Unknown, Cause: "query_timeout",
			Examples: []string{"Error executing command: Command timed out after 30 seconds", "Execution timed out after 120 seconds.",
				"Error: Failed to navigate: Lifecycle wait timed out after 15000ms"}}),
		call(rule{Words: []string{"complete", "finish"}, When: []cond{within(2, "not", "t"), next("within", "in")},
			Type: ledger.Unknown, Cause: "query_timeout",
			Examples: []string{"Crawl job 3f9a7c2e did not complete within 120s"}}),
		call(rule{Words: []string{"rejected", "refused", "blocked", "disallowed"}, When: []cond{within(4, "command", "commands", "operation", "query", "statement", "action"),
			not(within(4, credentialWords...)), not(within(3, "connection")), not(org(4, 4))},
			Type: ledger.Auth, Cause: "not_allowed",
			Examples: []string{"Error executing command: Command rejected by default security policy: python"}}),
		call(rule{Words: []string{"unexpected"}, When: []cond{ahead(2, "operator", "argument", "option", "flag", "parameter", "keyword", "field", "property")},
			Type: ledger.Malformed, Cause: "invalid_params",
			Examples: []string{"Error executing command: Unexpected shell operator: &&"}}),
		call(rule{Words: []string{"exceeded"}, When: []cond{ahead(3, "maximum", "max", "size", "length", "bytes", "limit", "characters", "lines"),
			not(ahead(2, "time")),
			not(ahead(4, "rate", "quota", "usage", "spend", "plan", "requests", "calls", "credit", "billing", "monthly", "daily"))},
			Type: ledger.Unknown, Cause: "too_large",
			Examples: []string{"Error executing command: stdout exceeded output limit of 1048576 bytes"}}),
		call(rule{Words: []string{"no"}, When: []cond{ahead(2, "open", "active", "selected", "current", "opened", "focused"),
			not(ahead(3, "session", "sessions", "connection", "connections", "server", "transport"))},
			Type: ledger.NotFound, Cause: "resource_missing",
			Examples: []string{"no file open", "Error: No open pages available."}}),
		call(rule{Words: []string{"no"}, When: []cond{next("arguments", "args", "parameters", "params", "input", "query")},
			Type: ledger.Malformed, Cause: "invalid_params",
			Examples: []string{"Error: No arguments provided"}}),
		call(rule{Words: []string{"available"}, When: []cond{within(4, "no"), not(within(4, install...)), ahead(3, "for", "with", "in", "on"),
			not(within(8, "server", "servers")),
			not(within(4, "endpoint", "endpoints", "servers", "connection", "connections", "backend", "instance", "instances",
				"worker", "workers", "ide", "service", "hosts", "capacity", "slots"))},
			Type: ledger.NotFound, Cause: "resource_missing",
			Examples: []string{"Failed to retrieve transcript: No transcript available for this video."}}),
		// IAM: "User: arn:… is not authorized to perform: dynamodb:DeleteTable on resource: arn:…"
		call(rule{Words: []string{"authorized", "authorised", "allowed"}, When: []cond{within(2, "not"), ahead(3, "perform"), ahead(10, "resource", "on")},
			Type: ledger.Auth, Cause: "object_forbidden",
			Examples: []string{"User: arn:aws:iam::123456789012:user/ci is not authorized to perform: dynamodb:DeleteTable on resource: arn:aws:dynamodb:us-east-1:123456789012:table/orders"}}),
		// The text tells the model to change its call: "Retry … and provide the right inputs",
		// "Agent called the wrong MCP tool for this operation".
		call(rule{Words: []string{"retry", "try"}, When: []cond{ahead(12, "inputs", "input", "arguments", "parameters", "different", "valid",
			"correct", "right", "another")},
			Type: ledger.Malformed, Cause: "invalid_params",
			Examples: []string{"Failed to select a valid operation. Retry the MCP operation but select the operation and provide the right inputs."}}),
		call(rule{Words: []string{"called", "used", "chose", "selected"}, When: []cond{ahead(2, "wrong", "incorrect")},
			Type: ledger.Malformed, Cause: "invalid_params",
			Examples: []string{"Agent called the wrong MCP tool for this operation."}}),
		call(rule{Words: []string{"maximum", "max", "up"}, When: []cond{ahead(7, "allowed", "permitted", "supported", "accepted")},
			Type: ledger.Unknown, Cause: "too_large",
			Examples: []string{`{"error":"Maximum of 25 task IDs allowed"}`}}),
		call(rule{Words: []string{"returned", "found", "available"}, When: []cond{within(4, "no"), not(within(4, install...)),
			not(within(6, "server", "servers", "endpoint", "service", "backend", "instance", "connection"))},
			Type: ledger.Unknown, Cause: "empty_result",
			Examples: []string{"No logs data returned"}}),
		// "Experiment "Checkout CTA copy" has not started": the object's state, not the tool's.
		call(rule{Words: []string{"started", "finished", "completed", "ready", "published", "deployed", "running"},
			When: []cond{within(2, "not", "yet"), within(3, "has", "is", "was", "hasn", "isn", "wasn", "have"),
				not(within(5, "server", "service", "process", "mcp", "daemon", "browser", "docker", "instance", "ide", "engine"))},
			Type: ledger.Unknown, Cause: "conflict",
			Examples: []string{`Experiment "Checkout CTA copy" has not started yet`}}),
		// "No search criteria provided", "Search called with no queries": the call left out what it needs.
		call(rule{Words: []string{"provided", "given", "specified", "supplied", "queries", "query", "criteria"},
			When: []cond{anyOf(within(4, "no"), phrase(-2, "with", "no")), not(within(4, install...))},
			Type: ledger.Malformed, Cause: "invalid_params",
			Examples: []string{"Error: No search criteria provided", "Search called with no queries."}}),
		// "LaTeX source is unavailable for this paper": this object, not the service.
		call(rule{Words: []string{"unavailable", "available"}, When: []cond{next("for"), at(2, "this", "that", "these", "those")},
			Type: ledger.NotFound, Cause: "resource_missing",
			Examples: []string{"LaTeX source is unavailable for this paper"}}),
		// "You need to have writer access to this calendar": this object's permission.
		call(rule{Words: []string{"access", "permission", "permissions", "rights"}, When: []cond{within(4, "need", "needs", "require", "requires"),
			next("to", "on", "for"), at(2, "this", "that", "the")},
			Type: ledger.Auth, Cause: "object_forbidden",
			Examples: []string{"MCP error -32600: Access denied: You need to have writer access to this calendar."}}),
		call(rule{Words: []string{"convert", "cast", "coerce"}, When: []cond{within(2, "could", "cannot", "unable", "failed", "can", "not"),
			not(ahead(4, "undefined", "null", "none", "nil"))},
			Type: ledger.Malformed, Cause: "invalid_params",
			Examples: []string{"Conversion Error: Could not convert string 'N/A' to INT32"}}),
		call(rule{Words: []string{"present"}, When: []cond{within(2, "not"), not(within(4, install...))},
			Type: ledger.NotFound, Cause: "resource_missing",
			Examples: []string{`{"results":[{"error":"class 'Artcle' not present in schema"}]}`}}),
		call(rule{Words: []string{"supported"}, When: []cond{within(2, "not", "isn"), not(within(4, "tool", "tools", "method", "protocol", "version", "transport", "server"))},
			Type: ledger.Malformed, Cause: "invalid_params",
			Examples: []string{"requestBody is not supported for GET requests"}}),
		call(rule{Words: []string{"missing"}, When: []cond{ahead(3, "argument", "arguments", "parameter", "parameters", "field", "fields", "property"),
			not(next("required", "parameter", "parameters", "argument", "arguments", "field", "property"))},
			Type: ledger.Malformed, Cause: "invalid_params",
			Examples: []string{"Error: Missing table_name argument"}}),
		// "Project with key ABC not found": the key names the object, it is no credential.
		call(rule{Words: []string{"key", "id", "name", "slug"}, When: []cond{at(-1, "with", "by"), ahead(3, "not", "no"),
			ahead(4, "found", "exist", "exists")},
			Type: ledger.NotFound, Cause: "resource_missing",
			Examples: []string{"Project with key ABC not found"}}),
		// "You don't have access to this channel": this object's permission, not the credentials'.
		call(rule{Words: []string{"access", "permission", "permissions"}, When: []cond{within(4, "not", "no", "don", "t", "lack", "lacks", "without"),
			next("to", "for", "on"), ahead(4, "this", "that", "these", "those"), ahead(5, deniedObjects...)},
			Type: ledger.Auth, Cause: "object_forbidden",
			Examples: []string{"You don't have access to this channel", "User does not have permission to access this document"}}),
		// Values of the wrong kind or shape: "Expected a number", "Bad value for id", "The id
		// provided is not in the expected format", "The query is invalid", "name cannot be empty".
		call(rule{Words: []string{"expected", "expecting"}, When: []cond{next("a", "an"), at(2, "number", "string", "integer", "boolean", "array",
			"object", "list", "date", "valid", "uuid", "positive", "non", "single", "file", "directory", "value", "id")},
			Type: ledger.Malformed, Cause: "invalid_params",
			Examples: []string{"Expected a number"}}),
		call(rule{Words: []string{"bad"}, When: []cond{next("value", "values", "format", "id", "parameter", "parameters", "argument", "arguments",
			"input", "query", "filter", "date", "name", "selector", "path", "field")},
			Type: ledger.Malformed, Cause: "invalid_params",
			Examples: []string{"Error: Bad value for id"}}),
		call(rule{Words: []string{"format"}, When: []cond{within(3, "expected", "invalid", "wrong", "incorrect", "bad", "unsupported"),
			not(within(4, "response", "reply", "output", "result", "returned", "received", "json")), not(within(4, credentialWords...))},
			Type: ledger.Malformed, Cause: "invalid_params",
			Examples: []string{"The id provided is not in the expected format"}}),
		call(rule{Words: invalidWords, When: []cond{at(-1, "is", "are", "was", "were"),
			within(4, "query", "value", "values", "id", "ids", "name", "filter", "date", "parameter", "argument", "input", "url", "path", "expression",
				"selector", "email", "address", "format", "field", "range", "cursor", "type", "status", "state", "option", "sort", "order"),
			not(within(5, append([]string{"key", "response", "session", "certificate", "signature", "configuration", "config"}, credentialWords...)...))},
			Type: ledger.Malformed, Cause: "invalid_params",
			Examples: []string{"Error: The query is invalid"}}),
		call(rule{Words: []string{"empty"}, When: []cond{anyOf(
			allOf(at(-1, "be"), within(3, "not", "cannot", "can", "t", "must", "may", "should")),
			next("query", "string", "input", "value", "name", "id", "path", "selector", "filter", "search", "title", "message", "list", "array"))},
			Type: ledger.Malformed, Cause: "invalid_params",
			Examples: []string{"error: resource name may not be empty", "Error: empty query"}}),
		// The object's own state refuses this request: "Item is locked", "Item is archived",
		// "That name is taken", "Object is referenced by other objects", "Record is in use",
		// "Resource a1 is not in a state that allows this operation", "Item has been deleted".
		call(rule{Words: []string{"locked", "archived", "taken", "referenced"}, When: []cond{at(-1, "is", "are", "was", "been", "already"),
			not(within(4, "database", "db", "account", "user", "login", "password", "key", "token", "session", "server", "profile", "browser"))},
			Type: ledger.Unknown, Cause: "conflict",
			Examples: []string{"Error: Item is locked", "Item is archived", "Error: That name is taken", "Error: Object is referenced by other objects"}}),
		call(rule{Words: []string{"use"}, When: []cond{at(-1, "in"), within(3, "is", "are", "currently", "still", "already"),
			not(within(5, "address", "port", "browser", "profile", "database", "db", "server", "session", "lock", "file"))},
			Type: ledger.Unknown, Cause: "conflict",
			Examples: []string{"Error: Record is in use"}}),
		call(rule{Words: []string{"state"}, When: []cond{within(3, "not", "invalid", "wrong", "incorrect"), within(3, "a", "the", "valid", "this", "current"),
			not(within(4, "session", "modal", "server", "connection", "oauth"))},
			Type: ledger.Unknown, Cause: "conflict",
			Examples: []string{"Error: Resource a1 is not in a state that allows this operation"}}),
		call(rule{Words: []string{"deleted", "removed"}, When: []cond{at(-1, "been", "was", "is"), not(within(4, install...)),
			not(within(4, "account", "user", "workspace", "organization", "project", "app", "integration"))},
			Type: ledger.NotFound, Cause: "resource_missing",
			Examples: []string{"Item has been deleted"}}),
		// Asked for more than the service returns at once: "too many results, narrow your query".
		call(rule{Words: []string{"too"}, When: []cond{next("many"), at(2, "results", "rows", "items", "records", "matches", "files", "entries",
			"ids", "values", "tokens", "characters", "fields", "elements")},
			Type: ledger.Unknown, Cause: "too_large",
			Examples: []string{"too many results, narrow your query"}}),
		// A page element the call named is not there to act on: "element is not visible", "Node is
		// detached from document", "No node found for selector: #x"; the page it ran in went away
		// under it: "Execution context was destroyed".
		call(rule{Words: []string{"visible", "clickable", "interactable", "editable", "attached", "detached", "hidden"},
			When: []cond{within(4, "element", "node", "locator", "selector", "button", "link", "input", "frame"),
				anyOf(at(0, "detached", "hidden"), within(2, "not", "t"))},
			Type: ledger.Unknown, Cause: "element_missing",
			Examples: []string{"Error: element is not visible", "Error: element is not clickable at point (10, 20)", "Error: Node is detached from document"}}),
		call(rule{Words: []string{"selector", "selectors"}, When: []cond{within(5, "no", "not"), anyOf(within(4, "found", "matching", "matched", "match"),
			ahead(3, "found", "matched", "match"))},
			Type: ledger.Unknown, Cause: "element_missing",
			Examples: []string{"Error: No node found for selector: #x"}}),
		call(rule{Words: []string{"destroyed"}, When: []cond{within(3, "context", "frame", "page", "target")},
			Type: ledger.Unknown, Cause: "script_error",
			Examples: []string{"Error: Execution context was destroyed"}}),
		// The file the call named is not of the kind the tool reads: "File is not a zip file".
		call(rule{Words: []string{"not"}, When: []cond{next("a", "an"), ahead(4, "file"), within(2, "is"), within(3, "file", "document", "path"),
			not(within(3, install...))},
			Type: ledger.Malformed, Cause: "invalid_params",
			Examples: []string{"Error executing tool read_data_from_excel: File is not a zip file"}}),
		call(rule{Words: []string{"range"}, When: []cond{within(2, "out", "outside")},
			Type: ledger.Unknown, Cause: "conflict",
			Examples: []string{"line 900 is out of range"}}),
	}
}

// callStatus is the call evidence of a status inside a tool's answer: a 4xx on the resource the
// call named (400, 404, 409, 410, 412, 413, 422 anywhere that is not the MCP endpoint; a 403 only
// next to the upstream URL it answers, since a bare 403 may be the token's for every call).
func callStatus(n int, url bool) (hit, bool) {
	switch n {
	case 400, 404, 409, 410, 412, 413, 422:
	case 403, 405:
		if !url {
			return hit{}, false
		}
	default:
		return hit{}, false
	}
	h, _ := statusHit(n)
	if h.t == ledger.Auth {
		h.cause = "object_forbidden"
	}
	h.scope = perCall
	return h, true
}

// isEndpointWord reports whether w, a word of a failure text, is about the MCP endpoint itself.
func isEndpointWord(w string) bool {
	switch w {
	case "initialize", "initialized", "posting", "streamable":
		return true
	}
	return false
}
