package agent

import (
	"strings"
	"testing"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/mcpconfig"
)

// Augment's Auggie CLI cannot run offline (auggie.go), so its codec is tested from the payloads of
// its npm package, @augmentcode/auggie 0.36.0: augment.mjs builds a tool event as
// {hook_event_name, conversation_id, workspace_roots, tool_name, tool_input, tool_output,
// tool_error, is_mcp_tool} (tool_error the result's text when isError, else null), and names an
// MCP tool <tool>_<server> (createNamespacedToolName). Each fixture says which part it follows.

// auggieServers adds, to the fixtures' servers, names Auggie rewrites or that hold its separator.
func auggieServers() []mcpconfig.Server {
	return append(servers(),
		mcpconfig.Server{Name: "my_db", Command: "db-mcp"},
		mcpconfig.Server{Name: "db", Command: "other-db-mcp"},
		mcpconfig.Server{Name: "acme.search", URL: "https://search.acme.example/mcp"})
}

func TestAuggieCodec(t *testing.T) {
	cases := []struct {
		name, in               string
		kind                   gate.Kind
		key, server, errorText string
		session, cwd           string
		readings               int
		noServers              bool
	}{
		// Source: augment.mjs, the tool event's builder, JSON.stringify's key order; tool_name from
		// createNamespacedToolName (tool "search", server "docs").
		{name: "PreToolUse of an MCP tool",
			in:   `{"hook_event_name":"PreToolUse","conversation_id":"c-1","workspace_roots":["/p"],"tool_name":"search_docs","tool_input":{"q":"x"},"tool_error":null,"is_mcp_tool":true}`,
			kind: gate.Before, key: "mcp__docs__search", server: "docs", session: "c-1", cwd: "/p"},
		// Source: the same builder; a built-in tool has is_mcp_tool false (the matcher "mcp:*" would
		// not run our hook for it, and the gate lets it through if it did).
		{name: "PreToolUse of a built-in tool",
			in:   `{"hook_event_name":"PreToolUse","conversation_id":"c-1","workspace_roots":["/p"],"tool_name":"view_tasklist","tool_input":{},"tool_error":null,"is_mcp_tool":false}`,
			kind: gate.Before, session: "c-1", cwd: "/p"},
		// Source: the same builder for PostToolUse, tool_output the result's text, tool_error null.
		{name: "PostToolUse that succeeded",
			in:   `{"hook_event_name":"PostToolUse","conversation_id":"c-1","workspace_roots":["/p"],"tool_name":"search_docs","tool_input":{"q":"x"},"tool_output":"3 results","tool_error":null,"is_mcp_tool":true}`,
			kind: gate.Success, key: "mcp__docs__search", server: "docs", session: "c-1", cwd: "/p"},
		// Source: runPostToolUseHook passes the result's text as tool_error when it isError.
		{name: "PostToolUse of an error result",
			in:   `{"hook_event_name":"PostToolUse","conversation_id":"c-1","workspace_roots":["/p"],"tool_name":"search_docs","tool_input":{"q":"x"},"tool_output":"HTTP 503 Service Unavailable","tool_error":"HTTP 503 Service Unavailable","is_mcp_tool":true}`,
			kind: gate.Failure, key: "mcp__docs__search", server: "docs", errorText: "HTTP 503 Service Unavailable", session: "c-1", cwd: "/p"},
		{name: "our own deny coming back never counts",
			in:   `{"hook_event_name":"PostToolUse","tool_name":"search_docs","tool_input":{},"tool_error":"⚡ CIRCUIT OPEN — mcp__docs__search","is_mcp_tool":true}`,
			kind: gate.Other, key: "mcp__docs__search", server: "docs", errorText: "⚡ CIRCUIT OPEN — mcp__docs__search"},
		// Source: getServerName/sanitizeName: "acme.search" is written acme_search.
		{name: "a server whose name Auggie rewrites",
			in:   `{"hook_event_name":"PreToolUse","tool_name":"find_acme_search","tool_input":{},"is_mcp_tool":true}`,
			kind: gate.Before, key: "mcp__acme_search__find", server: "acme.search"},
		// "query_my_db" is tool "query" of "my_db", or tool "query_my" of "db": before the call
		// both circuits are looked at, the longer server first.
		{name: "a name two configured servers end",
			in:   `{"hook_event_name":"PreToolUse","tool_name":"query_my_db","tool_input":{},"is_mcp_tool":true}`,
			kind: gate.Before, key: "mcp__my_db__query", server: "my_db", readings: 1},
		{name: "without a configured server the name is cut at its last _",
			in:   `{"hook_event_name":"PreToolUse","tool_name":"read_file_fs2","tool_input":{},"is_mcp_tool":true}`,
			kind: gate.Before, key: "mcp__fs2__read_file", noServers: true},
		// Source: the SessionStart builder, {hook_event_name, conversation_id, workspace_roots}.
		{name: "SessionStart",
			in:   `{"hook_event_name":"SessionStart","conversation_id":"c-2","workspace_roots":["/p","/q"]}`,
			kind: gate.SessionStart, session: "c-2", cwd: "/p"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := gate.Servers(auggieServers)
			if tc.noServers {
				s = nil
			}
			ev := decode(t, Auggie, tc.in, s)
			if ev.Kind != tc.kind || ev.Key != tc.key || ev.Server != tc.server || ev.Error != tc.errorText {
				t.Errorf("got kind %v key %q server %q error %q; want %v %q %q %q", ev.Kind, ev.Key, ev.Server, ev.Error, tc.kind, tc.key, tc.server, tc.errorText)
			}
			if ev.SessionID != tc.session || ev.Cwd != tc.cwd || len(ev.Readings) != tc.readings || ev.Agent != "auggie" {
				t.Errorf("got session %q cwd %q readings %q agent %q", ev.SessionID, ev.Cwd, ev.Readings, ev.Agent)
			}
		})
	}
}

