package agent

import (
	"bytes"
	"encoding/json"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"hash/crc64"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
)

// argsOf reads the object in data and returns the captured bytes of its "tool_input" and the value
// of its "n", through skipInto and numberInto.
func argsOf(data []byte, oneByte bool) (args []byte, n float64, err error) {
	var r = bytes.NewReader(data)
	d := newDecoder(r)
	if oneByte {
		d = newDecoder(iotest.OneByteReader(r))
	}
	var buf bytes.Buffer
	err = d.object(func(key string) error {
		switch key {
		case "tool_input":
			buf.Reset()
			return d.skipInto(&buf)
		case "n":
			return d.numberInto(&n)
		}
		return d.skip()
	})
	return buf.Bytes(), n, err
}

func TestSkipIntoAndNumber(t *testing.T) {
	big := strings.Repeat("x", 200<<10)
	for _, in := range []string{
		`{"tool_input":{"a" : [1, 2.5e3 ,true,false,null, {"b":"c d\"}"}] },"n":19}`,
		"{\"n\" : -0.25 ,\"tool_input\" :\n[ ]\t}",
		`{"tool_input":"` + big + `","n":"not a number"}`,
		`{"tool_input":{"k":"` + big + `","l":[` + strings.Repeat(`{"m":1},`, 5000) + `0]}}`,
		`{"tool_input":"\u00e9\\\"","n":null}`,
	} {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(in), &m); err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if raw, ok := m["tool_input"]; ok {
			json.Compact(&want, raw)
		}
		var wantN float64
		json.Unmarshal(m["n"], &wantN)
		for _, oneByte := range []bool{false, true} {
			got, n, err := argsOf([]byte(in), oneByte)
			if err != nil {
				t.Fatalf("%.60q: %v", in, err)
			}
			if !bytes.Equal(got, want.Bytes()) || n != wantN {
				t.Errorf("%.60q (one byte %v): got %.80q, %v; want %.80q, %v", in, oneByte, got, n, want.Bytes(), wantN)
			}
		}
	}
}

// FuzzSkipInto checks that what skipInto captures is the value as encoding/json compacts it, and
// that numberInto reads what encoding/json reads.
func FuzzSkipInto(f *testing.F) {
	f.Add([]byte(`{"tool_input":{"a" : [1, 2.5e3 ,true,false,null]},"n":19}`))
	f.Add([]byte(`{"tool_input":" \" ","n":-1e-3}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, n, err := argsOf(data, false)
		var m map[string]json.RawMessage
		if err != nil || json.Unmarshal(data, &m) != nil {
			return
		}
		if raw, ok := m["tool_input"]; ok {
			var want bytes.Buffer
			json.Compact(&want, raw)
			if !bytes.Equal(got, want.Bytes()) {
				t.Errorf("skipInto %q, json.Compact %q", got, want.Bytes())
			}
		}
		var wantN float64
		if json.Unmarshal(m["n"], &wantN) == nil && n != wantN {
			t.Errorf("numberInto %v, encoding/json %v", n, wantN)
		}
	})
}

// TestCRCTableIsHashCRC64: the decoder's own table computes CRC-64 (ECMA) as hash/crc64 does,
// in one call or byte by byte, so call hashes recorded before it still match.
func TestCRCTableIsHashCRC64(t *testing.T) {
	tab := newCRCTable()
	ecma := crc64.MakeTable(crc64.ECMA)
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 300 {
		p := make([]byte, n*7)
		for i := range p {
			p[i] = byte(r.UintN(256))
		}
		if got, want := tab.update(0, p), crc64.Checksum(p, ecma); got != want {
			t.Fatalf("%d bytes: %x, hash/crc64 says %x", len(p), got, want)
		}
		var inc uint64
		for i := range p {
			inc = tab.update(inc, p[i:i+1])
		}
		if want := crc64.Checksum(p, ecma); inc != want {
			t.Fatalf("%d bytes one at a time: %x, hash/crc64 says %x", len(p), inc, want)
		}
	}
}

func TestWholeObject(t *testing.T) {
	for raw, want := range map[string]bool{
		`{}`: true, " {\"a\":[1,{\"b\":\"}\"}]}\n": true, `{"a":"\"}"}`: true,
		`{"a":1`: false, `{"a":"}`: false, `{}{}`: false, `{} x`: false, `[]`: false, ``: false,
		`{"a":[}`: false, `{"a":1}}`: false, `{"tool_name":"Bash","tool_input":{"command":"echo {"}}`: true,
	} {
		if got := wholeObject([]byte(raw)); got != want {
			t.Errorf("wholeObject(%q) = %v, want %v", raw, got, want)
		}
	}
}

// FuzzClaudeSkips: an event the claude codec skips unread is one its decoder reads as about no
// MCP tool and not a SessionStart, or cannot read at all (then the gate allows it too).
func FuzzClaudeSkips(f *testing.F) {
	for _, s := range []string{
		`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"}}`,
		`{"hook_event_name":"PreToolUse","tool_name":"mcp__gh__get","tool_input":{}}`,
		`{"hook_event_name":"PreToolUse","tool_name":"mcp\u005f_gh__get","tool_input":{}}`,
		`{"hook_event_name":"SessionStart","source":"startup"}`,
		`{"hook_event_name":"PreToolUse","tool_name":"runInTerminal","tool_input":{"x":"mcp_"}}`,
		`{"hook_event_name":"PreToolUse","tool_name":"Read"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !Claude.(claude).Skips(raw) {
			return
		}
		ev, err := Claude.Decode(bytes.NewReader(raw), nil, nil)
		if err == nil && (ev.Kind == gate.SessionStart || ledger.Key(ev.Key).IsMCP()) {
			t.Fatalf("skipped %q, which decodes to %+v", raw, ev)
		}
	})
}
