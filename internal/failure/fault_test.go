package failure

import (
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// TestFault checks whose fault a failure is, pair by pair: each look-alike of docs/classification.md
// next to its twin.
func TestFault(t *testing.T) {
	cases := []struct {
		name  string
		ev    Evidence
		fault ledger.Fault
	}{
		// A 404 on the upstream resource a tool asked for, and a 404 on the MCP endpoint.
		{"github 404 upstream url", txt("failed to get file contents: GET https://api.github.com/repos/acme/web/contents/docs/INSTALL.md: 404 Not Found []"), ledger.FaultCall},
		{"404 on the mcp endpoint", txt("Error POSTing to endpoint (HTTP 404): Not Found"), ledger.FaultServer},
		{"404 status of a probe", Evidence{Status: 404, Probe: true}, ledger.FaultServer},
		// A table the role may not touch, and permission denied for the token.
		{"permission denied for table", txt("permission denied for table payroll"), ledger.FaultCall},
		{"permission denied alone", txt("permission denied"), ledger.FaultCredential},
		{"path outside roots", txt("Error: Access denied - path outside allowed directories: /etc/hosts not in /home/dev/proj"), ledger.FaultCall},
		{"eacces of the server's own file", txt("EACCES: permission denied, open '/usr/lib/node_modules/@modelcontextprotocol/server-memory/dist/memory.jsonl'"), ledger.FaultCredential},
		// -32602 invalid params and -32601 method not found.
		{"-32602 invalid arguments", txt("MCP error -32602: Invalid arguments for tool search: expected string"), ledger.FaultCall},
		{"-32602 code", Evidence{Code: -32602}, ledger.FaultCall},
		{"-32601 method not found", txt("MCP error -32601: Method not found"), ledger.FaultTool},
		{"-32601 code", Evidence{Code: -32601}, ledger.FaultTool},
		{"no such tool", txt("<tool_use_error>Error: No such tool available: mcp__probe__nope</tool_use_error>"), ledger.FaultTool},
		{"tool disabled with -32602", txt("MCP error -32602: Tool deploy_preview disabled"), ledger.FaultTool},
		// One repository the app cannot see, and credentials that are bad for every call.
		{"resource not accessible by integration", txt("Error: 403 Forbidden - Resource not accessible by integration"), ledger.FaultCall},
		{"401 bad credentials", txt("GET https://api.github.com/user: 401 Bad credentials []"), ledger.FaultCredential},
		{"bare 403", txt("403 Forbidden"), ledger.FaultCredential},
		{"403 on an upstream url", txt("GET https://api.github.com/repos/acme/secret: 403 Forbidden"), ledger.FaultCall},
		// The tool's input and the tool's output failing a schema.
		{"input validation", txt(`validating "arguments": validating root: required: missing properties: ["owner"]`), ledger.FaultCall},
		{"output validation", txt("MCP error -32602: Output validation error: Tool get_forecast has an output schema but no structured content was provided"), ledger.FaultTool},
		// A fetched page that is down, and the server's own upstream down.
		{"fetch target 503", txt("Failed to fetch https://status.acme.dev/ - status code 503"), ledger.FaultCall},
		{"github upstream 503", txt("GET https://api.github.com/repos/acme/web/issues: 503 Service Unavailable"), ledger.FaultServer},
		// Server-side failures are the tool's, whatever the input.
		{"internal error", txt("MCP error -32603: Internal error"), ledger.FaultTool},
		{"stack trace", txt("TypeError: Cannot read properties of undefined (reading 'map')\n    at listTools (/app/dist/index.js:42:17)"), ledger.FaultTool},
		{"500 upstream", txt("GET https://api.github.com/repos/acme/web/issues: 500 Internal Server Error"), ledger.FaultTool},
		{"internal error naming a missing file", txt("MCP error -32603: ENOENT: no such file or directory, open '/home/dev/proj/x'"), ledger.FaultCall},
		// A parse error that quotes the query the call wrote, and the tool's own query failing.
		{"syntax error quoting the call's query", Evidence{Text: "Neo4j Error: {code: Neo.ClientError.Statement.SyntaxError} {message: Invalid input 'RETRN': expected 'WITH' or <EOF> (line 1, column 18 (offset: 17))}",
			Tool: "mcp__neo4j__read_neo4j_cypher", Args: ArgsFromJSON([]byte(`{"query":"MATCH (p:Person) RETRN p.name"}`))}, ledger.FaultCall},
		{"syntax error of the tool's own query", Evidence{Text: "Error: {code: Neo.ClientError.Statement.SyntaxError} {message: Invalid input '$': expected an identifier (line 5, column 15 (offset: 144",
			Tool: "mcp__neo4j__create_entities", Args: ArgsFromJSON([]byte(`{"entities":[{"name":"Michael","type":"Person"}]}`))}, ledger.FaultTool},
		// An OS error on a file the call named, and on the server's own cache while the call named none.
		{"eacces on the call's file", Evidence{Text: "EACCES: permission denied, open '/home/dev/proj/.env.production'",
			Tool: "mcp__filesystem__read_text_file", Args: ArgsFromJSON([]byte(`{"path":"/home/dev/proj/.env.production"}`))}, ledger.FaultCall},
		{"eacces on the server's cache", Evidence{Text: "MCP error -32603: Failed to fetch content: EACCES: permission denied, mkdir '.cache'",
			Tool: "mcp__read-website__read_website", Args: ArgsFromJSON([]byte(`{"url":"https://example.com/docs"}`))}, ledger.FaultTool},
		// A required argument the call left out, and one it passed that the tool lost.
		{"required argument left out", Evidence{Text: `Error: [{"code":"invalid_type","expected":"string","received":"undefined","path":["idOrUrl"],"message":"Required"}]`,
			Tool: "mcp__vercel__get_deployment", Args: ArgsFromJSON([]byte(`{"teamId":"team_1"}`))}, ledger.FaultCall},
		{"passed argument reported missing", Evidence{Text: `Error: [{"code":"invalid_type","expected":"string","received":"undefined","path":["idOrUrl"],"message":"Required"}]`,
			Tool: "mcp__vercel__get_deployment", Args: ArgsFromJSON([]byte(`{"idOrUrl":"dpl_5ZqgQ96j7oDdfnDCX8KDV6891Lcj"}`))}, ledger.FaultTool},
		// The called tool named as one the server does not serve, and another object unsupported.
		{"called tool unsupported", Evidence{Text: "unsupported call: list_chats", Tool: "mcp__telegram__list_chats", Args: ArgsFromJSON([]byte(`{"page_size":20}`))}, ledger.FaultTool},
		{"object type unsupported", Evidence{Text: "Error: Unsupported object type: trigger", Tool: "mcp__postgres__describe_object", Args: ArgsFromJSON([]byte(`{"object_type":"trigger"}`))}, ledger.FaultCall},
		{"server's browser profile in use", Evidence{Text: "Error: Browser is already in use for /root/.cache/ms-playwright/mcp-chrome-profile, use --isolated to run multiple instances of the same browser",
			Tool: "mcp__playwright__browser_navigate", Args: ArgsFromJSON([]byte(`{"url":"https://example.com"}`))}, ledger.FaultTool},
		{"call's file in use", Evidence{Text: "EBUSY: resource busy or locked, the file /home/dev/proj/out.log is locked",
			Tool: "mcp__filesystem__write_file", Args: ArgsFromJSON([]byte(`{"path":"/home/dev/proj/out.log","content":"x"}`))}, ledger.FaultCall},
		// A missing object of a kind the call named nowhere (the server's configured zone), and one it named.
		{"server's configured zone missing", Evidence{Text: "Browser zone 'mcp_browser' does not exist",
			Tool: "mcp__brightdata__scraping_browser_navigate", Args: ArgsFromJSON([]byte(`{"url":"https://www.example.com"}`))}, ledger.FaultServer},
		{"call's database missing", Evidence{Text: "database not found[database=analytics]",
			Tool: "mcp__milvus__milvus_use_database", Args: ArgsFromJSON([]byte(`{"db_name":"analytics"}`))}, ledger.FaultCall},
		// A bare refusal of a write to one object, and the same words about the token.
		{"bare 403 writing one object", Evidence{Text: `Error: MCP error -32603: Trello API Error: 403 Request failed with status code 403`,
			Tool: "mcp__trello__update_card_details", Args: ArgsFromJSON([]byte(`{"cardId":"65f1c0ffee","name":"Ship it"}`))}, ledger.FaultCall},
		{"403 naming the token on a write", Evidence{Text: "403 Your token does not have the required 'write_builds' scope",
			Tool: "mcp__buildkite__create_build", Args: ArgsFromJSON([]byte(`{"pipeline_slug":"web"}`))}, ledger.FaultCredential},
		{"bare 403 reading", Evidence{Text: "Error fetching data from HubSpot: Status 403",
			Tool: "mcp__hubspot__hubspot_get_company", Args: ArgsFromJSON([]byte(`{"companyId":"123"}`))}, ledger.FaultCredential},
		// A write that failed with no reason, a read that did, and a write that gave one.
		{"bare failure of a write", Evidence{Text: `"Failed to create customer"`,
			Tool: "mcp__stripe__create_customer", Args: ArgsFromJSON([]byte(`{"name":"Ana Souza","email":"ana@example.com"}`))}, ledger.FaultCall},
		{"bare failure of a read", Evidence{Text: `"Failed to search documentation"`,
			Tool: "mcp__stripe__search_stripe_documentation", Args: ArgsFromJSON([]byte(`{"question":"refunds"}`))}, ledger.FaultTool},
		{"write failure with an empty error object", Evidence{Text: "Error calling tool add_npc: {}",
			Tool: "mcp__dnd__add_npc", Args: ArgsFromJSON([]byte(`{"name":"Grim"}`))}, ledger.FaultTool},
		{"write failure naming the connection", Evidence{Text: "Failed to create coupon: An error occurred with our connection to Stripe.",
			Tool: "mcp__stripe__create_coupon", Args: ArgsFromJSON([]byte(`{"percent_off":10}`))}, ledger.FaultServer},
		// A missing tool the call asked about, and the called tool missing.
		{"asked about a missing tool", Evidence{Text: `{"error": "Tool not found: list-sharepoint-site-pages"}`,
			Tool: "mcp__sharepoint__get-tool-schema", Args: ArgsFromJSON([]byte(`{"tool_name":"list-sharepoint-site-pages"}`))}, ledger.FaultCall},
		{"called tool missing", Evidence{Text: "Tool not found: get-tool-schema",
			Tool: "mcp__sharepoint__get-tool-schema", Args: ArgsFromJSON([]byte(`{"tool_name":"list-sharepoint-site-pages"}`))}, ledger.FaultTool},
		// A setting the call could have passed instead, and one it could not.
		{"setting or argument missing", Evidence{Text: "MCP error -32603: No project ID provided and GITLAB_PROJECT_ID is not set",
			Tool: "mcp__gitlab__list_issues", Args: ArgsFromJSON([]byte(`{"state":"opened"}`))}, ledger.FaultCall},
		{"setting missing", Evidence{Text: "MCP error -32603: GITLAB_PROJECT_ID is not set",
			Tool: "mcp__gitlab__list_issues", Args: ArgsFromJSON([]byte(`{"state":"opened"}`))}, ledger.FaultServer},
		// A lost MCP session beside a 404: the endpoint's, not a missing resource.
		{"404 with a lost session", txt("Error POSTing to endpoint (HTTP 404): Transport not found for sessionId 0b1a1fb1-d922-489a-b709-7bba240c6251"), ledger.FaultServer},
		// Outages stand against call words.
		{"connection closed", txt("Connection closed"), ledger.FaultServer},
		{"rate limit on a url", txt("GET https://api.github.com/search/code: 429 Too Many Requests"), ledger.FaultQuota},
		{"admin gated", txt("This tool requires admin approval"), ledger.FaultAdmin},
		{"spawn enoent", txt("Error: spawn npx ENOENT"), ledger.FaultServer},
		{"module not found", txt("Error: Cannot find module '@modelcontextprotocol/sdk/server/index.js'"), ledger.FaultTool},
		// Explicit evidence.
		{"explicit fault", Evidence{Text: "Connection closed", Fault: ledger.FaultCall}, ledger.FaultCall},
		{"probe never the call's", Evidence{Text: "file not found", Probe: true}, ledger.FaultTool},
		{"hang", Evidence{Interrupt: true, Duration: 45 * time.Second, HangAfter: 30 * time.Second}, ledger.FaultServer},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Classify(c.ev, testNow)
			if got.Fault != c.fault {
				t.Errorf("Classify(%+v) = %s %s fault %s, want fault %s", c.ev, got.Type, got.Cause, got.Fault, c.fault)
			}
			if got.Fault == ledger.FaultCall && got.ServerWide {
				t.Errorf("a call's fault is server-wide: %+v", got)
			}
		})
	}
}

// TestHang checks that an interrupt counts only after hang_after.
func TestHang(t *testing.T) {
	after := 30 * time.Second
	if got := Classify(Evidence{Interrupt: true, Duration: 45 * time.Second, HangAfter: after}, testNow); got.Type != ledger.Timeout || got.Cause != "hung" || got.Interrupt {
		t.Errorf("45 s interrupt: %+v, want TIMEOUT hung", got)
	}
	for _, ev := range []Evidence{
		{Interrupt: true, Duration: 1500 * time.Millisecond, HangAfter: after},
		{Interrupt: true, Duration: 30 * time.Second, HangAfter: after},
		{Interrupt: true, Duration: time.Hour}, // no hang_after: never a hang
	} {
		if got := Classify(ev, testNow); got != (Result{Interrupt: true}) {
			t.Errorf("Classify(%+v) = %+v, want only Interrupt", ev, got)
		}
	}
}
