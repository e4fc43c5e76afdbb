package agent

// Factory Droid runs no hook after a failed MCP call. Its session transcript (the JSONL at the
// hook's transcript_path, ~/.factory/sessions/<cwd>/<session>.jsonl) records each call as Claude
// Code's messages do: an assistant message's {"type":"tool_use","id","name","input"}, then a user
// message's {"type":"tool_result","tool_use_id","is_error","content"}. A failure is a result with
// is_error true; its line names only the call's id, so the gate keeps reading from the call's
// tool_use line until its result has come (droidCursor).

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// droidCursor is where the next read of a Droid transcript starts (From: the first tool_use line
// whose result has not been read, else Seen) and how far lines were read (Seen: a result before it
// was counted already). It is kept as "FROM:SEEN".
type droidCursor struct{ From, Seen int64 }

func (c droidCursor) String() string {
	return strconv.FormatInt(c.From, 10) + ":" + strconv.FormatInt(c.Seen, 10)
}

// parseDroidCursor reads a cursor droidCursor.String wrote; "" is the transcript's start.
func parseDroidCursor(s string) (droidCursor, error) {
	if s == "" {
		return droidCursor{}, nil
	}
	a, b, ok := strings.Cut(s, ":")
	from, err1 := strconv.ParseInt(a, 10, 64)
	seen, err2 := strconv.ParseInt(b, 10, 64)
	if !ok || err1 != nil || err2 != nil || from < 0 || from > seen {
		return droidCursor{}, fmt.Errorf("read transcript cursor %q: not FROM:SEEN byte offsets", s)
	}
	return droidCursor{from, seen}, nil
}

// droidToolMarker is in every transcript line that records a call or its result ("tool_use" and
// "tool_use_id"); a line without it is not decoded.
var droidToolMarker = []byte(`"tool_use`)

// droidDeniedPrefix starts what Droid records for a call its PreToolUse hook denied without a
// reason; a denied call is ours, never a failure of the tool.
const droidDeniedPrefix = "Tool execution denied by hook"

// droidUse is a call recorded in the transcript, with the offset of its line.
type droidUse struct {
	name, argsHash, args string
	at                   int64
}

// scanDroidTranscript reads the transcript r from cur.From up to size and returns the failed MCP
// calls whose results lie at or after cur.Seen, with the cursor for the next read. It reads at
// most transcriptChunk bytes past cur.Seen and stops before a last line that is not yet whole
// (Droid may be writing it). A call whose result has not come holds the next read's start back at
// its line, at most transcriptChunk bytes behind.
func scanDroidTranscript(r io.ReaderAt, cur droidCursor, size, maxDecode int64) (transcriptScan, droidCursor, error) {
	var scan transcriptScan
	if cur.Seen-cur.From > transcriptChunk {
		cur.From = cur.Seen // calls that long without a result are given up
	}
	next := droidCursor{From: cur.Seen, Seen: cur.Seen}
	if cur.From < 0 || cur.From >= size {
		return scan, next, nil
	}
	pending := map[string]droidUse{}
	br := bufio.NewReaderSize(io.NewSectionReader(r, cur.From, size-cur.From), 64<<10)
	at := cur.From
	for at-cur.Seen < transcriptChunk {
		n, marked, err := readMarkedLine(br, droidToolMarker)
		if errors.Is(err, io.EOF) {
			break // a line not yet whole is read next time
		}
		if err != nil {
			return scan, next, err
		}
		start := at
		at += n
		if at > next.Seen {
			next.Seen = at
		}
		switch {
		case !marked:
		case n > maxDecode:
			if start >= cur.Seen {
				scan.Skipped++
			}
		default:
			uses, results := decodeDroidLine(io.NewSectionReader(r, start, n))
			for _, u := range uses {
				if len(pending) < 1024 {
					u.use.at = start
					pending[u.id] = u.use
				}
			}
			for _, res := range results {
				u, ok := pending[res.id]
				delete(pending, res.id)
				if !ok || !res.isError || start < cur.Seen {
					continue
				}
				text := droidFailureText(res.text, u.name)
				if ownDeny(text) || strings.HasPrefix(text, droidDeniedPrefix) {
					continue
				}
				scan.Failures = append(scan.Failures, transcriptFailure{ID: clipField(res.id, transcriptName),
					Tool: clipField(u.name, transcriptName), Error: clipField(text, transcriptError), ArgsHash: u.argsHash, Args: u.args})
			}
		}
	}
	next.From = next.Seen
	for _, u := range pending {
		next.From = min(next.From, u.at)
	}
	scan.Next = next.Seen
	return scan, next, nil
}

