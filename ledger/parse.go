package ledger

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/term"
)

// ProblemKind classifies what is wrong at a place in a ledger.
type ProblemKind string

// The kinds of problem a strict read reports.
const (
	// NotSequence: text at column 0 that does not start a list item; the file is not a YAML list.
	NotSequence ProblemKind = "not_a_list"
	// Merged: an item repeats a key, the mark of entries appended as bare indented keys.
	Merged ProblemKind = "merged_items"
	// Torn: the last item is incomplete, as a write cut short leaves it.
	Torn ProblemKind = "torn_item"
	// Invalid: an item that is a list item but not a valid entry.
	Invalid ProblemKind = "invalid_item"
	// Unterminated: the last item is a valid entry but the file does not end with a newline (a
	// hand edit, or a write cut short at the end of a value). Its entry is read; the next append
	// closes it off with the newline first, so nothing is ever merged into it.
	Unterminated ProblemKind = "no_final_newline"
)

// Problem is one thing wrong in a ledger, at a 1-based line.
type Problem struct {
	Line int         `json:"line"`
	Kind ProblemKind `json:"kind"`
	Msg  string      `json:"msg"`
	// Item is the index (0-based, among items) of the item concerned, or -1 when the problem is
	// outside any item.
	Item int `json:"item"`
}

// Damage reports whether the problem leaves text unread (every kind but Unterminated, whose entry
// is read).
func (p Problem) Damage() bool { return p.Kind != Unterminated }

// String is the problem as "line N: message".
func (p Problem) String() string { return fmt.Sprintf("line %d: %s", p.Line, p.Msg) }

// item is the raw text of one list item.
type item struct {
	line int // 1-based line of the "- "
	text []byte
}

// splitItems cuts data into list items at lines that start with "- " (or are exactly "-") at
// column 0. Comment lines, blank lines and document markers between items are skipped. Any other
// text at column 0 is a NotSequence problem.
func splitItems(data []byte, firstLine int) ([]item, []Problem) {
	if firstLine == 1 {
		// A byte-order mark, as some editors and Windows PowerShell start a UTF-8 file with: YAML
		// readers skip it, and so do we, or a hand-saved ledger would read as nothing at all.
		data = bytes.TrimPrefix(data, []byte("\ufeff"))
	}
	var items []item
	var problems []Problem
	line := firstLine
	start := -1
	startLine := 0
	for off := 0; off < len(data); {
		end := bytes.IndexByte(data[off:], '\n')
		next := len(data)
		if end >= 0 {
			next = off + end + 1
		}
		l := data[off:next]
		switch {
		case len(l) > 0 && l[0] == '-' && (len(l) == 1 || l[1] == ' ' || l[1] == '\n' || l[1] == '\r'):
			if bytes.HasPrefix(l, []byte("---")) {
				break
			}
			if start >= 0 {
				items = append(items, item{line: startLine, text: data[start:off]})
			}
			start, startLine = off, line
		case len(bytes.TrimSpace(l)) == 0, l[0] == '#':
			// Blank lines and comments at column 0 belong to no item; inside an item they are
			// harmless to YAML, so they stay in the item's text.
		case bytes.HasPrefix(l, []byte("---")) && docMarkerRest(l[3:]):
			// A document start marker (its '-' is not followed by a space, so the first case
			// never sees it).
		case l[0] == ' ' || l[0] == '\t':
			if start < 0 {
				problems = append(problems, Problem{Line: line, Kind: NotSequence, Item: -1,
					Msg: "indented text before the first list item (an entry must start at column 0 with \"- tool:\")"})
			}
		case bytes.HasPrefix(l, []byte("...")):
		default:
			if start >= 0 {
				items = append(items, item{line: startLine, text: data[start:off]})
				start = -1
			}
			problems = append(problems, Problem{Line: line, Kind: NotSequence, Item: -1,
				Msg: fmt.Sprintf("%q is not a list item: the ledger must be a YAML sequence whose items start at column 0 with \"- tool:\"", clip(string(bytes.TrimRight(l, "\r\n")), 40))})
		}
		off = next
		line++
	}
	if start >= 0 {
		items = append(items, item{line: startLine, text: data[start:]})
	}
	return items, problems
}

// docMarkerRest reports whether what follows "---" leaves it a bare document marker: nothing, or a
// comment.
func docMarkerRest(rest []byte) bool {
	rest = bytes.TrimRight(rest, "\r\n")
	if len(rest) == 0 {
		return true
	}
	if rest[0] != ' ' && rest[0] != '\t' {
		return false
	}
	rest = bytes.TrimSpace(rest)
	return len(rest) == 0 || rest[0] == '#'
}

