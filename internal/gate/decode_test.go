package gate

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestDecodedCacheIsBounded: the decoded-answer cache never grows past its bounds, however many
// changes of a repository's files it has answered: the oldest answers go, the newest stays.
func TestDecodedCacheIsBounded(t *testing.T) {
	home := t.TempDir()
	getenv := func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}
	dir := decoderCacheDir(getenv)
	old := time.Now().Add(-time.Hour)
	var last string
	for i := range maxCacheFiles + 50 {
		last = filepath.Join(dir, fmt.Sprintf("%064x.json", i))
		KeepDecoded(last, []byte(`{"entry":{}}`), getenv)
		os.Chtimes(last, old.Add(time.Duration(i)*time.Second), old.Add(time.Duration(i)*time.Second))
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) > maxCacheFiles {
		t.Fatalf("%d answers kept, want at most %d", len(ents), maxCacheFiles)
	}
	if _, err := os.Stat(last); err != nil {
		t.Fatalf("the newest answer was pruned: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("%064x.json", 0))); err == nil {
		t.Error("the oldest answer was kept")
	}
	// Bytes too: a few large answers.
	big := make([]byte, maxCached)
	for i := range 6 {
		KeepDecoded(filepath.Join(dir, fmt.Sprintf("big%061x.json", i)), big, getenv)
	}
	var total int64
	ents, _ = os.ReadDir(dir)
	for _, e := range ents {
		fi, _ := e.Info()
		total += fi.Size()
	}
	if total > maxCacheBytes {
		t.Errorf("%d bytes kept, want at most %d", total, maxCacheBytes)
	}
	// Only a path in the user's cache is written.
	outside := filepath.Join(t.TempDir(), "x.json")
	KeepDecoded(outside, []byte("{}"), getenv)
	if _, err := os.Stat(outside); err == nil {
		t.Error("an answer was written outside the user's cache")
	}
}
