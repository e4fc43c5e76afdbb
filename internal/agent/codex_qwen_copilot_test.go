package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/mcpconfig"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/userenv"
)

// The payloads below are the ones Codex CLI 0.169.0, Qwen Code 0.24.4 and Copilot CLI 1.0.102 sent
// their hooks in offline runs (headless, against a fake model API and a stdio MCP server that
// failed on cue), with ids and paths shortened; the e2e tests (e2e/) drive the same clients.
const (
	codexPre = `{"session_id":"01a231fd-701e-7911-83c4-1881992a1f19","turn_id":"01a231fd-703a-7ee1-96d7-0dbbd9fac389",` +
		`"transcript_path":"/h/.codex/sessions/2026/12/01/rollout-2026-12-01T14-23-42-01a231fd.jsonl",` +
		`"cwd":"/w/proj","hook_event_name":"PreToolUse","model":"gpt-5","permission_mode":"bypassPermissions",` +
		`"tool_name":"mcp__e2e__auth401","tool_input":{"text":"isError"},"tool_use_id":"call_s1_0_575789"}`
	codexPost = `{"session_id":"s","turn_id":"t","transcript_path":"/h/r.jsonl","cwd":"/w/proj","hook_event_name":"PostToolUse",` +
		`"model":"gpt-5","permission_mode":"bypassPermissions","tool_name":"mcp__e2e__echo","tool_input":{"text":"sleepy"},` +
		`"tool_response":{"content":[{"type":"text","text":"echo:sleepy"}]},"tool_use_id":"call_s0_0_085af7"}`
	codexStop = `{"session_id":"s","turn_id":"t","transcript_path":"/h/r.jsonl","cwd":"/w/proj","hook_event_name":"Stop",` +
		`"model":"gpt-5","permission_mode":"bypassPermissions","stop_hook_active":false,"last_assistant_message":"SCENARIO DONE"}`
	codexStart = `{"session_id":"s","transcript_path":"/h/r.jsonl","cwd":"/w/proj","hook_event_name":"SessionStart","model":"gpt-5","permission_mode":"bypassPermissions","source":"startup"}`

	qwenPre = `{"session_id":"d8c14226-38d6-44e5-8e7a-73be4fccf42b","transcript_path":"/h/.qwen/projects/-w-proj/chats/d8c14226.jsonl",` +
		`"cwd":"/w/proj","hook_event_name":"PreToolUse","timestamp":"2026-12-01T14:31:25.760Z","permission_mode":"yolo",` +
		`"prompt_id":"d8c14226########0","tool_name":"mcp__e2e__auth401","tool_input":{"text":"isError"},` +
		`"tool_use_id":"toolu_1796135485760_znr6d1vqs","tool_call_id":"call_s1_0_0b54e1"}`
	qwenFailure = `{"session_id":"s","cwd":"/w/proj","hook_event_name":"PostToolUseFailure","tool_use_id":"toolu_x","tool_call_id":"call_s2_0_cfc782",` +
		`"tool_name":"mcp__e2e__rpcerror","tool_input":{"text":"jsonrpc-error"},"error":"upstream database unavailable (rpc -32603)","is_interrupt":false,"duration_ms":3}`
	qwenIsError = `{"session_id":"s","cwd":"/w/proj","hook_event_name":"PostToolUseFailure","tool_use_id":"toolu_y","tool_name":"mcp__e2e__auth401",` +
		`"error":"MCP tool 'auth401' reported tool error for function call: {\"name\":\"auth401\",\"args\":{\"text\":\"isError\"}} with response: [{\"functionResponse\":{\"name\":\"auth401\",\"response\":{\"error\":{\"content\":[{\"type\":\"text\",\"text\":\"401 Unauthorized: token expired\"}],\"isError\":true},\"content\":[{\"type\":\"text\",\"text\":\"401 Unauthorized: token expired\"}]}}}]","is_interrupt":false}`

	copilotPre     = `{"sessionId":"854686f2-d67c-454d-81a5-4f7cd738da12","timestamp":1796135123113,"cwd":"/w/proj","toolName":"e2e-rpcerr","toolArgs":{"text":"jsonrpc"}}`
	copilotPost    = `{"sessionId":"854686f2","timestamp":1796135126881,"cwd":"/w/proj","toolName":"e2e-echo","toolArgs":{"text":"after-timeout"},"toolResult":{"resultType":"success","textResultForLlm":"echo:after-timeout"}}`
	copilotFailure = `{"sessionId":"854686f2","timestamp":1796135123016,"cwd":"/w/proj","toolName":"e2e-fail","toolArgs":{"text":"isError"},"error":"MCP server 'e2e': 401 Unauthorized: token expired"}`
	copilotStart   = `{"sessionId":"854686f2","timestamp":1796135117122,"cwd":"/w/proj","source":"new","initialPrompt":"run the scenario"}`
	copilotPerm    = `{"hookName":"permissionRequest","sessionId":"854686f2","timestamp":1796135123190,"cwd":"/w/proj","toolName":"e2e/rpcerr","toolInput":{"text":"jsonrpc"},"permissionSuggestions":[]}`
	copilotBuiltin = `{"sessionId":"854686f2","timestamp":1796135123113,"cwd":"/w/proj","toolName":"bash","toolArgs":{"command":"ls"}}`
)

