package gate

import (
	"bytes"
	"io"
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

// readFirst reads stdin once, into a buffer of quickRead bytes; rest is stdin with what was read
// in front.
func readFirst(stdin io.Reader) (first []byte, rest io.Reader) {
	buf := make([]byte, quickRead)
	n, err := stdin.Read(buf)
	first = buf[:n]
	if err != nil {
		return first, io.MultiReader(bytes.NewReader(first), eofReader{err})
	}
	return first, io.MultiReader(bytes.NewReader(first), stdin)
}
