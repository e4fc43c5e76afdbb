//go:build unix

package states

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// TestProvisionalFIFO: a FIFO committed as state.provisional.json neither blocks a read nor is
// trusted: the read answers from the ledger and replaces it with a provisional snapshot of its own.
func TestProvisionalFIFO(t *testing.T) {
	s := newStore(t)
	want := writeRandomLedger(t, s, 22, 12000)
	if err := syscall.Mkfifo(s.provisionalPath(), 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	type result struct {
		b   *Board
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := hookStore(s.Ledger.Dir, "mcp__a__x", nil).View()
		done <- result{b, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatal(r.err)
		}
		sameCircuits(t, "FIFO planted", r.b, want, "mcp__a__x")
	case <-time.After(20 * time.Second):
		t.Fatal("a read blocked on a FIFO planted as the provisional snapshot")
	}
	if fi, err := os.Lstat(s.provisionalPath()); err != nil || !fi.Mode().IsRegular() || readProv(s) == nil {
		t.Fatalf("the FIFO was not replaced by a provisional snapshot: %v %v", fi, err)
	}
}