// droidFailureText is the server's own words in the text Droid gives the model for a failed call
// of tool: "Error: MCP tool <tool> returned an error: <text>" for an isError result, else its text
// without the leading "Error: ".
func droidFailureText(text, tool string) string {
	text = strings.TrimSpace(text)
	if rest, ok := strings.CutPrefix(text, "Error: MCP tool "+tool+" returned an error: "); ok && rest != "" {
		return rest
	}
	if rest, ok := strings.CutPrefix(text, "Error: "); ok && rest != "" {
		return rest
	}
	if text == "" {
		return "the tool call failed (Droid gave no error text)"
	}
	return text
}

// droidUseOf and droidResult are one tool_use and one tool_result block of a transcript line.
type droidUseOf struct {
	id  string
	use droidUse
}

type droidResult struct {
	id, text string
	isError  bool
}

// decodeDroidLine decodes one transcript line as it streams and returns the calls and results its
// message's content holds; none when the line is not one whole JSON object of Droid's shape.
func decodeDroidLine(r io.Reader) ([]droidUseOf, []droidResult) {
	d := newDecoder(r)
	var uses []droidUseOf
	var results []droidResult
	bad := false
	err := d.object(func(key string) error {
		if key != "message" {
			return d.skip()
		}
		return d.strictObject(&bad, func(key string) error {
			if key != "content" {
				return d.skip()
			}
			return d.arrayOrSkip(func() error {
				var typ, id, name, useID, argsHash, args string
				var isError bool
				var texts []string
				err := d.strictObject(&bad, func(key string) error {
					switch key {
					case "type":
						return d.strictString(&typ, maxName, &bad)
					case "id":
						return d.strictString(&id, transcriptName, &bad)
					case "name":
						return d.strictString(&name, transcriptName, &bad)
					case "input":
						return d.argsInto(&argsHash, &args, true)
					case "tool_use_id":
						return d.strictString(&useID, transcriptName, &bad)
					case "is_error":
						return d.boolInto(&isError)
					case "content":
						return droidTexts(d, &texts, &bad)
					}
					return d.skip()
				})
				switch {
				case typ == "tool_use" && id != "" && name != "":
					uses = append(uses, droidUseOf{id, droidUse{name: name, argsHash: argsHash, args: args}})
				case typ == "tool_result" && useID != "":
					results = append(results, droidResult{id: useID, isError: isError, text: strings.Join(texts, "\n")})
				}
				return err
			})
		})
	})
	if err == nil {
		if _, end := d.nonSpace(); end == nil {
			err = d.fail("more than one value on the line")
		}
	}
	if err != nil || bad {
		return nil, nil
	}
	return uses, results
}

// droidTexts reads a tool_result's content: a text, or a list of {"type":"text","text"} blocks,
// keeping up to transcriptError bytes in all.
func droidTexts(d *decoder, texts *[]string, bad *bool) error {
	c, err := d.nonSpace()
	if err != nil {
		return err
	}
	d.unread()
	if c == '"' {
		var s string
		err := d.stringInto(&s, transcriptError)
		*texts = append((*texts)[:0], s)
		return err
	}
	used := 0
	return d.strictArray(bad, func() error {
		return d.objectOrSkip(func(key string) error {
			if key != "text" {
				return d.skip()
			}
			var s string
			err := d.strictString(&s, max(1, transcriptError-used), bad)
			if s != "" && used < transcriptError {
				*texts = append(*texts, s)
				used += len(s) + 1
			}
			return err
		})
	})
}
