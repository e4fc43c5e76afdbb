package agent

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
)

// Each agent's pre-call and failure events of one call, from the payloads its reference run or
// documentation gives (docs/agents.md), with ARGS where the arguments go: the loop guard needs the
// failure's hash to be the next pre-call's.
var argsCases = []struct {
	agent string
	codec Codec
	// pre and fail are the events with ARGS; a codec whose failures come from elsewhere (Codex's
	// transcript) or that has no failure event (Windsurf) leaves fail "".
	pre, fail string
	// quoted: the agent sends the pre-call's arguments as a JSON string (Cursor's
	// beforeMCPExecution), the failure's as the object.
	quoted bool
}{
	{"claude", Claude,
		`{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"mcp__fix__echo","tool_input":ARGS,"tool_use_id":"t1"}`,
		`{"session_id":"s","hook_event_name":"PostToolUseFailure","tool_name":"mcp__fix__echo","tool_input":ARGS,"tool_use_id":"t1","error":"boom","is_interrupt":false,"duration_ms":5}`, false},
	// Codex CLI 0.169.0 (its reference run): PreToolUse; its failures are read from the transcript.
	{"codex", Codex,
		`{"session_id":"s","turn_id":"u","cwd":"/p","hook_event_name":"PreToolUse","model":"gpt-5","permission_mode":"bypassPermissions","tool_name":"mcp__e2e__auth401","tool_input":ARGS,"tool_use_id":"call_s1_0_575789"}`,
		"", false},
	// Qwen Code 0.24.4 (its reference run).
	{"qwen", Qwen,
		`{"session_id":"s","cwd":"/p","hook_event_name":"PreToolUse","prompt_id":"p","tool_name":"mcp__e2e__rpcerror","tool_input":ARGS,"tool_use_id":"toolu_1"}`,
		`{"session_id":"s","cwd":"/p","hook_event_name":"PostToolUseFailure","tool_name":"mcp__e2e__rpcerror","tool_input":ARGS,"tool_use_id":"toolu_1","error":"upstream database unavailable (rpc -32603)","is_interrupt":false,"duration_ms":3}`, false},
	// Gemini CLI 0.61.0 (its reference run): BeforeTool, and AfterTool with tool_response.error.
	{"gemini", Gemini,
		`{"session_id":"s","cwd":"/p","hook_event_name":"BeforeTool","tool_name":"mcp_e2e_auth401","tool_input":ARGS,"mcp_context":{"server_name":"e2e","tool_name":"auth401"}}`,
		`{"session_id":"s","cwd":"/p","hook_event_name":"AfterTool","tool_name":"mcp_e2e_auth401","tool_input":ARGS,"tool_response":{"llmContent":"x","error":{"message":"401 Unauthorized: token expired","type":"mcp_tool_error"}},"mcp_context":{"server_name":"e2e","tool_name":"auth401"}}`, false},
	// Copilot CLI 1.0.102 (its reference run): preToolUse and postToolUseFailure, toolArgs.
	{"copilot", Copilot.(eventBound).ForEvent("preToolUse"),
		`{"sessionId":"s","timestamp":1796135123113,"cwd":"/p","toolName":"e2e-fail","toolArgs":ARGS}`, "", false},
	{"copilot", Copilot.(eventBound).ForEvent("postToolUseFailure"),
		"", `{"sessionId":"s","timestamp":1796135123016,"cwd":"/p","toolName":"e2e-fail","toolArgs":ARGS,"error":"MCP server 'e2e': 401 Unauthorized: token expired"}`, false},
	// The Cline plugin's beforeTool and afterTool events (plugin/cline).
	{"cline", Cline,
		`{"hook":"beforeTool","cwd":"/p","conversationId":"c","toolCall":{"toolCallId":"call_1","toolName":"fix__echo","input":ARGS}}`,
		`{"hook":"afterTool","cwd":"/p","conversationId":"c","toolCall":{"toolCallId":"call_1","toolName":"fix__echo","input":ARGS},"result":{"output":{"error":"upstream exploded"},"isError":true},"durationMs":1}`, false},
	// The opencode plugin's tool.execute.before and tool.failed events (plugin/opencode).
	{"opencode", Opencode,
		`{"hook":"tool.execute.before","tool":"fix_echo","sessionID":"s","callID":"call_1","servers":["fix"],"args":ARGS,"directory":"/p"}`,
		`{"hook":"tool.failed","tool":"fix_echo","sessionID":"s","callID":"call_1","servers":["fix"],"args":ARGS,"durationMs":5,"error":"401 Unauthorized: token expired","directory":"/p"}`, false},
	// Cursor (cursor.com/docs/hooks): beforeMCPExecution's tool_input is a JSON string,
	// postToolUseFailure's an object.
	{"cursor", Cursor,
		`{"conversation_id":"c","hook_event_name":"beforeMCPExecution","tool_name":"echo","tool_input":ARGS,"command":"npx fix"}`,
		`{"conversation_id":"c","hook_event_name":"postToolUseFailure","tool_name":"MCP:fix:echo","tool_input":ARGS,"tool_use_id":"t","error_message":"boom","failure_type":"error","duration":5,"is_interrupt":false}`, true},
	// Goose (its issues: Claude Code's shape).
	{"goose", Goose,
		`{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"fix__echo","tool_input":ARGS}`,
		`{"session_id":"s","hook_event_name":"PostToolUseFailure","tool_name":"fix__echo","tool_input":ARGS,"error":"boom"}`, false},
	// Kiro CLI (aws/amazon-q-developer-cli docs/hooks.md): preToolUse, and postToolUse with
	// tool_response.success false.
	{"kiro", Kiro,
		`{"hook_event_name":"preToolUse","cwd":"/p","tool_name":"@fix/echo","tool_input":ARGS}`,
		`{"hook_event_name":"postToolUse","cwd":"/p","tool_name":"@fix/echo","tool_input":ARGS,"tool_response":{"success":false,"result":["boom"]}}`, false},
	// Devin CLI (docs.devin.ai lifecycle hooks): PreToolUse, and PostToolUse with
	// tool_response {success: false, output, error}.
	{"devin", Devin,
		`{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"mcp__fix__echo","tool_input":ARGS}`,
		`{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"mcp__fix__echo","tool_input":ARGS,"tool_response":{"success":false,"output":"","error":"boom"}}`, false},
	// Augment Auggie (its npm package's code, 0.36.0): PreToolUse, and PostToolUse with tool_error.
	{"auggie", Auggie,
		`{"hook_event_name":"PreToolUse","conversation_id":"c","workspace_roots":["/p"],"tool_name":"echo_fix","tool_input":ARGS,"tool_error":null,"is_mcp_tool":true}`,
		`{"hook_event_name":"PostToolUse","conversation_id":"c","workspace_roots":["/p"],"tool_name":"echo_fix","tool_input":ARGS,"tool_output":"boom","tool_error":"boom","is_mcp_tool":true}`, false},
	// Windsurf (docs.windsurf.com): pre_mcp_tool_use; it has no failure event.
	{"windsurf", Windsurf,
		`{"agent_action_name":"pre_mcp_tool_use","trajectory_id":"t","execution_id":"e","tool_info":{"mcp_server_name":"fix","mcp_tool_name":"echo","mcp_tool_arguments":ARGS}}`,
		"", false},
	// Crush (charmbracelet/crush 37f36e9, internal/hooks/input.go): PreToolUse only.
	{"crush", Crush,
		`{"event":"PreToolUse","session_id":"s","cwd":"/p","tool_name":"mcp_fix_echo","tool_input":ARGS}`,
		"", false},
}

