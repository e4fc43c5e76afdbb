package settings

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"testing"
)

// FuzzParse checks the settings parser against encoding/json: a document Parse accepts is valid
// JSON, an unchanged document writes back byte for byte, and installing then removing our hooks
// gives back a document with the same meaning. It never panics.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{}`, ``, `{"a":1}`, `{"hooks":{"PreToolUse":[{"matcher":"mcp__.*","hooks":[{"type":"command","command":"/x/gate","args":["hook"]}]}]}}`,
		"{\n    \"env\": {\"A\": \"b\"},\n    \"hooks\": {}\n}\n", `[1,2]`, `{"a":}`, `{"a":"\u00e9\ud83d\ude00"}`,
	} {
		f.Add(s)
	}
	ours := func(h Handler) bool { return h.Command == "/x/gate" }
	specs := []Spec{{Event: "PreToolUse", Matcher: "mcp__.*", Command: "/x/gate", Args: []string{"hook"}, Timeout: 5}}
	f.Fuzz(func(t *testing.T, data string) {
		doc, err := Parse("settings.json", []byte(data))
		if err != nil {
			return
		}
		if len(bytes.TrimSpace([]byte(data))) > 0 && !json.Valid([]byte(data)) {
			t.Fatalf("Parse accepted invalid JSON %q", data)
		}
		if !doc.Changed() && len(bytes.TrimSpace([]byte(data))) > 0 && !bytes.Equal(bytes.TrimRight(doc.Bytes(), "\n"), bytes.TrimRight([]byte(data), "\n")) {
			t.Fatalf("unchanged document rewritten:\n%q\n%q", data, doc.Bytes())
		}
		if _, err := doc.Ensure(specs, ours); err != nil {
			return // a hooks key of the wrong shape is refused, not repaired
		}
		out := doc.Bytes()
		if !json.Valid(out) {
			t.Fatalf("Ensure wrote invalid JSON from %q:\n%s", data, out)
		}
		again, err := Parse("settings.json", out)
		if err != nil {
			t.Fatalf("Parse of Ensure's output: %v", err)
		}
		again.Remove(ours)
		if !json.Valid(again.Bytes()) && len(bytes.TrimSpace(again.Bytes())) > 0 {
			t.Fatalf("Remove wrote invalid JSON:\n%s", again.Bytes())
		}
	})
}

// FuzzParseJSONC checks JSON with comments against encoding/json on the comment-blanked text: a
// document ParseJSONC accepts is JSON once its comments are blanked, an unchanged one writes back
// byte for byte, and installing our hooks then removing them gives the document back byte for byte
// (every comment in its place). It never panics.
func FuzzParseJSONC(f *testing.F) {
	for _, s := range commented {
		f.Add(s)
	}
	for _, s := range []string{`{}`, `// x` + "\n{}", `{"a":1/**/}`, `{"a":"//"}`, `/* open`, `{"a":1}//`, `{"a":/` + `}`} {
		f.Add(s)
	}
	ours := func(h Handler) bool { return h.Command == "/x/gate" }
	specs := []Spec{{Event: "PreToolUse", Matcher: "mcp__.*", Command: "/x/gate", Args: []string{"hook"}, Timeout: 5}}
	f.Fuzz(func(t *testing.T, data string) {
		doc, err := ParseJSONC("settings.json", []byte(data))
		if err != nil {
			return
		}
		if plain := StripComments([]byte(data)); len(bytes.TrimSpace(plain)) > 0 && !json.Valid(plain) {
			t.Fatalf("ParseJSONC accepted what is not JSON with comments: %q", data)
		}
		if len(bytes.TrimSpace([]byte(data))) > 0 && !bytes.Equal(bytes.TrimRight(doc.Bytes(), "\n"), bytes.TrimRight([]byte(data), "\n")) {
			t.Fatalf("unchanged document rewritten:\n%q\n%q", data, doc.Bytes())
		}
		if _, err := doc.Ensure(specs, ours); err != nil {
			return
		}
		out := doc.Bytes()
		if !json.Valid(StripComments(out)) {
			t.Fatalf("Ensure wrote what is not JSON with comments from %q:\n%s", data, out)
		}
		again, err := ParseJSONC("settings.json", out)
		if err != nil {
			t.Fatalf("ParseJSONC of Ensure's output: %v\n%s", err, out)
		}
		if _, n := again.Remove(ours); n != 1 {
			t.Fatalf("removed %d handlers from\n%s", n, out)
		}
		got := again.Bytes()
		if a, b := commentsOf([]byte(data)), commentsOf(got); !slices.Equal(a, b) {
			t.Fatalf("install then uninstall changed the comments of\n%q\ninto\n%q", data, got)
		}
		var x, y any
		// (An empty "hooks" object install found is removed with our last handler, as in Parse's files.)
		if len(bytes.TrimSpace(StripComments([]byte(data)))) > 0 && !bytes.Contains([]byte(data), []byte(`"hooks"`)) && (json.Unmarshal(StripComments([]byte(data)), &x) != nil || json.Unmarshal(StripComments(got), &y) != nil || !reflect.DeepEqual(x, y)) {
			t.Fatalf("install then uninstall changed the meaning of\n%q\ninto\n%q", data, got)
		}
	})
}

// commentsOf lists the comments of JSON text with comments, in order, each as written.
func commentsOf(data []byte) []string {
	var out []string
	plain := StripComments(data)
	for i := 0; i < len(data); i++ {
		if plain[i] == data[i] || data[i] != '/' {
			continue
		}
		j := i
		for j < len(data) && (plain[j] != data[j] || data[j] == ' ' && plain[j] == ' ' && j > i && inComment(data, plain, i, j)) {
			j++
		}
		out = append(out, string(data[i:j]))
		i = j - 1
	}
	return out
}

// inComment reports whether the blank at j still belongs to the comment that starts at i: a
// comment's own blanks are blanks in both texts, so it ends where the next byte the two agree on
// that is not a blank, or a line end of a // comment, is.
func inComment(data, plain []byte, i, j int) bool {
	for k := j; k < len(data); k++ {
		if data[k] == '\n' && data[i+1] == '/' {
			return false
		}
		if plain[k] != data[k] {
			return true
		}
		if data[k] != ' ' {
			return false
		}
	}
	return false
}
