package settings

import (
	"regexp"
	"strings"
	"testing"
)

// commented are settings files as Gemini CLI and Qwen Code users write them: comments of both
// kinds before, between and after members, inside the hooks object, after the last member and
// around the whole, and a "//" and "/*" inside strings, which are no comments.
var commented = map[string]string{
	"line comments": `// Gemini CLI settings: see https://geminicli.com/docs
{
  // the model I use
  "model": "gemini-3-pro", // pinned
  "ui": { "theme": "GitHub" /* light */ },
  "url": "https://example.com/a//b/*c*/"
  // last line, no member after it
}
// trailing
`,
	"block comment first": `/* team settings */
{
  /*
   * hooks of ours go below
   */
  "hooks": {
    // my own audit hook
    "BeforeTool": [
      {"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "audit.sh"}]} // keep
    ]
  },
  "tools": {"sandbox": false}
}
`,
	"comment after the last value":  "{\n  \"a\": 1 // one\n}\n",
	"one line with a block comment": `{"a": 1 /* x */, "b": [1, 2] /* y */}` + "\n",
	"comment glued to a number":     "{\n  \"a\": 1// glued\n}\n",
}

// TestJSONCEnsureRemoveRestores: install adds the hooks to a file with comments, keeps every
// comment and every other byte, and uninstall gives the file back byte for byte.
func TestJSONCEnsureRemoveRestores(t *testing.T) {
	comment := regexp.MustCompile(`//[^\n]*|/\*(?s:.*?)\*/`)
	for name, in := range commented {
		t.Run(name, func(t *testing.T) {
			if _, err := Parse(name, []byte(in)); err == nil && strings.Contains(in, "//") && !strings.Contains(in, "https") {
				t.Errorf("strict Parse accepted comments")
			}
			d, err := ParseJSONC(name, []byte(in))
			if err != nil {
				t.Fatal(err)
			}
			if got := string(d.Bytes()); got != in {
				t.Fatalf("round trip changed the file:\n%s", got)
			}
			if _, err := d.Ensure(specs("/bin/gate"), ours); err != nil {
				t.Fatal(err)
			}
			installed := d.Bytes()
			for _, c := range comment.FindAllString(in, -1) {
				if !strings.Contains(string(installed), c) {
					t.Errorf("install lost the comment %q:\n%s", c, installed)
				}
			}
			d2, err := ParseJSONC(name, installed)
			if err != nil {
				t.Fatalf("installed file does not parse: %v\n%s", err, installed)
			}
			if n := len(d2.Handlers()); n < 3 {
				t.Errorf("%d handlers after install:\n%s", n, installed)
			}
			if _, n := d2.Remove(ours); n != 3 {
				t.Errorf("removed %d handlers", n)
			}
			if got := string(d2.Bytes()); got != in {
				t.Errorf("uninstall did not restore the file:\n%s\nwant:\n%s", got, in)
			}
		})
	}
}

// TestJSONCErrors: what is not JSON with comments is still refused, at its position.
func TestJSONCErrors(t *testing.T) {
	for _, in := range []string{"{\"a\": 1,}\n", "{\"a\": /* open\n", "// only a comment\n{\"a\" 1}"} {
		if _, err := ParseJSONC("f", []byte(in)); err == nil {
			t.Errorf("ParseJSONC(%q) accepted it", in)
		}
	}
	_, err := ParseJSONC("f", []byte("// one\n// two\n{\"a\" 1}"))
	if err == nil || !strings.HasPrefix(err.Error(), "f:3:6:") {
		t.Errorf("error %v, want it at line 3 column 6", err)
	}
}
