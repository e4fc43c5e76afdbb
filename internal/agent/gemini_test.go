package agent

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/failure"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
)

// decodeAll runs c.Decode over every reader, checks that they agree, and returns the event and
// what seen was called with (the zero Event when it was not).
func decodeAll(t *testing.T, c Codec, in string) (gate.Event, gate.Event, error) {
	t.Helper()
	var first, firstSeen gate.Event
	var firstErr error
	for i, rd := range readers {
		var early gate.Event
		calls := 0
		ev, err := c.Decode(rd.wrap(strings.NewReader(in)), nil, func(e gate.Event) { early = e; calls++ })
		if calls > 1 {
			t.Fatalf("reader %s: seen called %d times", rd.name, calls)
		}
		if i == 0 {
			first, firstSeen, firstErr = ev, early, err
			continue
		}
		if fmt.Sprint(err) != fmt.Sprint(firstErr) || !reflect.DeepEqual(ev, first) || !reflect.DeepEqual(early, firstSeen) {
			t.Fatalf("reader %s: got %+v (seen %+v), %v; reader %s got %+v (seen %+v), %v", rd.name, ev, early, err, readers[0].name, first, firstSeen, firstErr)
		}
	}
	return first, firstSeen, firstErr
}

// Gemini CLI 0.61.0's payloads, captured from the real client driven by e2e/gemini_test.go (the cue
// fixture as server "fix"); the transcript paths are shortened.
const (
	geminiBefore = `{"session_id":"170803b5-f255-4c18-a682-90105606c2b8","transcript_path":"/h/.gemini/tmp/proj/chats/session-2026-12-01T15-15-170803b5.jsonl","cwd":"/tmp/a2x/gem/proj","hook_event_name":"BeforeTool","timestamp":"2026-12-01T15:15:27.723Z","tool_name":"mcp_fix_echo","tool_input":{"fail":"HTTP 503 upstream down"},"mcp_context":{"server_name":"fix","tool_name":"echo","command":"/tmp/a2x/gem/bin/mcpfixture","args":["cue"]}}`
	geminiFailed = `{"session_id":"170803b5-f255-4c18-a682-90105606c2b8","transcript_path":"/h/.gemini/tmp/proj/chats/session-2026-12-01T15-15-170803b5.jsonl","cwd":"/tmp/a2x/gem/proj","hook_event_name":"AfterTool","timestamp":"2026-12-01T15:15:27.788Z","tool_name":"mcp_fix_echo","tool_input":{"fail":"HTTP 503 upstream down"},"tool_response":{"llmContent":"MCP tool 'echo' reported tool error for function call: {\"name\":\"echo\",\"args\":{\"fail\":\"HTTP 503 upstream down\"}} with response: [{\"functionResponse\":{\"name\":\"echo\",\"response\":{\"content\":[{\"type\":\"text\",\"text\":\"HTTP 503 upstream down\"}],\"isError\":true}}}]","returnDisplay":"Error: MCP tool 'echo' reported an error.","error":{"message":"MCP tool 'echo' reported tool error for function call: {\"name\":\"echo\",\"args\":{\"fail\":\"HTTP 503 upstream down\"}} with response: [{\"functionResponse\":{\"name\":\"echo\",\"response\":{\"content\":[{\"type\":\"text\",\"text\":\"HTTP 503 upstream down\"}],\"isError\":true}}}]","type":"mcp_tool_error"}},"mcp_context":{"server_name":"fix","tool_name":"echo","command":"/tmp/a2x/gem/bin/mcpfixture","args":["cue"]}}`
	geminiStart  = `{"session_id":"170803b5-f255-4c18-a682-90105606c2b8","transcript_path":"/h/.gemini/tmp/proj/chats/session-2026-12-01T15-15-170803b5.jsonl","cwd":"/tmp/a2x/gem/proj","hook_event_name":"SessionStart","timestamp":"2026-12-01T15:15:27.588Z","source":"startup"}`
	// From the reference run of Gemini CLI 0.61.0 (a success, and a JSON-RPC error).
	geminiSuccess = `{"session_id":"s","hook_event_name":"AfterTool","tool_name":"mcp_e2e_echo","tool_input":{"text":"sleepy"},"tool_response":{"llmContent":[{"text":"<untrusted_context>\necho:sleepy\n</untrusted_context>"}],"returnDisplay":"echo:sleepy"},"mcp_context":{"server_name":"e2e","tool_name":"echo"}}`
	geminiRPC     = `{"session_id":"s","hook_event_name":"AfterTool","tool_name":"mcp_my-srv.v2_rpcerr","tool_response":{"llmContent":"x","returnDisplay":"Error","error":{"message":"MCP tool 'rpcerr' reported tool error for function call: {\"name\":\"rpcerr\",\"args\":{}} with response: [{\"functionResponse\":{\"name\":\"rpcerr\",\"response\":{\"error\":{\"message\":\"MCP error -32603: upstream database unavailable (rpc -32603)\",\"isError\":true}}}}]","type":"mcp_tool_error"}},"mcp_context":{"server_name":"my-srv.v2","tool_name":"rpcerr"}}`
)

