package agent

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/mcpconfig"
)

// The codecs of agents known from their documentation only. Each fixture says where its payload
// comes from; none was observed from a running client.

// servers are the MCP servers of a project these fixtures run in.
func servers() []mcpconfig.Server {
	return []mcpconfig.Server{
		{Name: "docs", URL: "https://docs.example.com/mcp"},
		{Name: "fs", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", "/srv"}},
	}
}

func decode(t *testing.T, c Codec, in string, s gate.Servers) gate.Event {
	t.Helper()
	var early *gate.Event
	ev, err := c.Decode(strings.NewReader(in), s, func(e gate.Event) { early = &e })
	if err != nil {
		t.Fatalf("%s: %v", c.Name(), err)
	}
	if early == nil || early.Key != ev.Key || early.Kind != ev.Kind {
		t.Errorf("%s: seen reported %+v, want the kind and key of %+v", c.Name(), early, ev)
	}
	return ev
}

func TestCursorCodec(t *testing.T) {
	cases := []struct {
		name string
		// in is the payload; Source: cursor.com/docs/hooks (event fields) and its common fields
		// (conversation_id, generation_id, hook_event_name, cursor_version, workspace_roots).
		in        string
		kind      gate.Kind
		key       string
		server    string
		errorText string
	}{
		{"beforeMCPExecution with a url",
			`{"conversation_id":"c1","generation_id":"g1","hook_event_name":"beforeMCPExecution","cursor_version":"1.7.0","workspace_roots":["/p"],
			  "tool_name":"search","tool_input":"{\"q\":\"lockedfile\"}","url":"https://docs.example.com/mcp"}`,
			gate.Before, "mcp__docs__search", "docs", ""},
		{"beforeMCPExecution with a stdio command",
			`{"conversation_id":"c1","hook_event_name":"beforeMCPExecution","tool_name":"read_file","tool_input":"{}","command":"npx -y @modelcontextprotocol/server-filesystem /srv"}`,
			gate.Before, "mcp__fs__read_file", "fs", ""},
		{"beforeMCPExecution of a server not configured here: not known, allowed",
			`{"hook_event_name":"beforeMCPExecution","tool_name":"x","url":"https://elsewhere.example/mcp"}`,
			gate.Before, "", "", ""},
		{"postToolUseFailure for an error, named MCP:<tool> (docs matcher text); one server would be needed",
			`{"hook_event_name":"postToolUseFailure","tool_name":"MCP:search","tool_input":{},"tool_use_id":"t1","cwd":"/p","error_message":"HTTP 503 Service Unavailable","failure_type":"error","duration":812,"is_interrupt":false}`,
			gate.Failure, "", "", "HTTP 503 Service Unavailable"},
		{"postToolUseFailure naming MCP:<server>:<tool> (third-party claim, cdot65 prisma-airs-cursor-hooks)",
			`{"hook_event_name":"postToolUseFailure","tool_name":"MCP:docs:search","error_message":"HTTP 503 Service Unavailable","failure_type":"error"}`,
			gate.Failure, "mcp__docs__search", "docs", "HTTP 503 Service Unavailable"},
		{"postToolUseFailure of a timeout",
			`{"hook_event_name":"postToolUseFailure","tool_name":"MCP:docs:search","failure_type":"timeout","duration":30000}`,
			gate.Failure, "mcp__docs__search", "docs", "the MCP tool call timed out"},
		{"postToolUseFailure for our own deny (failure_type permission_denied) never counts",
			`{"hook_event_name":"postToolUseFailure","tool_name":"MCP:docs:search","error_message":"denied by hook","failure_type":"permission_denied"}`,
			gate.Other, "", "", "denied by hook"},
		{"sessionStart", `{"conversation_id":"c1","hook_event_name":"sessionStart","workspace_roots":["/p"]}`, gate.SessionStart, "", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ev := decode(t, Cursor, c.in, servers)
			if ev.Kind != c.kind || ev.Key != c.key || ev.Server != c.server || ev.Error != c.errorText {
				t.Errorf("got kind %v key %q server %q error %q; want %v %q %q %q", ev.Kind, ev.Key, ev.Server, ev.Error, c.kind, c.key, c.server, c.errorText)
			}
		})
	}
	// With one configured server, MCP:<tool> is that server's tool.
	one := func() []mcpconfig.Server { return servers()[:1] }
	ev := decode(t, Cursor, `{"hook_event_name":"postToolUseFailure","tool_name":"MCP:search","error_message":"x","failure_type":"error"}`, one)
	if ev.Key != "mcp__docs__search" {
		t.Errorf("one server: key %q, want mcp__docs__search", ev.Key)
	}

	// Answers: a deny's reason is agent_message (the model's), the user gets a line.
	r := Cursor.Encode(gate.Event{Kind: gate.Before}, gate.Answer{Deny: true, Reason: "⚡ CIRCUIT OPEN — mcp__docs__*\nDo not retry this tool."})
	want := `{"permission":"deny","user_message":"⚡ CIRCUIT OPEN — mcp__docs__*","agent_message":"⚡ CIRCUIT OPEN — mcp__docs__*\nDo not retry this tool."}` + "\n"
	if string(r.Stdout) != want || r.Exit != 0 {
		t.Errorf("deny: %q exit %d, want %q exit 0", r.Stdout, r.Exit, want)
	}
	if r := Cursor.Encode(gate.Event{Kind: gate.Before}, gate.Answer{}); len(r.Stdout)+len(r.Stderr) != 0 || r.Exit != 0 {
		t.Errorf("allow: %+v, want nothing", r)
	}
	if r := Cursor.Encode(gate.Event{Kind: gate.Before}, gate.Answer{Context: "trial"}); string(r.Stdout) != `{"permission":"allow","agent_message":"trial"}`+"\n" {
		t.Errorf("trial: %q", r.Stdout)
	}
}

