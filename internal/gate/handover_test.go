package gate

import (
	"io"
	"os/exec"
	"testing"
	"time"
)

// TestHandOverDoesNotWaitForStdin: the full CLI answers and exits while the agent keeps the hook's
// stdin open; the hand-over returns its exit status at once rather than waiting for an end of
// stdin that never comes.
func TestHandOverDoesNotWaitForStdin(t *testing.T) {
	bin, err := exec.LookPath("false")
	if err != nil {
		t.Skip(err)
	}
	open, w := io.Pipe() // never closed: stdin that never ends
	defer w.Close()
	done := make(chan struct{})
	var code int
	var started bool
	go func() {
		code, started, err = handOver(bin, nil, open, io.Discard, io.Discard)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the hand-over still waits for stdin after the full CLI exited")
	}
	if !started || code != 1 || err != nil {
		t.Fatalf("handOver = %d, %v, %v; want 1 (false's status), started, no error", code, started, err)
	}
}
