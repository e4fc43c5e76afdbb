package ledger

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"
)

// sameEntry compares two entries ignoring Line (where each was read from).
func sameEntry(a, b Entry) bool {
	a.Line, b.Line = 0, 0
	if len(a.Extra) == 0 {
		a.Extra = nil
	}
	if len(b.Extra) == 0 {
		b.Extra = nil
	}
	return reflect.DeepEqual(a, b)
}

// TestParseEntries covers the fast line reader (what Encode writes and the skill's shape) and the
// yaml.v3 fallback (every other YAML style), item by item.
var t0 = time.Date(2026, 11, 29, 14, 23, 0, 0, time.UTC)

// entryCases are items in every style a reader meets; FuzzParse starts from them too.
var entryCases = []struct {
	name string
	in   string
	want []Entry
}{
	{
		name: "fast path, everything Encode writes",
		in: "- tool: mcp__gh__search\n  state: OPEN\n  failure_type: TIMEOUT\n  failure_count: 3\n" +
			"  tripped_at: 2026-11-29T14:23:00.000Z\n  reset_at: null\n  event: trip\n  at: 2026-11-29T14:23:00.000Z\n" +
			"  server: gh\n  cause: connection_refused\n  error: \"connect ECONNREFUSED 127.0.0.1:9\"\n" +
			"  open_until: 2026-11-29T14:24:00.000Z\n  retry_after: 30s\n  lease_until: 2026-11-29T14:25:00.000Z\n" +
			"  config_fingerprint: abc123\n  session_id: s1\n  tool_use_id: toolu_1\n  source: hook\n",
		want: []Entry{{Tool: "mcp__gh__search", State: Open, FailureType: Timeout, FailureCount: 3,
			TrippedAt: t0, Event: EventTrip, At: t0, Server: "gh", Cause: "connection_refused",
			Error: "connect ECONNREFUSED 127.0.0.1:9", OpenUntil: t0.Add(time.Minute), RetryAfter: 30 * time.Second,
			LeaseUntil: t0.Add(2 * time.Minute), Fingerprint: "abc123", SessionID: "s1", ToolUseID: "toolu_1", Source: "hook", Line: 1}},
	},
	{
		name: "an entry learned from the fleet-shared board: source shared",
		in:   "- tool: mcp__s__t\n  state: OPEN\n  failure_count: 3\n  event: trip\n  at: 2026-11-29T14:23:00.000Z\n  source: shared\n",
		want: []Entry{{Tool: "mcp__s__t", State: Open, FailureCount: 3, Event: EventTrip, At: t0, Source: SourceShared, Line: 1}},
	},
	{
		name: "hand-written skill trip: no event, no at, comment after a value",
		in: "- tool: mcp__github__create_issue\n  state: OPEN            # OPEN | HALF-OPEN | CLOSED\n" +
			"  failure_type: AUTH\n  failure_count: 1\n  tripped_at: 2026-11-29T14:23:00Z\n  reset_at: null\n",
		want: []Entry{{Tool: "mcp__github__create_issue", State: Open, FailureType: Auth, FailureCount: 1, TrippedAt: t0, Line: 1}},
	},
	{
		name: "hand-written skill reset: only four keys",
		in:   "- tool: mcp__gh__issues\n  state: CLOSED\n  reset_at: 2026-11-29T14:23:00Z\n  reset_method: user_forced\n",
		want: []Entry{{Tool: "mcp__gh__issues", State: Closed, ResetAt: t0, ResetMethod: ResetUserForced, Line: 1}},
	},
	{
		name: "single-quoted values",
		in:   "- tool: 'mcp__s__t'\n  state: 'HALF-OPEN'\n  error: 'it''s # not a comment'\n",
		want: []Entry{{Tool: "mcp__s__t", State: HalfOpen, Error: "it's # not a comment", Line: 1}},
	},
	{
		name: "double-quoted escapes",
		in:   "- tool: \"mcp__s__t\"\n  state: OPEN\n  error: \"a\\\"b\\\\c\\nd\\u00e9\\t\\/\"\n",
		want: []Entry{{Tool: "mcp__s__t", State: Open, Error: "a\"b\\c\nd\u00e9\t/", Line: 1}},
	},
	{
		name: "flow mapping item",
		in:   "- {tool: mcp__s__t, state: CLOSED, failure_count: 2}\n",
		want: []Entry{{Tool: "mcp__s__t", State: Closed, FailureCount: 2, Line: 1}},
	},
	{
		name: "flow and block values for unknown keys are kept",
		in:   "- tool: mcp__s__t\n  state: OPEN\n  tags: [a, b]\n  meta: {k: v}\n  note: |\n    two\n    lines\n",
		want: []Entry{{Tool: "mcp__s__t", State: Open, Line: 1, Extra: []Field{
			{Key: "tags", Value: "[a, b]"}, {Key: "meta", Value: "{k: v}"}, {Key: "note", Value: `"|\n    two\n    lines"`}}}},
	},
	{
		name: "plain unknown keys are kept as written",
		in:   "- tool: mcp__s__t\n  state: OPEN\n  x_note: hello world\n  x_count: 42\n",
		want: []Entry{{Tool: "mcp__s__t", State: Open, Line: 1, Extra: []Field{{Key: "x_note", Value: "hello world"}, {Key: "x_count", Value: "42"}}}},
	},
	{
		name: "nulls in every spelling, space-separated time, bare-number retry_after",
		in: "- tool: mcp__s__t\n  state: OPEN\n  failure_type: ~\n  failure_count: null\n  tripped_at: 2026-11-29 14:23:00Z\n" +
			"  reset_at:\n  retry_after: 30\n  open_until: NULL\n",
		want: []Entry{{Tool: "mcp__s__t", State: Open, TrippedAt: t0, RetryAfter: 30 * time.Second, Line: 1}},
	},
	{
		name: "CRLF line endings go through yaml.v3",
		in:   "- tool: mcp__s__t\r\n  state: OPEN\r\n  failure_count: 2\r\n",
		want: []Entry{{Tool: "mcp__s__t", State: Open, FailureCount: 2, Line: 1}},
	},
	{
		name: "comments, blank lines and document markers between items",
		in:   "# ledger\n---\n- tool: a\n  state: OPEN\n\n# between\n- tool: b\n  # inside\n  state: CLOSED\n...\n",
		want: []Entry{{Tool: "a", State: Open, Line: 3}, {Tool: "b", State: Closed, Line: 7}},
	},
	{
		name: "a value with a colon and a quote inside stays plain",
		in:   "- tool: mcp__s__t\n  state: OPEN\n  error: say \"hi\" at 12:30\n",
		want: []Entry{{Tool: "mcp__s__t", State: Open, Error: `say "hi" at 12:30`, Line: 1}},
	},
	{
		name: "an empty file",
		in:   "",
		want: []Entry{},
	},
}

