package agent

// Codex CLI runs no hook after a failed MCP call. Its session transcript (the rollout JSONL at the
// hook's transcript_path) records each finished call, failed ones with "status":"failed", by the
// time the next hook runs: the gate reads the failures from there, incrementally, on the next
// PreToolUse and on Stop.

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// Bounds on what one hook reads of a transcript, which is untrusted text of any size: at most
// transcriptChunk bytes of new lines per run (the rest is read by the next run), and a failure's
// line is decoded only up to transcriptDecode bytes (a longer one is passed over and counted). No
// line is held in memory: a line that records a failed call is decoded streaming, keeping only the
// fields the gate needs, a failure's text cut at transcriptError.
const (
	transcriptChunk  = 8 << 20
	transcriptDecode = 256 << 20
)

// Limits on the fields kept of a transcript's failure; longer values are cut.
const (
	transcriptName  = 1 << 10
	transcriptError = 64 << 10
)

// transcriptFailure is one failed MCP call read from a Codex transcript.
type transcriptFailure struct {
	// ID is the call's id: the tool_use_id its PreToolUse hook had.
	ID string
	// Server is the server's real (unsanitized) name, Tool the tool's.
	Server, Tool string
	// Error is the failure's text: Codex's error message, or the text the server returned with
	// isError.
	Error string
	// ArgsHash is the hash of the call's arguments, as the PreToolUse hook's tool_input hashes
	// (Codex records the same arguments it gave the hook); "" when the record has none.
	ArgsHash string
	// Args are those arguments as decoder.argsInto keeps them, for the classifier.
	Args string
	// Duration is how long the call ran, 0 when not recorded.
	Duration time.Duration
}

// transcriptScan is what one read of a transcript found.
type transcriptScan struct {
	Failures []transcriptFailure
	// Next is the offset after the last complete line read: where the next read starts.
	Next int64
	// Skipped counts lines recording a failed call that were too long to decode.
	Skipped int
}

// mcpCallMarker is in every line that records a finished MCP call, failedMarker in every one of a
// failed call (Codex writes its JSON compactly); a line without both is not decoded at all.
var (
	mcpCallMarker = []byte(`"McpToolCall"`)
	failedMarker  = []byte(`"status":"failed"`)
)

// blockedPrefix starts the text Codex gives the model for a call a PreToolUse hook denied: such a
// call is ours, never a failure of the tool.
const blockedPrefix = "Tool call blocked by PreToolUse hook"

// scanCodexTranscript reads the transcript r from offset off up to size and returns the failed MCP
// calls in its complete lines. It starts no new line after transcriptChunk bytes, and stops
// before a last line that is not yet whole (Codex may be writing it): Next is where the next scan
// starts. Lines that are not JSON, or not a finished MCP call, are passed over.
func scanCodexTranscript(r io.ReaderAt, off, size int64) (transcriptScan, error) {
	return scanTranscript(r, off, size, transcriptDecode)
}

// scanTranscript is scanCodexTranscript with the decode bound as a parameter.
func scanTranscript(r io.ReaderAt, off, size, maxDecode int64) (transcriptScan, error) {
	scan := transcriptScan{Next: off}
	if off < 0 || off >= size {
		return scan, nil
	}
	br := bufio.NewReaderSize(io.NewSectionReader(r, off, size-off), 64<<10)
	for scan.Next-off < transcriptChunk {
		n, marked, err := readLine(br)
		if errors.Is(err, io.EOF) {
			return scan, nil // a line not yet whole is read next time
		}
		if err != nil {
			return scan, err
		}
		start := scan.Next
		scan.Next += n
		switch {
		case !marked:
		case n > maxDecode:
			scan.Skipped++
		default:
			// The line is read a second time, from where it starts, and decoded as it streams.
			if f, ok := decodeCodexFailure(io.NewSectionReader(r, start, n)); ok {
				scan.Failures = append(scan.Failures, f)
			}
		}
	}
	return scan, nil
}

// readLine reads one line, its newline included, without keeping it, and returns how many bytes
// it took and whether it holds both mcpCallMarker and failedMarker (only such a line can record
// a failed call). io.EOF means the input ended before a newline.
func readLine(br *bufio.Reader) (n int64, marked bool, err error) {
	return readMarkedLine(br, mcpCallMarker, failedMarker)
}

// readMarkedLine reads one line, its newline included, without keeping it, and returns how many
// bytes it took and whether it holds every one of markers. io.EOF means the input ended before a
// newline.
func readMarkedLine(br *bufio.Reader, markers ...[]byte) (n int64, marked bool, err error) {
	scans := make([]markerScan, len(markers))
	all := func() bool {
		for _, m := range scans {
			if !m.found {
				return false
			}
		}
		return true
	}
	for {
		chunk, err := br.ReadSlice('\n')
		n += int64(len(chunk))
		for i := range scans {
			scans[i].feed(markers[i], chunk)
		}
		switch {
		case err == nil:
			return n, all(), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return n, false, err
		}
	}
}

// markerScan finds a marker in a line read in chunks, across the chunks' boundaries.
type markerScan struct {
	found bool
	// tail is the end of the chunks fed so far, one byte shorter than the marker.
	tail []byte
}

