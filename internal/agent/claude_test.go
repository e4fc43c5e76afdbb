package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
	"unicode/utf8"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/mcpconfig"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// readers are the ways a test feeds an input: all at once (bufio fills 64 KB at a time) and one byte
// per Read call (every buffer refill happens between two bytes, so escapes straddle refills).
var readers = []struct {
	name string
	wrap func(io.Reader) io.Reader
}{
	{"whole", func(r io.Reader) io.Reader { return r }},
	{"onebyte", iotest.OneByteReader},
	{"half", iotest.HalfReader},
}

// read is readClaude without the early notice.
func read(r io.Reader) (claudeEvent, error) { return readClaude(r, nil) }

// readAll runs read over every reader and checks that they agree.
func readAll(t *testing.T, in string) (claudeEvent, error) {
	t.Helper()
	var first claudeEvent
	var firstErr error
	for i, rd := range readers {
		ev, err := read(rd.wrap(strings.NewReader(in)))
		if i == 0 {
			first, firstErr = ev, err
			continue
		}
		if fmt.Sprint(err) != fmt.Sprint(firstErr) || (err == nil && ev != first) {
			t.Fatalf("reader %s: got %+v, %v; reader %s got %+v, %v", rd.name, ev, err, readers[0].name, first, firstErr)
		}
	}
	return first, firstErr
}

// The real payloads Claude Code sends (docs/hook.md).
const (
	realPre = `{"session_id":"64f49569-0000","transcript_path":"/x/.claude/projects/-path-to-proj/64f49569.jsonl",
 "cwd":"/path/to/proj","prompt_id":"bdd4ed94-0000","permission_mode":"default",
 "hook_event_name":"PreToolUse","tool_name":"mcp__probe__echo","tool_input":{"text":"par-a"},
 "tool_use_id":"toolu_00_0_103144","mcp_server":{"name":"probe","source":"dynamic"}}`
	realPost = `{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"mcp__probe__echo","tool_input":{"text":"par-a"},
 "tool_response":[{"type":"text","text":"echo:par-a"}],"tool_use_id":"toolu_00_0_103144",
 "duration_ms":19,"mcp_server":{"name":"probe","source":"dynamic"}}`
	realFailure = `{"session_id":"s","hook_event_name":"PostToolUseFailure","tool_name":"mcp__probe__fail","tool_input":{},
 "tool_use_id":"toolu_01_0_c9ae6e","error":"upstream said: quota exceeded","is_interrupt":false,
 "duration_ms":4,"mcp_server":{"name":"probe","source":"dynamic"}}`
	realStart = `{"session_id":"s","transcript_path":"/t.jsonl","cwd":"/p","hook_event_name":"SessionStart","source":"compact"}`
)

