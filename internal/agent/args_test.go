package agent

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/failure"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
)

// Every codec that decodes a failure keeps the values of the call's arguments for the classifier,
// as failure.ArgsFromJSON reads them from the arguments themselves; a pre-call event keeps none.
func TestArgsPerAgent(t *testing.T) {
	want := failure.ArgsFromJSON([]byte(argsCompact))
	if len(want) == 0 {
		t.Fatal("no values in the arguments")
	}
	for _, tc := range argsCases {
		t.Run(tc.agent, func(t *testing.T) {
			if tc.pre != "" {
				args := argsCompact
				if tc.quoted {
					args = quote(args)
				}
				if ev := argsHashOf(t, tc.codec, tc.pre, args); ev.Args != nil {
					t.Errorf("the pre-call event keeps the arguments: %v", ev.Args)
				}
			}
			if tc.fail == "" {
				return
			}
			for _, args := range []string{argsSpaced, quote(argsCompact)} {
				ev := argsHashOf(t, tc.codec, tc.fail, args)
				if !reflect.DeepEqual(ev.Args, want) {
					t.Errorf("the failure with arguments %s keeps %v, want %v", args, ev.Args, want)
				}
			}
		})
	}
}

// A success event keeps no arguments, though the codec read them not knowing yet which it was.
func TestArgsNotKeptForSuccess(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    Codec
		in   string
	}{
		{"claude", Claude, `{"tool_input":{"path":"a.md"},"hook_event_name":"PostToolUse","tool_name":"mcp__fix__echo","tool_response":"ok"}`},
		{"gemini", Gemini, `{"hook_event_name":"AfterTool","tool_name":"mcp_fix_echo","tool_input":{"path":"a.md"},"tool_response":{"llmContent":"ok"},"mcp_context":{"server_name":"fix","tool_name":"echo"}}`},
		{"cline", Cline, `{"hook":"afterTool","toolCall":{"toolCallId":"c","toolName":"fix__echo","input":{"path":"a.md"}},"result":{"output":"ok"}}`},
	} {
		ev, _, err := decodeAll(t, tc.c, tc.in)
		if err != nil || ev.Kind != gate.Success || ev.Args != nil {
			t.Errorf("%s: %v, kind %v, args %v; want a success without arguments", tc.name, err, ev.Kind, ev.Args)
		}
	}
}

// Codex CLI's failures come from its transcript, with the arguments the call had.
func TestCodexTranscriptArgs(t *testing.T) {
	line := `{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"McpToolCall","id":"c1","server":"e2e","tool":"read","arguments":` +
		quote(argsCompact) + `,"status":"failed","error":{"message":"ENOENT: no such file or directory, open 'docs/INSTALL.md'"}}}}`
	f, ok := parseCodexFailure([]byte(line))
	if !ok {
		t.Fatal("the failure is not read")
	}
	if want := failure.ArgsFromJSON([]byte(argsCompact)); !reflect.DeepEqual(failureArgs(gate.Failure, f.Args), want) {
		t.Errorf("args %v, want %v", f.Args, want)
	}
}

