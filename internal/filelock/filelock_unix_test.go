//go:build unix

package filelock

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/safefile"
)

func TestExclusiveWaitsThenTimesOut(t *testing.T) {
	name := filepath.Join(t.TempDir(), ".lock")
	unlock, err := Exclusive(name, Options{Wait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	waited := false
	if _, err := Exclusive(name, Options{Wait: 50 * time.Millisecond, Waiting: func(time.Duration) { waited = true }}); !errors.Is(err, ErrTimeout) || !waited {
		t.Fatalf("second Exclusive while held: %v (told of the wait: %v), want ErrTimeout", err, waited)
	}
	if _, ok, err := TryExclusive(name); ok || err != nil {
		t.Fatalf("TryExclusive while held: %v %v", ok, err)
	}
	if _, err := Shared(name, 50*time.Millisecond); !errors.Is(err, ErrTimeout) {
		t.Fatalf("Shared while held exclusively: %v", err)
	}
	unlock()
	// The two waiters that timed out are still queued in the kernel: each takes the lock the moment
	// it is free and lets go of it at once. TryExclusive succeeds once they have.
	var u func()
	ok := false
	for deadline := time.Now().Add(5 * time.Second); !ok && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if u, ok, err = TryExclusive(name); err != nil {
			t.Fatal(err)
		}
	}
	if !ok {
		t.Fatal("TryExclusive once free: still held 5 s after the holder let go")
	}
	u()
	r1, err := Shared(name, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := Shared(name, time.Second)
	if err != nil {
		t.Fatalf("two shared holders: %v", err)
	}
	r1()
	r2()
}

func TestLockFileIsNeverFollowed(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, nil, 0o600)
	link := filepath.Join(dir, ".lock")
	os.Symlink(target, link)
	if _, err := Exclusive(link, Options{Wait: time.Second}); !errors.Is(err, safefile.ErrUnsafeFile) {
		t.Fatalf("Exclusive on a link: %v, want ErrUnsafeFile", err)
	}
	if _, err := Shared(filepath.Join(dir, "missing"), time.Second); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Shared on a missing file: %v, want ErrNotExist", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Shared created the lock file")
	}
}