func TestGeminiDecode(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     gate.Event
		early    bool // seen is called with the tool's key
	}{
		{"BeforeTool", geminiBefore, gate.Event{Kind: gate.Before, Agent: "gemini", Hook: "BeforeTool", Key: "mcp__fix__echo", Tool: "mcp_fix_echo", Server: "fix", ArgsHash: hashOf(`{"fail":"HTTP 503 upstream down"}`),
			SessionID: "170803b5-f255-4c18-a682-90105606c2b8", Cwd: "/tmp/a2x/gem/proj", TranscriptPath: "/h/.gemini/tmp/proj/chats/session-2026-12-01T15-15-170803b5.jsonl"}, true},
		{"AfterTool failure (isError)", geminiFailed, gate.Event{Kind: gate.Failure, Agent: "gemini", Hook: "AfterTool", Key: "mcp__fix__echo", Tool: "mcp_fix_echo", Server: "fix", ArgsHash: hashOf(`{"fail":"HTTP 503 upstream down"}`),
			Args: []failure.Arg{{Key: "fail", Value: "HTTP 503 upstream down"}}, Error: "HTTP 503 upstream down", SessionID: "170803b5-f255-4c18-a682-90105606c2b8", Cwd: "/tmp/a2x/gem/proj", TranscriptPath: "/h/.gemini/tmp/proj/chats/session-2026-12-01T15-15-170803b5.jsonl"}, false},
		{"AfterTool success", geminiSuccess, gate.Event{Kind: gate.Success, Agent: "gemini", Hook: "AfterTool", Key: "mcp__e2e__echo", Tool: "mcp_e2e_echo", Server: "e2e", ArgsHash: hashOf(`{"text":"sleepy"}`), SessionID: "s"}, false},
		{"AfterTool failure (JSON-RPC), a server name with . and -", geminiRPC, gate.Event{Kind: gate.Failure, Agent: "gemini", Hook: "AfterTool", Key: "mcp__my-srv_v2__rpcerr", Tool: "mcp_my-srv.v2_rpcerr", Server: "my-srv.v2",
			Error: "MCP error -32603: upstream database unavailable (rpc -32603)", SessionID: "s"}, false},
		{"SessionStart", geminiStart, gate.Event{Kind: gate.SessionStart, Agent: "gemini", Hook: "SessionStart", Source: "startup",
			SessionID: "170803b5-f255-4c18-a682-90105606c2b8", Cwd: "/tmp/a2x/gem/proj", TranscriptPath: "/h/.gemini/tmp/proj/chats/session-2026-12-01T15-15-170803b5.jsonl"}, false},
		{"a built-in tool", `{"hook_event_name":"BeforeTool","tool_name":"read_file","tool_input":{}}`, gate.Event{Kind: gate.Before, Agent: "gemini", Hook: "BeforeTool", Tool: "read_file", ArgsHash: hashOf(`{}`)}, false},
		{"no mcp_context: the name alone", `{"hook_event_name":"BeforeTool","tool_name":"mcp_fix_other"}`, gate.Event{Kind: gate.Before, Agent: "gemini", Hook: "BeforeTool", Key: "mcp__fix__other", Tool: "mcp_fix_other"}, false},
		{"error null is a success", `{"hook_event_name":"AfterTool","tool_name":"mcp_a_b","tool_response":{"error":null},"mcp_context":{"server_name":"a","tool_name":"b"}}`,
			gate.Event{Kind: gate.Success, Agent: "gemini", Hook: "AfterTool", Key: "mcp__a__b", Tool: "mcp_a_b", Server: "a"}, false},
		{"an error without a message", `{"hook_event_name":"AfterTool","tool_name":"mcp_a_b","tool_response":{"error":{}},"mcp_context":{"server_name":"a","tool_name":"b"}}`,
			gate.Event{Kind: gate.Failure, Agent: "gemini", Hook: "AfterTool", Key: "mcp__a__b", Tool: "mcp_a_b", Server: "a", Error: "the tool call failed (Gemini CLI gave no message)"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, early, err := decodeAll(t, Gemini, tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(ev, tc.want) {
				t.Errorf("got  %+v\nwant %+v", ev, tc.want)
			}
			if tc.early && early.Key != tc.want.Key {
				t.Errorf("seen was called with key %q, want %q", early.Key, tc.want.Key)
			}
		})
	}
}

