package agent

// What MCP calls cost in tokens, read from the agent's own session transcript (docs/report.md,
// Cost): the output tokens of the model turn that made a call, shared among the calls of that
// turn, plus an estimate of the tokens of the result the model read. Claude Code's transcript
// (the JSONL at transcript_path) and Codex CLI's rollout both record the usage of every model
// response; neither records the tokens of a tool result, which are estimated from its text.
//
// A transcript is untrusted text of any size (100 MB is common: Claude Code 2.1.332 also writes
// each API request's whole body into it). It is read once, in 64 KB steps, never holding a line:
// only lines that carry the markers of a model turn, a tool result or a usage record are decoded,
// as they stream, keeping the ids the caller asked for and a count of the characters of their
// results, so memory stays flat whatever the file's size (TestCostsMemory has the figure).

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/safefile"
)

// CharsPerToken is the rule of thumb the result's tokens are estimated with: a token per four
// characters of text, rounded up (about right for English and code; denser text, such as CJK or
// base64, has more tokens per character, so the estimate is low there).
const CharsPerToken = 4

// EstimateTokens is the tokens a text of chars characters is counted as.
func EstimateTokens(chars int) int { return (chars + CharsPerToken - 1) / CharsPerToken }

// CallCost is what one tool call cost its session, as the transcript records it.
type CallCost struct {
	// Tool is the tool's name as the transcript writes it: mcp__server__tool for Claude Code,
	// its namespace and name joined by "__" for Codex.
	Tool string
	// TurnOutput is the output tokens of the model turn that made the call; TurnCalls how many
	// tool calls that turn made; Share this call's part of TurnOutput (TurnOutput/TurnCalls, the
	// remainder going one token each to the turn's first calls, so the shares add up to it).
	TurnOutput, TurnCalls, Share int
	// ResultChars counts the characters of the result's text the model read; ResultTokens is
	// EstimateTokens of it.
	ResultChars, ResultTokens int
	// HasTurn and HasResult say whether the turn that made the call and its result were found.
	HasTurn, HasResult bool
}

// Tokens is what the call cost: its share of the turn's output and its result's tokens.
func (c CallCost) Tokens() int { return c.Share + c.ResultTokens }

// Transcript is one session transcript of an agent.
type Transcript struct {
	// Agent is the codec's name: claude or codex.
	Agent string
	Path  string
}

// CostScan is what one read of a transcript found.
type CostScan struct {
	// Calls are the costs of the calls asked for that the transcript names, by call id.
	Calls map[string]CallCost
	// Bytes is how far the read went: the end of the last complete line.
	Bytes int64
	// Skipped counts lines that were too long to decode (over transcriptDecode bytes).
	Skipped int
}

// maxOpenTurns bounds the model turns whose calls are still being counted: Claude Code writes
// each content block of a response as a line of its own, the lines of one response together,
// with tool results in between at most. A turn further back is closed.
const maxOpenTurns = 16

