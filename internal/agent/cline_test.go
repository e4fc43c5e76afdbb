package agent

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
)

// What the gate's Cline plugin (plugin/cline) sends, built from the hook contexts Cline 3.0.65
// passes it, as captured from the real client driven by e2e/cline_test.go: the result of an MCP
// isError call, of a skipped call, and (from the reference run) of a JSON-RPC error.
const (
	clineBefore  = `{"hook":"beforeTool","cwd":"/tmp/p/proj","conversationId":"conv_1796138221776_hqwcfua","toolCall":{"toolCallId":"call_e2e_01","toolName":"fix__echo"}}`
	clineIsError = `{"hook":"afterTool","cwd":"/tmp/p/proj","conversationId":"conv_1","toolCall":{"toolCallId":"call_e2e_01","toolName":"fix__echo"},"result":{"output":{"content":[{"type":"text","text":"HTTP 503 upstream down"}],"isError":true},"isError":false},"durationMs":75}`
	clineRPC     = `{"hook":"afterTool","cwd":"/p","conversationId":"c","toolCall":{"toolCallId":"call_02_0_9de3d9","toolName":"e2e__rpcerr"},"result":{"output":{"error":"upstream exploded (rpcerr)"},"isError":true},"durationMs":1}`
	clineSuccess = `{"hook":"afterTool","cwd":"/p","conversationId":"c","toolCall":{"toolCallId":"x","toolName":"e2e__echo"},"result":{"output":{"content":[{"type":"text","text":"echo:par-a"}]},"isError":false},"durationMs":2.5}`
	clineRun     = `{"hook":"beforeRun","cwd":"/p","conversationId":"c"}`
)

func TestClineDecode(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     gate.Event
	}{
		{"beforeTool", clineBefore, gate.Event{Kind: gate.Before, Agent: "cline", Hook: "beforeTool", Key: "mcp__fix__echo", Tool: "fix__echo",
			ToolUseID: "call_e2e_01", SessionID: "conv_1796138221776_hqwcfua", Cwd: "/tmp/p/proj"}},
		{"an MCP isError result is a failure", clineIsError, gate.Event{Kind: gate.Failure, Agent: "cline", Hook: "afterTool", Key: "mcp__fix__echo", Tool: "fix__echo",
			ToolUseID: "call_e2e_01", SessionID: "conv_1", Cwd: "/tmp/p/proj", Error: "HTTP 503 upstream down", Duration: 75 * time.Millisecond}},
		{"a JSON-RPC error", clineRPC, gate.Event{Kind: gate.Failure, Agent: "cline", Hook: "afterTool", Key: "mcp__e2e__rpcerr", Tool: "e2e__rpcerr",
			ToolUseID: "call_02_0_9de3d9", SessionID: "c", Cwd: "/p", Error: "upstream exploded (rpcerr)", Duration: time.Millisecond}},
		{"a success", clineSuccess, gate.Event{Kind: gate.Success, Agent: "cline", Hook: "afterTool", Key: "mcp__e2e__echo", Tool: "e2e__echo",
			ToolUseID: "x", SessionID: "c", Cwd: "/p", Duration: 2500 * time.Microsecond}},
		{"beforeRun is the session's start", clineRun, gate.Event{Kind: gate.SessionStart, Agent: "cline", Hook: "beforeRun", Source: "startup", SessionID: "c", Cwd: "/p"}},
		{"a built-in tool", `{"hook":"beforeTool","toolCall":{"toolCallId":"1","toolName":"read_file"}}`,
			gate.Event{Kind: gate.Before, Agent: "cline", Hook: "beforeTool", Tool: "read_file", ToolUseID: "1"}},
		{"a failure without text", `{"hook":"afterTool","toolCall":{"toolName":"a__b"},"result":{"output":null,"isError":true}}`,
			gate.Event{Kind: gate.Failure, Agent: "cline", Hook: "afterTool", Key: "mcp__a__b", Tool: "a__b", Error: "the tool call failed (Cline gave no message)"}},
		{"an error object", `{"hook":"afterTool","toolCall":{"toolName":"a__b"},"result":{"output":{"error":{"message":"boom"}},"isError":true}}`,
			gate.Event{Kind: gate.Failure, Agent: "cline", Hook: "afterTool", Key: "mcp__a__b", Tool: "a__b", Error: "boom"}},
		{"a string output", `{"hook":"afterTool","toolCall":{"toolName":"a__b"},"result":{"output":"timed out","isError":true}}`,
			gate.Event{Kind: gate.Failure, Agent: "cline", Hook: "afterTool", Key: "mcp__a__b", Tool: "a__b", Error: "timed out"}},
		{"an unknown hook", `{"hook":"afterRun","toolCall":{"toolName":"a__b"}}`, gate.Event{Agent: "cline", Hook: "afterRun", Tool: "a__b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, _, err := decodeAll(t, Cline, tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(ev, tc.want) {
				t.Errorf("got  %+v\nwant %+v", ev, tc.want)
			}
		})
	}
}

