package ledger

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// TimeFormat is how every time is written: RFC 3339, UTC, millisecond precision.
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// Encode returns the entry as one complete YAML list item that starts at column 0 with "- tool:" and
// ends with a newline. Every value sits on its key's line, so that an item is a run of lines and a
// reader can find item boundaries without a YAML parser; strings that are not plainly safe are
// double-quoted with escapes that both YAML 1.1 (PyYAML) and 1.2 (yaml.v3) read alike.
func Encode(e Entry) []byte {
	return AppendEncoded(nil, e)
}

// AppendEncoded appends Encode(e) to b.
func AppendEncoded(b []byte, e Entry) []byte {
	b = append(b, "- tool: "...)
	b = appendString(b, e.Tool)
	b = append(b, "\n  state: "...)
	b = appendString(b, string(e.State))
	b = append(b, "\n  failure_type: "...)
	if e.FailureType == "" {
		b = append(b, "null"...)
	} else {
		b = appendString(b, string(e.FailureType))
	}
	b = append(b, "\n  failure_count: "...)
	b = strconv.AppendInt(b, int64(e.FailureCount), 10)
	b = append(b, "\n  tripped_at: "...)
	b = appendTime(b, e.TrippedAt)
	b = append(b, "\n  reset_at: "...)
	b = appendTime(b, e.ResetAt)
	b = append(b, '\n')
	b = appendOptString(b, "reset_method", e.ResetMethod)
	b = appendOptString(b, "event", string(e.Event))
	b = appendOptTime(b, "at", e.At)
	b = appendOptString(b, "server", e.Server)
	b = appendOptString(b, "cause", e.Cause)
	b = appendOptString(b, "error", e.Error)
	b = appendOptTime(b, "open_until", e.OpenUntil)
	if e.RetryAfter > 0 {
		b = append(b, "  retry_after: "...)
		b = appendString(b, e.RetryAfter.String())
		b = append(b, '\n')
	}
	b = appendOptTime(b, "lease_until", e.LeaseUntil)
	b = appendOptString(b, "config_fingerprint", e.Fingerprint)
	b = appendOptString(b, "fault", string(e.Fault))
	b = appendOptString(b, "call_hash", e.CallHash)
	b = appendOptString(b, "held_shape", e.HeldShape)
	b = appendOptString(b, "session_id", e.SessionID)
	b = appendOptString(b, "tool_use_id", e.ToolUseID)
	b = appendOptString(b, "source", e.Source)
	for _, f := range e.Extra {
		b = append(b, "  "...)
		if plainKey([]byte(f.Key)) {
			b = append(b, f.Key...)
		} else {
			b = appendQuoted(b, f.Key) // a key yaml.v3 read in another style: "", "a: b", …
		}
		b = append(b, ": "...)
		b = append(b, f.Value...)
		b = append(b, '\n')
	}
	// Last, so that the bytes it signs are the item's lines before it.
	return appendOptString(b, "provenance", e.Provenance)
}

func appendOptString(b []byte, key, v string) []byte {
	if v == "" {
		return b
	}
	b = append(b, "  "...)
	b = append(b, key...)
	b = append(b, ": "...)
	b = appendString(b, v)
	return append(b, '\n')
}

func appendOptTime(b []byte, key string, t time.Time) []byte {
	if t.IsZero() {
		return b
	}
	b = append(b, "  "...)
	b = append(b, key...)
	b = append(b, ": "...)
	b = appendTime(b, t)
	return append(b, '\n')
}

func appendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(b, "null"...)
	}
	return t.UTC().AppendFormat(b, TimeFormat)
}

// appendString writes s plain when no YAML version could read it as anything but this string, else
// double-quoted.
func appendString(b []byte, s string) []byte {
	if plainSafe(s) {
		return append(b, s...)
	}
	return appendQuoted(b, s)
}

// plainSafe accepts a conservative alphabet that starts with a letter or digit and is not one of the
// words YAML 1.1 resolves to a boolean or null, nor a number.
func plainSafe(s string) bool {
	if s == "" || len(s) > 200 {
		return false
	}
	c := s[0]
	if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
		return false
	}
	digitsOnly := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			digitsOnly = false
		case c >= '0' && c <= '9':
		case c == '_' || c == '-' || c == '*' || c == '/':
			digitsOnly = false
		case c == '.' || c == ':' || c == '+':
			// Allowed for timestamps and durations, but never at the end (a trailing ':' would
			// start a mapping).
			if i == len(s)-1 {
				return false
			}
		default:
			return false
		}
	}
	if digitsOnly || (c >= '0' && c <= '9' && looksNumeric(s)) {
		return false
	}
	switch strings.ToLower(s) {
	case "y", "n", "yes", "no", "on", "off", "true", "false", "null", "nan", "inf":
		return false
	}
	return true
}

// looksNumeric reports strings YAML 1.1 would read as a number: digits with '.', '_', ':', 'e' or 'x'
// (yaml.v3 takes the base prefixes in either case); and strings that YAML reads as a timestamp: four
// digits and a '-', such as 2026-01-01.
func looksNumeric(s string) bool {
	if len(s) > 4 && s[4] == '-' && strings.Trim(s[:4], "0123456789") == "" {
		return true
	}
	if _, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64); err == nil {
		return true
	}
	if strings.Contains(s, ":") && !strings.ContainsAny(s, "TtZz") {
		return true // sexagesimal 1:30 in YAML 1.1
	}
	if p := strings.ToLower(s[:min(len(s), 2)]); p == "0x" || p == "0o" || p == "0b" {
		return true
	}
	return false
}

// appendQuoted writes a YAML double-quoted scalar. Characters that YAML does not allow raw, or that
// YAML 1.1 treats as line breaks (NEL, LS, PS), are escaped; invalid UTF-8 becomes U+FFFD.
func appendQuoted(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '"':
			b = append(b, '\\', '"')
		case r == '\\':
			b = append(b, '\\', '\\')
		case r == '\n':
			b = append(b, '\\', 'n')
		case r == '\t':
			b = append(b, '\\', 't')
		case r == '\r':
			b = append(b, '\\', 'r')
		case r == utf8.RuneError && size == 1:
			b = append(b, `\uFFFD`...)
		case r < 0x20 || (r >= 0x7f && r <= 0x9f) || r == 0x2028 || r == 0x2029 || r == 0xfeff || r == 0xfffe || r == 0xffff:
			b = append(b, '\\', 'u')
			b = appendHex4(b, r)
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return append(b, '"')
}

func appendHex4(b []byte, r rune) []byte {
	const hex = "0123456789ABCDEF"
	return append(b, hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
}