// Parse reads a ledger, or a part of one that starts at an item boundary. firstLine is the line
// number of data's first line. It returns every entry it could read and every problem it found;
// it never stops at the first problem.
//
// Every problem is isolated to its item or line: the entries of every other item are returned. An
// Unterminated last item is returned as an entry too, with its problem.
func Parse(data []byte, firstLine int, slow SlowReader) ([]Entry, []Problem) {
	return ParseChunk(data, firstLine, true, slow)
}

// ParseChunk is Parse for a part of a ledger; end says whether data runs to the file's end, where
// an invalid last item is reported as torn (a write cut short) rather than as invalid.
func ParseChunk(data []byte, firstLine int, end bool, slow SlowReader) ([]Entry, []Problem) {
	return parseChunk(data, firstLine, end, false, slow)
}

// ReadChunk is ParseChunk for the readers that decide circuits: an item merged from entries
// appended as bare indented keys (the mistake the skill warns of) is still a problem, and it is
// also read as the entries 'ledger repair' splits it into. Left out whole, the trip such keys were
// glued to would vanish and its OPEN circuit let calls through. Its entries then outnumber the
// items that are not problems.
func ReadChunk(data []byte, firstLine int, end bool, slow SlowReader) ([]Entry, []Problem) {
	return parseChunk(data, firstLine, end, true, slow)
}

func parseChunk(data []byte, firstLine int, end, split bool, slow SlowReader) ([]Entry, []Problem) {
	items, problems := splitItems(data, firstLine)
	entries := make([]Entry, 0, len(items))
	for i, it := range items {
		last := end && i == len(items)-1
		e, p := checkItem(it, last, slow)
		if p != nil {
			p.Item = i
			if split && p.Kind == Merged {
				if parts := mergedEntries(it, last, slow); len(parts) > 0 {
					p.Msg += fmt.Sprintf("; read as the %d entries 'ledger repair' splits it into", len(parts))
					entries = append(entries, parts...)
				}
			}
			problems = append(problems, *p)
			if p.Kind != Unterminated {
				continue
			}
		}
		entries = append(entries, e)
	}
	sortProblems(problems)
	return entries, problems
}

// mergedEntries returns the entries of a merged item split at its repeated keys (splitMerged): the
// parts that are valid entries, each isolated from the others as 'ledger repair' isolates them
// (it keeps those and quarantines the rest); nil when the item does not split.
func mergedEntries(it item, last bool, slow SlowReader) []Entry {
	parts := splitMerged(it.text)
	if len(parts) < 2 {
		return nil
	}
	var out []Entry
	line := it.line
	for j, part := range parts {
		e, p := checkItem(item{line: line, text: part}, last && j == len(parts)-1, slow)
		if p == nil || p.Kind == Unterminated {
			out = append(out, e)
		}
		line += bytes.Count(part, []byte("\n"))
	}
	return out
}

// checkItem parses one item; the last item of a file is held to being complete: ending with a
// newline, and when it is invalid it is reported as torn at its first line.
func checkItem(it item, last bool, slow SlowReader) (Entry, *Problem) {
	e, p := parseItem(it, slow)
	if p == nil && last && len(it.text) > 0 && it.text[len(it.text)-1] != '\n' {
		p = &Problem{Line: it.line, Kind: Unterminated, Msg: "the last item does not end with a newline (the next append adds it first; 'mcp-circuit-breaker ledger repair' adds it now)"}
	}
	if p != nil && last && p.Kind == Invalid {
		p.Kind = Torn
		p.Msg = fmt.Sprintf("the last item is incomplete (a write cut short?): line %d: %s", p.Line, p.Msg)
		p.Line = it.line
	}
	return e, p
}

func sortProblems(ps []Problem) {
	for i := 1; i < len(ps); i++ {
		for j := i; j > 0 && ps[j].Line < ps[j-1].Line; j-- {
			ps[j], ps[j-1] = ps[j-1], ps[j]
		}
	}
}