func TestWindsurfCodec(t *testing.T) {
	// Source: docs.windsurf.com/windsurf/cascade/hooks and CorridorSecurity/hookshot
	// docs/reference-cascade.md (common fields and tool_info).
	pre := `{"agent_action_name":"pre_mcp_tool_use","trajectory_id":"traj-1","execution_id":"exec-1","timestamp":"2026-11-29T12:00:00Z",
	  "tool_info":{"mcp_server_name":"my docs","mcp_tool_name":"search","mcp_tool_arguments":{"q":"` + strings.Repeat("x", 100<<10) + `"}}}`
	ev := decode(t, Windsurf, pre, nil)
	if ev.Kind != gate.Before || ev.Key != "mcp__my_docs__search" || ev.Server != "my docs" || ev.SessionID != "traj-1" {
		t.Errorf("pre_mcp_tool_use: %+v", ev)
	}
	post := `{"agent_action_name":"post_mcp_tool_use","trajectory_id":"traj-1","execution_id":"exec-1","tool_info":{"mcp_server_name":"my docs","mcp_tool_name":"search","mcp_tool_arguments":{},"mcp_result":"Error: HTTP 500"}}`
	if ev := decode(t, Windsurf, post, nil); ev.Kind != gate.Other {
		t.Errorf("post_mcp_tool_use: kind %v, want other (no failure flag to read)", ev.Kind)
	}
	r := Windsurf.Encode(ev, gate.Answer{Deny: true, Reason: "⚡ CIRCUIT OPEN"})
	if r.Exit != 2 || string(r.Stderr) != "⚡ CIRCUIT OPEN\n" || len(r.Stdout) != 0 {
		t.Errorf("deny: %+v, want exit 2 with the reason on stderr", r)
	}
	if r := Windsurf.Encode(ev, gate.Answer{}); r.Exit != 0 || len(r.Stderr)+len(r.Stdout) != 0 {
		t.Errorf("allow: %+v", r)
	}
}