func TestParseEntries(t *testing.T) {
	for _, tt := range entryCases {
		t.Run(tt.name, func(t *testing.T) {
			got, problems := Parse([]byte(tt.in), 1, testSlow)
			if len(problems) > 0 {
				t.Fatalf("problems: %v", problems)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d entries, want %d: %+v", len(got), len(tt.want), got)
			}
			for i := range got {
				if got[i].Line != tt.want[i].Line {
					t.Errorf("entry %d: line %d, want %d", i, got[i].Line, tt.want[i].Line)
				}
				if !sameEntry(got[i], tt.want[i]) {
					t.Errorf("entry %d:\n got %+v\nwant %+v", i, got[i], tt.want[i])
				}
				// Whatever style it was read from, Encode writes it back so that it reads the same.
				again, problems := Parse(Encode(got[i]), 1, testSlow)
				if len(problems) > 0 || len(again) != 1 || !sameEntry(again[0], got[i]) {
					t.Errorf("entry %d does not survive Encode/Parse: %q -> %+v %v", i, Encode(got[i]), again, problems)
				}
			}
		})
	}
}

func TestEncodeKeepsUnknownKeys(t *testing.T) {
	in := "- tool: mcp__s__t\n  state: OPEN\n  x_note: hello world\n  tags: [a, b]\n"
	got, problems := Parse([]byte(in), 1, testSlow)
	if len(problems) > 0 || len(got) != 1 {
		t.Fatalf("Parse: %v %v", got, problems)
	}
	out := string(Encode(got[0]))
	for _, want := range []string{"\n  x_note: hello world\n", "\n  tags: [a, b]\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("Encode lost %q:\n%s", want, out)
		}
	}
}