var readCases = []struct {
	name string
	in   string
	want claudeEvent
}{
	{"real PreToolUse", realPre, claudeEvent{Name: "PreToolUse", SessionID: "64f49569-0000", Cwd: "/path/to/proj",
		TranscriptPath: "/x/.claude/projects/-path-to-proj/64f49569.jsonl",
		ToolName:       "mcp__probe__echo", ToolUseID: "toolu_00_0_103144", MCPServer: "probe"}},
	{"real PostToolUse", realPost, claudeEvent{Name: "PostToolUse", SessionID: "s", ToolName: "mcp__probe__echo",
		ToolUseID: "toolu_00_0_103144", MCPServer: "probe", DurationMS: 19}},
	{"real PostToolUseFailure", realFailure, claudeEvent{Name: "PostToolUseFailure", SessionID: "s", ToolName: "mcp__probe__fail",
		ToolUseID: "toolu_01_0_c9ae6e", Error: "upstream said: quota exceeded", MCPServer: "probe", DurationMS: 4, InputArgs: "{}"}},
	{"interrupt after 45 s", `{"hook_event_name":"PostToolUseFailure","tool_name":"mcp__a__b","is_interrupt":true,"duration_ms":45000}`,
		claudeEvent{Name: "PostToolUseFailure", ToolName: "mcp__a__b", IsInterrupt: true, DurationMS: 45000}},
	{"duration not a whole number", `{"duration_ms":1.5e3,"tool_name":"mcp__a__b","duration_ms":"7"}`, claudeEvent{ToolName: "mcp__a__b"}},
	{"negative duration", `{"duration_ms":-5,"tool_name":"mcp__a__b"}`, claudeEvent{ToolName: "mcp__a__b"}},
	{"real SessionStart", realStart, claudeEvent{Name: "SessionStart", SessionID: "s", Cwd: "/p", TranscriptPath: "/t.jsonl", Source: "compact"}},

	// Field order: the decoder must not depend on it.
	{"order: mcp_server first", `{"mcp_server":{"source":"user","name":"gh"},"tool_name":"mcp__gh__x","hook_event_name":"PreToolUse"}`,
		claudeEvent{Name: "PreToolUse", ToolName: "mcp__gh__x", MCPServer: "gh"}},
	{"order: tool_input last", `{"hook_event_name":"PreToolUse","tool_name":"mcp__a__b","tool_input":{"x":[1,{"y":"}"}]}}`,
		claudeEvent{Name: "PreToolUse", ToolName: "mcp__a__b"}},
	{"order: error before name", `{"is_interrupt":true,"error":"Request was aborted.","tool_name":"mcp__a__b","hook_event_name":"PostToolUseFailure"}`,
		claudeEvent{Name: "PostToolUseFailure", ToolName: "mcp__a__b", Error: "Request was aborted.", IsInterrupt: true}},
	{"white space everywhere", " \r\n\t{ \"hook_event_name\" \t:\r\n \"Stop\" , \"tool_input\" : { } , \"is_interrupt\" : false }\n",
		claudeEvent{Name: "Stop"}},
	{"empty object", `{}`, claudeEvent{}},
	{"trailing data after the object is not read", `{"tool_name":"mcp__a__b"} garbage`, claudeEvent{ToolName: "mcp__a__b"}},

	// Escapes, decoded exactly as encoding/json does.
	{"escaped quote and backslash", `{"error":"say \"hi\" \\ \\\" \/ \b\f\n\r\t"}`, claudeEvent{Error: "say \"hi\" \\ \\\" / \b\f\n\r\t"}},
	{"unicode escapes", `{"tool_name":"mcp__a\u005f_b","error":"caf\u00e9 \u4e16"}`, claudeEvent{ToolName: "mcp__a__b", Error: "café 世"}},
	{"surrogate pair", `{"error":"\ud83d\ude00 ok"}`, claudeEvent{Error: "😀 ok"}},
	{"lone surrogate", `{"error":"\ud83d x"}`, claudeEvent{Error: "\ufffd x"}},
	{"escaped key", `{"tool\u005fname":"mcp__a__b","hook_event_name":"PreToolUse"}`, claudeEvent{Name: "PreToolUse", ToolName: "mcp__a__b"}},
	{"raw UTF-8", `{"error":"échec — 接続"}`, claudeEvent{Error: "échec — 接続"}},
	// Before hook_event_name, tool_input is kept (the event may be a failure), as it was written.
	{"escapes in skipped values", `{"tool_input":{"a\"}":"\"}\\","b":["\\\"",{"c":"\u007d"}]},"tool_name":"mcp__a__b"}`,
		claudeEvent{ToolName: "mcp__a__b", InputArgs: `{"a\"}":"\"}\\","b":["\\\"",{"c":"\u007d"}]}`}},
	{"brackets and quotes inside a skipped string", `{"tool_input":{"content":"abc\"def\\ghi {[ \"x\": 1 ]} "},"tool_use_id":"t"}`,
		claudeEvent{ToolUseID: "t", InputArgs: `{"content":"abc\"def\\ghi {[ \"x\": 1 ]} "}`}},

	// Null values leave the field empty; fields of another type are skipped, not fatal.
	{"nulls", `{"hook_event_name":null,"tool_name":null,"error":null,"is_interrupt":null,"mcp_server":null,"source":null}`, claudeEvent{}},
	{"null name in mcp_server", `{"mcp_server":{"name":null},"tool_name":"mcp__a__b"}`, claudeEvent{ToolName: "mcp__a__b"}},
	{"wrong types", `{"tool_name":123,"hook_event_name":["PreToolUse"],"is_interrupt":"true","error":{"message":"x"},"session_id":false,"cwd":-1.5e3,"tool_use_id":"u"}`,
		claudeEvent{ToolUseID: "u"}},
	{"mcp_server not an object", `{"mcp_server":"probe","tool_name":"mcp__a__b"}`, claudeEvent{ToolName: "mcp__a__b"}},
	{"mcp_server name not a string", `{"mcp_server":{"name":{"x":1},"source":"user"},"tool_name":"mcp__a__b"}`, claudeEvent{ToolName: "mcp__a__b"}},

	// Repeated keys: the last one wins, as in JSON.parse (Claude Code) and encoding/json.
	{"repeated key", `{"tool_name":"mcp__a__b","tool_name":"mcp__c__d"}`, claudeEvent{ToolName: "mcp__c__d"}},
	{"repeated mcp_server", `{"mcp_server":{"name":"a"},"mcp_server":{"source":"user"}}`, claudeEvent{}},
	{"repeated key of another type", `{"tool_name":"mcp__a__b","tool_name":7,"is_interrupt":true,"is_interrupt":"no"}`, claudeEvent{}},
	{"huge number", `{"a":1e999999,"tool_name":"mcp__a__b"}`, claudeEvent{ToolName: "mcp__a__b"}},

	// Numbers and literals in skipped values.
	{"numbers", `{"duration_ms":0,"a":-0.5,"b":1e10,"c":2E-3,"d":[1,-2,3.25e+2],"tool_name":"mcp__a__b"}`, claudeEvent{ToolName: "mcp__a__b"}},
	{"duration in exponent form", `{"duration_ms":12.5e1,"tool_name":"mcp__a__b"}`, claudeEvent{ToolName: "mcp__a__b"}}, // only whole milliseconds count (intInto)
	{"duration of another type", `{"duration_ms":"19","tool_name":"mcp__a__b"}`, claudeEvent{ToolName: "mcp__a__b"}},
	{"literals", `{"a":true,"b":false,"c":null,"d":[true,false,null],"is_interrupt":true}`, claudeEvent{IsInterrupt: true}},
}