// The arguments of one call, spaced three ways, and another call's.
const (
	argsCompact = `{"owner":"acme","path":"docs/INSTALL.md","n":[1,2.5,true,null]}`
	argsSpaced  = "{ \"owner\" : \"acme\",\n\t\"path\": \"docs/INSTALL.md\", \"n\": [ 1 , 2.5,true , null ] }"
	argsOther   = `{"owner":"acme","path":"README.md","n":[1,2.5,true,null]}`
)

func argsHashOf(t *testing.T, c Codec, payload, args string) gate.Event {
	t.Helper()
	ev, _, err := decodeAll(t, c, strings.Replace(payload, "ARGS", args, 1))
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	if ev.ArgsHash == "" {
		t.Fatalf("no ArgsHash in %+v", ev)
	}
	return ev
}

// quote is args as a JSON string.
func quote(args string) string {
	b, _ := json.Marshal(args)
	return string(b)
}

func TestArgsHashPerAgent(t *testing.T) {
	want := map[string]string{} // the hash of argsCompact, which must be every agent's
	for _, tc := range argsCases {
		t.Run(tc.agent, func(t *testing.T) {
			var hashes []string
			if tc.pre != "" {
				pre := func(args string) string {
					if tc.quoted {
						args = quote(args)
					}
					ev := argsHashOf(t, tc.codec, tc.pre, args)
					if ev.Kind != gate.Before {
						t.Fatalf("the pre-call event decodes as %v", ev.Kind)
					}
					return ev.ArgsHash
				}
				same, spaced, other := pre(argsCompact), pre(argsSpaced), pre(argsOther)
				if same != spaced {
					t.Errorf("the same arguments hash %s and, spaced otherwise, %s", same, spaced)
				}
				if same == other {
					t.Errorf("other arguments hash alike: %s", same)
				}
				hashes = append(hashes, same)
			}
			if tc.fail != "" {
				ev := argsHashOf(t, tc.codec, tc.fail, argsSpaced)
				if ev.Kind != gate.Failure {
					t.Fatalf("the failure event decodes as %v", ev.Kind)
				}
				if other := argsHashOf(t, tc.codec, tc.fail, argsOther); other.ArgsHash == ev.ArgsHash {
					t.Errorf("failures of other arguments hash alike: %s", ev.ArgsHash)
				}
				hashes = append(hashes, ev.ArgsHash)
			}
			for _, h := range hashes {
				if w, ok := want[""]; ok && h != w {
					t.Errorf("hash %s, another agent's of the same arguments %s: the pre-call and the failure of one call must hash alike", h, w)
				}
				want[""] = h
			}
		})
	}
}