func okItem(tool string) string {
	return "- tool: " + tool + "\n  state: OPEN\n  failure_type: TIMEOUT\n  failure_count: 3\n"
}

type prob struct {
	line int
	kind ProblemKind
	msg  string // a substring of Msg
}

// problemCases are ledgers with problems; FuzzParse starts from them too.
var problemCases = []struct {
	name    string
	in      string
	entries int
	want    []prob
}{
	{
		name:    "text at column 0 that is not an item",
		in:      okItem("a") + "state: CLOSED\n" + okItem("b"),
		entries: 2,
		want:    []prob{{5, NotSequence, `"state: CLOSED" is not a list item`}},
	},
	{
		name:    "a mapping, not a sequence",
		in:      "tool: a\nstate: OPEN\n",
		entries: 0,
		want:    []prob{{1, NotSequence, "not a list item"}, {2, NotSequence, "not a list item"}},
	},
	{
		name:    "indented text before the first item",
		in:      "  tool: a\n  state: OPEN\n" + okItem("b"),
		entries: 1,
		want:    []prob{{1, NotSequence, "indented text before the first list item"}, {2, NotSequence, "indented text"}},
	},
	{
		name: "repeated keys: bare indented keys merged into the previous item",
		in: okItem("a") + "- tool: b\n  state: OPEN\n  failure_type: AUTH\n  failure_count: 1\n" +
			"  state: CLOSED\n  reset_at: 2026-11-29T14:20:00Z\n  reset_method: user_forced\n",
		entries: 1,
		want:    []prob{{9, Merged, `key "state" repeats the one on line 6`}},
	},
	{
		name:    "repeated keys in an item yaml.v3 reads",
		in:      "- tool: 'a'\n  state: OPEN\n  state: CLOSED\n" + okItem("b"),
		entries: 1,
		want:    []prob{{3, Merged, `repeats the one on line 2`}},
	},
	{
		name:    "last item invalid is torn, at the item's first line",
		in:      okItem("a") + okItem("b") + "- tool: c\n  state: OP\"EN\n  failure_type: \"TIME\n",
		entries: 2,
		want:    []prob{{9, Torn, "the last item is incomplete"}},
	},
	{
		// A whole entry that only lacks the final newline (a hand edit) is read; the next
		// append closes it off first.
		name:    "last item without its final newline is read and reported",
		in:      okItem("a") + strings.TrimSuffix(okItem("b"), "\n"),
		entries: 2,
		want:    []prob{{5, Unterminated, "does not end with a newline"}},
	},
	{
		// A raw control byte is refused by every YAML parser: the fast path must agree.
		name:    "a raw control byte in a plain value is an invalid item",
		in:      okItem("a") + "- tool: b\n  state: OPEN\n  error: bad \x01 byte\n" + okItem("c"),
		entries: 2,
		want:    []prob{{5, Invalid, "control characters"}},
	},
	{
		name:    "last item cut inside a quoted value",
		in:      okItem("a") + "- tool: b\n  state: OPEN\n  error: \"connection re",
		entries: 1,
		want:    []prob{{5, Torn, "incomplete"}},
	},
	{
		name:    "invalid state",
		in:      "- tool: a\n  state: BROKEN\n" + okItem("b"),
		entries: 1,
		want:    []prob{{1, Invalid, `state "BROKEN" is not CLOSED, OPEN or HALF-OPEN`}},
	},
	{
		name:    "missing state",
		in:      "- tool: a\n  failure_count: 1\n" + okItem("b"),
		entries: 1,
		want:    []prob{{1, Invalid, "has no state"}},
	},
	{
		name:    "missing tool",
		in:      "- state: OPEN\n" + okItem("b"),
		entries: 1,
		want:    []prob{{1, Invalid, "has no tool"}},
	},
	{
		name:    "invalid failure type",
		in:      "- tool: a\n  state: OPEN\n  failure_type: BROKEN_PIPE\n" + okItem("b"),
		entries: 1,
		want:    []prob{{1, Invalid, `failure_type "BROKEN_PIPE"`}},
	},
	{
		name:    "invalid event",
		in:      "- tool: a\n  state: OPEN\n  event: exploded\n" + okItem("b"),
		entries: 1,
		want:    []prob{{1, Invalid, `event "exploded"`}},
	},
	{
		name:    "invalid reset method",
		in:      "- tool: a\n  state: CLOSED\n  reset_method: magic\n" + okItem("b"),
		entries: 1,
		want:    []prob{{1, Invalid, `reset_method "magic"`}},
	},
	{
		name:    "invalid time, at the key's line",
		in:      "- tool: a\n  state: OPEN\n  tripped_at: yesterday\n" + okItem("b"),
		entries: 1,
		want:    []prob{{3, Invalid, `tripped_at "yesterday" is not an RFC 3339 time`}},
	},
	{
		name:    "invalid at in a quoted value",
		in:      "- tool: a\n  state: OPEN\n  at: \"2026-13-45T00:00:00Z\"\n" + okItem("b"),
		entries: 1,
		want:    []prob{{3, Invalid, `at "2026-13-45T00:00:00Z"`}},
	},
	{
		name:    "invalid time in an item yaml.v3 reads",
		in:      "- tool: 'a'\n  state: OPEN\n  open_until: 'soon'\n" + okItem("b"),
		entries: 1,
		want:    []prob{{3, Invalid, `open_until "soon"`}},
	},
	{
		name:    "invalid failure count",
		in:      "- tool: a\n  state: OPEN\n  failure_count: -1\n" + okItem("b"),
		entries: 1,
		want:    []prob{{3, Invalid, "failure_count"}},
	},
	{
		name:    "invalid retry_after",
		in:      "- tool: a\n  state: OPEN\n  retry_after: soon\n" + okItem("b"),
		entries: 1,
		want:    []prob{{3, Invalid, `retry_after "soon"`}},
	},
	{
		name:    "a known key with a list value",
		in:      "- tool: a\n  state: [OPEN, CLOSED]\n" + okItem("b"),
		entries: 1,
		want:    []prob{{2, Invalid, `key "state" must have a single value`}},
	},
	{
		name:    "an item that is not a mapping",
		in:      "- just text\n" + okItem("b"),
		entries: 1,
		want:    []prob{{1, Invalid, "must be a mapping"}},
	},
	{
		name:    "a YAML syntax error names its absolute line",
		in:      okItem("a") + "- tool: b\n  state: OPEN\n   bad: [\n" + okItem("c"),
		entries: 2,
		want:    []prob{{7, Invalid, ""}},
	},
	{
		name:    "several problems at once, sorted by line",
		in:      "junk\n" + okItem("a") + "- tool: b\n  state: NOPE\n" + okItem("c") + "- tool: d\n  state: OPEN\n  state: OPEN\n" + okItem("e") + "- tool: f\n",
		entries: 3,
		want:    []prob{{1, NotSequence, "junk"}, {6, Invalid, "NOPE"}, {14, Merged, "repeats"}, {19, Torn, "incomplete"}},
	},
}

