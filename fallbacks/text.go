package fallbacks

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/term"
)

// Clean makes s safe to render on one line: invalid UTF-8 becomes U+FFFD, line breaks and tabs
// become single spaces, other control characters and bidirectional overrides are dropped, and
// the ends are trimmed. Nothing is escaped: names stay readable.
func Clean(s string) string {
	if isClean(s) {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		switch {
		case isBreak(r):
			if !space {
				b.WriteByte(' ')
			}
			space = true
			continue
		case term.IsControl(r):
			continue
		}
		b.WriteRune(r)
		space = r == ' '
	}
	return strings.TrimSpace(b.String())
}

// isClean reports whether Clean(s) would return s unchanged, without allocating.
func isClean(s string) bool {
	if !utf8.ValidString(s) || strings.TrimSpace(s) != s {
		return false
	}
	for _, r := range s {
		if isBreak(r) || term.IsControl(r) {
			return false
		}
	}
	return true
}

// isBreak reports the characters that end a line or a cell: they become a space.
func isBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\t', '\v', '\f', 0x85, 0x2028, 0x2029:
		return true
	}
	return false
}

// shellArg quotes s for a POSIX shell when it holds anything beyond a safe set, so a command the
// model copies into Bash passes the key or name as one literal word (a * stays a *).
func shellArg(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r == '_' || r == '-' || r == '.' || r == '/' || r == ':' || r == '@' || r == '%' || r == '+' || r == '=' || r == ',' ||
			(r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// stopWords are dropped before comparing names and descriptions: they say nothing about the task.
var stopWords = map[string]bool{
	"an": true, "the": true, "of": true, "to": true, "for": true, "in": true, "on": true, "at": true,
	"and": true, "or": true, "with": true, "by": true, "from": true, "as": true, "is": true, "are": true,
	"be": true, "it": true, "its": true, "this": true, "that": true, "these": true, "into": true,
	"via": true, "your": true, "you": true, "mcp": true, "tool": true, "server": true, "use": true,
	"using": true, "given": true, "specified": true, "all": true, "any": true, "can": true,
	"will": true, "return": true, "plugin": true, "optional": true, "optionally": true,
}

// readVerbs and writeVerbs classify a tool by the first verb of its name; both weigh half in
// the similarity score.
var (
	readVerbs = map[string]bool{
		"get": true, "list": true, "search": true, "find": true, "read": true, "fetch": true,
		"query": true, "lookup": true, "view": true, "show": true, "describe": true, "download": true,
		"browse": true, "retrieve": true, "count": true, "check": true, "inspect": true, "navigate": true,
	}
	writeVerbs = map[string]bool{
		"create": true, "update": true, "delete": true, "remove": true, "write": true, "edit": true,
		"add": true, "set": true, "post": true, "send": true, "push": true, "put": true, "patch": true,
		"merge": true, "close": true, "comment": true, "upload": true, "move": true, "rename": true,
		"insert": true, "modify": true, "publish": true, "run": true, "execute": true, "append": true,
		"assign": true, "approve": true, "archive": true, "reply": true, "cancel": true, "fork": true,
		"commit": true, "click": true, "fill": true,
	}
)

// words splits s into lowercase words in order: at every character that is not a letter or a
// digit and at camelCase humps; stop words, one-letter and all-digit words are dropped and
// plurals are folded. Duplicates are kept (order matters for the verb class).
func words(s string) []string {
	var out []string
	var cur []rune
	var prev rune
	flush := func() {
		if len(cur) == 0 {
			return
		}
		w := stem(string(cur))
		cur = cur[:0]
		if len(w) < 2 || stopWords[w] || strings.Trim(w, "0123456789") == "" {
			return
		}
		out = append(out, w)
	}
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			prev = r
			continue
		}
		if unicode.IsUpper(r) && unicode.IsLower(prev) {
			flush()
		}
		cur = append(cur, unicode.ToLower(r))
		prev = r
	}
	flush()
	return out
}

// stem folds common English plurals: issues → issue, repositories → repository, fetches → fetch.
// Words ending in ss, us and is are left alone (address, status, analysis).
func stem(w string) string {
	switch {
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case len(w) > 4 && (strings.HasSuffix(w, "sses") || strings.HasSuffix(w, "xes") ||
		strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes")):
		return w[:len(w)-2]
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") &&
		!strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return w[:len(w)-1]
	}
	return w
}

// wordSet returns the distinct words of ws, sorted, so that sums over it are deterministic.
func wordSet(ws ...[]string) []string {
	var all []string
	for _, w := range ws {
		all = append(all, w...)
	}
	sort.Strings(all)
	out := all[:0]
	for i, w := range all {
		if i == 0 || w != all[i-1] {
			out = append(out, w)
		}
	}
	return out
}

// contains reports whether the sorted set has w.
func contains(set []string, w string) bool {
	i := sort.SearchStrings(set, w)
	return i < len(set) && set[i] == w
}
