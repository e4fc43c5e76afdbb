package agent

import (
	"strings"
	"testing"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
)

// The codecs of Kiro CLI, Devin CLI and Antigravity CLI, known from their documents only (no
// client of theirs installs here). Each fixture says where its payload comes from.

type documentedCase struct {
	name      string
	in        string
	kind      gate.Kind
	key       string
	server    string
	errorText string
}

func runDocumented(t *testing.T, c Codec, cases []documentedCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ev := decode(t, c, tc.in, servers)
			if ev.Kind != tc.kind || ev.Key != tc.key || ev.Server != tc.server || ev.Error != tc.errorText {
				t.Errorf("got kind %v key %q server %q error %q; want %v %q %q %q", ev.Kind, ev.Key, ev.Server, ev.Error, tc.kind, tc.key, tc.server, tc.errorText)
			}
			if ev.Agent != c.Name() {
				t.Errorf("agent %q, want %q", ev.Agent, c.Name())
			}
		})
	}
}

func TestKiroCodec(t *testing.T) {
	runDocumented(t, Kiro, []documentedCase{
		// Source: aws/amazon-q-developer-cli docs/hooks.md, "MCP Example" (the same text as
		// kiro.dev/docs/cli/hooks): an MCP tool is @<server>/<tool>.
		{"preToolUse of an MCP tool",
			`{"hook_event_name":"preToolUse","cwd":"/current/working/directory","tool_name":"@postgres/query","tool_input":{"sql":"SELECT * FROM orders LIMIT 10;"}}`,
			gate.Before, "mcp__postgres__query", "postgres", ""},
		// Source: the same page, "PreToolUse": a built-in tool is not ours.
		{"preToolUse of a built-in tool",
			`{"hook_event_name":"preToolUse","cwd":"/p","tool_name":"fs_read","tool_input":{"operations":[{"mode":"Line","path":"/p/docs/hooks.md"}]}}`,
			gate.Before, "", "", ""},
		// Source: the same page, "PostToolUse": tool_response {success, result}.
		{"postToolUse that succeeded",
			`{"hook_event_name":"postToolUse","cwd":"/p","tool_name":"@postgres/query","tool_input":{"sql":"SELECT 1"},"tool_response":{"success":true,"result":["1"]}}`,
			gate.Success, "mcp__postgres__query", "postgres", ""},
		// The documented shape with success false (no failed call is shown there): its result is
		// the failure's text.
		{"postToolUse that failed",
			`{"hook_event_name":"postToolUse","cwd":"/p","tool_name":"@postgres/query","tool_input":{"sql":"SELECT 1"},"tool_response":{"success":false,"result":["HTTP 503 Service Unavailable"]}}`,
			gate.Failure, "mcp__postgres__query", "postgres", "HTTP 503 Service Unavailable"},
		{"postToolUse that failed with a text result",
			`{"hook_event_name":"postToolUse","tool_name":"@my-db/run","tool_response":{"result":"connection refused","success":false}}`,
			gate.Failure, "mcp__my-db__run", "my-db", "connection refused"},
		{"our own deny coming back never counts",
			`{"hook_event_name":"postToolUse","tool_name":"@postgres/query","tool_response":{"success":false,"result":["⚡ CIRCUIT OPEN — mcp__postgres__query\nFailure type: CONNECTION"]}}`,
			gate.Other, "mcp__postgres__query", "postgres", "⚡ CIRCUIT OPEN — mcp__postgres__query\nFailure type: CONNECTION"},
		// Source: the same page, "AgentSpawn".
		{"agentSpawn", `{"hook_event_name":"agentSpawn","cwd":"/current/working/directory"}`, gate.SessionStart, "", "", ""},
	})
}