func TestRead(t *testing.T) {
	for _, c := range readCases {
		t.Run(c.name, func(t *testing.T) {
			got, err := readAll(t, c.in)
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			if (got.InputHash != "") != strings.Contains(c.in, `"tool_input"`) {
				t.Errorf("input hash %q of %s", got.InputHash, c.in)
			}
			got.InputHash = "" // TestReadInputHash
			if got != c.want {
				t.Errorf("Read:\n got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestReadMalformed(t *testing.T) {
	cases := []struct {
		name, in string
		at       int // the offset in the message: bytes consumed, the bad one included
	}{
		{"empty", ``, 0},
		{"white space only", " \n", 2},
		{"not JSON", `not json`, 1},
		{"array", `[{"tool_name":"mcp__a__b"}]`, 1},
		{"string", `"PreToolUse"`, 1},
		{"truncated in a key", `{"tool_na`, 9},
		{"truncated after a colon", `{"tool_name":`, 13},
		{"truncated in a skipped string", `{"tool_input":{"content":"abc`, 29},
		{"truncated in a kept string", `{"error":"abc`, 13},
		{"truncated in nesting", `{"tool_input":[[[`, 17},
		{"trailing comma", `{"a":1,}`, 8},
		{"missing colon", `{"a" 1}`, 6},
		{"missing comma", `{"a":1 "b":2}`, 8},
		{"key not a string", `{a:1}`, 2},
		{"bad literal", `{"a":tru}`, 9},
		{"bad literal in a kept field", `{"is_interrupt":ture}`, 18},
		{"leading zero", `{"a":01}`, 7},
		{"bare minus", `{"a":-}`, 7},
		{"dot without digits", `{"a":1.}`, 8},
		{"exponent without digits", `{"a":1e}`, 8},
		{"plus sign", `{"a":+1}`, 6},
		{"leading dot", `{"a":.5}`, 6},
		{"array trailing comma", `{"a":[1,]}`, 9},
		{"array missing comma", `{"a":[1 2]}`, 9},
		{"object value without key", `{"a":{"b"}}`, 10},
		{"mismatched brackets", `{"a":{]}`, 7},
		{"mismatched close", `{"a":[1}`, 8},
		{"invalid escape in a skipped string", `{"a":"\x"}`, 8},
		{"invalid escape in a kept string", `{"tool_name":"\x"}`, 16},
		{"bad hex in a skipped string", `{"a":"\u12G4"}`, 11},
		{"bad hex in a kept string", `{"error":"\u12G4"}`, 15},
		{"control character in a skipped string", "{\"a\":\"x\x01\"}", 8},
		{"control character in a kept string", "{\"error\":\"x\ny\"}", 12},
		{"unescaped quote in a skipped string", `{"tool_input":{"content":"a {[ "x": 1 ]} "},"tool_use_id":"t"}`, 33},
		{"mcp_server truncated", `{"mcp_server":{"name":"p"`, 25},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := readAll(t, c.in)
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("read(%q) = %v, want ErrMalformed", c.in, err)
			}
			if want := fmt.Sprintf("at byte %d:", c.at); !strings.Contains(err.Error(), want) {
				t.Errorf("read(%q) = %q, want it to say %q", c.in, err, want)
			}
		})
	}
}

// TestReadBufferBoundaries puts escapes, in a skipped value and in a kept one, at every position
// around the 64 KB refill of the reader's buffer.
func TestReadBufferBoundaries(t *testing.T) {
	const bufSize = 64 << 10
	tails := []string{`\"`, `\\`, `\\\"`, `\"\\`, `\u00e9`, `\ud83d\ude00`, `é`, `😀`}
	for _, tail := range tails {
		for shift := -14; shift <= 2; shift++ {
			// Skipped: the escape sits in tool_input's string across the refill.
			prefix := `{"tool_input":{"content":"`
			pad := strings.Repeat("a", bufSize+shift-len(prefix))
			in := prefix + pad + tail + `x"},"tool_name":"mcp__a__b","error":"e\"` + tail + `"}`
			var want string
			if err := json.Unmarshal([]byte(`"e\"`+tail+`"`), &want); err != nil {
				t.Fatal(err)
			}
			ev, err := readAll(t, in)
			if err != nil || ev.ToolName != "mcp__a__b" || ev.Error != want {
				t.Fatalf("skipped %s at %d: got %+v, %v", tail, shift, ev, err)
			}
			// Kept: the escape sits in error's string across the refill.
			prefix = `{"tool_name":"mcp__a__b","error":"`
			pad = strings.Repeat("a", bufSize+shift-len(prefix))
			in = prefix + pad + tail + `"}`
			if err := json.Unmarshal([]byte(`"`+pad+tail+`"`), &want); err != nil {
				t.Fatal(err)
			}
			ev, err = readAll(t, in)
			if err != nil || ev.ToolName != "mcp__a__b" || ev.Error != want {
				t.Fatalf("kept %s at %d: got tool %q error …%q, %v", tail, shift, ev.ToolName, last(ev.Error, 20), err)
			}
		}
	}
}

func last(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

func TestReadLongValues(t *testing.T) {
	t.Run("tool_input of 3 MB", func(t *testing.T) {
		in := `{"tool_name":"mcp__a__b","tool_input":{"content":"` + strings.Repeat(`x\"y\\z `, 3<<20/8) + `"},"tool_use_id":"t"}`
		ev, err := readAll(t, in)
		if err != nil || ev.ToolName != "mcp__a__b" || ev.ToolUseID != "t" {
			t.Fatalf("got %+v, %v", ev, err)
		}
	})
	t.Run("error of 64 KB exactly is kept whole", func(t *testing.T) {
		e := strings.Repeat("e", maxError)
		ev, err := readAll(t, `{"error":"`+e+`","tool_name":"mcp__a__b"}`)
		if err != nil || ev.Error != e || ev.ToolName != "mcp__a__b" {
			t.Fatalf("got %d bytes, tool %q, %v", len(ev.Error), ev.ToolName, err)
		}
	})
	cut := []struct {
		name, value, want string
	}{
		{"one byte over", strings.Repeat("e", maxError+1), strings.Repeat("e", maxError)},
		{"1 MB", strings.Repeat("e", 1<<20), strings.Repeat("e", maxError)},
		// Cut inside a two-byte character: the partial character is dropped, not turned into U+FFFD.
		{"inside a character", "x" + strings.Repeat("é", maxError), "x" + strings.Repeat("é", maxError/2-1)},
		// Cut between the halves of a surrogate pair: the lone half is dropped.
		{"inside a surrogate pair", strings.Repeat("e", maxError-6) + `\ud83d\ude00zz`, strings.Repeat("e", maxError-6)},
		// An escape is kept whole or not at all.
		{"inside an escape", strings.Repeat("e", maxError-1) + `\"zz`, strings.Repeat("e", maxError-1)},
		{"escape just fits", strings.Repeat("e", maxError-2) + `\"zz`, strings.Repeat("e", maxError-2) + `"`},
	}
	for _, c := range cut {
		t.Run("error cut: "+c.name, func(t *testing.T) {
			ev, err := readAll(t, `{"error":"`+c.value+`","tool_name":"mcp__a__b"}`)
			if err != nil {
				t.Fatal(err)
			}
			if want := c.want + "…"; ev.Error != want {
				t.Errorf("error: got %d bytes ending %q, want %d bytes ending %q", len(ev.Error), last(ev.Error, 12), len(want), last(want, 12))
			}
			if !utf8.ValidString(ev.Error) || strings.ContainsRune(ev.Error, utf8.RuneError) {
				t.Errorf("error is not clean UTF-8: ends %q", last(ev.Error, 12))
			}
			if ev.ToolName != "mcp__a__b" {
				t.Errorf("the field after the cut one was lost: %+v", ev.ToolName)
			}
		})
	}
	t.Run("long tool_name is cut too", func(t *testing.T) {
		ev, err := readAll(t, `{"tool_name":"mcp__a__`+strings.Repeat("b", 5000)+`","error":"x"}`)
		if err != nil || len(ev.ToolName) != maxName+len("…") || ev.Error != "x" {
			t.Fatalf("got %d bytes, error %q, %v", len(ev.ToolName), ev.Error, err)
		}
	})
}

// nested returns an event whose tool_input nests objects and arrays depth levels deep.
func nested(depth int) string {
	var b strings.Builder
	b.WriteString(`{"hook_event_name":"PreToolUse","tool_input":`)
	for i := 0; i < depth; i++ {
		if i%2 == 0 {
			b.WriteString(`{"k":`)
		} else {
			b.WriteString(`[1,"]",`)
		}
	}
	b.WriteString(`null`)
	for i := depth - 1; i >= 0; i-- {
		if i%2 == 0 {
			b.WriteString(`}`)
		} else {
			b.WriteString(`]`)
		}
	}
	b.WriteString(`,"tool_name":"mcp__deep__t"}`)
	return b.String()
}

func TestReadDeepNesting(t *testing.T) {
	// 9,999 levels in tool_input make the event 10,000 deep: the most encoding/json accepts.
	var ref map[string]any
	if err := json.Unmarshal([]byte(nested(9999)), &ref); err != nil {
		t.Fatalf("the input is not valid JSON: %v", err)
	}
	for _, depth := range []int{9999, 10000, 100000} {
		ev, err := readAll(t, nested(depth))
		if err != nil || ev.Name != "PreToolUse" || ev.ToolName != "mcp__deep__t" {
			t.Fatalf("depth %d: got %+v, %v", depth, ev, err)
		}
	}
	// A million levels with one bracket missing: an error, not a crash.
	deep := `{"tool_input":` + strings.Repeat("[", 1<<20) + strings.Repeat("]", 1<<20-1) + `,"tool_name":"x"}`
	if _, err := read(strings.NewReader(deep)); !errors.Is(err, ErrMalformed) {
		t.Fatalf("unbalanced 1M-deep input: %v, want ErrMalformed", err)
	}
}

// errReader fails after its data.
type errReader struct {
	data []byte
	err  error
}

func (r *errReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestReadReaderError(t *testing.T) {
	boom := errors.New("boom")
	for _, in := range []string{``, `{"tool_name":"mcp`, `{"tool_input":"abc`, `{"tool_input":[1,2`} {
		_, err := read(&errReader{data: []byte(in), err: boom})
		if !errors.Is(err, boom) || errors.Is(err, ErrMalformed) {
			t.Errorf("read(%q then an error) = %v, want the reader's error", in, err)
		}
	}
}

// FuzzRead checks that Read never panics or hangs, that it accepts exactly the inputs that start
// with a JSON object encoding/json accepts, that the fields it returns are what encoding/json
// decodes, and that it does not depend on how the reader splits the input. Run it with
//
//	go test ./internal/agent -run XXX -fuzz FuzzRead -fuzztime 60s -fuzzminimizetime 5s
//
// (minimising a large new input can otherwise pause the run for up to a minute).
func FuzzRead(f *testing.F) {
	for _, c := range readCases {
		f.Add([]byte(c.in))
	}
	f.Add([]byte(`{"a":[1,]}`))
	f.Add([]byte(`{"error":"\ud83d\ude00\u00e9\"\\","is_interrupt":true}`))
	f.Add([]byte(`{"mcp_server":{"name":"a","name":"b"},"mcp_server":{"name":"c"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		watchdog := time.AfterFunc(10*time.Second, func() { panic(fmt.Sprintf("Read hangs: input %q took more than 10s", data)) })
		defer watchdog.Stop()
		ev, err := read(bytes.NewReader(data))
		ev1, err1 := read(iotest.OneByteReader(bytes.NewReader(data)))
		if fmt.Sprint(err) != fmt.Sprint(err1) || (err == nil && ev != ev1) {
			t.Fatalf("whole and one-byte reads differ: %+v, %v / %+v, %v", ev, err, ev1, err1)
		}
		if err != nil && !errors.Is(err, ErrMalformed) {
			t.Fatalf("error does not wrap ErrMalformed: %v", err)
		}
		var m map[string]any
		jd := json.NewDecoder(bytes.NewReader(data))
		jd.UseNumber() // a number too big for float64 is still valid JSON
		jerr := jd.Decode(&m)
		if jerr != nil && strings.Contains(jerr.Error(), "exceeded max depth") {
			return
		}
		if jerr == nil && m == nil {
			jerr = errors.New("null")
		}
		if (err == nil) != (jerr == nil) {
			t.Fatalf("Read: %v; encoding/json: %v", err, jerr)
		}
		if err != nil {
			return
		}
		str := func(key string, got string, limit int) {
			v, ok := m[key].(string)
			if !ok || 6*len(v) >= limit {
				return
			}
			if got != v {
				t.Errorf("%s: Read %q, encoding/json %q", key, got, v)
			}
		}
		// VS Code's camelCase spellings fill the same fields: each is checked when it is the only one.
		for _, pair := range [][2]string{{"hook_event_name", "hookEventName"}, {"session_id", "sessionId"}} {
			_, a := m[pair[0]]
			_, b := m[pair[1]]
			got := ev.Name
			if pair[0] == "session_id" {
				got = ev.SessionID
			}
			switch {
			case a && !b:
				str(pair[0], got, maxName)
			case b && !a:
				str(pair[1], got, maxName)
			}
		}
		str("cwd", ev.Cwd, 4*maxName)
		str("transcript_path", ev.TranscriptPath, 4*maxName)
		str("tool_name", ev.ToolName, maxName)
		str("tool_use_id", ev.ToolUseID, maxName)
		str("error", ev.Error, maxError)
		str("source", ev.Source, maxName)
		if v, ok := m["duration_ms"].(json.Number); ok {
			// Only a whole, non-negative number of milliseconds is kept (intInto); anything else is 0.
			want := int64(0)
			if n, err := v.Int64(); err == nil && n >= 0 && n < 1<<62 && !strings.ContainsAny(v.String(), ".eE") {
				want = n
			}
			if want != ev.DurationMS {
				t.Errorf("duration_ms: Read %v, encoding/json %v", ev.DurationMS, v)
			}
		}
		if v, ok := m["is_interrupt"].(bool); ok && v != ev.IsInterrupt {
			t.Errorf("is_interrupt: Read %v, encoding/json %v", ev.IsInterrupt, v)
		}
		if ms, ok := m["mcp_server"].(map[string]any); ok {
			if v, ok := ms["name"].(string); ok && 6*len(v) < maxName && v != ev.MCPServer {
				t.Errorf("mcp_server.name: Read %q, encoding/json %q", ev.MCPServer, v)
			}
		}
	})
}

// TestReadInputHash checks the hash of tool_input: the same arguments hash alike however they are
// spaced, however the input arrives, in whatever key order and with whatever escapes; other
// arguments hash apart (normhash_test.go has the near-duplicates).
func TestReadInputHash(t *testing.T) {
	hash := func(input string) string {
		t.Helper()
		ev, err := readAll(t, `{"hook_event_name":"PreToolUse","tool_name":"mcp__a__b","tool_input":`+input+`,"tool_use_id":"t"}`)
		if err != nil {
			t.Fatalf("Read %s: %v", input, err)
		}
		return ev.InputHash
	}
	same := [][]string{
		{`{"path":"docs/INSTALL.md"}`, ` { "path" : "docs/INSTALL.md" } `, "{\n\t\"path\":\r\n\"docs/INSTALL.md\"}"},
		{`[1,[2,{"a":[]}],-3.5e2,true,null]`, `[ 1 , [ 2 , { "a" : [ ] } ] , -3.5e2 , true , null ]`},
		{`{"q":"a b"}`, `{"q" : "a b"}`, `{"q":"a  b"}`},
		{`{"ref":"main","path":"docs/INSTALL.md"}`, `{"path":"docs/INSTALL.md","ref":"main"}`},
		{`{"a":"A"}`, `{"a":"\u0041"}`},
	}
	for _, group := range same {
		for _, in := range group[1:] {
			if hash(in) != hash(group[0]) {
				t.Errorf("%s and %s hash apart", in, group[0])
			}
		}
	}
	distinct := []string{`{"path":"docs/INSTALL.md"}`, `{"path":"docs/SETUP.md"}`, `{"path":"docs/INSTALL.md","ref":"main"}`,
		`{"q":"a b"}`, `{"q":"ab"}`, `[1]`, `[[1]]`, `[11]`, `[1,1]`,
		`{}`, `[]`, `""`, `0`, `null`, `{"a":"A1"}`, `{"a":"a1"}`, `{"b":"A"}`, `["a","b"]`, `["b","a"]`, `1`}
	seen := map[string]string{}
	for _, in := range distinct {
		h := hash(in)
		if other, ok := seen[h]; ok {
			t.Errorf("%s and %s hash alike (%s)", in, other, h)
		}
		seen[h] = in
	}
	// A large input: hashed in constant memory, alike whole and byte by byte (readAll).
	big := `{"content":"` + strings.Repeat("x", 300<<10) + `"}`
	if hash(big) == hash(`{"content":"x"}`) {
		t.Error("a large input hashes like a small one")
	}
}

// TestClaudeAmbiguousServerWithoutName: without mcp_server, a tool name that can be the tool of a
// configured server whose name holds "__" is keyed under that server's own part, so its failures
// never count against the server its name starts with; other tools keep their names.
func TestClaudeAmbiguousServerWithoutName(t *testing.T) {
	servers := func() []mcpconfig.Server {
		return []mcpconfig.Server{{Name: "github"}, {Name: "github__evil"}}
	}
	for tool, want := range map[string]string{
		"mcp__github__evil__y":    "mcp__github_-_evil__y",
		"mcp__github__issues":     "mcp__github__issues",
		"mcp__github__list__open": "mcp__github__list__open",
	} {
		in := `{"hook_event_name":"PostToolUseFailure","tool_name":"` + tool + `","error":"Connection closed"}`
		ev, err := Claude.Decode(strings.NewReader(in), servers, nil)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Key != want {
			t.Errorf("%s: key %s, want %s", tool, ev.Key, want)
		}
	}
}

// VS Code runs the hooks of .claude/settings.json for every tool (it ignores matchers), with its
// common fields in camelCase. Payload: the PreToolUse input of code.visualstudio.com/docs/agents/
// reference/hooks-reference, with the common fields listed in microsoft/vscode-copilot-chat PR 3843
// (timestamp, hookEventName, sessionId, transcript_path, cwd).
const vscodePre = `{"timestamp":"2026-11-29T12:00:00.000Z","hookEventName":"PreToolUse","sessionId":"s-1","transcript_path":"/t.jsonl","cwd":"/p",
 "tool_name":"editFiles","tool_input":{"files":["src/main.ts"]},"tool_use_id":"tool-123"}`

func TestVSCodeEventsAreClaudeEvents(t *testing.T) {
	ev, err := Claude.Decode(strings.NewReader(vscodePre), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Kind != gate.Before || ev.SessionID != "s-1" || ev.Tool != "editFiles" || ev.ToolUseID != "tool-123" {
		t.Errorf("VS Code PreToolUse decoded as %+v", ev)
	}
	// editFiles is not an MCP tool: the gate lets it through at once (internal/gate checks that
	// nothing is read for it).
	if ledger.Key(ev.Key).IsMCP() {
		t.Errorf("key %q of a VS Code tool is an MCP key", ev.Key)
	}
}
