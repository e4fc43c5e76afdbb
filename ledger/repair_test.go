package ledger

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	tripItem = "- tool: mcp__gh__search\n  state: OPEN\n  failure_type: TIMEOUT\n  failure_count: 3\n  tripped_at: 2026-11-29T14:00:00Z\n  reset_at: null\n"
	authItem = "- tool: mcp__gh__issues\n  state: OPEN\n  failure_type: AUTH\n  failure_count: 1\n  tripped_at: 2026-11-29T14:10:00Z\n  reset_at: null\n"
	// bareReset is the skill's mistake: a reset appended as bare indented keys, without "- tool:".
	bareReset = "  state: CLOSED\n  reset_at: 2026-11-29T14:20:00Z\n  reset_method: user_forced\n"
)

var repairNow = time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)

// newLedger writes data as the ledger of a fresh state directory.
func newLedger(t testing.TB, data string) *Ledger {
	t.Helper()
	l := &Ledger{Slow: testSlow, Dir: filepath.Join(t.TempDir(), "mcp_circuit")}
	if _, err := l.EnsureDir(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(l.Path(), []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return l
}

func readString(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func dirNames(t testing.TB, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	return names
}

func TestRepair(t *testing.T) {
	tests := []struct {
		name        string
		in          string
		want        string // the repaired ledger
		entries     int
		split       int
		quarantined []ProblemKind
		quarantine  []string // substrings of the quarantine file
	}{
		{
			name:    "merged item is split back into two entries",
			in:      tripItem + authItem + bareReset,
			want:    tripItem + authItem + "- tool: mcp__gh__issues\n" + bareReset,
			entries: 3, split: 1,
		},
		{
			name:    "merged item that is not the last one",
			in:      authItem + bareReset + tripItem,
			want:    authItem + "- tool: mcp__gh__issues\n" + bareReset + tripItem,
			entries: 3, split: 1,
		},
		{
			name:    "two resets merged into one item give three entries",
			in:      authItem + bareReset + bareReset,
			want:    authItem + "- tool: mcp__gh__issues\n" + bareReset + "- tool: mcp__gh__issues\n" + bareReset,
			entries: 3, split: 1,
		},
		{
			name:        "torn last item is quarantined, nothing else lost",
			in:          tripItem + authItem + "- tool: mcp__gh__x\n  state: OP",
			want:        tripItem + authItem,
			entries:     2,
			quarantined: []ProblemKind{Torn},
			quarantine:  []string{"# line 13: ", "- tool: mcp__gh__x\n  state: OP\n"},
		},
		{
			name:        "stray text at column 0 is quarantined with its line",
			in:          tripItem + "oops: not an item\n" + authItem,
			want:        tripItem + authItem,
			entries:     2,
			quarantined: []ProblemKind{NotSequence},
			quarantine:  []string{"# line 7: ", "oops: not an item\n"},
		},
		{
			name:        "an invalid item in the middle is quarantined",
			in:          tripItem + "- tool: bad\n  state: BROKEN\n" + authItem,
			want:        tripItem + authItem,
			entries:     2,
			quarantined: []ProblemKind{Invalid},
			quarantine:  []string{"- tool: bad\n  state: BROKEN\n"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLedger(t, tt.in)
			res, err := l.Repair(repairNow)
			if err != nil {
				t.Fatal(err)
			}
			if got := readString(t, l.Path()); got != tt.want {
				t.Errorf("repaired ledger:\n%s\nwant:\n%s", got, tt.want)
			}
			if res.Entries != tt.entries || res.Split != tt.split {
				t.Errorf("result %+v, want %d entries, %d split", res, tt.entries, tt.split)
			}
			entries, problems, err := l.ReadFile()
			if err != nil || len(problems) > 0 || len(entries) != tt.entries {
				t.Errorf("after repair: %d entries, problems %v, err %v", len(entries), problems, err)
			}
			// The backup is the original, byte for byte.
			if res.Backup != l.Path()+".bak-20261129T150000.000Z" {
				t.Errorf("backup %q", res.Backup)
			} else if got := readString(t, res.Backup); got != tt.in {
				t.Errorf("backup differs from the original:\n%q\nwant\n%q", got, tt.in)
			}
			var kinds []ProblemKind
			for _, p := range res.Quarantined {
				kinds = append(kinds, p.Kind)
			}
			if strings.Join(kindStrings(kinds), ",") != strings.Join(kindStrings(tt.quarantined), ",") {
				t.Errorf("quarantined %v, want %v", res.Quarantined, tt.quarantined)
			}
			if len(tt.quarantine) == 0 {
				if res.Quarantine != "" {
					t.Errorf("unexpected quarantine file %s", res.Quarantine)
				}
				return
			}
			q := readString(t, res.Quarantine)
			for _, s := range tt.quarantine {
				if !strings.Contains(q, s) {
					t.Errorf("quarantine file lacks %q:\n%s", s, q)
				}
			}
			// Nothing is lost: every byte of the original is in the ledger or the quarantine.
			for _, line := range strings.SplitAfter(tt.in, "\n") {
				if line != "" && !strings.Contains(tt.want, strings.TrimLeft(line, "- ")) && !strings.Contains(q, line) {
					t.Errorf("line %q is lost", line)
				}
			}
		})
	}
}

func kindStrings(ks []ProblemKind) []string {
	s := make([]string, len(ks))
	for i, k := range ks {
		s[i] = string(k)
	}
	return s
}

func TestRepairLeavesAGoodLedgerUntouched(t *testing.T) {
	for _, in := range []string{tripItem + authItem, "", "# only a comment\n"} {
		l := newLedger(t, in)
		before, _ := os.Stat(l.Path())
		res, err := l.Repair(repairNow)
		if err != nil {
			t.Fatal(err)
		}
		if res.Backup != "" || res.Quarantine != "" || res.Split != 0 || len(res.Quarantined) != 0 {
			t.Errorf("%q: repair did something: %+v", in, res)
		}
		if got := readString(t, l.Path()); got != in {
			t.Errorf("%q: ledger changed to %q", in, got)
		}
		after, _ := os.Stat(l.Path())
		if !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
			t.Errorf("%q: ledger file was rewritten", in)
		}
		if names := dirNames(t, l.Dir); len(names) != 1 {
			t.Errorf("%q: files besides the ledger: %v", in, names)
		}
	}
	// A missing ledger is nothing to repair.
	l := &Ledger{Slow: testSlow, Dir: t.TempDir()}
	if res, err := l.Repair(repairNow); err != nil || res.Backup != "" {
		t.Errorf("missing ledger: %+v %v", res, err)
	}
}

// tornFixture encodes 50 random entries and returns the file, the entries as they read back, the
// byte offset where each item starts (plus the file's length) and each item's first line.
func tornFixture(t testing.TB) (data []byte, entries []Entry, bounds []int, lines []int) {
	r := rand.New(rand.NewPCG(5, 6))
	line := 1
	for i := 0; i < 50; i++ {
		// Mostly entries as the CLI writes them, every fifth one full of YAML traps.
		e := sampleEntry(i)
		if i%5 == 4 {
			e = randEntry(r)
			e.Extra = nil // keep every item on the fast path: this test is about cuts, not styles
		}
		bounds = append(bounds, len(data))
		lines = append(lines, line)
		enc := Encode(e)
		line += bytes.Count(enc, []byte("\n"))
		data = append(data, enc...)
		entries = append(entries, want(e))
	}
	bounds = append(bounds, len(data))
	return data, entries, bounds, lines
}

// TestTornWrite cuts a 50-entry ledger at every byte offset, as a write cut short by a crash leaves
// it. Parse must report at most one problem, Torn at the first line of the cut item, and read every
// complete item before it.
//
// What no reader can tell: a cut just after a newline inside the last item, when the lines before
// the cut already make a valid entry (tool and state come first), leaves a complete-looking shorter
// entry; no end marker distinguishes it from a hand-written entry with fewer keys. The test accepts
// that case, checks the short entry agrees with the original on every key it has, and logs how many
// offsets it concerns. (A killed process does not produce it: each append is one write(2).)
func TestTornWrite(t *testing.T) {
	t.Parallel()
	data, entries, bounds, lines := tornFixture(t)
	n := len(entries)
	// The items before the cut item parse alone exactly as in the whole file (items are read one by
	// one), so most cuts parse only from the cut item's start; every 7th cut in the last item, and
	// every 211th elsewhere, parses the whole cut file.
	for k := 0; k <= n; k++ {
		got, problems := Parse(data[:bounds[k]], 1, testSlow)
		if len(problems) != 0 || len(got) != k {
			t.Fatalf("cut at the boundary of item %d: %d entries, problems %v", k, len(got), problems)
		}
		for i := range got {
			if !sameEntry(got[i], entries[i]) {
				t.Fatalf("item %d does not read back", i)
			}
		}
	}
	silent := 0
	k := 0 // the item the cut falls in
	for cut := 0; cut <= len(data); cut++ {
		for k+1 < len(bounds) && bounds[k+1] <= cut {
			k++
		}
		if cut == bounds[k] {
			continue // checked above
		}
		from, first, before := bounds[k], lines[k], 0
		if (k == n-1 && cut%7 == 0) || cut%211 == 0 {
			from, first, before = 0, 1, k
		}
		got, problems := Parse(data[from:cut], first, testSlow)
		for i := 0; i < before; i++ {
			if i >= len(got) || !sameEntry(got[i], entries[i]) {
				t.Fatalf("cut %d: complete item %d does not read back", cut, i)
			}
		}
		got = got[min(before, len(got)):]
		switch {
		case len(problems) == 1 && problems[0].Kind == Unterminated:
			// Cut where what is left still reads as an entry: read, as a hand edit without the
			// final newline is; the next append closes it off.
			if len(got) != 1 || got[0].Tool != entries[k].Tool || got[0].State != entries[k].State {
				t.Fatalf("cut %d in item %d: unterminated but %d entries %+v", cut, k, len(got), got)
			}
			silent++
		case len(problems) == 1:
			p := problems[0]
			if p.Kind != Torn || p.Line != lines[k] || p.Item != before || len(got) != 0 {
				t.Fatalf("cut %d in item %d (line %d): %d entries, problem %+v", cut, k, lines[k], len(got), p)
			}
		case len(problems) == 0:
			if data[cut-1] != '\n' || len(got) != 1 {
				t.Fatalf("cut %d in item %d: no problem reported for a torn item: %d entries", cut, k, len(got))
			}
			if e, w := got[0], entries[k]; e.Tool != w.Tool || e.State != w.State || !prefixOf(e, w) {
				t.Fatalf("cut %d: the short entry %+v disagrees with the original %+v", cut, e, w)
			}
			silent++
		default:
			t.Fatalf("cut %d: %d problems: %v", cut, len(problems), problems)
		}
	}
	t.Logf("%d offsets: %d read as a shorter complete entry (cut at a line end after tool and state)", len(data)+1, silent)
}

// prefixOf reports whether every key short has is set as in full.
func prefixOf(short, full Entry) bool {
	enc, encFull := Encode(short), Encode(full)
	// Encode writes keys in a fixed order, one line each; failure_type, failure_count, tripped_at
	// and reset_at are always written, so compare the lines the cut kept.
	kept := bytes.Count(enc, []byte("\n"))
	fullLines := bytes.SplitAfter(encFull, []byte("\n"))
	shortLines := bytes.SplitAfter(enc, []byte("\n"))
	for i := 0; i < kept && i < len(fullLines); i++ {
		l := shortLines[i]
		if bytes.Contains(l, []byte(": null\n")) || bytes.HasSuffix(l, []byte("failure_count: 0\n")) {
			continue // written for an absent key
		}
		if !bytes.Contains(encFull, l) {
			return false
		}
	}
	return true
}

// TestRepairTornWrite repairs cut ledgers: Repair keeps exactly the complete items (plus the short
// entry of a cut at a line end, see TestTornWrite) and quarantines the torn rest. Repair writes three
// fsynced files, so it runs at every item boundary, at every line end of the last item and the byte
// before it, and at a fixed-seed sample of other offsets, rather than at all of them.
func TestRepairTornWrite(t *testing.T) {
	t.Parallel()
	data, entries, bounds, _ := tornFixture(t)
	n := len(entries)
	cuts := map[int]bool{}
	for cut := bounds[n-1] + 1; cut <= len(data); cut++ {
		if data[cut-1] == '\n' {
			cuts[cut], cuts[cut-1] = true, true
		}
	}
	r := rand.New(rand.NewPCG(7, 8))
	for i := 0; i < 30; i++ {
		cuts[r.IntN(len(data))] = true
	}
	for _, b := range bounds {
		cuts[b] = true
	}
	dir := t.TempDir()
	run := 0
	for cut := range cuts {
		run++
		l := &Ledger{Slow: testSlow, Dir: filepath.Join(dir, "d"+strconv.Itoa(run))}
		if _, err := l.EnsureDir(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(l.Path(), data[:cut], 0o600); err != nil {
			t.Fatal(err)
		}
		k := 0
		for k+1 < len(bounds) && bounds[k+1] <= cut {
			k++
		}
		res, err := l.Repair(repairNow)
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		got, problems, err := l.ReadFile()
		if err != nil || len(problems) > 0 {
			t.Fatalf("cut %d: after repair: problems %v, err %v", cut, problems, err)
		}
		for i := 0; i < k; i++ {
			if !sameEntry(got[i], entries[i]) {
				t.Fatalf("cut %d: complete item %d lost or changed", cut, i)
			}
		}
		switch {
		case cut == bounds[k]:
			if len(got) != k || res.Backup != "" {
				t.Fatalf("cut %d at a boundary: %d entries, result %+v", cut, len(got), res)
			}
		case len(res.Quarantined) == 1:
			if len(got) != k || res.Quarantined[0].Kind != Torn {
				t.Fatalf("cut %d: %d entries kept, result %+v", cut, len(got), res)
			}
			if q := readString(t, res.Quarantine); !strings.Contains(q, string(data[bounds[k]:cut])) {
				t.Fatalf("cut %d: the quarantine lacks the torn item", cut)
			}
			if b := readString(t, res.Backup); b != string(data[:cut]) {
				t.Fatalf("cut %d: the backup differs from the cut file", cut)
			}
		case res.Closed:
			if len(got) != k+1 || data[cut-1] == '\n' || res.Backup == "" {
				t.Fatalf("cut %d: closed off, but %d entries, result %+v", cut, len(got), res)
			}
		default:
			if len(got) != k+1 || data[cut-1] != '\n' || res.Backup != "" {
				t.Fatalf("cut %d: %d entries, result %+v", cut, len(got), res)
			}
		}
	}
}
