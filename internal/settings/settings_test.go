package settings

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func ours(h Handler) bool {
	return filepath.Base(h.Command) == "gate" && len(h.Args) == 1 && h.Args[0] == "hook"
}

func specs(cmd string) []Spec {
	return []Spec{
		{Event: "PreToolUse", Matcher: "mcp__.*", Command: cmd, Args: []string{"hook"}, Timeout: 5},
		{Event: "PostToolUse", Matcher: "mcp__.*", Command: cmd, Args: []string{"hook"}, Timeout: 5},
		{Event: "SessionStart", Command: cmd, Args: []string{"hook"}, Timeout: 5},
	}
}

var inputs = map[string]string{
	"empty":  "",
	"braces": "{}\n",
	"two spaces": `{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "permissions": {
    "allow": ["Bash(npm test)", "Read"],
    "deny": []
  },
  "hooks": {
    "Stop": [
      {
        "hooks": [
          { "type": "command", "command": "notify-send \"done\" \u00e9" }
        ]
      }
    ],
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [{ "type": "command", "command": "/usr/local/bin/guard", "timeout": 10 }]
      }
    ]
  },
  "model": "sonnet",
  "cleanupPeriodDays": 1.50e3,
  "z": null
}
`,
	"four spaces": "{\n    \"model\": \"opus\",\n    \"env\": {\n        \"A\": \"1\"\n    }\n}\n",
	"tabs":        "{\n\t\"model\": \"opus\"\n}\n",
	"empty hooks": "{\n  \"hooks\": {},\n  \"model\": \"x\"\n}\n",
	// Formatting of the user's own, which an edit must keep (issue 11).
	"odd spacing": "{\n  \"model\" : \"opus\",\n  \"env\":{\"A\":\"1\"}   ,\n\t\"permissions\": { \"allow\": [ \"Read\" ] }\n}\n",
	"one line":    `{"model":"opus","hooks":{"Stop":[{"hooks":[{"type":"command","command":"x"}]}]}}` + "\n",
	"no newline":  "{\n  \"model\": \"opus\"\n}",
}

// TestRoundTrip: parsing and writing back without an edit gives the same bytes.
func TestRoundTrip(t *testing.T) {
	for name, in := range inputs {
		d, err := Parse(name, []byte(in))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if d.Changed() || string(d.Bytes()) != in {
			t.Errorf("%s: round trip changed the file:\n%s", name, d.Bytes())
		}
	}
}

// TestEnsureRemoveRestores: install then uninstall gives back the original file byte for byte,
// and installing twice changes nothing the second time.
func TestEnsureRemoveRestores(t *testing.T) {
	for name, in := range inputs {
		d, err := Parse(name, []byte(in))
		if err != nil {
			t.Fatal(err)
		}
		ch, err := d.Ensure(specs("/bin/gate"), ours)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, c := range ch {
			if c.Action != "added" {
				t.Errorf("%s: %s: %s, want added", name, c.Event, c.Action)
			}
		}
		installed := d.Bytes()
		d2, err := Parse(name, installed)
		if err != nil {
			t.Fatalf("%s: installed file does not parse: %v\n%s", name, err, installed)
		}
		if ch, _ := d2.Ensure(specs("/bin/gate"), ours); d2.Changed() || ch[0].Action != "unchanged" {
			t.Errorf("%s: second install changed the file: %+v", name, ch)
		}
		if n := len(d2.Handlers()); n < 3 {
			t.Errorf("%s: %d handlers after install", name, n)
		}
		events, n := d2.Remove(ours)
		if n != 3 || len(events) != 3 {
			t.Errorf("%s: removed %d from %v", name, n, events)
		}
		want := in
		if name == "empty hooks" {
			// Uninstall cannot know that "hooks" was empty before install: it removes what it empties.
			want = "{\n  \"model\": \"x\"\n}\n"
		}
		if want == "" {
			want = "{}\n" // an empty file becomes an empty object
		}
		if !strings.HasSuffix(want, "\n") {
			want += "\n"
		}
		if got := string(d2.Bytes()); got != want {
			t.Errorf("%s: uninstall did not restore the file:\n%s\nwant:\n%s", name, got, want)
		}
	}
}

