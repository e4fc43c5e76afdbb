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

// TestDecoderCacheOutsideWorkTree: a home directory that is the repository's work tree (a
// container run with HOME=/work, the repository in /work) holds the cache's path, so a planted
// answer there would be taken for the full CLI's: no cache is used then.
func TestDecoderCacheOutsideWorkTree(t *testing.T) {
	repo := t.TempDir()
	getenv := func(k string) string {
		if k == "HOME" {
			return repo
		}
		return ""
	}
	if got := projectDecoderCache(getenv, filepath.Join(repo, "sub"))(); got != decoderCacheDir(getenv) {
		t.Fatalf("outside any work tree: cache %q, want %q", got, decoderCacheDir(getenv))
	}
	if err := os.Mkdir(filepath.Join(repo, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	if got := projectDecoderCache(getenv, filepath.Join(repo, "sub"))(); got != "" {
		t.Errorf("the cache in the project's work tree is used: %q", got)
	}
	// A project of its own (its own .git) under that home is another work tree: the cache is
	// outside it.
	other := filepath.Join(repo, "src", "app")
	if err := os.MkdirAll(filepath.Join(other, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	if got := projectDecoderCache(getenv, other)(); got != decoderCacheDir(getenv) {
		t.Errorf("a project's own work tree under the home: cache %q, want %q", got, decoderCacheDir(getenv))
	}
}