// parseItem reads one item: first with a line reader that understands exactly what Encode writes
// (and the skill's hand-written shape), else with slow, so that anything valid YAML is read
// whatever its style.
func parseItem(it item, slow SlowReader) (Entry, *Problem) {
	e, ok, p := fastItem(it)
	if p != nil {
		return Entry{}, p
	}
	if ok {
		return e, validate(e, it.line)
	}
	if slow == nil {
		return Entry{}, &Problem{Line: it.line, Kind: Invalid, Msg: "not in the shape mcp-circuit-breaker writes, and no YAML reader was given to read it"}
	}
	e, p = slow(it.text, it.line)
	if p != nil {
		// yaml.v3 also counts a bare '\r' as a line break and reports an unexpected end at the
		// line after the text: keep the line within the item.
		last := it.line + bytes.Count(bytes.TrimSuffix(it.text, []byte("\n")), []byte("\n"))
		p.Line = max(it.line, min(p.Line, last))
	}
	return e, p
}

// fastItem handles lines of the form "- key: value" then "  key: value" with plain, null or
// double-quoted values. ok is false when the item uses any other YAML style.
func fastItem(it item) (e Entry, ok bool, p *Problem) {
	e.Line = it.line
	seen := make(map[string]int, 20)
	text := it.text
	line := it.line
	for off := 0; off < len(text); line++ {
		end := bytes.IndexByte(text[off:], '\n')
		next := len(text)
		if end >= 0 {
			next = off + end + 1
		}
		l := text[off:next]
		off = next
		l = bytes.TrimRight(l, "\n")
		if len(l) > 0 && l[len(l)-1] == '\r' {
			return e, false, nil
		}
		if hasControl(l) {
			// yaml.v3 (and every YAML parser) refuses raw control characters: so must the
			// fast path, or the same item would count here and be damage everywhere else.
			return e, false, nil
		}
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		var body []byte
		switch {
		case line == it.line && bytes.HasPrefix(l, []byte("- ")):
			body = l[2:]
		case line != it.line && len(l) > 2 && l[0] == ' ' && l[1] == ' ' && l[2] != ' ':
			body = l[2:]
		default:
			return e, false, nil
		}
		if len(body) == 0 {
			return e, false, nil // "- " alone: let yaml.v3 say what it is
		}
		if body[0] == '#' {
			continue
		}
		colon := bytes.Index(body, []byte(": "))
		var key, val []byte
		if colon < 0 {
			if body[len(body)-1] != ':' {
				return e, false, nil
			}
			key, val = body[:len(body)-1], nil
		} else {
			key, val = body[:colon], body[colon+2:]
		}
		if !plainKey(key) {
			return e, false, nil
		}
		k := string(key)
		if first, dup := seen[k]; dup {
			return e, false, &Problem{Line: line, Kind: Merged, Msg: fmt.Sprintf(
				"key %q repeats the one on line %d: "+MergedHint, k, first)}
		}
		seen[k] = line
		v, null, vok := fastValue(val)
		if !vok {
			return e, false, nil
		}
		if perr := e.set(k, v, null, string(val)); perr != "" {
			return e, false, &Problem{Line: line, Kind: Invalid, Msg: perr}
		}
	}
	return e, true, nil
}

// hasControl reports whether l holds a C0 control byte other than a tab, or DEL.
func hasControl(l []byte) bool {
	for _, c := range l {
		if c < ' ' && c != '\t' || c == 0x7f {
			return true
		}
	}
	return false
}