// ReadCosts reads the transcript t and returns the costs of the calls whose ids want holds. A
// transcript that is not a regular file is refused; one that is missing is an error wrapping
// fs.ErrNotExist.
func ReadCosts(t Transcript, want map[string]bool) (CostScan, error) {
	f, err := safefile.OpenRegular(t.Path, os.O_RDONLY, 0)
	if err != nil {
		return CostScan{}, fmt.Errorf("read transcript %s: %w", t.Path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return CostScan{}, fmt.Errorf("read transcript %s: %w", t.Path, err)
	}
	scan, err := scanCosts(f, fi.Size(), t.Agent, want, transcriptDecode)
	if err != nil {
		return scan, fmt.Errorf("read transcript %s: %w", t.Path, err)
	}
	return scan, nil
}

// The markers of the lines a cost scan decodes: both agents write compact JSON, so a record's
// own type appears as these bytes, while the same words inside a string value are escaped
// (\"type\":…) and never match. They are built when a scan starts, not at package start-up:
// the hook links this package.
func costMarkers(agent string) ([][]byte, bool) {
	switch agent {
	case "claude":
		return [][]byte{[]byte(`"type":"assistant"`), []byte(`"tool_use"`), []byte(`"type":"user"`), []byte(`"tool_result"`)}, true
	case "codex":
		return [][]byte{[]byte(`"type":"function_call"`), []byte(`"type":"custom_tool_call"`), []byte(`"type":"local_shell_call"`),
			[]byte(`"type":"function_call_output"`), []byte(`"type":"custom_tool_call_output"`),
			[]byte(`"type":"token_usage_record"`), []byte(`"type":"token_count"`)}, true
	}
	return nil, false
}

// costTurn is one model turn whose calls are being counted.
type costTurn struct {
	key    string
	output int
	calls  int
	// wanted are the calls asked for, with their place among the turn's calls.
	wanted []wantedCall
}

type wantedCall struct {
	id    string
	index int
}

// costScanner is the state of one scan.
type costScanner struct {
	agent string
	want  map[string]bool
	calls map[string]CallCost
	// turns are the open turns of a Claude Code transcript, the most recent last.
	turns []*costTurn
	// pending is a Codex response's calls, counted until its usage record; sawRecord is set once
	// a token_usage_record was met, after which token_count events are not read (Codex 0.169
	// writes both for each response; older versions only token_count).
	pending   costTurn
	sawRecord bool
	// br is the decoding buffer, reused from line to line.
	br *bufio.Reader
}

// scanCosts reads r up to size and returns the costs of the calls want holds. A last line that
// is not whole (the agent may be writing it) is left out.
func scanCosts(r io.ReaderAt, size int64, agent string, want map[string]bool, maxDecode int64) (CostScan, error) {
	markers, ok := costMarkers(agent)
	if !ok {
		return CostScan{}, fmt.Errorf("no transcript reader for agent %q", agent)
	}
	s := &costScanner{agent: agent, want: want, calls: map[string]CallCost{}, br: bufio.NewReaderSize(nil, 16<<10)}
	scan := CostScan{}
	br := bufio.NewReaderSize(io.NewSectionReader(r, 0, size), 64<<10)
	scans := make([]markerScan, len(markers))
	for {
		n, found, err := readMarked(br, markers, scans)
		if errors.Is(err, io.EOF) {
			break // a line not yet whole is not counted
		}
		if err != nil {
			return scan, err
		}
		start := scan.Bytes
		scan.Bytes += n
		if found == 0 {
			continue
		}
		kind := s.kind(found)
		if kind == lineOther {
			continue
		}
		if n > maxDecode {
			scan.Skipped++
			continue
		}
		// The line is read a second time, from where it starts, and decoded as it streams; a
		// line that is not the JSON its markers promise is passed over.
		s.decode(kind, io.NewSectionReader(r, start, n))
	}
	for len(s.turns) > 0 {
		s.close(s.turns[0])
		s.turns = s.turns[1:]
	}
	scan.Calls = s.calls
	return scan, nil
}

// The kinds of lines a cost scan decodes.
const (
	lineOther = iota
	lineTurn
	lineResult
	lineCall
	lineUsage
	lineCount
)

// kind is what a line holding the markers found (a bit per marker of costMarkers) records.
func (s *costScanner) kind(found uint) int {
	if s.agent == "claude" {
		switch {
		case found&0b0011 == 0b0011:
			return lineTurn
		case found&0b1100 == 0b1100:
			return lineResult
		}
		return lineOther
	}
	switch {
	case found&0b11000 != 0:
		return lineResult
	case found&0b00111 != 0:
		return lineCall
	case found&0b0100000 != 0:
		return lineUsage
	case found&0b1000000 != 0 && !s.sawRecord:
		return lineCount
	}
	return lineOther
}

// readMarked reads one line, its newline included, without keeping it, and returns how many
// bytes it took and a bit for each of markers it holds. io.EOF means the input ended before a
// newline.
func readMarked(br *bufio.Reader, markers [][]byte, scans []markerScan) (n int64, found uint, err error) {
	for i := range scans {
		scans[i] = markerScan{tail: scans[i].tail[:0]}
	}
	for {
		chunk, err := br.ReadSlice('\n')
		n += int64(len(chunk))
		for i := range markers {
			scans[i].feed(markers[i], chunk)
		}
		switch {
		case err == nil:
			for i := range scans {
				if scans[i].found {
					found |= 1 << i
				}
			}
			return n, found, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return n, 0, err
		}
	}
}

func (s *costScanner) decoder(r io.Reader) *decoder {
	s.br.Reset(r)
	return &decoder{r: s.br}
}

// decode reads one line of the kind given and counts what it records.
func (s *costScanner) decode(kind int, r io.Reader) {
	switch kind {
	case lineTurn:
		s.claudeTurn(r)
	case lineResult:
		s.result(r)
	case lineCall:
		s.codexCall(r)
	case lineUsage, lineCount:
		s.codexUsage(r, kind)
	}
}

// wholeLine reports whether the decoder is at the end of one JSON object: only white space (the
// newline) is left.
func wholeLine(d *decoder, err error) bool {
	if err != nil {
		return false
	}
	_, end := d.nonSpace()
	return end != nil
}

// claudeTurn reads an assistant line of Claude Code's transcript:
// {"message":{"id":…,"content":[{"type":"tool_use","id":…,"name":…},…],"usage":{"output_tokens":…}},
// "requestRef":…,"type":"assistant",…}. The lines of one response share its requestRef (its API
// request; requestId in older versions, then the message id).
func (s *costScanner) claudeTurn(r io.Reader) {
	d := s.decoder(r)
	var top, msgID, reqRef, reqID string
	var out int64
	bad := false
	var uses []toolUse
	calls := 0
	err := d.object(func(key string) error {
		switch key {
		case "type":
			return d.strictString(&top, maxName, &bad)
		case "requestRef":
			return d.strictString(&reqRef, maxName, &bad)
		case "requestId":
			return d.strictString(&reqID, maxName, &bad)
		case "message":
			return d.strictObject(&bad, func(key string) error {
				switch key {
				case "id":
					return d.strictString(&msgID, maxName, &bad)
				case "usage":
					return d.strictObject(&bad, func(key string) error {
						if key == "output_tokens" {
							return d.intInto(&out)
						}
						return d.skip()
					})
				case "content":
					return d.strictArray(&bad, func() error {
						u, err := s.block(d, &bad)
						if u.typ == "tool_use" && u.id != "" {
							if s.want[u.id] {
								u.index = calls
								uses = append(uses, u)
							}
							calls++
						}
						return err
					})
				}
				return d.skip()
			})
		}
		return d.skip()
	})
	if !wholeLine(d, err) || bad || top != "assistant" || calls == 0 {
		return
	}
	key := reqRef
	if key == "" {
		key = reqID
	}
	if key == "" {
		key = msgID
	}
	t := s.turn(key)
	t.output = max(t.output, int(min(out, 1<<40)))
	for _, u := range uses {
		if c, seen := s.calls[u.id]; seen && (c.HasTurn || c.Tool != "") {
			continue // a call's first record wins (a resumed session repeats its history)
		}
		c := s.calls[u.id]
		c.Tool = clipField(u.name, transcriptName)
		s.calls[u.id] = c
		t.wanted = append(t.wanted, wantedCall{id: u.id, index: t.calls + u.index})
	}
	t.calls += calls
}

// toolUse is a content block as claudeTurn keeps it.
type toolUse struct {
	typ, id, name string
	index         int
}

// block reads one content block, keeping its type, id and name.
func (s *costScanner) block(d *decoder, bad *bool) (toolUse, error) {
	var u toolUse
	err := d.strictObject(bad, func(key string) error {
		switch key {
		case "type":
			return d.strictString(&u.typ, maxName, bad)
		case "id":
			return d.strictString(&u.id, transcriptName, bad)
		case "name":
			return d.strictString(&u.name, transcriptName, bad)
		}
		return d.skip()
	})
	return u, err
}

// turn returns the open turn key, opening it (and closing the oldest past maxOpenTurns) when it
// is new.
func (s *costScanner) turn(key string) *costTurn {
	for i := len(s.turns) - 1; i >= 0; i-- {
		if t := s.turns[i]; t.key == key && key != "" {
			return t
		}
	}
	t := &costTurn{key: key}
	s.turns = append(s.turns, t)
	if len(s.turns) > maxOpenTurns {
		s.close(s.turns[0])
		s.turns = s.turns[1:]
	}
	return t
}

// close gives each call asked for of turn t its share of the turn's output tokens.
func (s *costScanner) close(t *costTurn) {
	for _, w := range t.wanted {
		c := s.calls[w.id]
		c.HasTurn, c.TurnOutput, c.TurnCalls = true, t.output, t.calls
		c.Share = t.output / t.calls
		if w.index < t.output%t.calls {
			c.Share++
		}
		s.calls[w.id] = c
	}
}

// result reads a line that carries tool results and counts the characters of those asked for:
// Claude Code's {"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":…,
// "content":"…" or [{"type":"text","text":…},…]}]}}, Codex's {"type":"response_item","payload":
// {"type":"function_call_output","call_id":…,"output":"…" or [{"type":"input_text","text":…}]}}.
func (s *costScanner) result(r io.Reader) {
	d := s.decoder(r)
	var top string
	bad := false
	type got struct {
		id    string
		chars int
	}
	var results []got
	// one reads a result block's object, of one of types: its id and its text, counted.
	one := func(idKey, textKey string, types ...string) error {
		var typ, id string
		chars, counted := 0, false
		err := d.strictObject(&bad, func(key string) error {
			switch key {
			case "type":
				return d.strictString(&typ, maxName, &bad)
			case idKey:
				return d.strictString(&id, transcriptName, &bad)
			case textKey:
				counted = true
				return s.textChars(d, &chars, &bad)
			}
			return d.skip()
		})
		if id != "" && s.want[id] && counted && slices.Contains(types, typ) {
			results = append(results, got{id, chars})
		}
		return err
	}
	var err error
	if s.agent == "claude" {
		err = d.object(func(key string) error {
			switch key {
			case "type":
				return d.strictString(&top, maxName, &bad)
			case "message":
				return d.strictObject(&bad, func(key string) error {
					if key != "content" {
						return d.skip()
					}
					c, err := d.nonSpace()
					if err != nil {
						return err
					}
					d.unread()
					if c != '[' {
						return d.skip() // a prompt's text: no tool result
					}
					return d.strictArray(&bad, func() error { return one("tool_use_id", "content", "tool_result") })
				})
			}
			return d.skip()
		})
		if top != "user" {
			bad = true
		}
	} else {
		err = d.object(func(key string) error {
			switch key {
			case "type":
				return d.strictString(&top, maxName, &bad)
			case "payload":
				return one("call_id", "output", "function_call_output", "custom_tool_call_output")
			}
			return d.skip()
		})
		if top != "response_item" {
			bad = true
		}
	}
	if !wholeLine(d, err) || bad {
		return
	}
	for _, g := range results {
		c := s.calls[g.id]
		if c.HasResult {
			continue // the first result recorded is the one the model read
		}
		c.HasResult, c.ResultChars, c.ResultTokens = true, g.chars, EstimateTokens(g.chars)
		s.calls[g.id] = c
	}
}

// textChars adds to *chars the characters of a result's content: a string, or an array of
// blocks whose "text" strings count (images and other blocks count nothing).
func (s *costScanner) textChars(d *decoder, chars *int, bad *bool) error {
	c, err := d.nonSpace()
	if err != nil {
		return err
	}
	switch c {
	case '"':
		n, err := d.countString()
		*chars += n
		return err
	case '[':
		d.unread()
		return d.strictArray(bad, func() error {
			return d.objectOrSkip(func(key string) error {
				if key != "text" {
					return d.skip()
				}
				c, err := d.nonSpace()
				if err != nil {
					return err
				}
				if c != '"' {
					d.unread()
					return d.skip()
				}
				n, err := d.countString()
				*chars += n
				return err
			})
		})
	}
	d.unread()
	return d.skip()
}

// countString consumes the rest of a string whose opening quote was read, checking it as
// skipString does, and returns how many characters it holds once decoded: a UTF-8 character, an
// escape, a surrogate pair written as two \u escapes each count one.
func (d *decoder) countString() (int, error) {
	// esc: 0 outside an escape, 1 after a backslash, 2 to 5 inside \uXXXX (hex digits left + 1).
	esc, hex, n := 0, 0, 0
	for {
		k := d.r.Buffered()
		if k == 0 {
			k = 1
		}
		chunk, err := d.r.Peek(k)
		if len(chunk) == 0 {
			if err == io.EOF || err == nil {
				return n, d.fail("unexpected end of input in a string")
			}
			return n, err
		}
		for i, c := range chunk {
			bad := ""
			switch {
			case esc == 1:
				switch c {
				case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
					esc = 0
					n++
				case 'u':
					esc, hex = 5, 0
				default:
					bad = fmt.Sprintf("invalid escape '\\%c'", c)
				}
			case esc > 1:
				if !isHex(c) {
					bad = fmt.Sprintf("invalid character %q in a \\u escape", c)
					break
				}
				hex = hex<<4 | hexValue(c)
				if esc--; esc == 1 {
					esc = 0
					// The low half of a surrogate pair completes the character its high half
					// counted.
					if hex < 0xDC00 || hex > 0xDFFF {
						n++
					}
				}
			case c == '\\':
				esc = 1
			case c == '"':
				d.r.Discard(i + 1)
				d.off += int64(i + 1)
				return n, nil
			case c < 0x20:
				bad = "control character in a string"
			default:
				if c < 0x80 || c >= 0xC0 {
					n++ // the first byte of a character
				}
			}
			if bad != "" {
				d.r.Discard(i + 1)
				d.off += int64(i + 1)
				return n, d.fail("%s", bad)
			}
		}
		d.r.Discard(len(chunk))
		d.off += int64(len(chunk))
	}
}

func hexValue(c byte) int {
	switch {
	case c <= '9':
		return int(c - '0')
	case c >= 'a':
		return int(c-'a') + 10
	}
	return int(c-'A') + 10
}

// codexCall reads a call of a Codex response: {"type":"response_item","payload":{"type":
// "function_call","name":…,"namespace":…,"call_id":…}} (custom_tool_call and local_shell_call
// count as calls of the response too).
func (s *costScanner) codexCall(r io.Reader) {
	d := s.decoder(r)
	var top, typ, name, namespace, id string
	bad := false
	err := d.object(func(key string) error {
		switch key {
		case "type":
			return d.strictString(&top, maxName, &bad)
		case "payload":
			return d.strictObject(&bad, func(key string) error {
				switch key {
				case "type":
					return d.strictString(&typ, maxName, &bad)
				case "name":
					return d.strictString(&name, transcriptName, &bad)
				case "namespace":
					return d.strictString(&namespace, transcriptName, &bad)
				case "call_id":
					return d.strictString(&id, transcriptName, &bad)
				}
				return d.skip()
			})
		}
		return d.skip()
	})
	if !wholeLine(d, err) || bad || top != "response_item" ||
		typ != "function_call" && typ != "custom_tool_call" && typ != "local_shell_call" {
		return
	}
	if id != "" && s.want[id] {
		if _, seen := s.calls[id]; !seen {
			tool := name
			if namespace != "" {
				tool = namespace + "__" + name
			}
			s.calls[id] = CallCost{Tool: clipField(tool, transcriptName)}
			s.pending.wanted = append(s.pending.wanted, wantedCall{id: id, index: s.pending.calls})
		}
	}
	s.pending.calls++
}

// codexUsage reads a Codex usage record, which closes the response whose calls are pending:
// {"type":"token_usage_record","payload":{"usage":{"output_tokens":…}}}, or in versions without
// those, {"type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":
// {"output_tokens":…}}}}.
func (s *costScanner) codexUsage(r io.Reader, kind int) {
	d := s.decoder(r)
	var top, typ string
	var out int64
	bad, got := false, false
	usage := func() error {
		return d.strictObject(&bad, func(key string) error {
			if key == "output_tokens" {
				got = true
				return d.intInto(&out)
			}
			return d.skip()
		})
	}
	err := d.object(func(key string) error {
		switch key {
		case "type":
			return d.strictString(&top, maxName, &bad)
		case "payload":
			return d.strictObject(&bad, func(key string) error {
				switch key {
				case "type":
					return d.strictString(&typ, maxName, &bad)
				case "usage":
					if kind == lineUsage {
						return usage()
					}
				case "info":
					if kind == lineCount {
						return d.strictObject(&bad, func(key string) error {
							if key == "last_token_usage" {
								return usage()
							}
							return d.skip()
						})
					}
				}
				return d.skip()
			})
		}
		return d.skip()
	})
	if !wholeLine(d, err) || bad || !got {
		return
	}
	switch {
	case kind == lineUsage && top == "token_usage_record":
		s.sawRecord = true
	case kind == lineCount && top == "event_msg" && typ == "token_count" && !s.sawRecord:
	default:
		return
	}
	if s.pending.calls > 0 {
		s.pending.output = int(min(out, 1<<40))
		s.close(&s.pending)
	}
	s.pending = costTurn{}
}

// validSessionID reports whether id has the shape of a session id that may name a transcript
// file (a letter or digit, then up to 127 letters, digits, '-' or '_'): a ledger is untrusted,
// and its ids only ever select among the agent's own files, never a path. (No regexp: this
// package is linked into the hook, whose start-up a compiled pattern would cost.)
func validSessionID(id string) bool {
	if id == "" || len(id) > 128 || id[0] == '-' || id[0] == '_' {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// FindTranscripts returns the transcripts of session for the project in dir, where the agents
// keep them under the user's own directories: Claude Code's
// $CLAUDE_CONFIG_DIR/projects/<dir, every character but letters and digits a '-'>[-…]/<session>.jsonl
// (a session started in dir or below it) and its subagents' <session>/subagents/*.jsonl, and
// Codex CLI's $CODEX_HOME/sessions/YYYY/MM/DD/rollout-…-<session>.jsonl whose session started in
// dir or below. No path is read from the ledger or any file of the project. getenv is the
// environment the user set (internal/userenv): a project cannot move these directories.
func FindTranscripts(session, dir string, getenv func(string) string) []Transcript {
	if !validSessionID(session) {
		return nil
	}
	dirs := []string{filepath.Clean(dir)}
	if real, err := filepath.EvalSymlinks(dir); err == nil && real != dirs[0] {
		dirs = append(dirs, real)
	}
	var out []Transcript
	seen := map[string]bool{}
	add := func(agent, path string) {
		if !seen[path] {
			seen[path] = true
			out = append(out, Transcript{Agent: agent, Path: path})
		}
	}
	projects, sessions := TranscriptRoots(getenv)
	if projects != "" {
		// Directories are listed rather than globbed: the user's directory may hold glob
		// characters.
		for _, name := range dirNames(projects) {
			for _, d := range dirs {
				if base := claudeProjectKey(d); name != base && !strings.HasPrefix(name, base+"-") {
					continue
				}
				f := filepath.Join(projects, name, session+".jsonl")
				if fi, err := os.Lstat(f); err != nil || !fi.Mode().IsRegular() {
					continue
				}
				add("claude", f)
				subs := filepath.Join(projects, name, session, "subagents")
				for _, sub := range fileNames(subs) {
					if strings.HasSuffix(sub, ".jsonl") {
						add("claude", filepath.Join(subs, sub))
					}
				}
			}
		}
	}
	if sessions != "" {
		for _, y := range dirNames(sessions) {
			for _, m := range dirNames(filepath.Join(sessions, y)) {
				for _, day := range dirNames(filepath.Join(sessions, y, m)) {
					in := filepath.Join(sessions, y, m, day)
					for _, name := range fileNames(in) {
						if !strings.HasPrefix(name, "rollout-") || !strings.HasSuffix(name, "-"+session+".jsonl") {
							continue
						}
						f := filepath.Join(in, name)
						if cwd, err := codexSessionCwd(f); err == nil && within(cwd, dirs) {
							add("codex", f)
						}
					}
				}
			}
		}
	}
	return out
}

// dirNames lists the directories in dir (none when it cannot be read), fileNames its regular
// files; links are neither.
func dirNames(dir string) []string { return names(dir, fs.ModeDir) }

func fileNames(dir string) []string { return names(dir, 0) }

func names(dir string, kind fs.FileMode) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if e.Type() == kind {
			out = append(out, e.Name())
		}
	}
	return out
}

// TranscriptRoots are the directories FindTranscripts looks in: Claude Code's
// $CLAUDE_CONFIG_DIR/projects (else ~/.claude/projects) and Codex CLI's $CODEX_HOME/sessions
// (else ~/.codex/sessions); "" when neither the variable nor HOME is an absolute path.
func TranscriptRoots(getenv func(string) string) (claude, codex string) {
	if d := agentDir(getenv, "CLAUDE_CONFIG_DIR", ".claude"); d != "" {
		claude = filepath.Join(d, "projects")
	}
	if d := agentDir(getenv, "CODEX_HOME", ".codex"); d != "" {
		codex = filepath.Join(d, "sessions")
	}
	return claude, codex
}

// agentDir is $env, else ~/home.
func agentDir(getenv func(string) string, env, home string) string {
	if d := getenv(env); d != "" && filepath.IsAbs(d) {
		return d
	}
	if h := getenv("HOME"); h != "" && filepath.IsAbs(h) {
		return filepath.Join(h, home)
	}
	return ""
}

// claudeProjectKey is the name Claude Code gives a working directory's folder of transcripts:
// every character but ASCII letters and digits replaced by '-'.
func claudeProjectKey(dir string) string {
	return strings.Map(func(r rune) rune {
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' {
			return r
		}
		return '-'
	}, dir)
}

// within reports whether path is one of dirs or inside one.
func within(path string, dirs []string) bool {
	path = filepath.Clean(path)
	for _, d := range dirs {
		if path == d || strings.HasPrefix(path, d+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// codexSessionCwd reads the working directory a Codex rollout's first line (session_meta)
// records.
func codexSessionCwd(path string) (string, error) {
	f, err := safefile.OpenRegular(path, os.O_RDONLY, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	d := newDecoder(io.LimitReader(f, transcriptChunk))
	var top, cwd string
	bad := false
	err = d.object(func(key string) error {
		switch key {
		case "type":
			return d.strictString(&top, maxName, &bad)
		case "payload":
			return d.strictObject(&bad, func(key string) error {
				if key == "cwd" {
					return d.strictString(&cwd, 4<<10, &bad)
				}
				return d.skip()
			})
		}
		return d.skip()
	})
	if err != nil || bad || top != "session_meta" || cwd == "" || !filepath.IsAbs(cwd) || bytes.ContainsRune([]byte(cwd), 0) {
		return "", fmt.Errorf("%s: no session_meta with a working directory on its first line", path)
	}
	return cwd, nil
}