// TestGeminiAmbiguousName: a server whose name holds "_" is not guessed from the tool name before
// mcp_context says where it ends.
func TestGeminiAmbiguousName(t *testing.T) {
	in := `{"hook_event_name":"BeforeTool","tool_name":"mcp_my_srv_echo","tool_input":{"x":1},"mcp_context":{"server_name":"my_srv","tool_name":"echo"}}`
	ev, early, err := decodeAll(t, Gemini, in)
	if err != nil {
		t.Fatal(err)
	}
	// Told early only once mcp_context said it (its value is the event's last).
	if ev.Key != "mcp__my_srv__echo" || early.Key != "" && early.Key != ev.Key {
		t.Errorf("key %q (seen early: %q), want mcp__my_srv__echo and no early guess", ev.Key, early.Key)
	}
}

func TestGeminiEncode(t *testing.T) {
	failure := gate.Event{Kind: gate.Failure, Hook: "AfterTool", Error: "HTTP 503 upstream down"}
	for _, tc := range []struct {
		name string
		ev   gate.Event
		a    gate.Answer
		want string
	}{
		{"allow", gate.Event{Kind: gate.Before, Hook: "BeforeTool"}, gate.Answer{}, ""},
		{"deny", gate.Event{Kind: gate.Before, Hook: "BeforeTool"}, gate.Answer{Deny: true, Reason: "⚡ CIRCUIT OPEN <x> & y"}, `{"decision":"deny","reason":"⚡ CIRCUIT OPEN <x> & y"}` + "\n"},
		{"failure context replaces the result", failure, gate.Answer{Context: "failed once"}, `{"decision":"deny","reason":"The tool failed. Its error, quoted from the server: \"HTTP 503 upstream down\"\n\nfailed once"}` + "\n"},
		{"success context", gate.Event{Kind: gate.Success, Hook: "AfterTool"}, gate.Answer{Context: "closed"}, `{"hookSpecificOutput":{"hookEventName":"AfterTool","additionalContext":"closed"}}` + "\n"},
		{"session start", gate.Event{Kind: gate.SessionStart, Hook: "SessionStart"}, gate.Answer{Context: "open circuits"}, `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"open circuits"}}` + "\n"},
		{"notice", gate.Event{Kind: gate.Before, Hook: "BeforeTool"}, gate.Answer{Notice: "shadow mode"}, `{"systemMessage":"shadow mode"}` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Gemini.Encode(tc.ev, tc.a)
			if string(r.Stdout) != tc.want || r.Exit != 0 {
				t.Errorf("got %q (exit %d), want %q", r.Stdout, r.Exit, tc.want)
			}
		})
	}
}

func TestGeminiError(t *testing.T) {
	for in, want := range map[string]string{
		`MCP tool 'e' reported tool error for function call: {"name":"e"} with response: [{"functionResponse":{"name":"e","response":{"error":{"message":"MCP error -32001: Request timed out","isError":true}}}}]`: "MCP error -32001: Request timed out",
		`MCP tool 'e' reported tool error for function call: {"name":"e"} with response: [{"functionResponse":{"name":"e","response":{"error":{"message":"Not connected","isError":true}}}}]`:                       "Not connected",
		"plain text, no tail":                  "plain text, no tail",
		"x with response: [not json":           "x with response: [not json",
		`x with response: [{"other":1}]`:       `x with response: [{"other":1}]`,
		`a with response: b with response: []`: `a with response: b with response: []`,
	} {
		if got := geminiError(in); got != want {
			t.Errorf("geminiError(%q) = %q, want %q", in, got, want)
		}
	}
}

func FuzzGeminiDecode(f *testing.F) {
	for _, s := range []string{geminiBefore, geminiFailed, geminiStart, geminiSuccess, geminiRPC, `{}`, `{"tool_response":{"error":{"message":1}}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		ev, err := Gemini.Decode(strings.NewReader(in), nil, nil)
		if err != nil {
			return
		}
		checkDecoded(t, ev)
		Gemini.Encode(ev, gate.Answer{Deny: true, Reason: "r"})
	})
}

// checkDecoded checks what every decoded event must satisfy.
func checkDecoded(t *testing.T, ev gate.Event) {
	t.Helper()
	if ev.Kind == gate.Failure && ev.Error == "" {
		t.Errorf("a failure without its text: %+v", ev)
	}
	if ev.Key != "" && !strings.HasPrefix(ev.Key, "mcp__") {
		t.Errorf("key %q is not canonical", ev.Key)
	}
	if (ev.Kind == gate.SessionStart || ev.Kind == gate.Other) && ev.Key != "" {
		t.Errorf("a %s event with key %q", ev.Kind, ev.Key)
	}
}
