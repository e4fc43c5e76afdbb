package agent

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/mcpconfig"
)

// The codecs of Kiro CLI, Devin CLI, Antigravity CLI and Crush, known from their documents (and
// Crush's from its source) only: no client of theirs installs here. Each fixture says where its payload comes from.

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

// Crush's payloads, from charmbracelet/crush at 37f36e9 (main, 2026-08-21): the shape is
// internal/hooks/input.go's Payload as BuildPayload marshals it, {event, session_id, cwd,
// tool_name, tool_input}, in that order (docs/hooks/README.md, "Stdin payload", shows the same
// with session_id "313909e"); an MCP tool's name is fmt.Sprintf("mcp_%s_%s", server, tool)
// (internal/agent/tools/mcp-tools.go). Only PreToolUse fires (internal/hooks/hooks.go).
func TestCrushCodec(t *testing.T) {
	runDocumented(t, Crush, []documentedCase{
		{"PreToolUse of an MCP tool",
			`{"event":"PreToolUse","session_id":"313909e","cwd":"/home/user/project","tool_name":"mcp_docs_search","tool_input":{"q":"x"}}`,
			gate.Before, "mcp__docs__search", "docs", ""},
		// The README's own example: bash, one of Crush's tools, is not ours.
		{"PreToolUse of bash",
			`{"event":"PreToolUse","session_id":"313909e","cwd":"/home/user/project","tool_name":"bash","tool_input":{"command":"rm -rf /"}}`,
			gate.Before, "", "", ""},
		// An MCP server nobody configured: the name is cut at its first "_".
		{"PreToolUse of an unconfigured server's tool",
			`{"event":"PreToolUse","session_id":"s","cwd":"/p","tool_name":"mcp_github_create_issue","tool_input":{}}`,
			gate.Before, "mcp__github__create_issue", "", ""},
		// BuildPayload writes {} for tool_input that is not JSON.
		{"PreToolUse whose input was not JSON",
			`{"event":"PreToolUse","session_id":"s","cwd":"/p","tool_name":"mcp_fs_read_file","tool_input":{}}`,
			gate.Before, "mcp__fs__read_file", "fs", ""},
		// An event the gate is not wired for (none other exists at that commit) decides nothing.
		{"another event", `{"event":"PostToolUse","session_id":"s","tool_name":"mcp_docs_search"}`, gate.Other, "", "", ""},
	})
	// A server whose name holds "_" is found through the configuration (the "mcp" member of
	// crush.json), the longest configured name first.
	withUnderscore := func() []mcpconfig.Server {
		return []mcpconfig.Server{{Name: "my", Command: "a"}, {Name: "my_db", Command: "b"}}
	}
	ev := decode(t, Crush, `{"event":"PreToolUse","session_id":"s","cwd":"/p","tool_name":"mcp_my_db_run_query","tool_input":{}}`, withUnderscore)
	if ev.Key != "mcp__my_db__run_query" || ev.Server != "my_db" || !slices.Equal(ev.Readings, []string{"mcp__my__db_run_query"}) {
		t.Errorf("got key %q server %q readings %q; want mcp__my_db__run_query, my_db, [mcp__my__db_run_query]", ev.Key, ev.Server, ev.Readings)
	}
}

// Crush's MCP servers are read from the "mcp" member of its files, as it looks them up.
func TestCrushServerFiles(t *testing.T) {
	files := Crush.(gate.ServerFiles).ServerFiles("/p", "/home/u")
	want := []gate.ServerFile{
		{Path: "/p/.crush.json", Project: true, Member: "mcp"},
		{Path: "/p/crush.json", Project: true, Member: "mcp"},
		{Path: "/home/u/.config/crush/crush.json", Member: "mcp"},
	}
	if !slices.Equal(files, want) {
		t.Errorf("got %+v, want %+v", files, want)
	}
	if files := Crush.(gate.ServerFiles).ServerFiles("/p", "home"); len(files) != 2 {
		t.Errorf("a relative HOME names a repository's files: %+v", files)
	}
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
		// Crush: {"decision":"deny","reason":…} on exit 0 (internal/hooks/input.go parseStdout); the
		// model reads "Tool call blocked by hook. Reason: …" (internal/agent/hooked_tool.go).
		{"crush deny", Crush, gate.Event{Kind: gate.Before}, deny, `{"decision":"deny","reason":"⚡ CIRCUIT OPEN — mcp__docs__search"}` + "\n", "", 0},
		{"crush deny with a notice for the user", Crush, gate.Event{Kind: gate.Before}, gate.Answer{Deny: true, Reason: "r", Notice: "n"}, `{"decision":"deny","reason":"r\nn"}` + "\n", "", 0},
		// "context" is appended to the tool's result; no "decision", which as "allow" would skip
		// Crush's permission prompt.
		{"crush allow with a trial's context", Crush, gate.Event{Kind: gate.Before}, gate.Answer{Context: "trial"}, `{"context":"trial"}` + "\n", "", 0},
		{"crush allow", Crush, gate.Event{Kind: gate.Before}, gate.Answer{}, "", "", 0},
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
		{Crush, `{"event":"PreToolUse","tool_name":"mcp_docs_search","tool_input":{"q":"` + big + `"}}`},
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
