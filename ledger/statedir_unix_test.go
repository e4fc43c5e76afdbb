//go:build unix

package ledger

import (
	"os"
	"path/filepath"
	"testing"
)

// TestAppendRefusesLinkedStateDir: an append never goes through a state directory that is a link.
func TestAppendRefusesLinkedStateDir(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	os.Mkdir(filepath.Join(root, ".claude"), 0o755)
	sd := filepath.Join(root, ".claude", "mcp_circuit")
	os.Symlink(outside, sd)
	l := &Ledger{Slow: testSlow, Dir: sd}
	if _, _, err := l.Append(Entry{Tool: "mcp__a__b", State: Open}); err == nil {
		t.Errorf("Append through a linked state directory succeeded")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("files were written outside: %v", entries)
	}
}