// TestParseProblems pins every ProblemKind to the line a person must look at.
func TestParseProblems(t *testing.T) {
	for _, tt := range problemCases {
		t.Run(tt.name, func(t *testing.T) {
			got, problems := Parse([]byte(tt.in), 1, testSlow)
			if len(got) != tt.entries {
				t.Errorf("got %d entries, want %d: %+v", len(got), tt.entries, got)
			}
			if len(problems) != len(tt.want) {
				t.Fatalf("got problems %v, want %v", problems, tt.want)
			}
			for i, p := range problems {
				w := tt.want[i]
				if p.Line != w.line || p.Kind != w.kind || !strings.Contains(p.Msg, w.msg) {
					t.Errorf("problem %d: got line %d %s %q, want line %d %s containing %q", i, p.Line, p.Kind, p.Msg, w.line, w.kind, w.msg)
				}
			}
			// Parsing from a later first line shifts every line number by the same amount.
			_, shifted := Parse([]byte(tt.in), 101, testSlow)
			for i := range shifted {
				if shifted[i].Line != problems[i].Line+100 {
					t.Errorf("firstLine 101: problem %d at line %d, want %d", i, shifted[i].Line, problems[i].Line+100)
				}
			}
		})
	}
}

func TestProblemItemIndex(t *testing.T) {
	in := "junk\n- tool: a\n  state: OPEN\n- tool: b\n  state: NOPE\n- tool: c\n  state: OPEN\n"
	_, problems := Parse([]byte(in), 1, testSlow)
	if len(problems) != 2 {
		t.Fatalf("problems %v", problems)
	}
	if problems[0].Item != -1 || problems[1].Item != 1 {
		t.Errorf("items: got %d and %d, want -1 (outside any item) and 1", problems[0].Item, problems[1].Item)
	}
	if s := problems[1].String(); !strings.HasPrefix(s, "line 4: ") {
		t.Errorf("String() = %q", s)
	}
}