func TestAuggieAnswers(t *testing.T) {
	deny := gate.Answer{Deny: true, Reason: "⚡ CIRCUIT OPEN — mcp__docs__search", Notice: "docs is down"}
	cases := []struct {
		name   string
		ev     gate.Event
		a      gate.Answer
		stdout string
	}{
		// Source: augment.mjs's hook output parser: hookSpecificOutput.permissionDecision "deny"
		// stops the call, permissionDecisionReason goes to the model, systemMessage to the user.
		{"deny", gate.Event{Kind: gate.Before}, deny,
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"⚡ CIRCUIT OPEN — mcp__docs__search"},"systemMessage":"docs is down"}` + "\n"},
		// Source: the same parser: SessionStart's additionalContext goes to the model.
		{"session context", gate.Event{Kind: gate.SessionStart}, gate.Answer{Context: "open circuits"},
			`{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"open circuits"}}` + "\n"},
		{"context after a call", gate.Event{Kind: gate.Failure}, gate.Answer{Context: "1 of 3"},
			`{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"1 of 3"}}` + "\n"},
		// An allowed PreToolUse's messages to the model are dropped (onPreToolUse returns only
		// updatedInput): a trial's context goes to the user.
		{"allow with context", gate.Event{Kind: gate.Before}, gate.Answer{Context: "trial call"},
			`{"systemMessage":"trial call"}` + "\n"},
		{"allow", gate.Event{Kind: gate.Before}, gate.Answer{}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := Auggie.Encode(tc.ev, tc.a)
			if string(r.Stdout) != tc.stdout || len(r.Stderr) != 0 || r.Exit != 0 {
				t.Errorf("got stdout %q stderr %q exit %d; want %q", r.Stdout, r.Stderr, r.Exit, tc.stdout)
			}
		})
	}
}

// FuzzAuggieDecode: no input makes Auggie's codec panic, a tool event's key is empty or an MCP
// key, seen agrees with the whole event, and a name that is not an MCP tool's gets no key.
func FuzzAuggieDecode(f *testing.F) {
	for _, in := range []string{
		`{"hook_event_name":"PreToolUse","conversation_id":"c","workspace_roots":["/p"],"tool_name":"query_my_db","tool_input":{},"tool_error":null,"is_mcp_tool":true}`,
		`{"hook_event_name":"PostToolUse","tool_name":"find_acme_search","tool_input":{},"tool_output":"x","tool_error":"boom","is_mcp_tool":true}`,
		`{"hook_event_name":"PreToolUse","tool_name":"view_tasklist","is_mcp_tool":false}`,
		`{"hook_event_name":"SessionStart","workspace_roots":[1,"/p"]}`, `{}`, `[`, `{"tool_name":"_"}`,
	} {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var early *gate.Event
		ev, err := Auggie.Decode(strings.NewReader(in), auggieServers, func(e gate.Event) { early = &e })
		if err != nil {
			return
		}
		if ev.Key != "" && !strings.HasPrefix(ev.Key, "mcp__") {
			t.Fatalf("key %q of tool %q", ev.Key, ev.Tool)
		}
		if early == nil || early.Kind != ev.Kind || early.Key != ev.Key {
			t.Fatalf("seen %+v, event %v %q", early, ev.Kind, ev.Key)
		}
		if ev.Key != "" && !strings.Contains(ev.Tool, "_") {
			t.Fatalf("tool %q without a server part got key %q", ev.Tool, ev.Key)
		}
		_ = Auggie.Encode(ev, gate.Answer{Deny: ev.Kind == gate.Before, Reason: ev.Error, Context: ev.Tool})
	})
}