func TestDevinCodec(t *testing.T) {
	runDocumented(t, Devin, []documentedCase{
		// Source: docs.devin.ai/cli/extensibility/hooks/lifecycle-hooks, PreToolUse (tool_name
		// example mcp__github__create_issue), with Claude Code's common fields, which the overview
		// says the format is compatible with.
		{"PreToolUse of an MCP tool",
			`{"hook_event_name":"PreToolUse","session_id":"s1","cwd":"/p","tool_name":"mcp__github__create_issue","tool_input":{"title":"x"}}`,
			gate.Before, "mcp__github__create_issue", "", ""},
		{"PreToolUse of exec, a tool of Devin's",
			`{"hook_event_name":"PreToolUse","tool_name":"exec","tool_input":{"command":"rm -rf /","shell_id":"main"}}`,
			gate.Before, "", "", ""},
		// Source: the same page, PostToolUse: tool_response {success, output, error}.
		{"PostToolUse that succeeded",
			`{"hook_event_name":"PostToolUse","tool_name":"mcp__github__create_issue","tool_input":{"title":"x"},"tool_response":{"success":true,"output":"created #12","error":null}}`,
			gate.Success, "mcp__github__create_issue", "", ""},
		{"PostToolUse that failed, with its error",
			`{"hook_event_name":"PostToolUse","tool_name":"mcp__github__create_issue","tool_input":{"title":"x"},"tool_response":{"success":false,"output":"","error":"HTTP 401 Unauthorized: bad credentials"}}`,
			gate.Failure, "mcp__github__create_issue", "", "HTTP 401 Unauthorized: bad credentials"},
		{"PostToolUse that failed with its text in output only",
			`{"hook_event_name":"PostToolUse","tool_name":"mcp__github__create_issue","tool_response":{"success":false,"output":"Connection closed","error":null}}`,
			gate.Failure, "mcp__github__create_issue", "", "Connection closed"},
		{"PostToolUse that failed with no text",
			`{"hook_event_name":"PostToolUse","tool_name":"mcp__github__create_issue","tool_response":{"success":false}}`,
			gate.Failure, "mcp__github__create_issue", "", "the tool call failed (the agent gave no error text)"},
		{"our own deny coming back never counts",
			`{"hook_event_name":"PostToolUse","tool_name":"mcp__github__create_issue","tool_response":{"success":false,"error":"⟲ LOOP GUARD — mcp__github__create_issue\nThis exact call"}}`,
			gate.Other, "mcp__github__create_issue", "", "⟲ LOOP GUARD — mcp__github__create_issue\nThis exact call"},
		{"SessionStart", `{"hook_event_name":"SessionStart","session_id":"s1","cwd":"/p"}`, gate.SessionStart, "", "", ""},
	})
}

func TestAntigravityCodec(t *testing.T) {
	pre, post := Antigravity.(eventBound).ForEvent("PreToolUse"), Antigravity.(eventBound).ForEvent("PostToolUse")
	// Source: websentry-ai/setup PR #104 (agy 1.0.5, "verified contract"): camelCase
	// {conversationId, stepIdx, toolCall{name, args}, transcriptPath, workspacePaths,
	// artifactDirectoryPath}; PostToolUse adds error, and toolCall may be null. The MCP tool's name
	// is not confirmed there: both Claude Code's and Gemini CLI's spellings are fixtures.
	runDocumented(t, pre, []documentedCase{
		{"PreToolUse of an MCP tool, Gemini CLI's naming",
			`{"conversationId":"c1","stepIdx":3,"toolCall":{"name":"mcp_docs_search","args":{"q":"x"}},"transcriptPath":"/t","workspacePaths":["/p"],"artifactDirectoryPath":"/a"}`,
			gate.Before, "mcp__docs__search", "docs", ""},
		{"PreToolUse of an MCP tool, Claude Code's naming",
			`{"conversationId":"c1","stepIdx":3,"toolCall":{"name":"mcp__docs__search","args":{}},"workspacePaths":["/p"]}`,
			gate.Before, "mcp__docs__search", "", ""},
		{"PreToolUse of run_command, agy's own tool (PascalCase args, as the PR shows)",
			`{"conversationId":"c1","stepIdx":1,"toolCall":{"name":"run_command","args":{"CommandLine":"ls","Cwd":"/p"}},"workspacePaths":["/p"]}`,
			gate.Before, "", "", ""},
	})
	runDocumented(t, post, []documentedCase{
		{"PostToolUse that succeeded",
			`{"conversationId":"c1","stepIdx":4,"toolCall":{"name":"mcp_docs_search","args":{"q":"x"}},"error":null,"workspacePaths":["/p"]}`,
			gate.Success, "mcp__docs__search", "docs", ""},
		{"PostToolUse that failed",
			`{"conversationId":"c1","stepIdx":4,"toolCall":{"name":"mcp_docs_search","args":{"q":"x"}},"error":"HTTP 503 Service Unavailable","workspacePaths":["/p"]}`,
			gate.Failure, "mcp__docs__search", "docs", "HTTP 503 Service Unavailable"},
		{"PostToolUse with an error object",
			`{"conversationId":"c1","toolCall":{"name":"mcp_docs_search","args":{}},"error":{"message":"Connection closed"}}`,
			gate.Failure, "mcp__docs__search", "docs", "Connection closed"},
		{"PostToolUse whose toolCall is null names no tool: nothing counts",
			`{"conversationId":"c1","stepIdx":4,"toolCall":null,"error":"step failed","workspacePaths":["/p"]}`,
			gate.Failure, "", "", "step failed"},
	})
}

