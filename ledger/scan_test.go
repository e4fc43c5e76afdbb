package ledger

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestScanForwardSeesWhatScanBackSees: the forward scan hands out the same items, with the same
// offsets, as the backward one, in file order: over chunk boundaries, an item longer than a
// chunk, comments and a last item without its newline.
func TestScanForwardSeesWhatScanBackSees(t *testing.T) {
	var b bytes.Buffer
	for i := range 30000 {
		b.Write(Encode(Entry{Tool: fmt.Sprintf("mcp__s%d__t", i%7), State: Closed, Event: EventSuccess}))
		if i == 12345 {
			b.WriteString("# a comment at column 0\n")
			b.Write(Encode(Entry{Tool: "mcp__big__t", State: Open, Error: strings.Repeat("x", 3*chunkSize/2)}))
		}
	}
	b.WriteString("- tool: mcp__last__t\n  state: OPEN")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, FileName), b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	l := &Ledger{Dir: dir}
	type item struct {
		off  int64
		text string
	}
	var back, fwd []item
	if _, err := l.ScanBackAt(0, func(off int64, it []byte) bool { back = append(back, item{off, string(it)}); return true }); err != nil {
		t.Fatal(err)
	}
	slices.Reverse(back)
	if err := l.ScanForward(0, func(off int64, it []byte) bool { fwd = append(fwd, item{off, string(it)}); return true }); err != nil {
		t.Fatal(err)
	}
	if len(fwd) != len(back) {
		t.Fatalf("forward %d items, backward %d", len(fwd), len(back))
	}
	for i := range fwd {
		if fwd[i] != back[i] {
			t.Fatalf("item %d: forward %d %.60q, backward %d %.60q", i, fwd[i].off, fwd[i].text, back[i].off, back[i].text)
		}
	}
	// From an item boundary inside the file, until told to stop.
	n := 0
	if err := l.ScanForward(back[100].off, func(off int64, it []byte) bool {
		if off != back[100+n].off {
			t.Fatalf("from item 100: item %d at %d, want %d", n, off, back[100+n].off)
		}
		n++
		return n < 5
	}); err != nil || n != 5 {
		t.Fatalf("stopped after %d items: %v", n, err)
	}
}