// TestEditKeepsOtherBytes: install adds its hooks and changes no other byte of the file: every
// line of it is still there, the one before an added member only gaining its comma (issue 11:
// install --dry-run reformatted an unrelated line).
func TestEditKeepsOtherBytes(t *testing.T) {
	for _, name := range []string{"two spaces", "four spaces", "tabs", "odd spacing", "one line"} {
		in := inputs[name]
		d, err := Parse(name, []byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Ensure(specs("/bin/gate"), ours); err != nil {
			t.Fatal(err)
		}
		out := string(d.Bytes())
		lines := map[string]bool{}
		for _, l := range strings.Split(out, "\n") {
			lines[l] = true
		}
		for _, l := range strings.Split(in, "\n") {
			if !lines[l] && !lines[l+","] && !strings.HasPrefix(out, strings.TrimSuffix(l, "}}")) {
				t.Errorf("%s: the line %q was changed:\n%s", name, l, out)
			}
		}
	}
	d, _ := Parse("f", []byte(inputs["odd spacing"]))
	d.Ensure(specs("/bin/gate"), ours)
	if out := string(d.Bytes()); !strings.HasPrefix(out, "{\n  \"model\" : \"opus\",\n  \"env\":{\"A\":\"1\"}   ,\n\t\"permissions\": { \"allow\": [ \"Read\" ] },\n  \"hooks\": {\n") {
		t.Errorf("odd spacing:\n%s", out)
	}
}

func TestKeyOrderAndIndent(t *testing.T) {
	d, _ := Parse("f", []byte(inputs["four spaces"]))
	d.Ensure(specs("/bin/gate"), ours)
	out := string(d.Bytes())
	if !strings.HasPrefix(out, "{\n    \"model\": \"opus\",\n    \"env\": {\n        \"A\": \"1\"\n    },\n    \"hooks\": {\n        \"PreToolUse\": [") {
		t.Errorf("key order or indentation lost:\n%s", out)
	}
}

// TestUpdateInPlace: an old handler of ours (shell form, other path) is updated where it is, its
// other keys kept, and a second one is removed.
func TestUpdateInPlace(t *testing.T) {
	in := `{"hooks":{"PreToolUse":[{"matcher":"mcp__.*","hooks":[{"type":"command","command":"/old/gate","args":["hook"],"statusMessage":"gating"}]},{"hooks":[{"type":"command","command":"/older/gate","args":["hook"]}]}]}}`
	d, err := Parse("f", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	ch, err := d.Ensure(specs("/new/gate")[:1], ours)
	if err != nil {
		t.Fatal(err)
	}
	if ch[0].Action != "updated" || ch[0].Was != "/old/gate" || ch[0].Duplicates != 1 {
		t.Errorf("change = %+v", ch[0])
	}
	hs := d.Handlers()
	if len(hs) != 1 || hs[0].Command != "/new/gate" || hs[0].Timeout != 5 || hs[0].Matcher != "mcp__.*" {
		t.Errorf("handlers = %+v", hs)
	}
	// The other key is kept as written, byte for byte (issue 11: no unrelated reformatting).
	if !strings.Contains(string(d.Bytes()), `"statusMessage":"gating"`) {
		t.Errorf("other key lost or reformatted:\n%s", d.Bytes())
	}
}

func TestBadShapes(t *testing.T) {
	for in, want := range map[string]string{
		`{"hooks": []}`:                `"hooks" is an array, want an object`,
		`{"hooks": {"PreToolUse": 1}}`: `"hooks"."PreToolUse" is a number, want an array`,
	} {
		d, err := Parse("f", []byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Ensure(specs("/bin/gate"), ours); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", in, err, want)
		}
		if d.Changed() {
			t.Errorf("%s: refused edit changed the document", in)
		}
	}
	if _, err := Parse("f", []byte(`[1]`)); !errors.Is(err, ErrNotObject) {
		t.Errorf("array top level: %v", err)
	}
}

func TestSyntaxErrorPosition(t *testing.T) {
	for in, want := range map[string]string{
		"{\n  \"a\": 1,\n}\n":          "f:3:1: not valid JSON: invalid character '}' looking for beginning of object key string",
		"{\n  \"a\": 1\n  \"b\": 2\n}": "f:3:3: not valid JSON: invalid character '\"' after object key:value pair",
		"{\"a\":":                      "f:1:6: not valid JSON: unexpected end of file",
		"{} {}":                        "f:1:4: not valid JSON: invalid character '{' after top-level value",
	} {
		_, err := Parse("f", []byte(in))
		var se *SyntaxError
		if !errors.As(err, &se) || err.Error() != want {
			t.Errorf("%q: error %v, want %s", in, err, want)
		}
	}
}

// TestUnifiedApplies: the diff of random edits, applied with a small patcher, turns a into b.
func TestUnifiedApplies(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := range 500 {
		a := randomLines(r)
		b := mutate(r, a)
		d := Unified("a", "b", []byte(a), []byte(b))
		if a == b {
			if d != "" {
				t.Fatalf("equal inputs gave a diff")
			}
			continue
		}
		got, err := apply(a, d)
		if err != nil || got != b {
			t.Fatalf("case %d: %v\na=%q\nb=%q\ndiff:\n%s\ngot=%q", i, err, a, b, d, got)
		}
	}
}

func TestUnifiedFormat(t *testing.T) {
	got := Unified(NoFile, "x", nil, []byte("a\nb\n"))
	want := "--- /dev/null\n+++ x\n@@ -0,0 +1,2 @@\n+a\n+b\n"
	if got != want {
		t.Errorf("new file diff:\n%s\nwant:\n%s", got, want)
	}
	got = Unified("x", "x", []byte("1\n2\n3\n4\n5\n6\n7\n8\n9\n"), []byte("1\n2\n3\n4\nfive\n6\n7\n8\n9"))
	want = "--- x\n+++ x\n@@ -2,8 +2,8 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n-9\n+9\n\\ No newline at end of file\n"
	if got != want {
		t.Errorf("diff:\n%s\nwant:\n%s", got, want)
	}
}

func randomLines(r *rand.Rand) string {
	var b strings.Builder
	for range r.Intn(30) {
		fmt.Fprintf(&b, "l%d\n", r.Intn(6))
	}
	s := b.String()
	if s != "" && r.Intn(4) == 0 {
		s = strings.TrimSuffix(s, "\n")
	}
	return s
}

func mutate(r *rand.Rand, a string) string {
	lines := splitLines([]byte(a))
	for range r.Intn(5) {
		switch i := r.Intn(len(lines) + 1); r.Intn(3) {
		case 0:
			lines = append(lines[:i], append([]string{fmt.Sprintf("n%d\n", r.Intn(9))}, lines[i:]...)...)
		case 1:
			if i < len(lines) {
				lines = append(lines[:i], lines[i+1:]...)
			}
		case 2:
			if i < len(lines) {
				lines[i] = "x" + lines[i]
			}
		}
	}
	for i, l := range lines {
		if !strings.HasSuffix(l, "\n") && i < len(lines)-1 {
			lines[i] = l + "\n"
		}
	}
	return strings.Join(lines, "")
}

var hunkRe = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@$`)

// apply applies a unified diff to a, checking every context and removed line.
func apply(a, diff string) (string, error) {
	src := splitLines([]byte(a))
	lines := strings.SplitAfter(diff, "\n")
	var out []string
	pos := 0
	for i := 2; i < len(lines) && lines[i] != ""; i++ {
		m := hunkRe.FindStringSubmatch(strings.TrimSuffix(lines[i], "\n"))
		if m == nil {
			return "", fmt.Errorf("bad hunk header %q", lines[i])
		}
		start, _ := strconv.Atoi(m[1])
		if m[2] == "0" {
			start++ // an empty old side names the line before
		}
		for pos < start-1 {
			out = append(out, src[pos])
			pos++
		}
		for i+1 < len(lines) && lines[i+1] != "" && !strings.HasPrefix(lines[i+1], "@@") {
			i++
			l := lines[i]
			text := l[1:]
			if i+1 < len(lines) && strings.HasPrefix(lines[i+1], `\ No newline`) {
				text = strings.TrimSuffix(text, "\n")
				i++
			}
			switch l[0] {
			case ' ', '-':
				if pos >= len(src) || src[pos] != text {
					return "", fmt.Errorf("line %d: have %q, diff says %q", pos+1, at(src, pos), text)
				}
				pos++
				if l[0] == ' ' {
					out = append(out, text)
				}
			case '+':
				out = append(out, text)
			}
		}
	}
	out = append(out, src[pos:]...)
	return strings.Join(out, ""), nil
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "<eof>"
}

// TestWriteFileFollowsSymlink: a linked settings file is written at its target, the link kept,
// the mode kept.
func TestWriteFileFollowsSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "dotfiles", "settings.json")
	os.MkdirAll(filepath.Dir(target), 0o755)
	os.WriteFile(target, []byte("{}\n"), 0o640)
	link := filepath.Join(dir, "settings.json")
	os.Symlink(target, link)
	path, mode, exists, err := Target(link, 0o644)
	if err != nil || !exists || mode != 0o640 {
		t.Fatalf("Target = %s %o %v %v", path, mode, exists, err)
	}
	if err := WriteFile(path, []byte("{\"a\": 1}\n"), mode); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v", err)
	}
	if data, _ := os.ReadFile(target); string(data) != "{\"a\": 1}\n" {
		t.Errorf("target = %q", data)
	}
	if fi, _ := os.Stat(target); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode = %o", fi.Mode().Perm())
	}
	os.Remove(target)
	if _, _, _, err := Target(link, 0o644); err == nil {
		t.Errorf("a dangling link was accepted")
	}
}

// splitLines splits data after each newline; a last line without one is kept as it is.
func splitLines(data []byte) []string {
	var out []string
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			out = append(out, string(data))
			break
		}
		out = append(out, string(data[:i+1]))
		data = data[i+1:]
	}
	return out
}
