package agent

// Codex CLI runs no hook after a failed MCP call. Its session transcript (the rollout JSONL at the
// hook's transcript_path) records each finished call, failed ones with "status":"failed", by the
// time the next hook runs: the gate reads the failures from there, incrementally, on the next
// PreToolUse and on Stop.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// Bounds on what one hook reads of a transcript, which is untrusted text of any size: at most
// transcriptChunk bytes of new lines per run (the rest is read by the next run), a line longer than
// transcriptLine is skipped without being kept, and a failure's text is cut at maxError.
const (
	transcriptChunk = 8 << 20
	transcriptLine  = 4 << 20
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
	// Duration is how long the call ran, 0 when not recorded.
	Duration time.Duration
}

// transcriptScan is what one read of a transcript found.
type transcriptScan struct {
	Failures []transcriptFailure
	// Next is the offset after the last complete line read: where the next read starts.
	Next int64
	// Skipped counts lines too long to decode.
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
	scan := transcriptScan{Next: off}
	if off < 0 || off >= size {
		return scan, nil
	}
	br := bufio.NewReaderSize(io.NewSectionReader(r, off, size-off), 64<<10)
	var line []byte
	for scan.Next-off < transcriptChunk {
		n, long, err := readLine(br, &line)
		if errors.Is(err, io.EOF) {
			return scan, nil // a line not yet whole is read next time
		}
		if err != nil {
			return scan, err
		}
		scan.Next += n
		if long {
			scan.Skipped++
			continue
		}
		if f, ok := parseCodexFailure(line); ok {
			scan.Failures = append(scan.Failures, f)
		}
	}
	return scan, nil
}

// readLine reads one line, its newline included, into *line and returns how many bytes it took.
// A line longer than transcriptLine is read to its end but not kept (long is true). io.EOF means
// the input ended before a newline.
func readLine(br *bufio.Reader, line *[]byte) (n int64, long bool, err error) {
	*line = (*line)[:0]
	for {
		chunk, err := br.ReadSlice('\n')
		n += int64(len(chunk))
		if !long {
			if len(*line)+len(chunk) > transcriptLine {
				long, *line = true, (*line)[:0]
			} else {
				*line = append(*line, chunk...)
			}
		}
		switch {
		case err == nil:
			return n, long, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return n, long, err
		}
	}
}

// codexRecord is the part of a transcript line that records a finished MCP call.
type codexRecord struct {
	Type    string `json:"type"`
	Payload struct {
		Type string `json:"type"`
		Item struct {
			Type   string `json:"type"`
			ID     string `json:"id"`
			Server string `json:"server"`
			Tool   string `json:"tool"`
			Status string `json:"status"`
			// Arguments are kept raw, to be hashed; a line is at most transcriptLine bytes.
			Arguments json.RawMessage `json:"arguments"`
			Duration  *struct {
				Secs  int64 `json:"secs"`
				Nanos int64 `json:"nanos"`
			} `json:"duration"`
			Result *struct {
				Content []struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"content"`
			} `json:"result"`
			Error *struct {
				Message string `json:"message"`
			} `json:"error"`
		} `json:"item"`
	} `json:"payload"`
}

// parseCodexFailure returns the failed MCP call a transcript line records, if it records one:
// {"type":"event_msg","payload":{"type":"item_completed","item":{"type":"McpToolCall",
// "status":"failed",…}}}.
func parseCodexFailure(line []byte) (transcriptFailure, bool) {
	if !bytes.Contains(line, mcpCallMarker) || !bytes.Contains(line, failedMarker) {
		return transcriptFailure{}, false
	}
	var rec codexRecord
	if json.Unmarshal(line, &rec) != nil {
		return transcriptFailure{}, false
	}
	it := rec.Payload.Item
	if rec.Type != "event_msg" || rec.Payload.Type != "item_completed" || it.Type != "McpToolCall" ||
		it.Status != "failed" || it.Server == "" || it.Tool == "" {
		return transcriptFailure{}, false
	}
	var text string
	if it.Error != nil && it.Error.Message != "" {
		text = it.Error.Message
		if strings.HasPrefix(text, blockedPrefix) {
			return transcriptFailure{}, false
		}
	} else if it.Result != nil {
		var parts []string
		for _, c := range it.Result.Content {
			if c.Text != "" {
				parts = append(parts, c.Text)
			}
		}
		// The server's own words: a server that starts them with Codex's deny text is still a
		// failing server, not our deny.
		text = strings.Join(parts, "\n")
	}
	f := transcriptFailure{ID: clipField(it.ID, transcriptName), Server: clipField(it.Server, transcriptName),
		Tool: clipField(it.Tool, transcriptName), Error: clipField(text, transcriptError), ArgsHash: hashArgsBytes(it.Arguments)}
	if du := it.Duration; du != nil && du.Secs >= 0 && du.Secs < 1<<32 && du.Nanos >= 0 && du.Nanos < 1e9 {
		f.Duration = time.Duration(du.Secs)*time.Second + time.Duration(du.Nanos)
	}
	return f, true
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
