package ledger

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"
)

// countItems counts the lines that start a list item, independently of splitItems: "-" alone or
// followed by a space or a line break, at column 0.
func countItems(data []byte) int {
	n := 0
	for _, l := range bytes.SplitAfter(data, []byte("\n")) {
		if len(l) > 0 && l[0] == '-' && (len(l) == 1 || l[1] == ' ' || l[1] == '\n' || l[1] == '\r') {
			n++
		}
	}
	return n
}

// FuzzParse feeds arbitrary bytes to Parse: it never panics, every problem names a line of the
// input (or the line after it), every item gives either an entry or a problem, and every entry it
// reads is written back by Encode so that it reads the same.
func FuzzParse(f *testing.F) {
	for _, c := range entryCases {
		f.Add([]byte(c.in))
	}
	for _, c := range problemCases {
		f.Add([]byte(c.in))
	}
	for _, s := range []string{tripItem + authItem + bareReset, "- ", "-", "- \n", "---\n- tool: a\n  state: OPEN\n", "\xff\n- tool: \xfe\n  state: OPEN\n"} {
		f.Add([]byte(s))
	}
	r := rand.New(rand.NewPCG(9, 10))
	for i := 0; i < 20; i++ {
		f.Add(Encode(randEntry(r)))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, problems := Parse(data, 1, testSlow)
		lines := bytes.Count(data, []byte("\n")) + 1
		items := countItems(data)
		problemItems := map[int]bool{}
		for _, p := range problems {
			if p.Line < 1 || p.Line > lines+1 {
				t.Fatalf("problem line %d outside [1, %d]: %+v", p.Line, lines+1, p)
			}
			if p.Item >= 0 && p.Damage() {
				if problemItems[p.Item] {
					t.Fatalf("two problems for item %d: %v", p.Item, problems)
				}
				problemItems[p.Item] = true
			}
			if p.Msg == "" || p.Kind == "" {
				t.Fatalf("problem without a message or kind: %+v", p)
			}
		}
		if len(entries)+len(problemItems) != items {
			t.Fatalf("%d entries + %d problem items, but %d items", len(entries), len(problemItems), items)
		}
		for i := 1; i < len(problems); i++ {
			if problems[i].Line < problems[i-1].Line {
				t.Fatalf("problems not sorted by line: %v", problems)
			}
		}
		for _, e := range entries {
			if e.Line < 1 || e.Line > lines {
				t.Fatalf("entry line %d outside [1, %d]", e.Line, lines)
			}
			enc := Encode(e)
			again, ps := Parse(enc, 1, testSlow)
			if len(ps) > 0 || len(again) != 1 {
				t.Fatalf("entry %+v encodes to %q, which reads as %d entries with problems %v", e, enc, len(again), ps)
			}
			if w := want(e); !sameEntry(again[0], w) {
				t.Fatalf("entry does not survive Encode/Parse:\n  in %+v\n enc %q\n got %+v", w, enc, again[0])
			}
			// Once normalised, Encode is a fixed point.
			if w := Encode(want(e)); !bytes.Equal(Encode(again[0]), w) {
				t.Fatalf("Encode is not stable: %q then %q", w, Encode(again[0]))
			}
		}
	})
}

