package ledger

import (
	"math/rand/v2"
	"strings"
	"time"
	"unicode/utf8"
)

// nastyWords are strings that YAML 1.1 (PyYAML) or 1.2 (yaml.v3) would read as something other
// than a string, or that would break a line-oriented reader, if written plain.
var nastyWords = []string{
	"yes", "no", "Yes", "NO", "y", "N", "on", "Off", "true", "False", "null", "Null", "NULL", "~",
	"1e3", "1E3", "0x1F", "0X1F", "0b101", "0B11", "0o17", "0O17", "017", "12:30", "1:30:00", "190:20:30",
	"2026-01-01", "2026-11-29T14:23:00Z", "2026-11-29 14:23:00", "2026-1-2", "1_000", ".5", ".inf",
	"-.inf", ".nan", "NaN", "inf", "+1", "-1", "0", "007", "3.14", "1.", "1.e5", "6.8523015e+5",
	"- x", "? x", ": x", "#x", " x", "x ", "x #y", "a: b", "a:b", "a:", "{a: b}", "[a]", "&a", "*a",
	"!tag", "%x", "@x", "`x`", "|", ">", "'", "\"", "\\", "---", "...", "<<", "=", "mcp__s__*",
	"mcp__s__t", "30s", "1h0m0s", "tool: x", "\n- tool: injected\n  state: OPEN",
}

// runePool holds the characters the generator draws from besides ASCII.
var runePool = []rune{
	'"', '\'', '\\', '\n', '\r', '\t', 0, 1, 0x1b, 0x1f, 0x7f, 0x80, 0x85, 0x9f, 0xa0, 0xe9, 0x2028,
	0x2029, 0xfeff, 0xfffd, 0xfffe, 0xffff, 0x1f600, 0x1f4a9, 0x4e2d, 0x0301, 0xe000, 0x10ffff, '#',
	':', '-', '?', '&', '*', '!', '|', '>', '%', '@', '`', '{', '}', '[', ']', ',', ' ',
}

// invalidUTF8 are byte strings that are not UTF-8.
var invalidUTF8 = []string{"\x80", "\xff", "\xc3", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82"}

// randString returns a string that tries hard to break the encoder.
func randString(r *rand.Rand) string {
	switch r.IntN(10) {
	case 0:
		return ""
	case 1, 2:
		return nastyWords[r.IntN(len(nastyWords))]
	case 3:
		// A plain-looking identifier.
		return "mcp__" + strings.Repeat("s", 1+r.IntN(3)) + "__t" + string(rune('a'+r.IntN(26)))
	}
	var b strings.Builder
	n := 1 + r.IntN(24)
	if r.IntN(20) == 0 {
		n = 150 + r.IntN(200) // longer than the plain limit
	}
	for i := 0; i < n; i++ {
		switch k := r.IntN(10); {
		case k < 4:
			b.WriteByte(byte(0x20 + r.IntN(0x5f)))
		case k < 7:
			b.WriteRune(runePool[r.IntN(len(runePool))])
		case k < 8:
			b.WriteString(invalidUTF8[r.IntN(len(invalidUTF8))])
		default:
			b.WriteString(nastyWords[r.IntN(len(nastyWords))])
		}
	}
	return b.String()
}

// wantString is what a string reads back as: every byte that is not UTF-8 becomes U+FFFD.
func wantString(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func randTime(r *rand.Rand) time.Time {
	if r.IntN(3) == 0 {
		return time.Time{}
	}
	base := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	return base.Add(time.Duration(r.Int64N(int64(100*365*24*time.Hour)/int64(time.Millisecond))) * time.Millisecond)
}

var (
	allStates  = []State{Closed, Open, HalfOpen}
	allEvents  = []Event{"", EventFailure, EventTrip, EventBlocked, EventHalfOpen, EventSuccess, EventReset, EventProbe, EventWouldBlock}
	allMethods = []string{"", ResetProbeSuccess, ResetUserForced}
	// extraFields are unknown keys with values in several YAML styles.
	extraFields = []Field{
		{Key: "x_note", Value: "hello world"}, {Key: "tags", Value: "[a, b]"}, {Key: "x_n", Value: "42"},
		{Key: "x_q", Value: `"quoted \"v\""`}, {Key: "x_map", Value: "{k: v}"}, {Key: "x_null", Value: "null"},
	}
)

// randEntry returns a valid entry with random values everywhere.
func randEntry(r *rand.Rand) Entry {
	e := Entry{
		State:        allStates[r.IntN(len(allStates))],
		FailureCount: r.IntN(4),
		TrippedAt:    randTime(r),
		ResetAt:      randTime(r),
		ResetMethod:  allMethods[r.IntN(len(allMethods))],
		Event:        allEvents[r.IntN(len(allEvents))],
		At:           randTime(r),
		Server:       randString(r),
		Cause:        randString(r),
		Error:        randString(r),
		OpenUntil:    randTime(r),
		LeaseUntil:   randTime(r),
		SessionID:    randString(r),
		ToolUseID:    randString(r),
		Source:       randString(r),
		Fingerprint:  randString(r),
		CallHash:     randString(r),
		HeldShape:    randString(r),
	}
	if k := r.IntN(len(Faults) + 1); k < len(Faults) {
		e.Fault = Faults[k]
	}
	for e.Tool == "" {
		e.Tool = randString(r)
	}
	if r.IntN(10) == 0 {
		e.FailureCount = r.IntN(1 << 30)
	}
	if k := r.IntN(len(FailureTypes) + 1); k < len(FailureTypes) {
		e.FailureType = FailureTypes[k]
	}
	switch r.IntN(4) {
	case 0:
		e.RetryAfter = time.Duration(1+r.IntN(7200)) * time.Second
	case 1:
		e.RetryAfter = time.Duration(1 + r.Int64N(int64(3*time.Hour)))
	}
	if r.IntN(4) == 0 {
		perm := r.Perm(len(extraFields))
		for _, i := range perm[:1+r.IntN(3)] {
			e.Extra = append(e.Extra, extraFields[i])
		}
	}
	return e
}

// want returns e as it reads back after Encode: strings made valid UTF-8, times in UTC at
// millisecond precision.
func want(e Entry) Entry {
	for _, p := range []*string{&e.Tool, &e.Server, &e.Cause, &e.Error, &e.SessionID, &e.ToolUseID, &e.Source, &e.Fingerprint, &e.CallHash, &e.HeldShape} {
		*p = wantString(*p)
	}
	for _, p := range []*time.Time{&e.TrippedAt, &e.ResetAt, &e.At, &e.OpenUntil, &e.LeaseUntil} {
		if !p.IsZero() {
			*p = p.UTC().Truncate(time.Millisecond)
		}
	}
	if e.RetryAfter < 0 {
		e.RetryAfter = 0
	}
	return e
}