func (m *markerScan) feed(marker, chunk []byte) {
	if m.found || len(chunk) == 0 {
		return
	}
	keep := len(marker) - 1
	if len(m.tail) > 0 {
		// A marker that starts in the tail ends within the first keep bytes of chunk.
		head := chunk[:min(len(chunk), keep)]
		if bytes.Contains(append(m.tail, head...), marker) {
			m.found = true
			return
		}
	}
	if bytes.Contains(chunk, marker) {
		m.found = true
		return
	}
	joined := append(m.tail, chunk[max(0, len(chunk)-keep):]...)
	m.tail = append(m.tail[:0], joined[max(0, len(joined)-keep):]...)
}

// parseCodexFailure returns the failed MCP call the transcript line records, if it records one.
func parseCodexFailure(line []byte) (transcriptFailure, bool) {
	if !bytes.Contains(line, mcpCallMarker) || !bytes.Contains(line, failedMarker) {
		return transcriptFailure{}, false
	}
	return decodeCodexFailure(bytes.NewReader(line))
}

// codexItem is the part of a transcript line that records a finished MCP call:
// {"type":"event_msg","payload":{"type":"item_completed","item":{"type":"McpToolCall",
// "id":…,"server":…,"tool":…,"arguments":…,"status":"failed","result":{"content":[{"type":
// "text","text":…}]} or "error":{"message":…},"duration":{"secs":…,"nanos":…}}}}.
type codexItem struct {
	top, payload, typ, id, server, tool, status string
	argsHash                                    string
	argsRaw                                     string
	errMsg                                      string
	texts                                       []string
	textBytes                                   int
	secs, nanos                                 int64
	hasDuration                                 bool
	// bad is set by a field of another type than Codex writes: such a line is not a record the
	// gate understands.
	bad bool
}

// decodeCodexFailure decodes one transcript line from r as it streams, keeping only the fields a
// failure needs (the texts up to transcriptError in all), and returns the failed MCP call it
// records, if it records one and is one whole JSON object.
func decodeCodexFailure(r io.Reader) (transcriptFailure, bool) {
	d := newDecoder(r)
	var it codexItem
	err := d.object(func(key string) error {
		switch key {
		case "type":
			return d.strictString(&it.top, maxName, &it.bad)
		case "payload":
			return d.strictObject(&it.bad, func(key string) error {
				switch key {
				case "type":
					return d.strictString(&it.payload, maxName, &it.bad)
				case "item":
					return d.strictObject(&it.bad, func(key string) error { return it.field(d, key) })
				}
				return d.skip()
			})
		}
		return d.skip()
	})
	if err == nil {
		// One object, then only white space (the newline).
		if _, end := d.nonSpace(); end == nil {
			err = d.fail("more than one value on the line")
		}
	}
	if err != nil || it.bad || it.top != "event_msg" || it.payload != "item_completed" || it.typ != "McpToolCall" ||
		it.status != "failed" || it.server == "" || it.tool == "" {
		return transcriptFailure{}, false
	}
	var text string
	if it.errMsg != "" {
		text = it.errMsg
		if strings.HasPrefix(text, blockedPrefix) {
			return transcriptFailure{}, false
		}
	} else {
		// The server's own words: a server that starts them with Codex's deny text is still a
		// failing server, not our deny.
		text = strings.Join(it.texts, "\n")
	}
	f := transcriptFailure{ID: clipField(it.id, transcriptName), Server: clipField(it.server, transcriptName),
		Tool: clipField(it.tool, transcriptName), Error: clipField(text, transcriptError), ArgsHash: it.argsHash,
		Args: it.argsRaw}
	if it.hasDuration && it.secs >= 0 && it.secs < 1<<32 && it.nanos >= 0 && it.nanos < 1e9 {
		f.Duration = time.Duration(it.secs)*time.Second + time.Duration(it.nanos)
	}
	return f, true
}

// field reads one field of the item object.
func (it *codexItem) field(d *decoder, key string) error {
	switch key {
	case "type":
		return d.strictString(&it.typ, maxName, &it.bad)
	case "id":
		return d.strictString(&it.id, transcriptName, &it.bad)
	case "server":
		return d.strictString(&it.server, transcriptName, &it.bad)
	case "tool":
		return d.strictString(&it.tool, transcriptName, &it.bad)
	case "status":
		return d.strictString(&it.status, maxName, &it.bad)
	case "arguments":
		// Only a failed call's line is decoded: its arguments are kept for the classifier.
		return d.argsInto(&it.argsHash, &it.argsRaw, true)
	case "duration":
		it.hasDuration = true
		return d.strictObject(&it.bad, func(key string) error {
			switch key {
			case "secs":
				return d.intInto(&it.secs)
			case "nanos":
				return d.intInto(&it.nanos)
			}
			return d.skip()
		})
	case "error":
		return d.strictObject(&it.bad, func(key string) error {
			if key == "message" {
				return d.strictString(&it.errMsg, transcriptError, &it.bad)
			}
			return d.skip()
		})
	case "result":
		return d.strictObject(&it.bad, func(key string) error {
			if key != "content" {
				return d.skip()
			}
			it.texts, it.textBytes = nil, 0
			return d.strictArray(&it.bad, func() error {
				return d.strictObject(&it.bad, func(key string) error {
					if key != "text" {
						return d.skip()
					}
					// What is left of the text budget is kept; a text past it is still read
					// and checked.
					var s string
					err := d.strictString(&s, max(1, transcriptError-it.textBytes), &it.bad)
					if s != "" && it.textBytes < transcriptError {
						it.texts = append(it.texts, s)
						it.textBytes += len(s) + 1
					}
					return err
				})
			})
		})
	}
	return d.skip()
}

// clipField cuts s to at most max bytes at a character boundary, ending it in "…" when cut.
func clipField(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