func decodeWire(t *testing.T, w gate.Wire, in string, servers gate.Servers) gate.Event {
	t.Helper()
	if e, ok := w.(gate.Environ); ok {
		w = e.WithGetenv(os.Getenv) // as gate.Run binds it; isolate sets the variables
	}
	var early *gate.Event
	ev, err := w.Decode(strings.NewReader(in), servers, func(e gate.Event) { early = &e })
	if err != nil {
		t.Fatalf("decode %s: %v", in, err)
	}
	if early != nil && (early.Kind != ev.Kind || early.Key != ev.Key) {
		t.Errorf("decode %s: seen reported %v %q, the whole event is %v %q", in, early.Kind, early.Key, ev.Kind, ev.Key)
	}
	return ev
}

// isolate points the agents' user directories at an empty directory, so that no configuration of
// the machine's user is read.
func isolate(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CODEX_HOME", filepath.Join(home, ".codex"))
	t.Setenv("COPILOT_HOME", filepath.Join(home, ".copilot"))
	return home
}

func TestCodexDecode(t *testing.T) {
	isolate(t)
	for _, tc := range []struct {
		name, in string
		want     gate.Event
	}{
		{"PreToolUse", codexPre, gate.Event{Kind: gate.Before, Agent: "codex", Hook: "PreToolUse", Key: "mcp__e2e__auth401", Tool: "mcp__e2e__auth401", ArgsHash: hashOf(`{"text":"isError"}`),
			SessionID: "01a231fd-701e-7911-83c4-1881992a1f19", ToolUseID: "call_s1_0_575789", Cwd: "/w/proj",
			TranscriptPath: "/h/.codex/sessions/2026/12/01/rollout-2026-12-01T14-23-42-01a231fd.jsonl"}},
		{"PostToolUse", codexPost, gate.Event{Kind: gate.Success, Agent: "codex", Hook: "PostToolUse", Key: "mcp__e2e__echo", Tool: "mcp__e2e__echo", ArgsHash: hashOf(`{"text":"sleepy"}`),
			SessionID: "s", ToolUseID: "call_s0_0_085af7", Cwd: "/w/proj", TranscriptPath: "/h/r.jsonl"}},
		{"Stop", codexStop, gate.Event{Kind: gate.Other, Agent: "codex", Hook: "Stop", SessionID: "s", Cwd: "/w/proj", TranscriptPath: "/h/r.jsonl"}},
		{"SessionStart", codexStart, gate.Event{Kind: gate.SessionStart, Agent: "codex", Hook: "SessionStart", SessionID: "s", Cwd: "/w/proj",
			TranscriptPath: "/h/r.jsonl", Source: "startup"}},
	} {
		if got := decodeWire(t, Codex, tc.in, nil); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
}

// Codex writes "my-srv.v2" as my_srv_v2 in tool names, Claude Code as my-srv_v2: the configured
// server's real name makes both the same circuit.
func TestCodexKeyThroughConfig(t *testing.T) {
	home := isolate(t)
	in := strings.Replace(codexPre, "mcp__e2e__auth401", "mcp__my_srv_v2__auth401", 1)
	if got := decodeWire(t, Codex, in, nil); got.Key != "mcp__my_srv_v2__auth401" || got.Server != "" {
		t.Errorf("without a configured server: key %q server %q, want the name as it is", got.Key, got.Server)
	}
	servers := func() []mcpconfig.Server { return []mcpconfig.Server{{Name: "my-srv.v2"}} }
	if got := decodeWire(t, Codex, in, servers); got.Key != "mcp__my-srv_v2__auth401" || got.Server != "my-srv.v2" {
		t.Errorf("with the project's server: key %q server %q, want mcp__my-srv_v2__auth401 of my-srv.v2", got.Key, got.Server)
	}
	if err := os.MkdirAll(filepath.Join(home, ".codex"), 0o755); err != nil {
		t.Fatal(err)
	}
	config := "model = \"gpt-5\"\n[mcp_servers.\"my-srv.v2\"] # the real name\ncommand = \"x\"\n[mcp_servers.\"my-srv.v2\".env]\nA = \"1\"\n[mcp_servers.plain]\n"
	if err := os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := decodeWire(t, Codex, in, nil); got.Key != "mcp__my-srv_v2__auth401" || got.Server != "my-srv.v2" {
		t.Errorf("with Codex's config.toml: key %q server %q, want mcp__my-srv_v2__auth401 of my-srv.v2", got.Key, got.Server)
	}
}

// The user directories are read only through the environment the gate binds a codec to: an
// unbound codec reads none, a relative directory is not read, and a CODEX_HOME or COPILOT_HOME
// the bound environment leaves out (a project set it) falls back to the directory under its HOME.
func TestUserDirOnlyThroughTheGatesEnvironment(t *testing.T) {
	isolate(t)
	home, planted := t.TempDir(), t.TempDir()
	write := func(path, data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(home, ".codex", "config.toml"), "[mcp_servers.\"my-srv\"]\n")
	write(filepath.Join(planted, "config.toml"), "[mcp_servers.other]\n")
	write(filepath.Join(home, ".copilot", "mcp-config.json"), `{"mcpServers":{"gh":{}}}`)
	write(filepath.Join(planted, "mcp-config.json"), `{"mcpServers":{"gh-issues":{}}}`)
	// The process's own CODEX_HOME and COPILOT_HOME name the planted directory: an unbound codec,
	// and one bound to an environment without them, must not read it.
	t.Setenv("CODEX_HOME", planted)
	t.Setenv("COPILOT_HOME", planted)
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }
	codexIn := strings.Replace(codexPre, "mcp__e2e__auth401", "mcp__my_srv__echo", 1)
	copilotIn := strings.Replace(copilotPre, `"e2e-rpcerr"`, `"gh-issues-list"`, 1)
	copilotAt, err := Wire("copilot:preToolUse")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name             string
		getenv           func(string) string
		codex, copilotTo string
	}{
		{"unbound", nil, "mcp__my_srv__echo", ""},
		{"HOME only", env(map[string]string{"HOME": home}), "mcp__my-srv__echo", "mcp__gh__issues-list"},
		{"the agents' variables", env(map[string]string{"HOME": home, "CODEX_HOME": planted, "COPILOT_HOME": planted}), "mcp__my_srv__echo", "mcp__gh-issues__list"},
		{"relative", env(map[string]string{"HOME": "h", "CODEX_HOME": "planted"}), "mcp__my_srv__echo", ""},
	} {
		cx, cp := gate.Wire(Codex), copilotAt
		if tc.getenv != nil {
			cx, cp = Codex.(gate.Environ).WithGetenv(tc.getenv), copilotAt.(gate.Environ).WithGetenv(tc.getenv)
		}
		if ev, err := cx.Decode(strings.NewReader(codexIn), nil, nil); err != nil || ev.Key != tc.codex {
			t.Errorf("%s: Codex key %q (%v), want %q", tc.name, ev.Key, err, tc.codex)
		}
		if ev, err := cp.Decode(strings.NewReader(copilotIn), nil, nil); err != nil || ev.Key != tc.copilotTo {
			t.Errorf("%s: Copilot key %q (%v), want %q", tc.name, ev.Key, err, tc.copilotTo)
		}
	}
	// Bound to its event first and to the environment after (as agent.Wire and gate.Run do), the
	// Copilot codec keeps both.
	b := copilotAt.(gate.Environ).WithGetenv(env(map[string]string{"HOME": home}))
	if ev, _ := b.Decode(strings.NewReader(copilotIn), nil, nil); ev.Hook != "preToolUse" || ev.Kind != gate.Before {
		t.Errorf("bound Copilot codec lost its event: %+v", ev)
	}
}

