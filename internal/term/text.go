package term

import "unicode/utf8"

// IsControl is the one definition, for every text we store or show, of a character that acts
// instead of showing: the C0 controls (line breaks and tabs included: a caller that keeps them
// checks them first), DEL, the C1 controls (among them CSI U+009B and OSC U+009D), the line and
// paragraph separators, the invisible marks, overrides and isolates that reorder text on screen
// (Trojan Source: U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), and the invisible
// spaces that hide words from a reader but not from the model (U+200B, U+2060, U+FEFF).
func IsControl(r rune) bool {
	switch {
	case r < 0x20 || r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x061c || r == 0x200e || r == 0x200f || r == 0x2028 || r == 0x2029:
		return true
	case r == 0x200b || r == 0x2060 || r == 0xfeff:
		return true
	case r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// Clip is the one clipping rule of every text we store or show: s cut to at most n characters
// (runes), the last of them "…" when something was cut.
func Clip(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for at := range s {
		if i == n-1 {
			return s[:at] + "…"
		}
		i++
	}
	return s
}