func TestGooseCodec(t *testing.T) {
	// Source: aaif-goose/goose #8742 and #9304 (Claude-shaped PreToolUse with tool name, arguments,
	// session id and working dir; extension tools named <extension>__<tool>); the field names are
	// assumed to be Claude Code's.
	pre := `{"hook_event_name":"PreToolUse","session_id":"g1","cwd":"/p","tool_name":"github__search_code","tool_input":{"q":"x"}}`
	ev := decode(t, Goose, pre, servers)
	if ev.Kind != gate.Before || ev.Key != "mcp__github__search_code" || ev.SessionID != "g1" {
		t.Errorf("PreToolUse: %+v", ev)
	}
	fail := `{"hook_event_name":"PostToolUseFailure","session_id":"g1","tool_name":"github__search_code","tool_input":{},"error":"HTTP 401 Unauthorized","is_interrupt":false}`
	if ev := decode(t, Goose, fail, servers); ev.Kind != gate.Failure || ev.Key != "mcp__github__search_code" || ev.Error != "HTTP 401 Unauthorized" {
		t.Errorf("PostToolUseFailure: %+v", ev)
	}
	if ev := decode(t, Goose, `{"hook_event_name":"PreToolUse","tool_name":"shell","tool_input":{}}`, servers); ev.Key != "" {
		t.Errorf("a tool without an extension: key %q, want none", ev.Key)
	}
	r := Goose.Encode(ev, gate.Answer{Deny: true, Reason: "⚡ CIRCUIT OPEN"})
	if string(r.Stdout) != `{"decision":"block","reason":"⚡ CIRCUIT OPEN"}`+"\n" || r.Exit != 0 {
		t.Errorf("deny: %q", r.Stdout)
	}
}

// Goose's own source names the fields otherwise than its issues (aaif-goose/goose
// crates/goose/src/hooks/mod.rs, HookContext serialized: event, session_id, matcher_context,
// tool_call_id, tool_name, tool_input, tool_output, message, working_dir); the codec reads them.
// Goose allows a PreToolUse only on an empty stdout (or {"decision":"allow"}): an allowed call's
// answer prints nothing there, whatever the gate has to say.
func TestGooseSourcePayloads(t *testing.T) {
	pre := `{"event":"PreToolUse","session_id":"20260801_3","matcher_context":"github__search_code","tool_call_id":"call_7","tool_name":"github__search_code","tool_input":{"q":"x"},"working_dir":"/p"}`
	ev := decode(t, Goose, pre, servers)
	if ev.Kind != gate.Before || ev.Hook != "PreToolUse" || ev.Key != "mcp__github__search_code" || ev.ToolUseID != "call_7" || ev.Cwd != "/p" ||
		ev.ArgsHash != hashOf(`{"q":"x"}`) {
		t.Errorf("PreToolUse: %+v", ev)
	}
	fail := `{"event":"PostToolUseFailure","session_id":"20260801_3","matcher_context":"github__search_code","tool_call_id":"call_7","tool_name":"github__search_code","tool_input":{"q":"x"},"tool_output":{"error":"x"},"message":"HTTP 401 Unauthorized"}`
	if ev := decode(t, Goose, fail, servers); ev.Kind != gate.Failure || ev.Key != "mcp__github__search_code" || ev.Error != "HTTP 401 Unauthorized" || ev.ToolUseID != "call_7" {
		t.Errorf("PostToolUseFailure: %+v", ev)
	}
	if ev, err := Goose.Decode(strings.NewReader(`{"event":"SessionStart","session_id":"s"}`), servers, nil); err != nil || ev.Kind != gate.SessionStart {
		t.Errorf("SessionStart: %+v, %v", ev, err)
	}
	for _, a := range []gate.Answer{{}, {Context: "HALF-OPEN trial"}, {Notice: "mcp-circuit-breaker: warning: x"}} {
		if r := Goose.Encode(ev, a); len(r.Stdout) != 0 || r.Exit != 0 || (a.IsZero() != (len(r.Stderr) == 0)) {
			t.Errorf("allow %+v: stdout %q, stderr %q, exit %d; want nothing on stdout, the text on stderr", a, r.Stdout, r.Stderr, r.Exit)
		}
	}
	r := Goose.Encode(ev, gate.Answer{Deny: true, Reason: "⚡ CIRCUIT OPEN", Notice: "n"})
	if string(r.Stdout) != `{"decision":"block","reason":"⚡ CIRCUIT OPEN"}`+"\n" || string(r.Stderr) != "n\n" {
		t.Errorf("deny with a notice: %q, %q", r.Stdout, r.Stderr)
	}
}

