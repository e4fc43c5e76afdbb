// Package term owns terminal output and the rules every shown text follows: the prefixed error,
// warning and hint lines every command and the hook write to stderr, the escaping that shows
// control characters in human-readable output instead of letting them act, the one definition of
// such a character ([IsControl]) and the one clipping rule ([Clip]). Tool names, server names, causes and error texts come from MCP
// servers, configuration files of a cloned repository and hand-edited ledgers; an ANSI or OSC escape
// among them must not recolour, retitle or rewrite the user's terminal, nor forge a line.
package term

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Prefix starts every line the program writes for a person, and every text it gives the model.
const Prefix = "mcp-circuit-breaker: "

// Line prefixes of the three kinds of diagnostic lines.
const (
	ErrorPrefix   = Prefix + "error: "
	WarningPrefix = Prefix + "warning: "
	HintPrefix    = Prefix + "hint: "
)

// Errorf writes one "mcp-circuit-breaker: error: …" line to w, the message escaped (see [Lines]).
func Errorf(w io.Writer, format string, args ...any) { printf(w, ErrorPrefix, format, args) }

// Warnf writes one "mcp-circuit-breaker: warning: …" line to w, the message escaped.
func Warnf(w io.Writer, format string, args ...any) { printf(w, WarningPrefix, format, args) }

// Hintf writes one "mcp-circuit-breaker: hint: …" line to w, the message escaped.
func Hintf(w io.Writer, format string, args ...any) { printf(w, HintPrefix, format, args) }

// Notef writes one "mcp-circuit-breaker: …" progress line to w, the message escaped.
func Notef(w io.Writer, format string, args ...any) { printf(w, Prefix, format, args) }

func printf(w io.Writer, prefix, format string, args []any) {
	io.WriteString(w, prefix+Lines(fmt.Sprintf(format, args...))+"\n")
}

// Escape returns s with everything that is not printable text shown as a visible escape: \n, \r
// and \t as themselves, other C0 controls, DEL and invalid UTF-8 bytes as \xNN (ESC is \x1b), C1
// controls and the bidirectional overrides and isolates as \uNNNN. Everything else, non-ASCII
// letters included, is kept, and a backslash stays a backslash. Use it for one cell or one name.
func Escape(s string) string { return escape(s, false) }

// Lines is [Escape] for text of several lines: newlines and tabs are kept, so a multi-line message
// (an indented list of problems) stays readable; every other control is escaped.
func Lines(s string) string { return escape(s, true) }

func escape(s string, keepNewline bool) string {
	if isPlain(s, keepNewline) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case (r == '\n' || r == '\t') && keepNewline:
			b.WriteByte(byte(r))
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case needsEscape(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// isPlain reports whether escape would return s unchanged, without allocating: the common case.
func isPlain(s string, keepNewline bool) bool {
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c < 0x20 && !(keepNewline && (c == '\n' || c == '\t')) || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 || needsEscape(r) {
			return false
		}
		i += n
	}
	return true
}

// needsEscape reports the non-ASCII runes that act instead of showing ([IsControl]); the ASCII
// controls are escaped by the callers, each in its own way.
func needsEscape(r rune) bool { return r >= 0x80 && IsControl(r) }

// ListFormat writes several problems one per line, as errors.Join does: it is the ErrorFormat of
// every *multierror.Error of this module, so a list of problems reads the same wherever it comes
// from, and a single problem reads as itself.
func ListFormat(errs []error) string {
	var b strings.Builder
	for i, err := range errs {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(err.Error())
	}
	return b.String()
}