func TestDocumentedAnswers(t *testing.T) {
	deny := gate.Answer{Deny: true, Reason: "⚡ CIRCUIT OPEN — mcp__docs__search"}
	cases := []struct {
		name         string
		c            Codec
		ev           gate.Event
		a            gate.Answer
		stdout, errs string
		exit         int
	}{
		// Kiro: exit 2, "STDERR is returned to the LLM" (docs/hooks.md, Hook Output).
		{"kiro deny", Kiro, gate.Event{Kind: gate.Before}, deny, "", "⚡ CIRCUIT OPEN — mcp__docs__search\n", 2},
		// agentSpawn's stdout is added to the agent's context.
		{"kiro session context", Kiro, gate.Event{Kind: gate.SessionStart}, gate.Answer{Context: "open circuits"}, "open circuits\n", "", 0},
		{"kiro allow", Kiro, gate.Event{Kind: gate.Before}, gate.Answer{}, "", "", 0},
		// Devin: {"decision": "deny", "reason": …}, the reason "shown to the agent" (hooks overview).
		{"devin deny", Devin, gate.Event{Kind: gate.Before}, deny, `{"decision":"deny","reason":"⚡ CIRCUIT OPEN — mcp__docs__search"}` + "\n", "", 0},
		{"devin allow", Devin, gate.Event{Kind: gate.Before}, gate.Answer{}, "", "", 0},
		// Antigravity: {"decision":"deny","reason":…} verified in PR #104; nothing printed allows.
		{"antigravity deny", Antigravity, gate.Event{Kind: gate.Before}, deny, `{"decision":"deny","reason":"⚡ CIRCUIT OPEN — mcp__docs__search"}` + "\n", "", 0},
		{"antigravity allow with a trial's context prints nothing on stdout", Antigravity, gate.Event{Kind: gate.Before}, gate.Answer{Context: "trial"}, "", "trial\n", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.c.Encode(tc.ev, tc.a)
			if string(r.Stdout) != tc.stdout || string(r.Stderr) != tc.errs || r.Exit != tc.exit {
				t.Errorf("got stdout %q stderr %q exit %d; want %q %q %d", r.Stdout, r.Stderr, r.Exit, tc.stdout, tc.errs, tc.exit)
			}
		})
	}
}

// TestDocumentedStreams: a large tool_input (a whole file) is decoded without being kept, and the
// pre-call event is reported as soon as its tool is known.
func TestDocumentedStreams(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	for _, tc := range []struct {
		c  Codec
		in string
	}{
		{Kiro, `{"hook_event_name":"preToolUse","tool_name":"@postgres/query","tool_input":{"sql":"` + big + `"}}`},
		{Devin, `{"hook_event_name":"PreToolUse","tool_name":"mcp__github__x","tool_input":{"body":"` + big + `"}}`},
		{Antigravity.(eventBound).ForEvent("PreToolUse"), `{"toolCall":{"name":"mcp_docs_search","args":{"q":"` + big + `"}}}`},
	} {
		var early *gate.Event
		ev, err := tc.c.Decode(strings.NewReader(tc.in), servers, func(e gate.Event) {
			if early == nil {
				early = &e
			}
		})
		if err != nil || early == nil || early.Key != ev.Key || ev.Key == "" || ev.ArgsHash == "" {
			t.Errorf("%s: err %v, early %+v, key %q, args hash %q", tc.c.Name(), err, early, ev.Key, ev.ArgsHash)
		}
	}
}