// Arguments of any size are kept within bounds, in the pass that hashes them: every string cut
// to maxArgRaw bytes where an escape or a character ends (and its value to failure.MaxArgValue),
// so that a value after a whole file is still kept, and the whole cut to maxArgsKept; the hash is
// the one the pre-call computes.
func TestArgsBounded(t *testing.T) {
	// A long value made of escapes and multi-byte characters, so that a cut can fall inside either.
	long := strings.Repeat(`\u00e9x\"é😀\\`, 40_000)
	cases := []struct {
		name, args string
		// want are the keys whose values must be kept (in order); clipped those cut.
		want    []string
		clipped map[string]bool
	}{
		{"a file, then the path", `{"content":"` + long + `","path":"/etc/shadow"}`, []string{"content", "path"}, map[string]bool{"content": true}},
		{"a long key", `{"` + strings.Repeat("k", 5000) + `":"v","path":"/srv/x"}`, []string{strings.Repeat("k", maxArgRaw), "path"}, nil},
		{"many values", `{"a":[` + strings.Repeat(`"0123456789",`, 20_000) + `"z"],"path":"/srv/x"}`, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := `{"hook_event_name":"PostToolUseFailure","tool_name":"mcp__fix__write","tool_input":` + tc.args + `,"error":"EACCES"}`
			ev, _, err := decodeAll(t, Claude, in)
			if err != nil {
				t.Fatal(err)
			}
			var h, raw string
			if err := newDecoder(strings.NewReader(tc.args)).argsInto(&h, &raw, true); err != nil || len(raw) > maxArgsKept {
				t.Fatalf("kept %d bytes (%v), at most %d", len(raw), err, maxArgsKept)
			}
			if ev.ArgsHash != hashOf(tc.args) {
				t.Errorf("hash %s, the arguments' %s", ev.ArgsHash, hashOf(tc.args))
			}
			if len(ev.Args) == 0 || len(ev.Args) > failure.MaxArgs {
				t.Fatalf("%d values kept", len(ev.Args))
			}
			var full map[string]any
			if err := json.Unmarshal([]byte(tc.args), &full); err != nil {
				t.Fatal(err)
			}
			for i, k := range tc.want {
				a := ev.Args[i]
				if a.Key != k {
					t.Fatalf("value %d under %.20q, want %.20q", i, a.Key, k)
				}
				if !utf8.ValidString(a.Value) || len(a.Value) > failure.MaxArgValue {
					t.Errorf("%s: %d bytes, valid UTF-8 %v", k, len(a.Value), utf8.ValidString(a.Value))
				}
				whole, ok := full[k].(string)
				for fk, fv := range full {
					if !ok && strings.HasPrefix(fk, k) {
						whole, _ = fv.(string) // a key cut as a value is
					}
				}
				if !strings.HasPrefix(whole, a.Value) || tc.clipped[k] != (a.Value != whole) {
					t.Errorf("%s: kept %.40q…, not the start of %.40q… (clipped %v)", k, a.Value, whole, tc.clipped[k])
				}
				if tc.clipped[k] && len(a.Value) < failure.MaxArgValue-utf8.UTFMax-6 {
					t.Errorf("%s: only %d bytes kept", k, len(a.Value))
				}
			}
		})
	}
}

// Arguments sent as a JSON string longer than maxArgsText give the whole values their text starts
// with (a value cut there is left out, as ArgsFromJSON leaves out what does not parse).
func TestArgsLongString(t *testing.T) {
	args := `{"path":"/srv/data/a.csv","body":"` + strings.Repeat("é", maxArgsText) + `"}`
	in := `{"sessionId":"s","cwd":"/p","toolName":"e2e-fail","toolArgs":` + quote(args) + `,"error":"boom"}`
	ev, _, err := decodeAll(t, Copilot.(eventBound).ForEvent("postToolUseFailure"), in)
	if err != nil {
		t.Fatal(err)
	}
	if len(ev.Args) != 1 || ev.Args[0] != (failure.Arg{Key: "path", Value: "/srv/data/a.csv"}) {
		t.Errorf("args %.200v", ev.Args)
	}
}

// The kept arguments are JSON for every cut: each prefix of a long string value, cut by leafMax,
// still decodes, and to the start of the value.
func TestArgsCutAnywhere(t *testing.T) {
	value := `a\u00e9\"b\\c😀d\ud83d\ude00e`
	var whole string
	if err := json.Unmarshal([]byte(`"`+value+`"`), &whole); err != nil {
		t.Fatal(err)
	}
	for n := 0; n <= len(value)+1; n++ {
		d := newDecoder(strings.NewReader(`{"k":"` + value + `"}`))
		d.capture, d.keepMax, d.leafMax = true, maxArgsKept, n
		if n == 0 {
			d.leafMax = 1 << 20
		}
		if _, err := d.hashValue(); err != nil {
			t.Fatal(err)
		}
		var got map[string]string
		if err := json.Unmarshal(d.raw, &got); err != nil {
			t.Fatalf("cut at %d: %s is not JSON: %v", n, d.raw, err)
		}
		if !strings.HasPrefix(whole, got["k"]) {
			t.Errorf("cut at %d: %q is not the start of %q", n, got["k"], whole)
		}
	}
}