// Codex CLI runs no hook after a failed call; the failure read from its transcript must hash as
// the call's PreToolUse did.
func TestCodexTranscriptArgsHash(t *testing.T) {
	pre := argsHashOf(t, Codex, argsCases[1].pre, argsCompact)
	line := func(args string) string {
		return `{"timestamp":"2026-12-01T14:23:43.000Z","type":"event_msg","payload":{"type":"item_completed","item":{"type":"McpToolCall","id":"call_s1_0_575789","server":"e2e","tool":"auth401","arguments":` + args +
			`,"status":"failed","result":{"content":[{"type":"text","text":"401 Unauthorized: token expired"}],"isError":true},"duration":{"secs":45,"nanos":500000000}}}}`
	}
	f, ok := parseCodexFailure([]byte(line(argsSpaced)))
	if !ok {
		t.Fatal("the failure is not read")
	}
	if f.ArgsHash != pre.ArgsHash {
		t.Errorf("the transcript's failure hashes %s, its PreToolUse %s", f.ArgsHash, pre.ArgsHash)
	}
	if f.Duration != 45500*time.Millisecond {
		t.Errorf("duration %v, want 45.5s", f.Duration)
	}
	if o, _ := parseCodexFailure([]byte(line(argsOther))); o.ArgsHash == pre.ArgsHash {
		t.Error("a failure of other arguments hashes as the PreToolUse")
	}
	// Arguments sent as the model wrote them (a JSON string) hash as the object.
	if q, _ := parseCodexFailure([]byte(line(quote(argsCompact)))); q.ArgsHash != pre.ArgsHash {
		t.Errorf("arguments as a JSON string hash %s, as an object %s", q.ArgsHash, pre.ArgsHash)
	}
}