func plainKey(k []byte) bool {
	if len(k) == 0 {
		return false
	}
	for _, c := range k {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// fastValue decodes a value that the fast path understands.
func fastValue(v []byte) (s string, null, ok bool) {
	if len(v) == 0 || string(v) == "null" || string(v) == "~" || string(v) == "Null" || string(v) == "NULL" {
		return "", true, true
	}
	switch v[0] {
	case '"':
		return unquote(v)
	case '\'', '[', '{', '|', '>', '&', '*', '!', '%', '@', '`', '#', ' ', '\t':
		return "", false, false
	}
	if bytes.Contains(v, []byte(" #")) || bytes.Contains(v, []byte(": ")) || v[len(v)-1] == ' ' || v[len(v)-1] == '\t' {
		return "", false, false
	}
	return string(v), false, true
}

// unquote reads a double-quoted scalar that must end the line; it accepts the escapes Encode writes.
func unquote(v []byte) (string, bool, bool) {
	if len(v) < 2 || v[len(v)-1] != '"' {
		return "", false, false
	}
	v = v[1 : len(v)-1]
	if bytes.IndexByte(v, '\\') < 0 {
		if bytes.IndexByte(v, '"') >= 0 || !utf8.Valid(v) {
			return "", false, false
		}
		return string(v), false, true
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '"' {
			return "", false, false
		}
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(v) {
			return "", false, false
		}
		switch v[i] {
		case '"', '\\', '/':
			b.WriteByte(v[i])
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'u':
			if i+5 > len(v) {
				return "", false, false
			}
			n, err := strconv.ParseUint(string(v[i+1:i+5]), 16, 32)
			if err != nil {
				return "", false, false
			}
			b.WriteRune(rune(n))
			i += 4
		default:
			return "", false, false
		}
	}
	if !utf8.ValidString(b.String()) {
		return "", false, false
	}
	return b.String(), false, true
}

// SlowReader reads an item in a shape the built-in reader does not know: any other valid YAML
// (flow style, block scalars, anchors, comments between keys). internal/yamlfile's reads it with
// yaml.v3, and builds the entry with FromFields; the ledger does not link a YAML library, so that
// the lean hook, which reads ledger items on every call, does not pay its start-up. A nil
// SlowReader leaves such an item out as Invalid.
type SlowReader func(text []byte, firstLine int) (Entry, *Problem)

// ItemField is one key of an item as a YAML reader found it.
type ItemField struct {
	// Key is the key; KeyScalar is set when it is a plain scalar, as every key must be.
	Key       string
	KeyScalar bool
	// Line is the key's absolute line.
	Line int
	// Scalar is set when the value is a scalar: Value holds it, and Null says it is YAML's null.
	Scalar bool
	Value  string
	Null   bool
	// Flow is the value written back on its key's line, kept for keys the ledger does not know:
	// a list or mapping in flow style, an alias as what it names, on one line.
	Flow string
}

// FromFields builds the entry of the item at line from its keys in order, with the checks every
// reader applies: each key a plain word and given once (a repeated key is the mark of entries
// merged into one item), known keys with single values, every value valid.
func FromFields(line int, fields []ItemField) (Entry, *Problem) {
	e := Entry{Line: line}
	seen := map[string]int{}
	for _, f := range fields {
		if !f.KeyScalar {
			return Entry{}, &Problem{Line: f.Line, Kind: Invalid, Msg: "a key must be a plain word"}
		}
		if first, dup := seen[f.Key]; dup {
			return Entry{}, &Problem{Line: f.Line, Kind: Merged, Msg: fmt.Sprintf(
				"key %q repeats the one on line %d: "+MergedHint, f.Key, first)}
		}
		seen[f.Key] = f.Line
		if !f.Scalar && known(f.Key) {
			return Entry{}, &Problem{Line: f.Line, Kind: Invalid, Msg: fmt.Sprintf("key %q must have a single value", f.Key)}
		}
		raw, orig := f.Value, f.Value
		if f.Null {
			raw = ""
		}
		if !known(f.Key) {
			orig = f.Flow
		}
		if perr := e.set(f.Key, raw, f.Null, orig); perr != "" {
			return Entry{}, &Problem{Line: f.Line, Kind: Invalid, Msg: perr}
		}
	}
	return e, validate(e, line)
}

// FlowValue turns a marshalled YAML value into one line: a JSON-style quoted string of the text
// when it spans several lines, so that an unknown value is kept and an item stays a run of key
// lines.
func FlowValue(out []byte) string {
	s := strings.TrimRight(string(out), "\n")
	if !strings.Contains(s, "\n") {
		return s
	}
	return string(appendQuoted(nil, s))
}

// MergedHint says what a repeated key means in a ledger; every reader puts it in a Merged
// problem.
const MergedHint = "two entries are merged into one item (an entry appended as bare indented keys, without \"- tool:\")"

var knownKeys = map[string]bool{
	"tool": true, "state": true, "failure_type": true, "failure_count": true, "tripped_at": true,
	"reset_at": true, "reset_method": true, "event": true, "at": true, "server": true, "cause": true,
	"error": true, "open_until": true, "retry_after": true, "lease_until": true, "config_fingerprint": true,
	"fault": true, "call_hash": true, "held_shape": true, "session_id": true, "tool_use_id": true, "source": true, "provenance": true,
}

func known(k string) bool { return knownKeys[k] }

// set stores one key's value; it returns a problem text when the value is not valid for the key.
// raw is the value as written, kept for unknown keys.
func (e *Entry) set(k, v string, null bool, raw string) string {
	var err error
	switch k {
	case "tool":
		e.Tool = v
	case "state":
		e.State = State(v)
	case "failure_type":
		e.FailureType = FailureType(v)
	case "failure_count":
		if null {
			e.FailureCount = 0
			break
		}
		n, perr := strconv.Atoi(v)
		if perr != nil || n < 0 {
			return fmt.Sprintf("failure_count %q is not a whole number ≥ 0", clip(v, 40))
		}
		e.FailureCount = n
	case "tripped_at":
		e.TrippedAt, err = parseTime(v)
	case "reset_at":
		e.ResetAt, err = parseTime(v)
	case "reset_method":
		e.ResetMethod = v
	case "event":
		e.Event = Event(v)
	case "at":
		e.At, err = parseTime(v)
	case "server":
		e.Server = v
	case "cause":
		e.Cause = v
	case "error":
		e.Error = v
	case "open_until":
		e.OpenUntil, err = parseTime(v)
	case "retry_after":
		if v != "" {
			d, derr := parseDuration(v)
			if derr != nil {
				return fmt.Sprintf("retry_after %q is not a duration such as 30s", clip(v, 40))
			}
			e.RetryAfter = d
		}
	case "lease_until":
		e.LeaseUntil, err = parseTime(v)
	case "config_fingerprint":
		e.Fingerprint = v
	case "fault":
		e.Fault = Fault(v)
	case "call_hash":
		e.CallHash = v
	case "held_shape":
		e.HeldShape = v
	case "session_id":
		e.SessionID = v
	case "tool_use_id":
		e.ToolUseID = v
	case "source":
		e.Source = v
	case "provenance":
		e.Provenance = v
	default:
		e.Extra = append(e.Extra, Field{Key: k, Value: raw})
	}
	if err != nil {
		return fmt.Sprintf("%s %q is not an RFC 3339 time such as 2026-11-29T14:23:00Z", k, clip(v, 40))
	}
	return ""
}

func parseDuration(v string) (time.Duration, error) {
	if n, err := strconv.Atoi(v); err == nil {
		return time.Duration(n) * time.Second, nil
	}
	return time.ParseDuration(v)
}

func parseTime(v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		// PyYAML and people write "2026-11-29 14:23:00Z" too.
		if t2, err2 := time.Parse("2006-01-02 15:04:05Z07:00", v); err2 == nil {
			return t2.UTC(), nil
		}
		return time.Time{}, err
	}
	return t.UTC(), nil
}

// MaxToolName bounds a tool name: Claude Code's are far shorter (the API allows 64 characters).
const MaxToolName = 512

// ValidToolName reports whether s can be a tool name: non-empty, at most [MaxToolName] bytes of
// valid UTF-8, without blanks, control characters or bidirectional overrides. Claude Code's MCP
// tool names are mcp__<server>__<tool> with letters, digits, '_' and '-'; anything with a line
// break or an escape sequence is an attempt to write words of its own into a message.
func ValidToolName(s string) bool {
	if s == "" || len(s) > MaxToolName || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		// A space (plain or no-break) would split the key in the views; a control, bidi mark or
		// invisible space would make two keys look alike (term.IsControl, the one definition).
		if r == ' ' || r == 0xa0 || term.IsControl(r) {
			return false
		}
	}
	return true
}