// Every agent's directory variable is one the gate ignores when a project's settings set it.
func TestConfigDirEnvGuarded(t *testing.T) {
	for _, c := range All() {
		if v := c.Setup().ConfigDirEnv; v != "" && !userenv.Guarded(v) {
			t.Errorf("%s: %s is not guarded by internal/userenv: a repository could move its user directory", c.Name(), v)
		}
	}
}

func TestTOMLServerHeader(t *testing.T) {
	for line, want := range map[string]string{
		`[mcp_servers.fix]`:               "fix",
		` [ mcp_servers . "my-srv.v2" ] `: "my-srv.v2",
		`[mcp_servers.'lit.eral']`:        "lit.eral",
		`[mcp_servers.fix] # comment`:     "fix",
		`[mcp_servers.fix.env]`:           "",
		`[[mcp_servers.fix]]`:             "",
		`[mcp_servers]`:                   "",
		`[model_providers.fake]`:          "",
		`command = "[mcp_servers.x]"`:     "",
		`[mcp_servers."unterminated]`:     "",
	} {
		got, ok := tomlServerHeader(line)
		if got != want || ok != (want != "") {
			t.Errorf("tomlServerHeader(%q) = %q, %v; want %q", line, got, ok, want)
		}
	}
}

func TestCodexEncode(t *testing.T) {
	pre := gate.Event{Kind: gate.Before, Hook: "PreToolUse"}
	for _, tc := range []struct {
		name       string
		ev         gate.Event
		a          gate.Answer
		out, error string
	}{
		{"allow", pre, gate.Answer{}, "", ""},
		{"deny", pre, gate.Answer{Deny: true, Reason: "R", Context: "C", Notice: "N"},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"R"}}` + "\n", "N\n"},
		{"deny without a reason", pre, gate.Answer{Deny: true},
			`{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"mcp-circuit-breaker: this MCP tool's circuit is OPEN; do not retry it."}}` + "\n", ""},
		{"context", gate.Event{Kind: gate.Success, Hook: "PostToolUse"}, gate.Answer{Context: "C"},
			`{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"C"}}` + "\n", ""},
		{"no context on Stop", gate.Event{Hook: "Stop"}, gate.Answer{Context: "C"}, "", ""},
	} {
		r := Codex.Encode(tc.ev, tc.a)
		if string(r.Stdout) != tc.out || string(r.Stderr) != tc.error || r.Exit != 0 {
			t.Errorf("%s: stdout %q stderr %q exit %d; want %q %q 0", tc.name, r.Stdout, r.Stderr, r.Exit, tc.out, tc.error)
		}
	}
}

func TestCodexBacklog(t *testing.T) {
	isolate(t)
	data, err := os.ReadFile("testdata/codex-rollout.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "rollout.jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	bl := Codex.(gate.Backlog)
	ev := gate.Event{Kind: gate.Before, Agent: "codex", SessionID: "s", TranscriptPath: path}
	scan, err := bl.Backlog(ev, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(scan.Failures) != 2 || scan.Cursor != "3339" || scan.Advanced != 3339 {
		t.Fatalf("first read: %d failures, cursor %q, advanced %d; want 2, 3339, 3339", len(scan.Failures), scan.Cursor, scan.Advanced)
	}
	f := scan.Failures[0]
	if f.Kind != gate.Failure || f.Key != "mcp__fix__echo" || f.ToolUseID != "call_e2e_01" || f.Error != "upstream quota exceeded" || f.SessionID != "s" {
		t.Errorf("first failure %+v", f)
	}
	// The transcript has the server's real name; its key is the one Codex's PreToolUse of that
	// tool gets: Claude Code's once the server is configured, else Codex's own spelling.
	if g := scan.Failures[1]; g.Key != "mcp__my_srv_v2__echo" || g.Server != "my-srv.v2" {
		t.Errorf("second failure: key %q server %q", g.Key, g.Server)
	}
	servers := func() []mcpconfig.Server { return []mcpconfig.Server{{Name: "my-srv.v2"}} }
	if s, err := bl.Backlog(ev, "", servers); err != nil || s.Failures[1].Key != "mcp__my-srv_v2__echo" {
		t.Errorf("with the server configured: %+v, %v; want key mcp__my-srv_v2__echo", s.Failures, err)
	}
	again, err := bl.Backlog(ev, scan.Cursor, nil)
	if err != nil || len(again.Failures) != 0 || again.Cursor != scan.Cursor {
		t.Errorf("a read from the cursor: %+v, %v; want nothing new", again, err)
	}
	// A transcript shorter than the cursor was replaced: read on from its end, never again from 0.
	gone, err := bl.Backlog(ev, "99999", nil)
	if err != nil || !gone.Replaced || gone.Cursor != "3339" || len(gone.Failures) != 0 {
		t.Errorf("a cursor past the end: %+v, %v", gone, err)
	}
	for _, bad := range []gate.Event{{TranscriptPath: "relative.jsonl"}, {TranscriptPath: filepath.Join(t.TempDir(), "missing")}, {}} {
		if s, err := bl.Backlog(bad, "", nil); err != nil || len(s.Failures) != 0 {
			t.Errorf("transcript %q: %+v, %v; want nothing", bad.TranscriptPath, s, err)
		}
	}
	if _, err := bl.Backlog(ev, "x", nil); err == nil {
		t.Error("a cursor that is not an offset was accepted")
	}
	link := filepath.Join(t.TempDir(), "link.jsonl")
	if err := os.Symlink(path, link); err == nil {
		if _, err := bl.Backlog(gate.Event{TranscriptPath: link}, "", nil); err == nil {
			t.Error("a transcript that is a symbolic link was read")
		}
	}
}

func TestQwenDecode(t *testing.T) {
	ev := decodeWire(t, Qwen, qwenPre, nil)
	want := gate.Event{Kind: gate.Before, Agent: "qwen", Hook: "PreToolUse", Key: "mcp__e2e__auth401", Tool: "mcp__e2e__auth401",
		SessionID: "d8c14226-38d6-44e5-8e7a-73be4fccf42b", ToolUseID: "toolu_1796135485760_znr6d1vqs", Cwd: "/w/proj",
		TranscriptPath: "/h/.qwen/projects/-w-proj/chats/d8c14226.jsonl"}
	// Qwen's tool_input is hashed like Claude Code's, for the loop guard.
	if ev.ArgsHash == "" {
		t.Error("PreToolUse: tool_input is not hashed")
	}
	ev.ArgsHash = ""
	if !reflect.DeepEqual(ev, want) {
		t.Errorf("PreToolUse:\n got %+v\nwant %+v", ev, want)
	}
	if ev := decodeWire(t, Qwen, qwenFailure, nil); ev.Kind != gate.Failure || ev.Key != "mcp__e2e__rpcerror" || ev.Error != "upstream database unavailable (rpc -32603)" {
		t.Errorf("PostToolUseFailure: %+v", ev)
	}
	if ev := decodeWire(t, Qwen, qwenIsError, nil); ev.Error != "401 Unauthorized: token expired" {
		t.Errorf("isError failure: the server's text is not unwrapped: %q", ev.Error)
	}
	for _, text := range []string{"MCP tool 'x' reported tool error for function call: {} with response: not json", "Request timed out", "Connection closed"} {
		if got := qwenErrorText(text); got != text {
			t.Errorf("qwenErrorText(%q) = %q, want it unchanged", text, got)
		}
	}
	r := Qwen.Encode(gate.Event{Kind: gate.Before, Hook: "PreToolUse"}, gate.Answer{Deny: true, Reason: "R"})
	if string(r.Stdout) != `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"R"}}`+"\n" {
		t.Errorf("deny: %s", r.Stdout)
	}
}

func TestCopilotDecode(t *testing.T) {
	home := isolate(t)
	proj := t.TempDir()
	fix := func(in string) string { return strings.ReplaceAll(in, `"/w/proj"`, strconvQuote(proj)) }
	if err := os.MkdirAll(filepath.Join(home, ".copilot"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".copilot", "mcp-config.json"), []byte(`{"mcpServers":{"e2e":{"type":"local","command":"x"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	bound := func(event string) gate.Wire {
		w, err := Wire("copilot:" + event)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	for _, tc := range []struct {
		name string
		w    gate.Wire
		in   string
		kind gate.Kind
		key  string
	}{
		{"preToolUse", bound("preToolUse"), copilotPre, gate.Before, "mcp__e2e__rpcerr"},
		{"postToolUse", bound("postToolUse"), copilotPost, gate.Success, "mcp__e2e__echo"},
		{"postToolUseFailure", bound("postToolUseFailure"), copilotFailure, gate.Failure, "mcp__e2e__fail"},
		{"sessionStart", bound("sessionStart"), copilotStart, gate.SessionStart, ""},
		{"a built-in tool", bound("preToolUse"), copilotBuiltin, gate.Before, ""},
		{"unbound pre", Copilot, copilotPre, gate.Before, "mcp__e2e__rpcerr"},
		{"unbound post", Copilot, copilotPost, gate.Success, "mcp__e2e__echo"},
		{"unbound failure", Copilot, copilotFailure, gate.Failure, "mcp__e2e__fail"},
		{"unbound start", Copilot, copilotStart, gate.SessionStart, ""},
		{"permissionRequest", Copilot, copilotPerm, gate.Other, ""},
	} {
		ev := decodeWire(t, tc.w, fix(tc.in), nil)
		if ev.Kind != tc.kind || ev.Key != tc.key || ev.Agent != "copilot" || ev.ToolUseID != "" {
			t.Errorf("%s: kind %v key %q agent %q; want %v %q copilot", tc.name, ev.Kind, ev.Key, ev.Agent, tc.kind, tc.key)
		}
	}
	if ev := decodeWire(t, bound("postToolUseFailure"), fix(copilotFailure), nil); ev.Error != "401 Unauthorized: token expired" || ev.Server != "e2e" {
		t.Errorf("failure: error %q server %q", ev.Error, ev.Server)
	}
	// A server whose name holds "-", from the workspace's .github/mcp.json: a name it starts is
	// its tool when no server of the user's reads it, else the user's server's tool before a call
	// (with the workspace's reading beside it, which the gate checks too), and after a failure the
	// tool of the server Copilot says answered.
	if err := os.MkdirAll(filepath.Join(proj, ".github"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, ".github", "mcp.json"), []byte(`{"mcpServers":{"e2e-b":{"command":"x"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	in := strings.Replace(fix(copilotPre), "e2e-rpcerr", "e2e-b-deny-me", 1)
	if ev := decodeWire(t, bound("preToolUse"), in, nil); ev.Key != "mcp__e2e__b-deny-me" || ev.Server != "e2e" ||
		!slices.Equal(ev.Readings, []string{"mcp__e2e-b__deny-me"}) {
		t.Errorf("e2e-b-deny-me: key %q server %q readings %q, want mcp__e2e__b-deny-me of e2e, also mcp__e2e-b__deny-me", ev.Key, ev.Server, ev.Readings)
	}
	in = strings.Replace(strings.Replace(fix(copilotFailure), "e2e-fail", "e2e-b-deny-me", 1), "MCP server 'e2e'", "MCP server 'e2e-b'", 1)
	if ev := decodeWire(t, bound("postToolUseFailure"), in, nil); ev.Key != "mcp__e2e-b__deny-me" || ev.Server != "e2e-b" || ev.Error != "401 Unauthorized: token expired" {
		t.Errorf("e2e-b-deny-me failing on e2e-b: key %q server %q error %q, want mcp__e2e-b__deny-me of e2e-b", ev.Key, ev.Server, ev.Error)
	}
	if err := os.WriteFile(filepath.Join(proj, ".github", "mcp.json"), []byte(`{"mcpServers":{"e2e-c":{"command":"x"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	in = strings.Replace(fix(copilotPre), "e2e-rpcerr", "e2e-b-deny-me", 1)
	if ev := decodeWire(t, bound("preToolUse"), in, nil); ev.Key != "mcp__e2e__b-deny-me" || len(ev.Readings) != 0 {
		t.Errorf("e2e-b-deny-me with no server e2e-b: key %q readings %q, want mcp__e2e__b-deny-me alone", ev.Key, ev.Readings)
	}
	if _, err := Wire("copilot:"); err == nil {
		t.Error("copilot: with no event was accepted")
	}
	if _, err := Wire("codex:PreToolUse"); err == nil {
		t.Error("codex:EVENT was accepted; Codex names its events")
	}
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestCopilotEncode(t *testing.T) {
	for _, tc := range []struct {
		name       string
		a          gate.Answer
		out, error string
	}{
		{"allow", gate.Answer{}, "", ""},
		{"deny", gate.Answer{Deny: true, Reason: "R <b>", Context: "C", Notice: "N"}, `{"permissionDecision":"deny","permissionDecisionReason":"R <b>"}` + "\n", "N\n"},
		{"context", gate.Answer{Context: "C"}, `{"additionalContext":"C"}` + "\n", ""},
		{"notice only", gate.Answer{Notice: "N"}, "", "N\n"},
	} {
		r := Copilot.Encode(gate.Event{Kind: gate.Before, Hook: "preToolUse"}, tc.a)
		if string(r.Stdout) != tc.out || string(r.Stderr) != tc.error || r.Exit != 0 {
			t.Errorf("%s: stdout %q stderr %q exit %d; want %q %q 0", tc.name, r.Stdout, r.Stderr, r.Exit, tc.out, tc.error)
		}
	}
}

// FuzzAgentDecode: no input makes a codec of Codex, Qwen Code or Copilot CLI panic, a decoded
// event's key is empty or an MCP key, and seen never contradicts the whole event.
func FuzzAgentDecode(f *testing.F) {
	for _, in := range []string{codexPre, codexPost, codexStop, codexStart, qwenPre, qwenFailure, qwenIsError,
		copilotPre, copilotPost, copilotFailure, copilotStart, copilotPerm, copilotBuiltin, `{}`, `[`, `{"toolName":"a-b"}`} {
		f.Add(in)
	}
	wires := []gate.Wire{Codex, Qwen, Copilot, copilot{event: "preToolUse"}, copilot{event: "postToolUseFailure"}}
	f.Fuzz(func(t *testing.T, in string) {
		for _, w := range wires {
			var early *gate.Event
			ev, err := w.Decode(strings.NewReader(in), func() []mcpconfig.Server { return []mcpconfig.Server{{Name: "a"}, {Name: "my-srv.v2"}} },
				func(e gate.Event) { early = &e })
			if err != nil {
				continue
			}
			if ev.Kind != gate.Other && ev.Kind != gate.SessionStart && ev.Key != "" && ev.Key != ev.Tool && !strings.HasPrefix(ev.Key, "mcp__") {
				t.Fatalf("%T: key %q of tool %q", w, ev.Key, ev.Tool)
			}
			if early != nil && (early.Kind != ev.Kind || early.Key != ev.Key) {
				t.Fatalf("%T: seen %v %q, event %v %q", w, early.Kind, early.Key, ev.Kind, ev.Key)
			}
			_ = w.Encode(ev, gate.Answer{Deny: ev.Kind == gate.Before, Reason: ev.Error, Context: ev.Tool})
		}
	})
}

// TestCodexKeyExactName: Codex writes both "my-srv" and "my_srv" as my_srv. A server named exactly
// my_srv is the one called, whichever other server sanitizes alike, and Codex's own servers come
// before the project's (a "my-srv" that only Claude Code runs is not Codex's my_srv).
func TestCodexKeyExactName(t *testing.T) {
	home := isolate(t)
	in := strings.Replace(codexPre, "mcp__e2e__auth401", "mcp__my_srv__echo", 1)
	claudeOnly := func() []mcpconfig.Server { return []mcpconfig.Server{{Name: "my-srv"}} }
	both := func() []mcpconfig.Server { return []mcpconfig.Server{{Name: "my-srv"}, {Name: "my_srv"}} }
	if got := decodeWire(t, Codex, in, both); got.Key != "mcp__my_srv__echo" {
		t.Errorf("with my-srv and my_srv configured: key %q, want mcp__my_srv__echo", got.Key)
	}
	if err := os.MkdirAll(filepath.Join(home, ".codex"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".codex", "config.toml"), []byte("[mcp_servers.my_srv]\ncommand = \"x\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := decodeWire(t, Codex, in, claudeOnly); got.Key != "mcp__my_srv__echo" || got.Server != "my_srv" {
		t.Errorf("Codex runs my_srv, Claude Code my-srv: key %q server %q, want mcp__my_srv__echo of my_srv", got.Key, got.Server)
	}
	// The transcript's failure of that call counts on the same circuit.
	line := `{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"McpToolCall","id":"call_1","server":"my_srv","tool":"echo","status":"failed","error":{"message":"Transport closed"}}}}` + "\n"
	path := filepath.Join(t.TempDir(), "rollout.jsonl")
	if err := os.WriteFile(path, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	bound := Codex.(gate.Environ).WithGetenv(os.Getenv).(gate.Backlog) // as gate.Run binds it
	scan, err := bound.Backlog(gate.Event{TranscriptPath: path}, "", claudeOnly)
	if err != nil || len(scan.Failures) != 1 || scan.Failures[0].Key != "mcp__my_srv__echo" {
		t.Errorf("the transcript's failure: %+v, %v; want one on mcp__my_srv__echo", scan.Failures, err)
	}
}

// TestCopilotKeyOwnServersFirst: Copilot's tool github-create-issue is tool create-issue of its
// server github when Copilot runs no server github-create, even if Claude Code's configuration has
// one; with Copilot running both, the longer name wins.
func TestCopilotKeyOwnServersFirst(t *testing.T) {
	home := isolate(t)
	proj := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".copilot"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(home, ".copilot", "mcp-config.json")
	if err := os.WriteFile(cfg, []byte(`{"mcpServers":{"github":{"type":"local","command":"x"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := Wire("copilot:preToolUse")
	if err != nil {
		t.Fatal(err)
	}
	in := strings.Replace(strings.ReplaceAll(copilotPre, `"/w/proj"`, strconvQuote(proj)), "e2e-rpcerr", "github-create-issue", 1)
	claude := func() []mcpconfig.Server { return []mcpconfig.Server{{Name: "github-create"}} }
	if ev := decodeWire(t, w, in, claude); ev.Key != "mcp__github__create-issue" || ev.Server != "github" {
		t.Errorf("Copilot runs github only: key %q server %q, want mcp__github__create-issue of github", ev.Key, ev.Server)
	}
	if err := os.WriteFile(cfg, []byte(`{"mcpServers":{"github":{"command":"x"},"github-create":{"command":"y"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if ev := decodeWire(t, w, in, nil); ev.Key != "mcp__github-create__issue" || ev.Server != "github-create" {
		t.Errorf("Copilot runs both: key %q server %q, want mcp__github-create__issue", ev.Key, ev.Server)
	}
	// A server only Claude Code's configuration has still names the tool when Copilot's do not.
	in = strings.Replace(in, "github-create-issue", "jira-create-issue", 1)
	jira := func() []mcpconfig.Server { return []mcpconfig.Server{{Name: "jira"}} }
	if ev := decodeWire(t, w, in, jira); ev.Key != "mcp__jira__create-issue" {
		t.Errorf("a server from Claude Code's configuration: key %q, want mcp__jira__create-issue", ev.Key)
	}
}

// TestCopilotKeySanitizedServer: Copilot CLI 1.0.102 names the tools of server "fix.v2@3 x"
// fix-v2-3-x-echo (observed offline, e2e/agentscenarios_test.go): the key is Claude Code's for that
// server, not a built-in tool's "".
func TestCopilotKeySanitizedServer(t *testing.T) {
	home := isolate(t)
	proj := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".copilot"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".copilot", "mcp-config.json"), []byte(`{"mcpServers":{"fix.v2@3 x":{"type":"local","command":"x"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := Wire("copilot:postToolUseFailure")
	if err != nil {
		t.Fatal(err)
	}
	in := strings.Replace(strings.ReplaceAll(copilotFailure, `"/w/proj"`, strconvQuote(proj)), "e2e-fail", "fix-v2-3-x-echo", 1)
	in = strings.Replace(in, "MCP server 'e2e': ", "MCP server 'fix.v2@3 x': ", 1)
	if ev := decodeWire(t, w, in, nil); ev.Key != "mcp__fix_v2_3_x__echo" || ev.Server != "fix.v2@3 x" || ev.Error != "401 Unauthorized: token expired" {
		t.Errorf("fix-v2-3-x-echo: key %q server %q error %q, want mcp__fix_v2_3_x__echo of fix.v2@3 x and the server's own text", ev.Key, ev.Server, ev.Error)
	}
}

// TestHashedToolNames: Qwen Code 0.24.4 and Cline 3.0.65 add a hash to the name of a tool whose
// server's name they had to change; the names below are the ones they listed to the model in
// offline runs (e2e/agentscenarios_test.go). Each resolves, through the configured servers, to
// Claude Code's key of that server and tool; without the server, or with a wrong hash, it stays
// as it was.
func TestHashedToolNames(t *testing.T) {
	isolate(t)
	for _, tc := range []struct {
		w                gate.Wire
		server, name     string
		wantKey, wantAlt string
	}{
		{Qwen, "fix.v2@3 x", "mcp__fix_v2_3_x__echo_0wdn1o8", "mcp__fix_v2_3_x__echo", "mcp__fix_v2_3_x__echo_0wdn1o8"},
		{Qwen, "fix.v2@3 x", "mcp__fix_v2_3_x__other_1bpp4g9", "mcp__fix_v2_3_x__other", "mcp__fix_v2_3_x__other_1bpp4g9"},
		{Cline, "fix.v2", "fix_v2__echo_32987e2c", "mcp__fix_v2__echo", "mcp__fix_v2__echo_32987e2c"},
		{Cline, "fix.v2", "fix_v2__other_daef872f", "mcp__fix_v2__other", "mcp__fix_v2__other_daef872f"},
	} {
		var in string
		if tc.w.(Codec).Name() == "qwen" {
			in = strings.Replace(qwenPre, "mcp__e2e__auth401", tc.name, 1)
		} else {
			in = `{"hook":"beforeTool","cwd":"/w/proj","conversationId":"c","toolCall":{"toolCallId":"call_1","toolName":"` + tc.name + `","input":{}}}`
		}
		servers := func() []mcpconfig.Server { return []mcpconfig.Server{{Name: "other"}, {Name: tc.server}} }
		if ev := decodeWire(t, tc.w, in, servers); ev.Key != tc.wantKey || ev.Server != tc.server {
			t.Errorf("%s with %q configured: key %q server %q, want %s", tc.name, tc.server, ev.Key, ev.Server, tc.wantKey)
		}
		if ev := decodeWire(t, tc.w, in, nil); ev.Key != tc.wantAlt {
			t.Errorf("%s with no server configured: key %q, want %s", tc.name, ev.Key, tc.wantAlt)
		}
		bad := strings.Replace(in, tc.name, tc.name[:len(tc.name)-1]+"0", 1)
		if bad == in {
			bad = strings.Replace(in, tc.name, tc.name[:len(tc.name)-1]+"1", 1)
		}
		if ev := decodeWire(t, tc.w, bad, servers); ev.Server == tc.server {
			t.Errorf("%s with a wrong hash resolved to %s", tc.name, ev.Key)
		}
	}
}

// No codec reads the process environment: the variables a repository's agent settings set reach
// the gate's own filtered getenv only (gate.Environ).
func TestNoProcessEnvironment(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, call := range []string{"os.Getenv(", "os.LookupEnv(", "os.Environ(", "os.UserHomeDir(", "os.ExpandEnv("} {
			if strings.Contains(string(data), call) {
				t.Errorf("%s calls %s: read the agent's variables through the getenv gate.Run binds (gate.Environ)", f, call)
			}
		}
	}
}