// FuzzRoundTrip puts fuzzed strings, a count and times into every field of an entry: Encode writes
// one item, and Parse reads back the same entry (invalid UTF-8 as U+FFFD, times at millisecond
// precision).
func FuzzRoundTrip(f *testing.F) {
	for _, w := range nastyWords {
		f.Add(w, "s", w, 3, int64(1764426180123), int64(30e9))
	}
	for _, s := range []string{"\xff\xfe", "a\u2028b\u0085c", "😀\"\\\n\r\t\x00", "  leading", "# comment", "key: value", "- tool: x"} {
		f.Add("mcp__s__t", s, s, 0, int64(0), int64(0))
	}
	r := rand.New(rand.NewPCG(11, 12))
	for i := 0; i < 30; i++ {
		f.Add(randString(r), randString(r), randString(r), r.IntN(10), r.Int64N(4e12), r.Int64N(1e13))
	}
	f.Fuzz(func(t *testing.T, tool, server, text string, count int, ms int64, retry int64) {
		if tool == "" {
			tool = "t"
		}
		if count < 0 {
			count = -count
		}
		if count < 0 {
			count = 0
		}
		var at time.Time
		if ms > 0 && ms < 253402300799999 { // years 1970..9999
			at = time.UnixMilli(ms).UTC()
		}
		e := Entry{Tool: tool, State: Open, FailureType: "UNKNOWN", FailureCount: count, TrippedAt: at, Event: EventTrip,
			At: at, Server: server, Cause: text, Error: text + server, OpenUntil: at, RetryAfter: time.Duration(retry),
			SessionID: server, ToolUseID: text, Source: tool, Fingerprint: text}
		enc := Encode(e)
		if !bytes.HasPrefix(enc, []byte("- tool: ")) || enc[len(enc)-1] != '\n' || countItems(enc) != 1 {
			t.Fatalf("Encode does not write one item: %q", enc)
		}
		got, problems := Parse(enc, 1, testSlow)
		if len(problems) > 0 || len(got) != 1 {
			t.Fatalf("%q: %d entries, problems %v", enc, len(got), problems)
		}
		if w := want(e); !sameEntry(got[0], w) {
			t.Fatalf("%q:\n got %+v\nwant %+v", enc, got[0], w)
		}
	})
}

// FuzzScanBack reads arbitrary bytes backwards, a few bytes at a time (so that items and the
// "\n-" of their starts fall across chunks): the items it hands out, newest first, tile the file
// from the first line that starts an item at or after base to the end, each starting such a line
// and holding no other, and stopping early stops it.
func FuzzScanBack(f *testing.F) {
	for _, s := range []string{"", "-", "- a\n- b\n", "# c\n- a\n  x: -1\n-\n- b", "x\n-y\n- z\n--\n-\r\n- w\n",
		tripItem + authItem + bareReset} {
		f.Add([]byte(s), uint8(3), uint8(0), uint16(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, chunk, baseItem uint8, stopAfter uint16) {
		// The reference: the offsets of the lines that start an item.
		var starts []int64
		for off := 0; off < len(data); {
			if isItemStart(data[off:]) {
				starts = append(starts, int64(off))
			}
			i := bytes.IndexByte(data[off:], '\n')
			if i < 0 {
				break
			}
			off += i + 1
		}
		base := int64(0)
		if len(starts) > 0 && baseItem > 0 {
			base = starts[int(baseItem)%len(starts)]
		}
		var want []int64
		for _, s := range starts {
			if s >= base {
				want = append(want, s)
			}
		}
		l := newLedger(t, string(data))
		fh, err := l.Open()
		if err != nil {
			t.Fatal(err)
		}
		defer fh.Close()
		next := int64(len(data))
		var got []int64
		// Every item is shown to prefetch before it is handed out.
		shown := map[string]bool{}
		prefetch := func(chunk []byte) {
			ScanItems(chunk, func(_ int, item []byte) bool { shown[string(item)] = true; return true })
		}
		err = scanBack(fh, int64(len(data)), base, int64(chunk%17)+1, func(off int64, item []byte) bool {
			if off+int64(len(item)) != next || !bytes.Equal(item, data[off:next]) {
				t.Fatalf("item at %d (%q) does not end where the next one starts (%d)", off, item, next)
			}
			if !shown[string(item)] && (off > base || isItemStart(item)) {
				t.Fatalf("item at %d (%q) was handed out without being prefetched", off, item)
			}
			next = off
			got = append(got, off)
			return stopAfter == 0 || len(got) < int(stopAfter)
		}, prefetch)
		if err != nil {
			t.Fatal(err)
		}
		if stopAfter > 0 && len(want) > int(stopAfter) {
			want = want[len(want)-int(stopAfter):]
		}
		if len(got) != len(want) {
			t.Fatalf("%d items, want %d (starts %v, got %v)", len(got), len(want), want, got)
		}
		for i := range got {
			if got[i] != want[len(want)-1-i] {
				t.Fatalf("item %d at %d, want %d", i, got[i], want[len(want)-1-i])
			}
		}
	})
}
