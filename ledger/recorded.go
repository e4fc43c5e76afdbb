package ledger

import (
	"bytes"
)

// RecordedWithin bounds how far back from the ledger's end Recorded looks: the entries of one call
// are written within moments of each other, well inside the last few hundred entries.
const RecordedWithin = 64 << 10

// Recorded reports whether an entry among the ledger's last RecordedWithin bytes records the call
// toolUseID and was written by source. The MCP proxy and the hook of the same agent see the same
// call under the agent's tool-use id: each asks this before counting what the other counted
// (docs/proxy.md). An id that is empty, or that no entry names, is false.
func (l *Ledger) Recorded(toolUseID, source string) bool {
	if toolUseID == "" || source == "" {
		return false
	}
	id, err := l.Stat()
	if err != nil || id.Size == 0 {
		return false
	}
	data, _, err := l.ReadTail(max(0, id.Size-RecordedWithin))
	if err != nil {
		return false
	}
	idLine := appendOptString(nil, "tool_use_id", toolUseID)
	sourceLine := appendOptString(nil, "source", source)
	// Items start at a line "- " at column 0; the first may be cut by the window and is skipped
	// unless the window is the whole file.
	items := bytes.Split(data, []byte("\n- "))
	if id.Size > RecordedWithin && len(items) > 0 {
		items = items[1:]
	}
	for _, it := range items {
		// The split took each item's last newline with the next item's "- ".
		it = append(it[:len(it):len(it)], '\n')
		if bytes.Contains(it, idLine) && bytes.Contains(it, sourceLine) {
			return true
		}
	}
	return false
}
