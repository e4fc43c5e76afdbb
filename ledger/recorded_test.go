package ledger

import (
	"fmt"
	"testing"
	"time"
)

// TestRecorded: an entry is found by its tool-use id and source, whole lines only, near the end of
// a ledger of any size; a cut first item in the window never matches.
func TestRecorded(t *testing.T) {
	l := &Ledger{Dir: t.TempDir()}
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	var filler []Entry
	for i := range 2000 { // well over RecordedWithin
		filler = append(filler, Entry{Tool: "mcp__a__b", State: Closed, Event: EventFailure, At: at, ToolUseID: fmt.Sprintf("toolu_old_%d", i), Source: SourceProxy})
	}
	if _, _, err := l.Append(filler...); err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.Append(Entry{Tool: "mcp__a__b", State: Closed, Event: EventFailure, At: at, ToolUseID: "toolu_new", Source: SourceProxy}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id, source string
		want       bool
	}{
		{"toolu_new", SourceProxy, true},
		{"toolu_new", SourceHook, false},
		{"toolu_ne", SourceProxy, false}, // a prefix of an id is another id
		{"oolu_new", SourceProxy, false}, // so is a suffix
		{"toolu_old_1999", SourceProxy, true},
		{"toolu_old_0", SourceProxy, false}, // far from the end
		{"", SourceProxy, false},
	} {
		if got := l.Recorded(tc.id, tc.source); got != tc.want {
			t.Errorf("Recorded(%q, %q) = %v, want %v", tc.id, tc.source, got, tc.want)
		}
	}
}