// validate checks the values of a parsed entry.
func validate(e Entry, line int) *Problem {
	bad := func(msg string) *Problem { return &Problem{Line: line, Kind: Invalid, Msg: msg} }
	switch {
	case e.Tool == "":
		return bad("the item has no tool (every entry starts with \"- tool: mcp__<server>__<tool>\")")
	case e.State == "":
		return bad(fmt.Sprintf("entry for %s has no state (CLOSED, OPEN or HALF-OPEN)", e.Tool))
	case !e.State.Valid():
		return bad(fmt.Sprintf("state %q is not CLOSED, OPEN or HALF-OPEN", clip(string(e.State), 40)))
	case e.FailureType != "" && !e.FailureType.Valid():
		return bad(fmt.Sprintf("failure_type %q is not one of TIMEOUT, AUTH, NOT_FOUND, MALFORMED, RATE_LIMIT, ADMIN_GATED, UNKNOWN", clip(string(e.FailureType), 40)))
	case e.Event != "" && !e.Event.Valid():
		return bad(fmt.Sprintf("event %q is not one of failure, trip, blocked, half_open, success, reset, probe, would_block", clip(string(e.Event), 40)))
	case e.ResetMethod != "" && e.ResetMethod != ResetProbeSuccess && e.ResetMethod != ResetUserForced:
		return bad(fmt.Sprintf("reset_method %q is not probe_success or user_forced", clip(e.ResetMethod, 40)))
	}
	return nil
}

// clip is term.Clip, the one clipping rule of every text we store or show.
func clip(s string, n int) string { return term.Clip(s, n) }
