package failure

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// testNow is the fixed clock of the tests; HTTP dates in retry hints are relative to it.
var testNow = time.Date(2026, 10, 21, 7, 28, 0, 0, time.UTC)

// classifyCase is one row: the evidence and every field of the expected result.
type classifyCase struct {
	name       string
	ev         Evidence
	typ        ledger.FailureType
	cause      string
	transient  bool
	serverWide bool
	retry      time.Duration
}

// Shorthands for the transient and server-wide columns of the rows.
const (
	tr = true  // transient
	sw = true  // server-wide
	no = false // neither
)

func txt(s string) Evidence { return Evidence{Text: s} }

// classifyCases are real failure texts: what Claude Code puts in a PostToolUseFailure `error`
// (docs/hook.md), what the go-sdk and the probe report
// (docs/probes.md), and what common upstreams answer.
var classifyCases = []classifyCase{
	// Claude Code's own texts (docs/hook.md).
	{"cc tool isError text", txt("upstream said: quota exceeded"), ledger.RateLimit, "quota_exceeded", tr, sw, 0},
	{"cc json-rpc -32603 message", txt("internal boom"), ledger.Unknown, "unknown", no, no, 0},
	{"cc process exited", txt("Connection closed"), ledger.Timeout, "connection_closed", tr, sw, 0},
	{"cc prefixed -32000", txt("MCP error -32000: Connection closed"), ledger.Timeout, "connection_closed", tr, sw, 0},
	{"cc per-tool timeout", txt(`MCP server "probe" tool "slow" timed out after 3s`), ledger.Timeout, "tool_deadline", tr, no, 0},
	{"cc per-tool timeout dotted name", txt(`MCP server "my.server" tool "get-file-contents" timed out after 30s`), ledger.Timeout, "tool_deadline", tr, no, 0},
	{"cc unknown tool", txt("<tool_use_error>Error: No such tool available: mcp__probe__nope</tool_use_error>"), ledger.NotFound, "tool_missing", no, no, 0},
	{"cc prefixed -32001", txt("MCP error -32001: Request timed out"), ledger.Timeout, "deadline", tr, no, 0},
	{"cc sdk cancel reason", txt("SdkError: Request timed out"), ledger.Timeout, "deadline", tr, no, 0},
	{"cc prefixed -32603", txt("MCP error -32603: internal boom"), ledger.Unknown, "jsonrpc_-32603", no, no, 0},

	// go-sdk error strings and probe outcomes, docs/probes.md
	{"sdk 401", txt(`calling "initialize": sending "initialize": Unauthorized`), ledger.Auth, "unauthorized", no, sw, 0},
	{"sdk 403", txt(`calling "initialize": sending "initialize": Forbidden`), ledger.Auth, "forbidden", no, no, 0},
	{"sdk 429", txt(`calling "initialize": rejected by transport: sending "initialize": Too Many Requests`), ledger.RateLimit, "rate_limited", tr, sw, 0},
	{"sdk 503", txt(`sending "initialize": Service Unavailable`), ledger.Timeout, "http_503", tr, sw, 0},
	{"sdk 406", txt(`sending "initialize": Not Acceptable`), ledger.Malformed, "not_acceptable", no, no, 0},
	{"sdk html", txt(`unsupported content type "text/html"`), ledger.Malformed, "protocol_error", no, no, 0},
	{"sdk truncated json", txt("failed to decode response: unexpected end of JSON input"), ledger.Malformed, "parse_error", no, no, 0},
	{"sdk stdout banner", txt("invalid character 'S' looking for beginning of value"), ledger.Malformed, "parse_error", no, no, 0},
	{"sdk hang", txt("context deadline exceeded"), ledger.Timeout, "deadline", tr, no, 0},
	{"sdk refused", txt(`calling "initialize": rejected by transport: dial tcp 127.0.0.1:9: connect: connection refused`), ledger.Timeout, "connection_refused", tr, sw, 0},
	{"sdk binary missing", txt(`exec: "no-such-server": executable file not found in $PATH`), ledger.Timeout, "spawn_failed", tr, sw, 0},
	{"sdk stdio eof", txt("client is closing: EOF"), ledger.Timeout, "connection_closed", tr, sw, 0},
	{"mark3 transport closed", txt("transport closed"), ledger.Timeout, "connection_closed", tr, sw, 0},
	{"mark3 503 body", txt("request failed with status 503: upstream down"), ledger.Timeout, "http_503", tr, sw, 0},
	{"go dns", txt("dial tcp: lookup api.example.invalid on 127.0.0.53:53: no such host"), ledger.Timeout, "dns", tr, sw, 0},
	{"go dial timeout", txt("dial tcp 10.255.255.1:443: i/o timeout"), ledger.Timeout, "connect_timeout", tr, sw, 0},
	{"go read timeout", txt("read tcp 10.0.0.2:5555->10.0.0.1:443: i/o timeout"), ledger.Timeout, "deadline", tr, no, 0},
	{"go tls", txt("tls: failed to verify certificate: x509: certificate signed by unknown authority"), ledger.Timeout, "tls", tr, sw, 0},
	{"go exit status", txt("exit status 3"), ledger.Timeout, "process_exited", tr, sw, 0},
	{"go killed", txt("signal: killed"), ledger.Timeout, "process_exited", tr, sw, 0},
	{"probe transport_down", txt("transport_down: spawn failed"), ledger.Timeout, "transport_down", tr, sw, 0},
	{"probe process_exited", txt("process_exited (exit status 3): boom"), ledger.Timeout, "process_exited", tr, sw, 0},
	{"probe timeout", txt("timeout in phase handshake after 5000ms"), ledger.Timeout, "deadline", tr, no, 0},
	{"probe auth_required", txt(`auth_required: resource_metadata="https://auth.example.com/.well-known/oauth-protected-resource"`), ledger.Auth, "unauthorized", no, sw, 0},
	{"probe forbidden", txt("forbidden"), ledger.Auth, "forbidden", no, no, 0},
	{"probe rate_limited", txt("rate_limited retry_after=17"), ledger.RateLimit, "rate_limited", tr, sw, 17 * time.Second},
	{"probe unavailable", txt("unavailable"), ledger.Timeout, "unavailable", tr, sw, 0},
	{"probe server_unavailable", txt("server_unavailable"), ledger.Timeout, "unavailable", tr, sw, 0},
	{"probe not_acceptable", txt("not_acceptable"), ledger.Malformed, "not_acceptable", no, no, 0},
	{"probe not_mcp_endpoint", txt("not_mcp_endpoint: 200 text/html on initialize (login page?)"), ledger.Malformed, "not_mcp_endpoint", no, no, 0},
	{"probe endpoint_not_mcp", txt("endpoint_not_mcp"), ledger.Malformed, "not_mcp_endpoint", no, no, 0},
	{"probe session_expired", txt("session_expired"), ledger.Timeout, "session_expired", tr, sw, 0},
	{"probe protocol_error", txt("protocol_error: non-JSON line on stdout"), ledger.Malformed, "protocol_error", no, no, 0},
	{"probe version_mismatch", txt("version_mismatch: supported 2025-06-18, 2025-11-25"), ledger.Malformed, "version_mismatch", no, no, 0},
	{"probe no_tools", txt("no_tools"), ledger.NotFound, "no_tools", no, no, 0},
	{"probe tool_missing", txt("tool_missing: search not in tools/list"), ledger.NotFound, "tool_missing", no, no, 0},
	{"probe tool_error", txt("tool_error"), ledger.Unknown, "tool_error", no, no, 0},
	{"probe transport_closed", txt("transport_closed"), ledger.Timeout, "connection_closed", tr, sw, 0},

	// Upstream texts.
	{"github bad credentials", txt("Bad credentials"), ledger.Auth, "invalid_credentials", no, sw, 0},
	{"github bad credentials json", txt(`{"message":"Bad credentials","documentation_url":"https://docs.github.com/rest"}`), ledger.Auth, "invalid_credentials", no, sw, 0},
	{"github integration", txt("Resource not accessible by integration"), ledger.Auth, "object_forbidden", no, no, 0},
	{"github secondary rate limit", txt("403 Forbidden: You have exceeded a secondary rate limit. Please wait a few minutes before you try again."), ledger.RateLimit, "rate_limited", tr, sw, 0},
	{"github api rate limit", txt("API rate limit exceeded for user ID 1234."), ledger.RateLimit, "rate_limited", tr, sw, 0},
	{"github oauth restrictions", txt("Although you appear to have the correct authorization credentials, the `acme` organization has enabled OAuth App access restrictions"), ledger.AdminGated, "org_policy", no, sw, 0},
	{"slack invalid_auth", txt(`{"ok":false,"error":"invalid_auth"}`), ledger.Auth, "invalid_credentials", no, sw, 0},
	{"slack not_authed", txt(`{"ok":false,"error":"not_authed"}`), ledger.Auth, "unauthorized", no, sw, 0},
	{"slack ratelimited", txt(`{"ok":false,"error":"ratelimited"}`), ledger.RateLimit, "rate_limited", tr, sw, 0},
	{"openai rate limit", txt("Rate limit reached for gpt-4o in organization org-abc on requests per min (RPM): Limit 500, Used 500, Requested 1. Please try again in 120ms."), ledger.RateLimit, "rate_limited", tr, sw, 120 * time.Millisecond},
	{"openai quota", txt("You exceeded your current quota, please check your plan and billing details."), ledger.RateLimit, "quota_exceeded", tr, sw, 0},
	{"openai insufficient_quota", txt(`{"error":{"code":"insufficient_quota"}}`), ledger.RateLimit, "quota_exceeded", tr, sw, 0},
	{"openai bad key", txt("Incorrect API key provided: sk-abc***xyz."), ledger.Auth, "invalid_credentials", no, sw, 0},
	{"anthropic overloaded", txt(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`), ledger.Timeout, "overloaded", tr, sw, 0},
	{"anthropic auth", txt(`{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`), ledger.Auth, "invalid_credentials", no, sw, 0},
	{"model overloaded", txt("The model is overloaded. Please try again later."), ledger.Timeout, "overloaded", tr, sw, 0},
	{"aws throttling", txt("ThrottlingException: Rate exceeded"), ledger.RateLimit, "rate_limited", tr, sw, 0},
	{"grpc resource exhausted", txt("rpc error: code = ResourceExhausted desc = Quota exceeded for quota metric 'Requests'"), ledger.RateLimit, "quota_exceeded", tr, sw, 0},
	{"grpc deadline", txt("rpc error: code = DeadlineExceeded desc = context deadline exceeded"), ledger.Timeout, "deadline", tr, no, 0},
	{"node refused", txt("Error: connect ECONNREFUSED 127.0.0.1:3000"), ledger.Timeout, "connection_refused", tr, sw, 0},
	{"node dns", txt("getaddrinfo ENOTFOUND api.example.com"), ledger.Timeout, "dns", tr, sw, 0},
	{"node dns again", txt("request to https://api.example.com/v1 failed, reason: getaddrinfo EAI_AGAIN api.example.com"), ledger.Timeout, "dns_unavailable", tr, sw, 0},
	{"node reset", txt("Error: read ECONNRESET"), ledger.Timeout, "connection_reset", tr, sw, 0},
	{"node hang up", txt("Error: socket hang up"), ledger.Timeout, "connection_reset", tr, sw, 0},
	{"node epipe", txt("Error: write EPIPE"), ledger.Timeout, "broken_pipe", tr, sw, 0},
	{"node connect timeout", txt("connect ETIMEDOUT 10.0.0.5:443"), ledger.Timeout, "connect_timeout", tr, sw, 0},
	{"node spawn", txt("Error: spawn npx ENOENT"), ledger.Timeout, "spawn_failed", tr, sw, 0},
	{"axios timeout", txt("timeout of 30000ms exceeded"), ledger.Timeout, "deadline", tr, no, 0},
	{"python broken pipe", txt("BrokenPipeError: [Errno 32] Broken pipe"), ledger.Timeout, "broken_pipe", tr, sw, 0},
	{"python reset", txt("ConnectionResetError: [Errno 104] Connection reset by peer"), ledger.Timeout, "connection_reset", tr, sw, 0},
	{"resolver", txt("Temporary failure in name resolution"), ledger.Timeout, "dns_unavailable", tr, sw, 0},
	{"windows refused", txt("No connection could be made because the target machine actively refused it."), ledger.Timeout, "connection_refused", tr, sw, 0},
	{"server exited", txt("MCP server process exited with code 1"), ledger.Timeout, "process_exited", tr, sw, 0},
	{"undici fetch failed", txt("TypeError: fetch failed"), ledger.Timeout, "connection_failed", tr, sw, 0},
	{"unable to connect", txt("Unable to connect to the remote server"), ledger.Timeout, "connection_failed", tr, sw, 0},
	{"python disconnected", txt("httpx.RemoteProtocolError: Server disconnected without sending a response."), ledger.Timeout, "connection_closed", tr, sw, 0},
	{"node issuer certificate", txt("Error: unable to get local issuer certificate"), ledger.Timeout, "tls", tr, sw, 0},
	{"axios 404", txt("AxiosError: Request failed with status code 404"), ledger.NotFound, "http_404", no, no, 0},
	{"status line 429", txt("HTTP/1.1 429 Too Many Requests"), ledger.RateLimit, "http_429", tr, sw, 0},
	{"openai python 429", txt("Error code: 429 - {'error': {'message': 'Rate limit reached'}}"), ledger.RateLimit, "http_429", tr, sw, 0},
	{"usage limit", txt("You have reached your usage limit for this month"), ledger.RateLimit, "quota_exceeded", tr, sw, 0},
	{"token missing or invalid", txt("Access token is missing or invalid"), ledger.Auth, "invalid_credentials", no, sw, 0},
	{"authorization header missing", txt("authorization header missing"), ledger.Auth, "unauthorized", no, sw, 0},
	{"502 bad gateway", txt("502 Bad Gateway"), ledger.Timeout, "http_502", tr, sw, 0},
	{"service unavailable", txt("Service Unavailable"), ledger.Timeout, "http_503", tr, sw, 0},
	{"504 gateway timeout", txt("504 Gateway ledger.Timeout"), ledger.Timeout, "http_504", tr, no, 0},
	{"500 internal", txt("500 Internal Server Error"), ledger.Timeout, "http_5xx", tr, no, 0},
	{"stale session", txt("Bad Request: Session not found"), ledger.Timeout, "session_expired", tr, sw, 0},
	{"stale session id in other words", txt("No valid session ID provided"), ledger.Timeout, "session_expired", tr, sw, 0},
	{"stale session beside a 404", txt(`Error 404 status sending message to https://x.example/api/mcp: {"jsonrpc":"2.0","error":{"code":-32000,"message":"Session not found"},"id":null}`), ledger.Timeout, "session_expired", tr, sw, 0},
	{"quota under a 401", txt("Error executing tool text_to_speech: status_code: 401, body: {'detail': {'status': 'quota_exceeded', 'message': 'This request exceeds your quota of 10000.'}}"), ledger.RateLimit, "quota_exceeded", tr, sw, 0},
	{"account limit under a 422", txt(`POST https://api.digitalocean.com/v2/droplets: 422 (request "9988") You have reached your droplet limit.`), ledger.RateLimit, "quota_exceeded", tr, sw, 0},
	{"missing settings naming a credential", txt("Error listing jobs: Missing required Databricks API credentials in .env file"), ledger.Auth, "credential_missing", no, sw, 0},
	{"empty detail after a colon", txt("Error processing mcp-server-reddit query: "), ledger.Timeout, "empty_detail", tr, no, 0},
	{"request failed while being made", txt("MCP error -32603: An error occurred while making the request"), ledger.Timeout, "request_failed", tr, no, 0},
	{"transport error code", txt("CONNECTION_FAILED: HTTP error: "), ledger.Timeout, "connection_failed", tr, sw, 0},
	{"unexpected token", txt("Unexpected token < in JSON at position 0"), ledger.Malformed, "parse_error", no, no, 0},
	{"js invalid token is syntax", txt("SyntaxError: Invalid or unexpected token"), ledger.Malformed, "parse_error", no, no, 0},
	{"invalid params", txt("MCP error -32602: Invalid params"), ledger.Malformed, "invalid_params", no, no, 0},
	{"parse error", txt("MCP error -32700: Parse error"), ledger.Malformed, "parse_error", no, no, 0},
	{"missing argument", txt("missing required argument 'path'"), ledger.Malformed, "invalid_params", no, no, 0},
	{"go unmarshal", txt("json: cannot unmarshal string into Go struct field Args.limit of type int"), ledger.Malformed, "invalid_params", no, no, 0},
	{"output schema", txt("Structured content does not match the tool's output schema: data must have required property 'id'"), ledger.Malformed, "schema_mismatch", no, no, 0},
	{"ts unknown tool", txt("MCP error -32602: Tool get-file not found"), ledger.NotFound, "tool_missing", no, no, 0},
	{"go-sdk unknown tool", txt(`unknown tool "search_v2"`), ledger.NotFound, "tool_missing", no, no, 0},
	{"method not found", txt("MCP error -32601: Method not found"), ledger.NotFound, "tool_missing", no, no, 0},
	{"admin approval", txt("This tool requires admin approval"), ledger.AdminGated, "admin_approval", no, sw, 0},
	{"org enablement", txt("Pending org enablement"), ledger.AdminGated, "admin_approval", no, sw, 0},
	{"instance admin", txt("Instance admin approval required"), ledger.AdminGated, "admin_approval", no, sw, 0},
	{"not enabled for org", txt("This connector is not enabled for your organization"), ledger.AdminGated, "admin_approval", no, sw, 0},
	{"until approved", txt("Tool unavailable until approved"), ledger.AdminGated, "admin_approval", no, sw, 0},
	{"disabled by admin", txt("This app has been disabled by your administrator"), ledger.AdminGated, "org_policy", no, sw, 0},
	{"insufficient scope", txt(`Bearer error="insufficient_scope", scope="files:read"`), ledger.Auth, "insufficient_scope", no, no, 0},
	{"token expired", txt("token has expired"), ledger.Auth, "token_expired", no, sw, 0},
	{"access token expired", txt("The access token provided has expired."), ledger.Auth, "token_expired", no, sw, 0},
	{"jwt expired", txt("TokenExpiredError: jwt expired"), ledger.Auth, "token_expired", no, sw, 0},
	{"session expired", txt("Your session has expired, please log in again"), ledger.Auth, "token_expired", no, sw, 0},
	{"403 forbidden", txt("403 Forbidden"), ledger.Auth, "http_403", no, no, 0},
	{"permission denied", txt("permission denied"), ledger.Auth, "forbidden", no, no, 0},
	{"no permission", txt("You do not have permission to perform this action"), ledger.Auth, "forbidden", no, no, 0},
	{"unauthorized", txt("unauthorized"), ledger.Auth, "unauthorized", no, sw, 0},
	{"401 with reason", txt("HTTP 401 Unauthorized"), ledger.Auth, "http_401", no, sw, 0},
	{"status code in sentence", txt("Request failed with status code 401"), ledger.Auth, "http_401", no, sw, 0},
	{"oauth device flow", txt(`{"error":"authorization_pending"}`), ledger.Auth, "auth_pending", no, sw, 0},
	{"429 reason", txt("429 Too Many Requests"), ledger.RateLimit, "http_429", tr, sw, 0},
	{"429 retry-after header", txt("429 Too Many Requests\r\nRetry-After: 30"), ledger.RateLimit, "http_429", tr, sw, 30 * time.Second},

	// Word traps: match words, not substrings.
	{"enotfound is dns", txt("ENOTFOUND"), ledger.Timeout, "dns", tr, sw, 0},
	{"4010 is not 401", txt("query returned 4010 items"), ledger.Unknown, "unknown", no, no, 0},
	{"14290 is not 429", txt("returned 14290 rows"), ledger.Unknown, "unknown", no, no, 0},
	{"401 items is not 401", txt("processed 401 items, 3 failed"), ledger.Unknown, "unknown", no, no, 0},
	{"exit code 403 is not 403", txt("helper exited: exit code 403"), ledger.Timeout, "process_exited", tr, sw, 0},
	{"author is not auth", txt("author field is required on commit objects"), ledger.Malformed, "invalid_params", no, no, 0},
	{"oauth mention is not auth", txt("oauth flow finished; unexpected value in author"), ledger.Unknown, "unknown", no, no, 0},
	{"file not found is not a tool", txt("tool call failed: file not found: /tmp/x.txt"), ledger.NotFound, "resource_missing", no, no, 0},
	{"not found alone", txt("Not Found"), ledger.NotFound, "resource_missing", no, no, 0},
	{"certificate expired is tls", txt("x509: certificate has expired or is not yet valid"), ledger.Timeout, "tls", tr, sw, 0},
	{"rate word alone", txt("success rate dropped to 40%"), ledger.Unknown, "unknown", no, no, 0},

	// Precedence between words of different types.
	{"429 beats timeout", txt("429 Too Many Requests: upstream request timed out"), ledger.RateLimit, "http_429", tr, sw, 0},
	{"admin beats 403", txt("403 Forbidden: this tool requires admin approval"), ledger.AdminGated, "admin_approval", no, sw, 0},
	{"auth beats reset", txt("401 Unauthorized; connection reset by peer"), ledger.Auth, "http_401", no, sw, 0},
	{"not found beats parse", txt("MCP error -32602: Tool nope not found (Parse error in arguments)"), ledger.NotFound, "tool_missing", no, no, 0},
	{"refused beats closed", txt("Connection closed: connect ECONNREFUSED 127.0.0.1:8080"), ledger.Timeout, "connection_refused", tr, sw, 0},
	{"exited beats closed", txt("Connection closed: process exited with code 1"), ledger.Timeout, "process_exited", tr, sw, 0},
	// After a stdio server died, Gemini CLI and Qwen Code answer every call "Not connected", Cline
	// `MCP server "e2e" is not connected.` (none restarts it): the server is gone, not one tool.
	{"gemini not connected", txt("Not connected"), ledger.Timeout, "connection_closed", tr, sw, 0},
	{"qwen connection failed", txt("MCP tool execution may have completed before the connection failed. Automatic replay was skipped because the call could not be verified as safe to replay. Do not retry automatically; verify the outcome before trying again."),
		ledger.Timeout, "connection_failed", tr, sw, 0},
	// Transport prose about the server's own backend: every call of the server fails with it.
	{"a dependency's connection is the server's", txt("database connection failed"), ledger.Timeout, "connection_failed", tr, sw, 0},
	{"cline not connected", txt(`MCP server "e2e" is not connected.`), ledger.Timeout, "connection_closed", tr, sw, 0},

	// Status only.
	{"status 400", Evidence{Status: 400}, ledger.Malformed, "http_400", no, no, 0},
	{"status 401", Evidence{Status: 401}, ledger.Auth, "http_401", no, sw, 0},
	{"status 403", Evidence{Status: 403}, ledger.Auth, "http_403", no, no, 0},
	{"status 404", Evidence{Status: 404}, ledger.NotFound, "http_404", no, no, 0},
	{"status 406", Evidence{Status: 406}, ledger.Malformed, "http_406", no, no, 0},
	{"status 408", Evidence{Status: 408}, ledger.Timeout, "http_408", tr, no, 0},
	{"status 409", Evidence{Status: 409}, ledger.Unknown, "http_409", no, no, 0},
	{"status 429", Evidence{Status: 429}, ledger.RateLimit, "http_429", tr, sw, 0},
	{"status 500", Evidence{Status: 500}, ledger.Timeout, "http_5xx", tr, no, 0},
	{"status 502", Evidence{Status: 502}, ledger.Timeout, "http_502", tr, sw, 0},
	{"status 503", Evidence{Status: 503}, ledger.Timeout, "http_503", tr, sw, 0},
	{"status 504", Evidence{Status: 504}, ledger.Timeout, "http_504", tr, no, 0},
	{"status 529", Evidence{Status: 529}, ledger.Timeout, "overloaded", tr, sw, 0},
	{"status 200 is no evidence", Evidence{Status: 200}, ledger.Unknown, "unknown", no, no, 0},
	{"no evidence", Evidence{}, ledger.Unknown, "unknown", no, no, 0},

	// Code only.
	{"code -32700", Evidence{Code: -32700}, ledger.Malformed, "parse_error", no, no, 0},
	{"code -32600", Evidence{Code: -32600}, ledger.Malformed, "invalid_request", no, no, 0},
	{"code -32601", Evidence{Code: -32601}, ledger.NotFound, "tool_missing", no, no, 0},
	{"code -32602", Evidence{Code: -32602}, ledger.Malformed, "invalid_params", no, no, 0},
	{"code -32603", Evidence{Code: -32603}, ledger.Unknown, "jsonrpc_-32603", no, no, 0},
	{"code -32000", Evidence{Code: -32000}, ledger.Timeout, "connection_closed", tr, sw, 0},
	{"code -32001", Evidence{Code: -32001}, ledger.Timeout, "deadline", tr, no, 0},
	{"code -32002", Evidence{Code: -32002}, ledger.NotFound, "jsonrpc_-32002", no, no, 0},
	{"code -32005", Evidence{Code: -32005}, ledger.Timeout, "jsonrpc_-32005", tr, no, 0},
	{"code -32022", Evidence{Code: -32022}, ledger.Malformed, "version_mismatch", no, no, 0},
	{"code -32042", Evidence{Code: -32042}, ledger.Unknown, "jsonrpc_-32042", no, no, 0},

	// Several sources: the order of trust.
	{"status beats text", Evidence{Status: 503, Text: "unauthorized"}, ledger.Timeout, "http_503", tr, sw, 0},
	{"admin text refines 403", Evidence{Status: 403, Text: "This tool requires admin approval"}, ledger.AdminGated, "admin_approval", no, sw, 0},
	{"rate text refines 403", Evidence{Status: 403, Text: "API rate limit exceeded for installation"}, ledger.RateLimit, "rate_limited", tr, sw, 0},
	{"status 429 keeps its cause", Evidence{Status: 429, Text: "quota exceeded"}, ledger.RateLimit, "http_429", tr, sw, 0},
	{"status 404 with reason", Evidence{Status: 404, Text: "Not Found"}, ledger.NotFound, "http_404", no, no, 0},
	{"unknown status lets text decide", Evidence{Status: 409, Text: "rate limit exceeded"}, ledger.RateLimit, "rate_limited", tr, sw, 0},
	{"unknown status kept over unknown text", Evidence{Status: 409, Text: "conflict on write"}, ledger.Unknown, "http_409", no, no, 0},
	{"status beats code", Evidence{Status: 401, Code: -32602}, ledger.Auth, "http_401", no, sw, 0},
	{"strong code beats text", Evidence{Code: -32601, Text: "unauthorized"}, ledger.NotFound, "tool_missing", no, no, 0},
	{"unknown tool text refines -32602", Evidence{Code: -32602, Text: "Tool nope not found"}, ledger.NotFound, "tool_missing", no, no, 0},
	{"weak -32603 lets text decide", Evidence{Code: -32603, Text: "rate limit exceeded"}, ledger.RateLimit, "rate_limited", tr, sw, 0},
	{"weak -32000 lets text decide", Evidence{Code: -32000, Text: "Not Acceptable: Client must accept both application/json and text/event-stream"}, ledger.Malformed, "not_acceptable", no, no, 0},
	{"weak -32001 session", Evidence{Code: -32001, Text: "Session not found"}, ledger.Timeout, "session_expired", tr, sw, 0},
	{"weak code kept over unknown text", Evidence{Code: -32603, Text: "internal boom"}, ledger.Unknown, "jsonrpc_-32603", no, no, 0},

	// An explicit type wins; the other evidence only names the cause.
	{"explicit type alone", Evidence{Type: ledger.Auth}, ledger.Auth, "", no, sw, 0},
	{"explicit type lower case", Evidence{Type: "rate-limit", Status: 429}, ledger.RateLimit, "http_429", tr, sw, 0},
	{"explicit type over text", Evidence{Type: ledger.Malformed, Text: "unauthorized"}, ledger.Malformed, "", no, no, 0},
	{"explicit type picks its cause", Evidence{Type: ledger.Timeout, Text: "403 Forbidden after connect ECONNREFUSED"}, ledger.Timeout, "connection_refused", tr, sw, 0},
	{"explicit type keeps the hint", Evidence{Type: ledger.RateLimit, Text: "retry after 45s"}, ledger.RateLimit, "", tr, sw, 45 * time.Second},
	{"invalid explicit type ignored", Evidence{Type: "BOGUS", Text: "Connection closed"}, ledger.Timeout, "connection_closed", tr, sw, 0},

	// Retry hints in every form.
	{"hint header seconds", txt("HTTP 429\nRetry-After: 30"), ledger.RateLimit, "http_429", tr, sw, 30 * time.Second},
	{"hint http date", txt("503 Service Unavailable\nRetry-After: Wed, 21 Oct 2026 07:28:30 GMT"), ledger.Timeout, "http_503", tr, sw, 30 * time.Second},
	{"hint prose seconds", txt("rate limited, retry after 30s"), ledger.RateLimit, "rate_limited", tr, sw, 30 * time.Second},
	{"hint retry in", txt("throttled: retry in 5 seconds"), ledger.RateLimit, "rate_limited", tr, sw, 5 * time.Second},
	{"hint try again minutes", txt("quota exceeded, try again in 2 minutes"), ledger.RateLimit, "quota_exceeded", tr, sw, 2 * time.Minute},
	{"hint json", txt(`{"error":"rate_limited","retry_after": 12}`), ledger.RateLimit, "rate_limited", tr, sw, 12 * time.Second},
	{"hint json seconds", txt(`{"error":"too_many_requests","retry_after_seconds":12}`), ledger.RateLimit, "rate_limited", tr, sw, 12 * time.Second},
	{"hint yaml seconds", txt("rate limit exceeded; retry_after_seconds: 12"), ledger.RateLimit, "rate_limited", tr, sw, 12 * time.Second},
	{"hint ms header", txt("429 Too Many Requests retry-after-ms: 1500"), ledger.RateLimit, "http_429", tr, sw, 1500 * time.Millisecond},
	{"hint capped", txt("quota exhausted; Retry-After: 86400"), ledger.RateLimit, "quota_exceeded", tr, sw, time.Hour},
}

func (c classifyCase) check(t *testing.T) {
	t.Helper()
	got := Classify(c.ev, testNow)
	got.Fault = "" // whose fault: TestFault
	want := Result{Type: c.typ, Cause: c.cause, Transient: c.transient, RetryAfter: c.retry, ServerWide: c.serverWide}
	// The evidence over calls (Weak, Shape) has tests of its own.
	got.Weak, got.Shape = false, ""
	if got != want {
		t.Errorf("Classify(%+v)\n got  %+v\n want %+v", c.ev, got, want)
	}
}

func TestClassify(t *testing.T) {
	names := make(map[string]bool)
	for _, c := range classifyCases {
		if names[c.name] {
			t.Fatalf("duplicate case name %q", c.name)
		}
		names[c.name] = true
		t.Run(c.name, c.check)
	}
	seen := make(map[ledger.FailureType]bool)
	for _, c := range classifyCases {
		seen[c.typ] = true
	}
	for _, typ := range ledger.FailureTypes {
		if !seen[typ] {
			t.Errorf("no case classifies as %s", typ)
		}
	}
}

func TestClassifyInterrupt(t *testing.T) {
	for _, ev := range []Evidence{
		{Interrupt: true},
		{Interrupt: true, Text: "Request was aborted."},
		{Interrupt: true, Text: "Connection closed", Status: 503, Code: -32000},
		{Interrupt: true, Type: ledger.Auth, Text: "Retry-After: 30"},
	} {
		t.Run(fmt.Sprintf("%+v", ev), func(t *testing.T) {
			if got := Classify(ev, testNow); got != (Result{Interrupt: true}) {
				t.Errorf("Classify(%+v) = %+v, want only Interrupt", ev, got)
			}
		})
	}
}

// TestClassifyTransient pins Result.Transient to the type's own answer.
func TestClassifyTransient(t *testing.T) {
	for _, typ := range ledger.FailureTypes {
		t.Run(string(typ), func(t *testing.T) {
			if got := Classify(Evidence{Type: typ}, testNow); got.Transient != typ.Transient() {
				t.Errorf("Transient = %v, want %v", got.Transient, typ.Transient())
			}
		})
	}
	if len(ledger.FailureTypes) != numTypes {
		t.Fatalf("len(ledger.FailureTypes) = %d, numTypes = %d", len(ledger.FailureTypes), numTypes)
	}
	for i, typ := range ledger.FailureTypes {
		if typ.Rank() != i {
			t.Errorf("Rank(%s) = %d, want %d", typ, typ.Rank(), i)
		}
	}
}

func TestRetryHint(t *testing.T) {
	for _, c := range []struct {
		name string
		text string
		want time.Duration
	}{
		{"header seconds", "Retry-After: 30", 30 * time.Second},
		{"header lower", "retry-after:7", 7 * time.Second},
		{"header equals", "retry-after=7", 7 * time.Second},
		{"header imf date", "Retry-After: Wed, 21 Oct 2026 07:29:00 GMT", time.Minute},
		{"header one-digit day", "Retry-After: Wed, 1 Jan 2031 00:00:00 GMT", time.Hour},
		{"header rfc850 date", "Retry-After: Wednesday, 21-Oct-26 07:28:10 GMT", 10 * time.Second},
		{"header asctime date", "Retry-After: Wed Oct 21 07:28:05 2026", 5 * time.Second},
		{"header past date", "Retry-After: Wed, 21 Oct 2026 07:27:00 GMT", 0},
		{"header zero", "Retry-After: 0", 0},
		{"header negative", "Retry-After: -5", 0},
		{"header garbage", "Retry-After: soon", 0},
		{"header huge", "Retry-After: 99999999999999999999999999999999999999", time.Hour},
		{"header capped", "Retry-After: 3601", time.Hour},
		{"header ms", "retry-after-ms: 1500", 1500 * time.Millisecond},
		{"camel case", `{"retryAfter": 7}`, 7 * time.Second},
		{"camel case ms", `{"retryAfterMs": 250}`, 250 * time.Millisecond},
		{"json", `{"retry_after": 12}`, 12 * time.Second},
		{"json string", `{"retry_after": "12"}`, 12 * time.Second},
		{"json fraction", `{"retry_after": 0.5}`, 500 * time.Millisecond},
		{"json seconds", `{"retry_after_seconds":12}`, 12 * time.Second},
		{"yaml seconds", "retry_after_seconds: 12", 12 * time.Second},
		{"prose after s", "retry after 30s", 30 * time.Second},
		{"prose after bare", "Please retry after 30.", 30 * time.Second},
		{"prose in seconds", "retry in 5 seconds", 5 * time.Second},
		{"prose retrying", "Retrying in 3s", 3 * time.Second},
		{"prose retry again", "retry again in 4 sec", 4 * time.Second},
		{"prose try again minutes", "try again in 2 minutes", 2 * time.Minute},
		{"prose try again after", "Try again after 1 hour", time.Hour},
		{"prose compound", "Please try again in 1m30.5s.", 90*time.Second + 500*time.Millisecond},
		{"prose ms", "Please try again in 120ms.", 120 * time.Millisecond},
		{"prose days capped", "try again in 2 days", time.Hour},
		{"first hint wins", "retry after 5s; Retry-After: 30", 5 * time.Second},
		{"skips a zero hint", "retry after 0s, retry after 9s", 9 * time.Second},
		{"later", "Please try again later.", 0},
		{"no hint", "Connection closed", 0},
		{"not a key", "retry_afterwards: 5", 0},
		{"not a word", "entry after 5s", 0},
		{"glued unit", "retry after 30x", 0},
		{"empty", "", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := RetryHint(c.text, testNow); got != c.want {
				t.Errorf("RetryHint(%q) = %v, want %v", c.text, got, c.want)
			}
		})
	}
}

// TestClassifyLongText checks that evidence deep in a long text is found and that the text's size
// does not change the answer.
func TestClassifyLongText(t *testing.T) {
	long := strings.Repeat("lorem ipsum dolor sit amet, ", 400) + "connect ECONNREFUSED 127.0.0.1:3000"
	got := Classify(txt(long), testNow)
	if got.Type != ledger.Timeout || got.Cause != "connection_refused" {
		t.Errorf("Classify(long) = %+v, want TIMEOUT connection_refused", got)
	}
}

// bigText is a 10 KB failure text: a stack trace with the evidence in the middle.
func bigText() string {
	var b strings.Builder
	for b.Len() < 5*1024 {
		b.WriteString("    at processTicksAndRejections (node:internal/process/task_queues:95:5) author=42\n")
	}
	b.WriteString("Error: 429 Too Many Requests; Retry-After: 30\n")
	for b.Len() < 10*1024 {
		b.WriteString("    at async Client.request (/app/node_modules/@modelcontextprotocol/sdk/client.js:1:2)\n")
	}
	return b.String()
}

func BenchmarkClassify(b *testing.B) {
	ev := txt(bigText())
	b.SetBytes(int64(len(ev.Text)))
	b.ReportAllocs()
	for b.Loop() {
		Classify(ev, testNow)
	}
}

// BenchmarkClassifyCall is one failure event as the hook meets it: a 500-character text and the
// call's tool and arguments (docs/performance.md keeps the number; the budget is 1 ms).
func BenchmarkClassifyCall(b *testing.B) {
	text := "Error fetching https://docs.acme.dev/guide/install?lang=en: TypeError: fetch failed " +
		"(cause: getaddrinfo ENOTFOUND docs.acme.dev) while the crawler followed 3 redirects; " +
		"the request for the page that the model asked for did not complete. "
	for len(text) < 500 {
		text += "Please check the URL and try again later. "
	}
	text = text[:500]
	args := ArgsFromJSON([]byte(`{"url":"https://docs.acme.dev/guide/install?lang=en","max_length":5000,"raw":false,"headers":{"accept":"text/html"}}`))
	ev := Evidence{Text: text, Tool: "mcp__web__fetch", Args: args}
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		Classify(ev, testNow)
	}
}
