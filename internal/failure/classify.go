package failure

import (
	"strconv"
	"strings"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// Classify maps the evidence of one failure to a type, a cause, a transient flag, a retry hint and a
// scope (docs/classification.md, docs/circuits.md). now anchors a Retry-After given as an HTTP date.
//
// The evidence is weighed in the order of trust of docs/classification.md:
//   - Interrupt: the user cancelled the call. It is not a failure, whatever else is known, so the
//     result carries Interrupt and no type, and nothing must be counted.
//   - An explicit type (spelled as [ledger.ParseFailureType] accepts) wins; the other evidence only names its cause.
//   - The HTTP status, then the JSON-RPC code, then the text. A source that says little (a status that
//     maps to UNKNOWN; -32603 or a code of the implementation-defined range, which servers reuse for
//     anything) lets the next one decide, and is kept when they say nothing better. Admin-gating text refines any 4xx status or code, since
//     gated mounts answer 401, 403 or 404; rate-limit text refines a 403, as GitHub answers exhausted
//     limits with one; "unknown tool" text refines -32602, which the MCP spec uses for unknown tools.
//   - Within the text, the precedence ADMIN_GATED > AUTH > RATE_LIMIT > NOT_FOUND > TIMEOUT > MALFORMED
//     > UNKNOWN decides between words of different types.
//
// Then whose fault it is (fault.go): an explicit fault; a probe's outcome is never the call's; the
// MCP layer's and the transport's evidence, credentials, quota and admin gates stand; a weaker
// fault gives way to evidence that the request itself was at fault (a missing resource, a path
// or table it may not touch, invalid arguments, a 4xx on the upstream resource it named).
//
// An interrupt after the call ran longer than HangAfter is a hang: TIMEOUT with cause "hung".
//
// With no evidence at all the result is UNKNOWN with cause "unknown".
func Classify(ev Evidence, now time.Time) Result {
	if ev.Interrupt {
		if ev.HangAfter > 0 && ev.Duration > ev.HangAfter {
			// The user gave up on a call that hung: the skill's TIMEOUT, "tool call hangs > 30 s".
			return Result{Type: ledger.Timeout, Cause: "hung", Fault: ledger.FaultServer, Transient: true}
		}
		return Result{Interrupt: true}
	}
	lower := lowerASCII(ev.Text)
	sc := scanText(ev.Text, lower, ev.Tool)
	if ev.Status >= 400 && ev.Status <= 599 {
		sc.status = true
	}
	ce := viewCall(ev.Tool, ev.Args).weigh(lower, &sc)
	ctx := faultContext{probe: ev.Probe, endpoint: sc.endpoint, output: sc.output}
	if ce.foreignURL && sc.status && (sc.statusCall || sc.call.cause == "resource_missing") {
		// The status sits next to a URL the call did not name: the server's own base URL or
		// endpoint answered it, for every call.
		sc.call, ctx.foreign = hit{}, true
	}
	h := decide(ev, &sc.found)
	if sc.sessionLost && !ev.Type.Valid() && lostSessionOverrides(h) {
		// The MCP session is gone: the 404 or 400 beside it is the endpoint's answer to a stale
		// session id, for every call, not a missing resource.
		h = hit{t: ledger.Timeout, cause: "session_expired", spec: specGeneric, scope: serverWide}
	}
	if !ev.Type.Valid() && namesOwnToolMissing(lower, ev.Tool) {
		// The text names the tool that was called and says it is not one the server serves
		// ("Unsupported tool: list_tables", "prometheus.execute_query is not a valid tool",
		// "Tool describe_table is excluded from this data connection"): a missing tool, whatever the
		// words say of the arguments.
		h = hit{t: ledger.NotFound, cause: "tool_missing", spec: specExact, scope: perCall}
		sc.call = hit{}
	}
	if q := sc.get(ledger.RateLimit); q.ok() && q.spec >= specGeneric && !ev.Type.Valid() && bareStatus(h) {
		// A quota or rate limit in words beside a bare 401, 403, 400 or 422: the body names what
		// the status only numbers ("status_code: 401 … quota_exceeded", "422 … reached your limit").
		h = q
	}
	if sc.config.ok() && !ev.Type.Valid() && configOverrides(h) {
		// The server's configuration is missing a setting: whatever the status or code says of the
		// call (MCP servers answer it with -32602), no call can succeed until someone sets it.
		h = sc.config
	}
	var fault ledger.Fault
	var weak bool
	switch {
	case sc.config.cause == "config_missing" && h == sc.config && sc.call.cause == "invalid_params" && noneProvided(lower) &&
		!ev.Probe && !ev.Fault.Valid():
		// A setting is missing that the call could have passed instead ("No project ID provided
		// and GITLAB_PROJECT_ID is not set"): the call left out what it needs.
		h, fault = hit{t: ledger.Malformed, cause: "invalid_params", spec: specExact, scope: perCall}, ledger.FaultCall
	case ev.Probe || ev.Fault.Valid() || ev.Type.Valid() || sc.config.ok() && h == sc.config:
		h, fault, weak = settleFault(ev, h, sc.call, ctx)
	case (sc.exitStatus || ce.command) && sc.get(ledger.Timeout).cause != "connection_closed":
		// The command the call ran gave its own result ("exited with code 1"): the shell is fine.
		h, fault = hit{t: ledger.Unknown, cause: "command_failed", spec: specExact, scope: perCall}, ledger.FaultCall
	case ce.queryEcho && h.t == ledger.Malformed && !sc.output && !ctx.endpoint:
		// A parse error that quotes a piece of the query the call wrote: the query is wrong.
		h, fault = hit{t: ledger.Malformed, cause: "invalid_params", spec: specExact, scope: perCall}, ledger.FaultCall
	case ce.dropped && (h.t == ledger.Malformed || h.t == ledger.Unknown) && !ctx.endpoint:
		// The report says an argument is missing that the call passed with a value: the tool lost
		// it, so every call fails the same way.
		h, fault = hit{t: ledger.Unknown, cause: "argument_dropped", spec: specExact, scope: perCall}, ledger.FaultTool
	case ce.ownObject && (h.t == ledger.NotFound || h.t == ledger.Unknown) && !sc.config.ok():
		// A configured object the call did not name is missing (a browser zone, the project
		// directory, the database's graph): no call can succeed until the server is set up again.
		h, fault = hit{t: ledger.Unknown, cause: "config_object_missing", spec: specExact, scope: perCall}, ledger.FaultServer
	case ce.ownFiles && h.t != ledger.RateLimit && h.t != ledger.AdminGated && !sc.transport():
		// The OS refused or missed a file the call did not name, and the call named no file: the
		// server's own store, cache or browser install, broken for every call.
		h, fault = hit{t: ledger.Unknown, cause: "own_files", spec: specExact, scope: perCall}, ledger.FaultTool
	case ce.resource && h.t == ledger.Auth && (h.cause == "http_403" || h.cause == "forbidden") && !sc.config.ok() && !ctx.endpoint &&
		!namesAccount(lower):
		// A bare refusal ("403 Forbidden", "Missing Permissions") of a call that named one object:
		// that object's permission. Credential words would have named another cause.
		h, fault = hit{t: ledger.Auth, cause: "object_forbidden", spec: specGeneric, scope: perCall}, ledger.FaultCall
	case ce.target:
		// A host, URL or command the call named could not be reached or answered with an error:
		// the call's, whatever the status or errno.
		h, fault, weak = settleFault(ev, h, hit{t: ledger.Unknown, cause: "target_failed", spec: specTarget, scope: perCall}, ctx)
	case ce.namedToolMissing && h.cause == "tool_missing" && !ev.Probe:
		// The tool the text says is missing is one the call asked about, not the one called.
		h, fault = hit{t: ledger.NotFound, cause: "resource_missing", spec: specExact, scope: perCall}, ledger.FaultCall
	case ce.bareWrite && h.t == ledger.Unknown && (h.cause == "" || h.cause == "unknown") && !sc.call.ok() && !sc.config.ok():
		// A change failed and the text says nothing more ("Failed to create customer"): the
		// service refused this write; a server that cannot work says why.
		h, fault = hit{t: ledger.Unknown, cause: "write_refused", spec: specGeneric, scope: perCall}, ledger.FaultCall
	case ce.echo && h.t == ledger.Unknown && (h.cause == "" || h.cause == "unknown") && !sc.call.ok():
		// Nothing in the words but the value the call passed: the failure is about that target.
		h, fault = hit{t: ledger.Unknown, cause: "target_failed", spec: specGeneric, scope: perCall}, ledger.FaultCall
	case ce.keyEcho && h.t == ledger.Unknown && (h.cause == "" || h.cause == "unknown") && !sc.call.ok():
		// Nothing in the words but one of the call's own arguments: the call's arguments.
		h, fault = hit{t: ledger.Malformed, cause: "invalid_params", spec: specGeneric, scope: perCall}, ledger.FaultCall
	default:
		h, fault, weak = settleFault(ev, h, sc.call, ctx)
	}
	if h.t == ledger.Unknown && (h.cause == "" || h.cause == "unknown") && fault != ledger.FaultCall && emptyDetail(ev.Text) {
		// "Error processing query: " and nothing after: the server caught an exception whose
		// message is empty, which is what a timeout of its upstream looks like (Python's
		// TimeoutError has no message).
		h = hit{t: ledger.Timeout, cause: "empty_detail", spec: specGeneric, scope: perCall}
	}
	if h.cause == "" && h.t == ledger.Unknown {
		h.cause = "unknown"
	}
	return Result{
		Type:       h.t,
		Cause:      h.cause,
		Fault:      fault,
		Transient:  h.t.Transient(),
		RetryAfter: retryHint(ev.Text, lower, now),
		ServerWide: h.scope == serverWide && fault != ledger.FaultCall,
		Weak:       weak,
		Shape:      shapeOf(lower, ev.Args),
	}
}

// namesAccount reports whether a refusal names what every call of the server depends on, so
// that it is no one object's: a credential (key, token, password), the plan, or the server's
// own files (EACCES on its cache or store).
func namesAccount(lower string) bool {
	for _, w := range splitWords(lower) {
		switch lower[w.start:w.end] {
		case "token", "tokens", "credential", "credentials", "password", "apikey", "api_key", "secret", "bearer", "jwt",
			"key", "scope", "scopes", "plan", "subscription", "tier", "upgrade", "eacces", "eperm", "authentication":
			return true
		}
	}
	return false
}

// namesOwnToolMissing reports whether a lower-cased text says the tool it names, the one called,
// is unsupported, not a valid tool or excluded.
func namesOwnToolMissing(lower, tool string) bool {
	name := lowerASCII(tool)
	if i := strings.LastIndex(name, "__"); i >= 0 {
		name = name[i+2:]
	}
	if len(name) < 4 {
		return false
	}
	for off := 0; ; {
		i := strings.Index(lower[off:], name)
		if i < 0 {
			return false
		}
		i += off
		before, after := lower[max(0, i-24):i], lower[i+len(name):]
		if strings.Contains(before, "unsupported tool") || strings.Contains(before, "unsupported call") ||
			strings.Contains(before, "unsupported method") || strings.Contains(before, "invalid tool") ||
			strings.HasPrefix(after, " is not a valid tool") || strings.HasPrefix(after, "' is not a valid tool") ||
			strings.HasPrefix(after, " is excluded") || strings.HasPrefix(after, "' is excluded") ||
			strings.HasPrefix(after, " is not supported") || strings.HasPrefix(after, " is not exposed") {
			return true
		}
		off = i + len(name)
	}
}

// noneProvided reports whether a lower-cased text says the call gave no value of something:
// "no" and, within the four words after it, "provided", "given", "specified", "supplied" or
// "passed" ("No project ID provided").
func noneProvided(lower string) bool {
	ws := splitWords(lower)
	for i, w := range ws {
		if lower[w.start:w.end] != "no" {
			continue
		}
		for j := i + 1; j < len(ws) && j <= i+4; j++ {
			switch lower[ws[j].start:ws[j].end] {
			case "provided", "given", "specified", "supplied", "passed":
				return true
			}
		}
	}
	return false
}

// emptyDetail reports whether a text ends where its detail should start: a colon and nothing
// after it.
func emptyDetail(text string) bool {
	t := strings.TrimRight(text, " \t\n\r")
	return len(t) > 1 && strings.HasSuffix(t, ":")
}

// bareStatus reports whether h is a 4xx status and nothing more: the number, without words.
func bareStatus(h hit) bool {
	switch h.cause {
	case "http_400", "http_401", "http_403", "http_422":
		return true
	}
	return false
}

// lostSessionOverrides reports whether a lost MCP session names a failure better than h: a 4xx
// status, a missing resource or nothing at all.
func lostSessionOverrides(h hit) bool {
	switch h.t {
	case ledger.NotFound, ledger.Malformed:
		return strings.HasPrefix(h.cause, "http_4") || h.cause == "resource_missing" || h.cause == "invalid_params" || h.cause == "bad_request"
	case ledger.Unknown:
		return true
	}
	return false
}

// configOverrides reports whether evidence that the server's configuration is missing names a
// failure better than h: anything but an admin's gate, a quota or a credential the text names.
func configOverrides(h hit) bool {
	switch h.t {
	case ledger.AdminGated, ledger.RateLimit:
		return false
	case ledger.Auth:
		return h.cause == "http_403" || h.cause == "forbidden"
	}
	return true
}

// decide picks the hit that classifies ev, given the hits f found in its text.
func decide(ev Evidence, f *found) hit {
	status, hasStatus := statusHit(ev.Status)
	code, hasCode := codeHit(ev.Code)

	if t, ok := ledger.ParseFailureType(string(ev.Type)); ok {
		// The caller knows the type; name the cause from the most trusted evidence that agrees.
		switch {
		case hasStatus && status.t == t:
			return status
		case hasCode && code.t == t:
			return code
		}
		if h := f.get(t); h.ok() {
			return h
		}
		return hit{t: t, scope: typeScope(t)}
	}

	text := f.best()
	admin := f.get(ledger.AdminGated)
	var fallback hit // a trusted source that said only UNKNOWN
	if hasStatus {
		switch {
		case admin.ok() && ev.Status >= 400 && ev.Status < 500:
			return admin
		case ev.Status == 403 && f.get(ledger.RateLimit).ok():
			return f.get(ledger.RateLimit)
		case status.t != ledger.Unknown:
			return status
		}
		fallback = status
	}
	if hasCode {
		switch {
		case admin.ok():
			return admin
		case ev.Code == -32602 && f.get(ledger.NotFound).ok():
			return f.get(ledger.NotFound)
		case !weakCode(ev.Code):
			return code
		case text.ok() && text.t != ledger.Unknown:
			return text
		}
		if !fallback.ok() {
			fallback = code
		}
	}
	if text.ok() && (text.t != ledger.Unknown || !fallback.ok()) {
		return text
	}
	if fallback.ok() {
		return fallback
	}
	return hit{t: ledger.Unknown, cause: "unknown"}
}

// statusHit maps an HTTP status to a type and cause. Statuses below 400 or above 599 are no evidence.
// docs/probes.md maps every 5xx to TIMEOUT; a 4xx that names no failure type is UNKNOWN with its number.
func statusHit(n int) (hit, bool) {
	if n < 400 || n > 599 {
		return hit{}, false
	}
	c := "http_" + strconv.Itoa(n)
	switch n {
	case 400, 405, 406, 413, 414, 415, 422:
		// 405/406/415: the probe's not_mcp_endpoint and not_acceptable; 422: invalid arguments.
		return hit{ledger.Malformed, c, specStatus, perCall}, true
	case 402:
		// Payment Required: the account is out of credit, for every call.
		return hit{ledger.RateLimit, "quota_exceeded", specStatus, serverWide}, true
	case 401, 407:
		return hit{ledger.Auth, c, specStatus, serverWide}, true
	case 403:
		// One tool's permission, not the server's credentials.
		return hit{ledger.Auth, c, specStatus, perCall}, true
	case 404, 410:
		return hit{ledger.NotFound, c, specStatus, perCall}, true
	case 408:
		return hit{ledger.Timeout, c, specStatus, perCall}, true
	case 429:
		return hit{ledger.RateLimit, c, specStatus, serverWide}, true
	case 502, 503:
		return hit{ledger.Timeout, c, specStatus, serverWide}, true
	case 504:
		// The gateway is up and the upstream did not answer this request in time: one slow tool.
		return hit{ledger.Timeout, c, specStatus, perCall}, true
	case 529:
		// Anthropic's "overloaded_error".
		return hit{ledger.Timeout, "overloaded", specStatus, serverWide}, true
	}
	if n >= 500 {
		return hit{ledger.Timeout, "http_5xx", specStatus, perCall}, true
	}
	return hit{ledger.Unknown, c, specStatus, perCall}, true
}

// codeHit maps a JSON-RPC error code to a type and cause. 0 is no evidence.
// Codes and their meanings: docs/probes.md
func codeHit(c int) (hit, bool) {
	switch c {
	case 0:
		return hit{}, false
	case -32700:
		return hit{ledger.Malformed, "parse_error", specStatus, perCall}, true
	case -32600:
		return hit{ledger.Malformed, "invalid_request", specStatus, perCall}, true
	case -32601:
		return hit{ledger.NotFound, "tool_missing", specStatus, perCall}, true
	case -32602:
		return hit{ledger.Malformed, "invalid_params", specStatus, perCall}, true
	case -32000:
		// The TS SDK's client-side ConnectionClosed.
		return hit{ledger.Timeout, "connection_closed", specStatus, serverWide}, true
	case -32001:
		// The TS SDK's client-side RequestTimeout.
		return hit{ledger.Timeout, "deadline", specStatus, perCall}, true
	case -32002:
		// Resource not found (up to 2025-11-25).
		return hit{ledger.NotFound, "jsonrpc_-32002", specStatus, perCall}, true
	case -32005:
		// go-sdk's "rejected by transport": a 429, a 5xx or a dial error; the text says which.
		return hit{ledger.Timeout, "jsonrpc_-32005", specStatus, perCall}, true
	case -32022:
		return hit{ledger.Malformed, "version_mismatch", specStatus, perCall}, true
	case -32020, -32021:
		return hit{ledger.Malformed, "jsonrpc_" + strconv.Itoa(c), specStatus, perCall}, true
	}
	return hit{ledger.Unknown, "jsonrpc_" + strconv.Itoa(c), specStatus, perCall}, true
}

// weakCode reports whether the JSON-RPC code c says too little to overrule the text. The standard
// codes and the MCP codes with a fixed meaning are strong; -32603 ("internal error", whatever the tool
// hit) and the implementation-defined rest are weak: servers reuse -32000…-32099 for anything (TS
// servers send -32000 with HTTP 406 bodies and -32001 with "Session not found").
func weakCode(c int) bool {
	switch c {
	case -32700, -32600, -32601, -32602, -32002, -32020, -32021, -32022:
		return false
	}
	return true
}
