package gate

import (
	"bytes"
	"io"
	"time"
)

// Skipper is a codec that can tell from the raw bytes of a whole event that it concerns no MCP
// tool and needs no answer. VS Code runs the hooks of .claude/settings.json for every tool it
// calls, whatever their matcher says: such an event is answered before anything else is read or
// started, so that it costs about what a minimal program costs (docs/performance.md).
type Skipper interface {
	// Skips reports whether the event whose first bytes are raw needs no answer: it must be
	// sure that raw is the whole event, and never be true for an event the gate would decide
	// otherwise than allowing it silently.
	Skips(raw []byte) bool
}

// firstWait is how long Main waits for the first read of stdin before it goes on to the gate,
// whose watchdog then covers a stdin that stalls (Run).
const firstWait = 50 * time.Millisecond

// readFirst reads stdin once, into a buffer of quickRead bytes, waiting at most wait: ok says the
// read came back in time with first. rest is stdin with what was read in front, the pending read
// included when it did not come back in time.
func readFirst(stdin io.Reader, wait time.Duration) (first []byte, ok bool, rest io.Reader) {
	got := make(chan pending, 1)
	go func() { got <- readRaw(stdin) }()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case r := <-got:
		return r.data, true, r.rest(stdin)
	case <-t.C:
		return nil, false, &pendingReader{got: got, stdin: stdin}
	}
}

// readOnce reads stdin once, into a buffer of quickRead bytes; rest is stdin with what was read
// in front.
func readOnce(stdin io.Reader) (first []byte, rest io.Reader) {
	p := readRaw(stdin)
	return p.data, p.rest(stdin)
}

// readRaw is one read of stdin, into a buffer of quickRead bytes.
func readRaw(stdin io.Reader) pending {
	buf := make([]byte, quickRead)
	n, err := stdin.Read(buf)
	return pending{buf[:n], err}
}

// eofReader is a stdin whose first read ended it (io.EOF or an error): it says so again.
type eofReader struct{ err error }

func (r eofReader) Read([]byte) (int, error) { return 0, r.err }

// pending is the outcome of one read of stdin.
type pending struct {
	data []byte
	err  error
}

// rest is stdin after the read p, with p's data in front.
func (p pending) rest(stdin io.Reader) io.Reader {
	if p.err != nil {
		return io.MultiReader(bytes.NewReader(p.data), eofReader{p.err})
	}
	return io.MultiReader(bytes.NewReader(p.data), stdin)
}

// pendingReader is stdin while readFirst's read is still waiting: its first Read waits for it.
type pendingReader struct {
	got   chan pending
	stdin io.Reader
	r     io.Reader
}

func (p *pendingReader) Read(b []byte) (int, error) {
	if p.r == nil {
		p.r = (<-p.got).rest(p.stdin)
	}
	return p.r.Read(b)
}