func TestClineDecodeMalformed(t *testing.T) {
	for _, in := range []string{``, `[]`, `{"hook":`, `{"durationMs":1.2.3}`, `{"durationMs":-}`, `{"result":{"output":{"content":[1,}}}`} {
		if _, err := Cline.Decode(strings.NewReader(in), nil, nil); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

func TestClineEncode(t *testing.T) {
	for _, tc := range []struct {
		name string
		a    gate.Answer
		want string
	}{
		{"allow", gate.Answer{}, ""},
		{"deny", gate.Answer{Deny: true, Reason: "⚡ CIRCUIT OPEN <x>"}, `{"skip":true,"reason":"⚡ CIRCUIT OPEN <x>"}` + "\n"},
		{"context", gate.Answer{Context: "failed once"}, `{"appendContext":"failed once"}` + "\n"},
		{"notice", gate.Answer{Notice: "shadow"}, `{"notice":"shadow"}` + "\n"},
	} {
		if r := Cline.Encode(gate.Event{Kind: gate.Before}, tc.a); string(r.Stdout) != tc.want || r.Exit != 0 {
			t.Errorf("%s: got %q (exit %d), want %q", tc.name, r.Stdout, r.Exit, tc.want)
		}
	}
}

func FuzzClineDecode(f *testing.F) {
	for _, s := range []string{clineBefore, clineIsError, clineRPC, clineSuccess, clineRun, `{"durationMs":1e3}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		ev, err := Cline.Decode(strings.NewReader(in), nil, nil)
		if err != nil {
			return
		}
		checkDecoded(t, ev)
		Cline.Encode(ev, gate.Answer{Context: "c"})
	})
}

// TestClineServerFiles: the gate reads Cline's MCP settings where Cline 3.0.65 does, as the gate's
// environment says ($CLINE_MCP_SETTINGS_PATH, $CLINE_DATA_DIR/settings, $CLINE_DIR/data/settings,
// ~/.cline/data/settings), so that a tool name Cline hashed resolves to its server.
func TestClineServerFiles(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"HOME": "/h"}, "/h/.cline/data/settings/cline_mcp_settings.json"},
		{map[string]string{"HOME": "/h", "CLINE_DIR": "/c"}, "/c/data/settings/cline_mcp_settings.json"},
		{map[string]string{"HOME": "/h", "CLINE_DIR": "/c", "CLINE_DATA_DIR": "/d"}, "/d/settings/cline_mcp_settings.json"},
		{map[string]string{"HOME": "/h", "CLINE_DATA_DIR": "/d", "CLINE_MCP_SETTINGS_PATH": "/m.json"}, "/m.json"},
		{map[string]string{"HOME": "/h", "CLINE_MCP_SETTINGS_PATH": "relative.json"}, "/h/.cline/data/settings/cline_mcp_settings.json"},
		{map[string]string{}, ""},
	} {
		w := Cline.(gate.Environ).WithGetenv(func(k string) string { return tc.env[k] }).(gate.ServerFiles)
		files := w.ServerFiles("/p", tc.env["HOME"])
		got := ""
		if len(files) == 1 && !files[0].Project {
			got = files[0].Path
		} else if len(files) > 1 {
			got = fmt.Sprint(files)
		}
		if got != filepath.FromSlash(tc.want) {
			t.Errorf("%v: %q, want %q", tc.env, got, tc.want)
		}
	}
	// Unbound (no environment), nothing of the user's is read.
	if files := Cline.(gate.ServerFiles).ServerFiles("/p", "/h"); len(files) != 0 {
		t.Errorf("unbound: %v", files)
	}
}
