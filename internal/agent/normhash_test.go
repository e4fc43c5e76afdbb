package agent

import (
	"strings"
	"testing"
)

// TestNearDuplicates: arguments a person would call the same call hash alike, and arguments that
// only look alike (another path, id, SHA, file name or camelCase name) hash apart (docs/circuits.md,
// "Near-duplicates"). Every example of the docs is here.
func TestNearDuplicates(t *testing.T) {
	hash := func(s string) string {
		t.Helper()
		h, err := HashArgs([]byte(s))
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		return h
	}
	for _, tc := range []struct {
		name string
		a, b string
		same bool
	}{
		{"key order", `{"query":"refund policy","limit":10}`, `{"limit":10,"query":"refund policy"}`, true},
		{"nested key order", `{"filter":{"state":"open","label":"bug"}}`, `{"filter":{"label":"bug","state":"open"}}`, true},
		{"white space runs", `{"query":"refund   policy"}`, `{"query":"refund policy"}`, true},
		{"white space around", `{"query":"  refund policy\n"}`, `{"query":"refund policy"}`, true},
		{"tabs and newlines", `{"query":"refund\tpolicy"}`, `{"query":"refund\npolicy"}`, true},
		{"letter case of words", `{"query":"Refund Policy"}`, `{"query":"refund policy"}`, true},
		{"one word", `{"label":"Bug"}`, `{"label":"bug"}`, true},
		{"upper case word", `{"label":"BUG"}`, `{"label":"bug"}`, true},
		{"search syntax is text", `{"q":"is:open Label:bug"}`, `{"q":"is:open label:bug"}`, true},
		{"non-ASCII case", `{"q":"Ärger"}`, `{"q":"ärger"}`, true},
		{"escapes", `{"q":"caf\u00e9"}`, `{"q":"café"}`, true},
		{"an id keeps its case", `{"issue":"PROJ-42"}`, `{"issue":"proj-42"}`, false},
		{"an id is trimmed", `{"issue":" PROJ-42 "}`, `{"issue":"PROJ-42"}`, true},
		{"a SHA keeps its case", `{"sha":"3F2A9C1"}`, `{"sha":"3f2a9c1"}`, false},
		{"a path keeps its case", `{"path":"docs/INSTALL.md"}`, `{"path":"docs/install.md"}`, false},
		{"a path keeps its spaces", `{"path":"My Docs/a b.txt"}`, `{"path":"My Docs/a  b.txt"}`, false},
		{"a URL keeps its case", `{"url":"https://example.com/A"}`, `{"url":"https://example.com/a"}`, false},
		{"a file name keeps its case", `{"file":"README.md"}`, `{"file":"readme.md"}`, false},
		{"a camelCase name keeps its case", `{"symbol":"getUser"}`, `{"symbol":"getuser"}`, false},
		{"another path", `{"path":"docs/INSTALL.md"}`, `{"path":"docs/SETUP.md"}`, false},
		{"another id", `{"issue":"PROJ-42"}`, `{"issue":"PROJ-43"}`, false},
		{"keys keep their case", `{"Query":"x"}`, `{"query":"x"}`, false},
		{"array order counts", `{"ids":[1,2]}`, `{"ids":[2,1]}`, false},
		{"a number is not its string", `{"n":1}`, `{"n":"1"}`, false},
		{"a value moved to another key", `{"a":"x","b":"y"}`, `{"a":"y","b":"x"}`, false},
		{"words apart", `{"query":"refund policy"}`, `{"query":"refund"}`, false},
		{"a blank is not nothing", `{"query":"ab"}`, `{"query":"a b"}`, false},
		{"an empty object is not an empty array", `{}`, `[]`, false},
		{"one more member", `{"a":1}`, `{"a":1,"b":null}`, false},
		{"a duplicated member", `{"a":1}`, `{"a":1,"a":1}`, false},
	} {
		if got := hash(tc.a) == hash(tc.b); got != tc.same {
			t.Errorf("%s: %s and %s hash alike: %v, want %v", tc.name, tc.a, tc.b, got, tc.same)
		}
	}
}

// The hash reads its input once, a byte at a time: a string longer than its white-space buffer, a
// deep nesting and a value cut short all end in an answer, never a panic.
func TestNormHashEdges(t *testing.T) {
	long := `{"q":"a` + strings.Repeat(" ", 200) + `b"}`
	short := `{"q":"a b"}`
	h1, err1 := HashArgs([]byte(long))
	h2, err2 := HashArgs([]byte(short))
	if err1 != nil || err2 != nil || h1 != h2 {
		t.Errorf("a long run of blanks in text: %s %s (%v %v)", h1, h2, err1, err2)
	}
	if p1, _ := HashArgs([]byte(`{"p":"a/` + strings.Repeat(" ", 200) + `b"}`)); p1 == h1 {
		t.Error("a path hashes like text")
	}
	deep := strings.Repeat("[", 10000) + strings.Repeat("]", 10000)
	if _, err := HashArgs([]byte(deep)); err != nil {
		t.Errorf("deep nesting: %v", err)
	}
	for _, bad := range []string{`{"q":"\ud83d"}`, `{"q":"\udc00x"}`, `{"q":"\ud83d\ude00"}`, "{\"q\":\"\xff\"}"} {
		HashArgs([]byte(bad)) // lone surrogates and bad UTF-8 hash as U+FFFD, without a panic
	}
}

// The fast path for runs of plain ASCII hashes as the byte-at-a-time one does.
func TestNormHashFastPath(t *testing.T) {
	inputs := []string{
		`{"q":"Refund   Policy ","p":"docs/A b.md","id":"PROJ-42","c":"getUser","w":"Bug"}`,
		`["  a\tb  ","x\u00e9Y","` + strings.Repeat("Ab c/", 40) + `",{"k":"` + strings.Repeat(" ", 100) + `z"}]`,
		`{"t":"caf\u00e9 CAFÉ naïve\nx","n":[1,2.5e3,true,null],"e":""}`,
	}
	for _, in := range inputs {
		var fast, slow normHash
		fast.reset(newCRCTable())
		slow.reset(newCRCTable())
		fast.write([]byte(in))
		for _, c := range []byte(in) {
			slow.byte(c)
		}
		if f, s := fast.sum(), slow.sum(); f != s {
			t.Errorf("%.60s: fast %s, byte by byte %s", in, f, s)
		}
	}
}