// TestParseSplitsAtColumnZeroOnly checks that a "- " inside an item (a nested list) does not start
// an item: only column 0 does.
func TestParseSplitsAtColumnZeroOnly(t *testing.T) {
	in := "- tool: a\n  state: OPEN\n  tags:\n  - x\n  - y\n- tool: b\n  state: CLOSED\n"
	got, problems := Parse([]byte(in), 1, testSlow)
	if len(problems) > 0 || len(got) != 2 {
		t.Fatalf("got %+v %v", got, problems)
	}
	if len(got[0].Extra) != 1 || got[0].Extra[0].Key != "tags" || !bytes.Contains([]byte(got[0].Extra[0].Value), []byte("x")) {
		t.Errorf("nested list lost: %+v", got[0].Extra)
	}
}

// TestReadChunkSplitsMerged: the readers that decide circuits read a merged item as the entries
// ledger repair splits it into, and still report it; Parse keeps one result per item.
func TestReadChunkSplitsMerged(t *testing.T) {
	data := []byte("- tool: a\n  state: OPEN\n  failure_count: 3\n  state: OPEN\n  failure_count: 4\n- tool: b\n  state: CLOSED\n")
	entries, problems := ReadChunk(data, 1, true, testSlow)
	if len(entries) != 3 || entries[0].FailureCount != 3 || entries[1].Tool != "a" || entries[1].FailureCount != 4 || entries[2].Tool != "b" {
		t.Errorf("ReadChunk entries = %+v, want a(3), a(4), b", entries)
	}
	if len(problems) != 1 || problems[0].Kind != Merged || problems[0].Line != 4 {
		t.Errorf("ReadChunk problems = %+v, want the merged item at line 4", problems)
	}
	if entries, problems := Parse(data, 1, testSlow); len(entries) != 1 || len(problems) != 1 {
		t.Errorf("Parse = %d entries, %d problems, want 1 and 1", len(entries), len(problems))
	}
}

// TestParseByteOrderMark: a ledger saved with a UTF-8 byte-order mark reads as the list it is.
func TestParseByteOrderMark(t *testing.T) {
	entries, problems := Parse([]byte("\ufeff- tool: a\n  state: OPEN\n- tool: b\n  state: CLOSED\n"), 1, testSlow)
	if len(entries) != 2 || len(problems) != 0 || entries[0].Tool != "a" {
		t.Errorf("Parse = %+v, %+v; want a and b, no problem", entries, problems)
	}
}

// TestValidToolNameControls: every character term.IsControl names (the bidi marks U+061C, U+200E,
// U+200F and the word joiner U+2060 included, which an earlier list let through) and every space
// keep a name out of the ledger, where it would make two keys look alike.
func TestValidToolNameControls(t *testing.T) {
	for _, r := range []rune{' ', '\t', '\n', 0x7f, 0x85, 0x9b, 0xa0, 0x061c, 0x200b, 0x200e, 0x200f, 0x2028, 0x2029, 0x202e, 0x2060, 0x2067, 0xfeff} {
		if name := "mcp__gh__is" + string(r) + "sues"; ValidToolName(name) {
			t.Errorf("ValidToolName(%q) = true, want false", name)
		}
	}
	for _, name := range []string{"mcp__gh__issues", "mcp__grafana-ü__query_prometheus", "mcp__日本__検索"} {
		if !ValidToolName(name) {
			t.Errorf("ValidToolName(%q) = false, want true", name)
		}
	}
}
