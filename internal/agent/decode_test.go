package agent

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"testing/iotest"
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