func TestCodecsAreListed(t *testing.T) {
	for _, name := range []string{"claude", "cursor", "windsurf", "goose", "codex", "qwen", "copilot"} {
		c, err := Lookup(name)
		if err != nil || c.Name() != name {
			t.Errorf("Lookup(%q) = %v, %v", name, c, err)
		}
		if set := c.Setup(); len(set.Hooks) == 0 || len(set.Scopes) == 0 {
			t.Errorf("%s: Setup %+v names no hooks or scopes", name, set)
		}
	}
	if _, err := Lookup("nosuch"); err == nil || !strings.Contains(err.Error(), "known: claude, cursor") {
		t.Errorf("Lookup(nosuch) = %v", err)
	}
}

// FuzzCodecs checks every codec's Decode: it never panics, an error is a malformed-input error or
// none, and how the reader splits the input does not change the event.
func FuzzCodecs(f *testing.F) {
	for _, s := range []string{
		`{"hook_event_name":"beforeMCPExecution","tool_name":"search","url":"https://docs.example.com/mcp"}`,
		`{"hook_event_name":"postToolUseFailure","tool_name":"MCP:docs:search","failure_type":"permission_denied","duration":1e3}`,
		`{"agent_action_name":"pre_mcp_tool_use","tool_info":{"mcp_server_name":"a","mcp_tool_name":"b","mcp_tool_arguments":[1,{"x":null}]}}`,
		`{"hook_event_name":"PreToolUse","tool_name":"github__search_code","hookEventName":"PostToolUseFailure"}`,
		`{"tool_info":null}`, `[]`, `{"duration":"x"}`,
		// Crush's payload (internal/hooks/input.go at 37f36e9), and a name that splits two ways.
		`{"event":"PreToolUse","session_id":"s","cwd":"/p","tool_name":"mcp_my_db_q","tool_input":{"a":[1]}}`,
		// Arguments as JSON text in a string (Cursor, Copilot's docs), nested, bad, or not JSON.
		`{"hook_event_name":"beforeMCPExecution","tool_name":"s","tool_input":"{\"q\" : [1, \"\\u00e9\"]}","command":"x"}`,
		`{"toolName":"a-b","toolArgs":"\"{\\\"a\\\":1}\""}`, `{"toolName":"a-b","toolArgs":"{\"a\":"}`,
		`{"hook":"afterTool","toolCall":{"toolName":"a__b","input":"plain"}}`, `{"hook":"tool.failed","args":" {} ","durationMs":-1}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		for _, c := range All() {
			ev, err := c.Decode(strings.NewReader(in), servers, nil)
			ev1, err1 := c.Decode(iotest.OneByteReader(strings.NewReader(in)), servers, nil)
			if (err == nil) != (err1 == nil) || (err == nil && !reflect.DeepEqual(ev, ev1)) {
				t.Fatalf("%s: whole and one-byte reads differ: %+v, %v / %+v, %v", c.Name(), ev, err, ev1, err1)
			}
			if err != nil && !errors.Is(err, ErrMalformed) {
				t.Fatalf("%s: error does not wrap ErrMalformed: %v", c.Name(), err)
			}
			c.Encode(ev, gate.Answer{Deny: true, Reason: in, Notice: in})
		}
	})
}
