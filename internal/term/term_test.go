package term

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	tests := []struct{ in, want, lines string }{
		{"mcp__github__search", "mcp__github__search", "mcp__github__search"},
		{"café ✓ 日本", "café ✓ 日本", "café ✓ 日本"},
		{"", "", ""},
		{"a\x1b[31mred\x1b[0m", `a\x1b[31mred\x1b[0m`, `a\x1b[31mred\x1b[0m`},
		{"\x1b]0;pwned\x07title", `\x1b]0;pwned\x07title`, `\x1b]0;pwned\x07title`},
		{"\x1b]8;;http://evil\x1b\\link", `\x1b]8;;http://evil\x1b\link`, `\x1b]8;;http://evil\x1b\link`},
		{"two\nlines", `two\nlines`, "two\nlines"},
		{"tab\there\rCR", `tab\there\rCR`, "tab\there\\rCR"},
		{"del\x7f nul\x00", `del\x7f nul\x00`, `del\x7f nul\x00`},
		{"c1 \u009b31m csi", `c1 \u009b31m csi`, `c1 \u009b31m csi`},
		{"bidi \u202eevil\u2066", `bidi \u202eevil\u2066`, `bidi \u202eevil\u2066`},
		{"bad \xff\xfe utf8", `bad \xff\xfe utf8`, `bad \xff\xfe utf8`},
		{"real \uFFFD stays", "real \uFFFD stays", "real \uFFFD stays"},
		{"é\nafter non-ASCII", `é\nafter non-ASCII`, "é\nafter non-ASCII"},
		{`back\slash`, `back\slash`, `back\slash`},
	}
	for _, tt := range tests {
		if got := Escape(tt.in); got != tt.want {
			t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got := Lines(tt.in); got != tt.lines {
			t.Errorf("Lines(%q) = %q, want %q", tt.in, got, tt.lines)
		}
	}
}

func TestPrefixedLines(t *testing.T) {
	var b bytes.Buffer
	Errorf(&b, "read %s: %v", "x\x1b[2J", "boom")
	Warnf(&b, "100%% sure")
	Hintf(&b, "run %q", "it")
	Notef(&b, "probing %s", "srv")
	want := "mcp-circuit-breaker: error: read x\\x1b[2J: boom\n" +
		"mcp-circuit-breaker: warning: 100% sure\n" +
		"mcp-circuit-breaker: hint: run \"it\"\n" +
		"mcp-circuit-breaker: probing srv\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// FuzzEscape checks that escaped text never carries a byte a terminal acts on and that plain text
// passes untouched.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"mcp__a__b", "\x1b[31m", "\x1b]0;t\x07", "é\u009b", "\xff", "a\nb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, out := range []string{Escape(s), Lines(s)} {
			if !utf8.ValidString(out) {
				t.Fatalf("escape(%q) = %q: invalid UTF-8", s, out)
			}
			for _, r := range out {
				if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || needsEscape(r) {
					t.Fatalf("escape(%q) = %q keeps %U", s, out, r)
				}
			}
		}
		if strings.ContainsAny(Escape(s), "\n\t") {
			t.Fatalf("Escape(%q) keeps a newline or tab", s)
		}
		if isPlain(s, false) != (Escape(s) == s) {
			t.Fatalf("isPlain(%q) disagrees with Escape", s)
		}
	})
}