// Durations and interrupts, where the agent gives them.
func TestAgentDurations(t *testing.T) {
	for _, tc := range []struct {
		name    string
		c       Codec
		in      string
		dur     time.Duration
		stopped bool
	}{
		{"qwen", Qwen, `{"hook_event_name":"PostToolUseFailure","tool_name":"mcp__e2e__slow","tool_input":{},"error":"Request timed out","is_interrupt":true,"duration_ms":45000}`, 45 * time.Second, true},
		{"cline", Cline, `{"hook":"afterTool","toolCall":{"toolCallId":"c","toolName":"fix__echo","input":{}},"result":{"output":{"error":"x"},"isError":true},"durationMs":1500}`, 1500 * time.Millisecond, false},
		{"opencode", Opencode, `{"hook":"tool.failed","tool":"fix_echo","servers":["fix"],"args":{},"durationMs":45000,"error":"x"}`, 45 * time.Second, false},
		{"cursor", Cursor, `{"hook_event_name":"postToolUseFailure","tool_name":"MCP:fix:echo","tool_input":{},"error_message":"x","failure_type":"timeout","duration":45000,"is_interrupt":true}`, 45 * time.Second, true},
	} {
		ev, _, err := decodeAll(t, tc.c, tc.in)
		if err != nil || ev.Kind != gate.Failure || ev.Duration != tc.dur || ev.Interrupt != tc.stopped {
			t.Errorf("%s: %v, %v, duration %v, interrupt %v; want a failure of %v, interrupt %v", tc.name, err, ev.Kind, ev.Duration, ev.Interrupt, tc.dur, tc.stopped)
		}
	}
}

// A string too long to be decoded is hashed as the string, in constant memory: still the same
// hash for the same text.
func TestHashArgsLongString(t *testing.T) {
	long := quote(`{"text":"` + strings.Repeat("x", maxArgsText) + `"}`)
	h := func(s string) string {
		d := newDecoder(strings.NewReader(s))
		v, err := d.hashArgs()
		if err != nil {
			t.Fatal(err)
		}
		if cap(d.raw) > 2*maxArgsText {
			t.Errorf("kept %d bytes of a %d-byte string", cap(d.raw), len(s))
		}
		return v
	}
	again := quote(`{"text":"` + strings.Repeat("x", maxArgsText) + `"}`)
	if h(long) != h(again) || h(long) == h(quote(`{"text":"y"}`)) {
		t.Error("a long string does not hash as itself")
	}
	// Not JSON inside: the string's own hash, distinct from the object's; a path keeps its spaces.
	if h(`"not/json here"`) == h(`"not/json  here"`) || h(`"not json"`) == h(`{"not":"json"}`) {
		t.Error("a string that is not JSON is not hashed as itself")
	}
}

// hashOf is the hash of the arguments args, for expected events.
func hashOf(args string) string {
	h, ok := hashJSONText(strings.NewReader(args))
	if !ok {
		panic("not JSON: " + args)
	}
	return h
}

// FuzzHashArgs checks that arguments sent as a string of JSON text hash as the value the text
// holds, and that how the reader splits the input does not change a hash.
func FuzzHashArgs(f *testing.F) {
	for _, s := range []string{argsCompact, argsSpaced, `"x"`, `[1, "\u00e9", {"a" : null}]`, `{"a":`, `  7 `, `"\"q\""`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		whole, err := newDecoder(strings.NewReader(in)).hashArgs()
		for _, rd := range readers {
			h, err1 := newDecoder(rd.wrap(strings.NewReader(in))).hashArgs()
			if (err == nil) != (err1 == nil) || err == nil && h != whole {
				t.Fatalf("reader %s: %s, %v; whole: %s, %v", rd.name, h, err1, whole, err)
			}
		}
		v, ok := hashJSONText(strings.NewReader(in))
		// An agent's JSON is UTF-8; invalid bytes would not survive quoting the text.
		if !ok || len(in) > maxArgsText-2 || !utf8.ValidString(in) {
			return
		}
		q := quote(in)
		if len(q) > maxArgsText {
			return
		}
		if h, err := newDecoder(strings.NewReader(q)).hashArgs(); err != nil || h != v {
			t.Fatalf("%q as a string hashes %s (%v), as JSON %s", in, h, err, v)
		}
	})
}
