package agent

import (
	"reflect"
	"strings"
	"testing"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
)

// What the gate's opencode plugin (plugin/opencode) sends, built from opencode 1.18.33's hook
// arguments and bus events as captured from the real client driven by e2e/opencode_test.go.
const (
	opencodeBefore = `{"hook":"tool.execute.before","tool":"fix_echo","sessionID":"ses_dcdd0a694ffeFvZw6oXgegLNlp","callID":"call_e2e_01","servers":["fix"],"directory":"/tmp/a2x/oc/proj"}`
	opencodeFailed = `{"hook":"tool.failed","tool":"fix_echo","sessionID":"ses_dcdd0a694ffeFvZw6oXgegLNlp","callID":"call_e2e_01","servers":["fix"],"error":"HTTP 503 upstream down","directory":"/tmp/a2x/oc/proj"}`
	opencodeAfter  = `{"hook":"tool.execute.after","tool":"my_db_query","sessionID":"s","callID":"c","servers":["my","my_db"],"directory":"/p"}`
	opencodeStart  = `{"hook":"session.created","sessionID":"ses_1","directory":"/p"}`
)

func TestOpencodeDecode(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     gate.Event
	}{
		{"before", opencodeBefore, gate.Event{Kind: gate.Before, Agent: "opencode", Hook: "tool.execute.before", Key: "mcp__fix__echo", Tool: "fix_echo", Server: "fix",
			ToolUseID: "call_e2e_01", SessionID: "ses_dcdd0a694ffeFvZw6oXgegLNlp", Cwd: "/tmp/a2x/oc/proj"}},
		{"a failure from the bus", opencodeFailed, gate.Event{Kind: gate.Failure, Agent: "opencode", Hook: "tool.failed", Key: "mcp__fix__echo", Tool: "fix_echo", Server: "fix",
			ToolUseID: "call_e2e_01", SessionID: "ses_dcdd0a694ffeFvZw6oXgegLNlp", Cwd: "/tmp/a2x/oc/proj", Error: "HTTP 503 upstream down"}},
		{"the longest server wins", opencodeAfter, gate.Event{Kind: gate.Success, Agent: "opencode", Hook: "tool.execute.after", Key: "mcp__my_db__query", Tool: "my_db_query", Server: "my_db",
			ToolUseID: "c", SessionID: "s", Cwd: "/p"}},
		{"session start", opencodeStart, gate.Event{Kind: gate.SessionStart, Agent: "opencode", Hook: "session.created", Source: "startup", SessionID: "ses_1", Cwd: "/p"}},
		{"a built-in tool with _ is no MCP tool", `{"hook":"tool.execute.before","tool":"todo_write","servers":["fix"]}`,
			gate.Event{Kind: gate.Before, Agent: "opencode", Hook: "tool.execute.before", Tool: "todo_write"}},
		{"no servers: no MCP tool", `{"hook":"tool.execute.before","tool":"fix_echo"}`,
			gate.Event{Kind: gate.Before, Agent: "opencode", Hook: "tool.execute.before", Tool: "fix_echo"}},
		{"a server name opencode sanitizes", `{"hook":"tool.execute.before","tool":"my_srv_echo","servers":["my.srv"]}`,
			gate.Event{Kind: gate.Before, Agent: "opencode", Hook: "tool.execute.before", Key: "mcp__my_srv__echo", Tool: "my_srv_echo", Server: "my.srv"}},
		{"a failure without text", `{"hook":"tool.failed","tool":"fix_echo","servers":["fix"]}`,
			gate.Event{Kind: gate.Failure, Agent: "opencode", Hook: "tool.failed", Key: "mcp__fix__echo", Tool: "fix_echo", Server: "fix", Error: "the tool call failed (opencode gave no message)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, _, err := decodeAll(t, Opencode, tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(ev, tc.want) {
				t.Errorf("got  %+v\nwant %+v", ev, tc.want)
			}
		})
	}
}

func TestOpencodeEncode(t *testing.T) {
	for _, tc := range []struct {
		name string
		a    gate.Answer
		want string
	}{
		{"allow", gate.Answer{}, ""},
		{"deny", gate.Answer{Deny: true, Reason: "⚡ CIRCUIT OPEN & <y>"}, `{"reason":"⚡ CIRCUIT OPEN & <y>","deny":true}` + "\n"},
		{"context", gate.Answer{Context: "failed once"}, `{"context":"failed once"}` + "\n"},
		{"notice", gate.Answer{Notice: "shadow"}, `{"notice":"shadow"}` + "\n"},
	} {
		if r := Opencode.Encode(gate.Event{Kind: gate.Before}, tc.a); string(r.Stdout) != tc.want || r.Exit != 0 {
			t.Errorf("%s: got %q (exit %d), want %q", tc.name, r.Stdout, r.Exit, tc.want)
		}
	}
}

func FuzzOpencodeDecode(f *testing.F) {
	for _, s := range []string{opencodeBefore, opencodeFailed, opencodeAfter, opencodeStart, `{"servers":[1,"a",null]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		ev, err := Opencode.Decode(strings.NewReader(in), nil, nil)
		if err != nil {
			return
		}
		checkDecoded(t, ev)
		Opencode.Encode(ev, gate.Answer{Deny: true, Reason: "r"})
	})
}
