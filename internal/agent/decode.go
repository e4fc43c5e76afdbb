package agent

// The streaming JSON decoder every codec reads its agent's stdin with: a hook event can hold a whole
// file in its arguments, so values the gate does not need are checked and skipped without being
// stored, memory stays flat whatever the input's size, and nesting is tracked without recursion.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc64"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/failure"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
)

// ErrMalformed is returned when stdin is not a JSON object.
var ErrMalformed = errors.New("hook input is not a JSON object")

// Limits on the fields that are kept; longer values are read to their end and cut.
const (
	maxName  = 1 << 10
	maxError = 64 << 10
)

// newDecoder reads JSON from r, no further than the values it is asked for.
func newDecoder(r io.Reader) *decoder {
	size := 64 << 10
	// An event already in memory (the gate's first read of stdin) needs no larger buffer than
	// itself: the memory of a fresh 64 KB buffer costs a new process more than decoding it.
	if br, ok := r.(*bytes.Reader); ok && br.Len() < size {
		size = max(br.Len(), 16)
	}
	return &decoder{r: bufio.NewReaderSize(r, size)}
}

type decoder struct {
	r *bufio.Reader
	// off is the number of bytes consumed; errors name it, so it counts the offending byte.
	off int64
	// While hashing, every byte consumed outside white space between tokens goes into norm
	// (normHash: the loop guard's hash); refeed marks a byte given back by unread, already in it.
	norm    normHash
	hashing bool
	refeed  bool
	table   *crcTable
	// capture, when set, collects the bytes of the value being skipped (JSON white space outside
	// strings left out) in raw, and sink (when not nil) receives raw as it grows.
	capture bool
	raw     []byte
	sink    io.Writer
	// keepMax, when not 0 and there is no sink, bounds raw: a value longer is still read to its
	// end, but over is set and raw stops growing.
	keepMax int
	over    bool
	// lastKept is set when next put the byte it read into raw: only such a byte is taken back
	// out of raw (unread, white space).
	lastKept bool
	// leafMax, when not 0, bounds each string (value or key) kept in raw to that many bytes of
	// its content, cut where an escape or a character ends: raw stays JSON that holds every leaf
	// a classifier needs, however large one of them is (a whole file in a write call).
	leafMax int
}

// The hash is CRC-64 (ECMA), the same in every process. It is computed here a byte a step over a
// 256-entry table (2 µs to build) rather than with hash/crc64, whose first Update builds its
// eight-byte tables for every polynomial (50–75 µs): more than the rest of the decoding, paid by
// every hook event, MCP or not. A byte a step still hashes 10 MB of arguments in about 15 ms.

// crcTable is the CRC-64 (ECMA) table, one entry per byte value, as hash/crc64 builds it.
type crcTable [256]uint64

func newCRCTable() *crcTable {
	var t crcTable
	for i := range t {
		crc := uint64(i)
		for range 8 {
			if crc&1 == 1 {
				crc = crc>>1 ^ crc64.ECMA
			} else {
				crc >>= 1
			}
		}
		t[i] = crc
	}
	return &t
}

// update is crc64.Update with the table t.
func (t *crcTable) update(crc uint64, p []byte) uint64 {
	crc = ^crc
	for _, v := range p {
		crc = t[byte(crc)^v] ^ crc>>8
	}
	return ^crc
}

// hashValue skips one value, as skip does, and returns a hash of its bytes without the white
// space between tokens: the same arguments from the same client (whose key order is stable) hash
// alike however they are spaced or arrive, in constant memory. CRC-64, in hex.
func (d *decoder) hashValue() (string, error) {
	if d.table == nil {
		d.table = newCRCTable()
	}
	d.norm.reset(d.table)
	d.hashing = true
	err := d.skip()
	d.hashing, d.refeed = false, false
	return d.norm.sum(), err
}

// maxArgsText bounds the arguments an agent sends as JSON text inside a string (Copilot CLI's
// toolArgs, Cursor's beforeMCPExecution tool_input) that are decoded to be hashed as the value
// they hold; a longer string is hashed as the string it is, in constant memory.
const maxArgsText = 64 << 10

// hashArgs hashes a call's arguments as hashValue does, whether the agent sends them as a JSON
// value or as a string holding one: the same arguments hash alike either way, so a call whose
// pre-call event sends a string and whose failure event sends the object (Cursor) is one call to
// the loop guard. A string that is not one JSON value, or is longer than maxArgsText, is hashed as
// the string itself.
func (d *decoder) hashArgs() (string, error) {
	h, _, err := d.hashArgsKeep(false)
	return h, err
}

// HashArgs is the hash a hook gives a call's arguments (gate.Event.ArgsHash), for arguments a
// person gives (record --args), so that the loop and streak guards take them for the hook's call:
// data is one JSON value, or a string holding one.
func HashArgs(data []byte) (string, error) {
	d := newDecoder(bytes.NewReader(data))
	h, err := d.hashArgs()
	if err != nil {
		return "", fmt.Errorf("hash arguments: %w", err)
	}
	if _, err := d.nonSpace(); err == nil {
		return "", fmt.Errorf("hash arguments: %w", d.fail("more than one value"))
	}
	return h, nil
}

// hashArgsInto is hashArgs into *dst: a call's arguments, hashed as they are skipped, for the loop
// guard, in constant memory whatever their size.
func (d *decoder) hashArgsInto(dst *string) error {
	h, err := d.hashArgs()
	*dst = h
	return err
}

// Bounds of the JSON of a failed call's arguments kept for the classifier (argsInto): each string
// up to maxArgRaw bytes as written, room for failure.MaxArgValue bytes of its value even when
// escapes spell most of it (ArgsFromJSON cuts the value itself), and the whole up to maxArgsKept,
// room for failure.MaxArgs such values and their keys.
const (
	maxArgRaw   = 4 * failure.MaxArgValue
	maxArgsKept = 128 << 10
)

// argsInto is hashArgsInto and, when keep is set, also keeps the arguments as JSON text in *raw, for
// failure.ArgsFromJSON: every string in them (value or key) cut to maxArgRaw bytes and the whole
// to maxArgsKept, taken in the pass that hashes them, so that a whole file in a write
// call costs no more memory than its first bytes. A codec keeps them only for an event that may be
// a failure: the pre-call hook, which runs before every MCP call, does no more than hash.
func (d *decoder) argsInto(hash, raw *string, keep bool) error {
	h, kept, err := d.hashArgsKeep(keep)
	*hash, *raw = h, string(kept)
	return err
}

// hashArgsKeep is hashArgs, returning too, when keep is set, the arguments as argsInto keeps
// them: a copy, or for arguments sent as a JSON string the text it holds (its beginning, when
// longer than maxArgsText).
func (d *decoder) hashArgsKeep(keep bool) (string, []byte, error) {
	c, err := d.nonSpace()
	if err != nil {
		return "", nil, err
	}
	d.unread()
	if c != '"' {
		if !keep {
			h, err := d.hashValue()
			return h, nil, err
		}
		d.capture, d.raw, d.keepMax, d.leafMax, d.over = true, d.raw[:0], maxArgsKept, maxArgRaw, false
		h, err := d.hashValue()
		kept := d.raw
		d.capture, d.raw, d.keepMax, d.leafMax, d.over = false, d.raw[:0], 0, 0, false
		return h, kept, err
	}
	d.capture, d.raw, d.keepMax, d.over = true, d.raw[:0], maxArgsText, false
	h, err := d.hashValue()
	raw, over := d.raw, d.over
	d.capture, d.raw, d.keepMax, d.over = false, raw[:0], 0, false
	if err != nil {
		return h, nil, err
	}
	if over {
		var kept []byte
		if keep {
			kept = stringStart(raw)
		}
		return h, kept, nil
	}
	var text string
	if json.Unmarshal(raw, &text) != nil {
		return h, nil, nil
	}
	var kept []byte
	if keep {
		kept = []byte(text)
	}
	if inner, ok := hashJSONText(strings.NewReader(text)); ok {
		return inner, kept, nil
	}
	return h, kept, nil
}

// failureArgs are the argument values of an event of kind, from the JSON argsInto kept: only a
// failure's are decoded (and only those are classified).
func failureArgs(kind gate.Kind, raw string) []failure.Arg {
	if kind != gate.Failure || raw == "" {
		return nil
	}
	return failure.ArgsFromJSON([]byte(raw))
}

// stringStart decodes the beginning of a JSON string cut anywhere after its opening quote: what
// it says up to its last whole escape and character.
func stringStart(raw []byte) []byte {
	if len(raw) == 0 || raw[0] != '"' {
		return nil
	}
	whole := trimPartial(raw[:1+len(wholeEscapes(raw[1:]))])
	var s string
	if json.Unmarshal(append(bytes.Clone(whole), '"'), &s) != nil {
		return nil
	}
	return []byte(s)
}

// wholeEscapes is the longest start of b, the raw content of a JSON string, that does not end
// inside an escape.
func wholeEscapes(b []byte) []byte {
	end := 0
	for i := 0; i < len(b); {
		n := 1
		if b[i] == '\\' {
			n = 2
			if i+1 < len(b) && b[i+1] == 'u' {
				n = 6
			}
		}
		if i+n > len(b) {
			break
		}
		i += n
		end = i
	}
	return b[:end]
}

// hashJSONText is hashValue of the one JSON value r holds (white space around it allowed), false
// when r holds anything else. A string in r is not decoded again: arguments are encoded once.
func hashJSONText(r io.Reader) (string, bool) {
	d := &decoder{r: bufio.NewReaderSize(r, 4<<10)}
	h, err := d.hashValue()
	if err != nil {
		return "", false
	}
	for {
		c, err := d.r.ReadByte()
		if err == io.EOF {
			return h, true
		}
		if err != nil || c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return "", false
		}
	}
}

// feed adds b to the hash when hashing.
func (d *decoder) feed(b []byte) {
	if d.hashing && len(b) > 0 {
		d.norm.write(b)
	}
}

// feedByte adds one byte read by next, unless it is white space between tokens (strings are
// consumed by skipString, which feeds their bytes, spaces included) or a byte given back by unread.
func (d *decoder) feedByte(c byte) {
	if !d.hashing {
		return
	}
	if d.refeed {
		d.refeed = false
		return
	}
	if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
		return
	}
	d.norm.byte(c)
}

// intInto reads a number into dst; a value of another type, or a number that is not a whole one
// within int64, leaves dst 0.

// keep adds bytes consumed while capturing; past keepMax only what fits is kept.
func (d *decoder) keep(b []byte) {
	if d.sink != nil && len(d.raw) >= 32<<10 {
		d.sink.Write(d.raw)
		d.raw = d.raw[:0]
	}
	if d.keepMax > 0 && d.sink == nil {
		if d.over {
			return
		}
		if room := d.keepMax - len(d.raw); len(b) > room {
			d.raw = append(d.raw, b[:max(room, 0)]...)
			d.over = true
			return
		}
	}
	d.raw = append(d.raw, b...)
}

// keepString keeps b, bytes of a string whose content starts at raw[from], as keep does; with
// leafMax set, no more than leafMax bytes of its content, and *cut is set when some were left out.
func (d *decoder) keepString(b []byte, from int, cut *bool) {
	if d.leafMax > 0 {
		if room := from + d.leafMax - len(d.raw); len(b) > room {
			b = b[:max(room, 0)]
			*cut = true
		}
	}
	d.keep(b)
}

// closeString keeps the closing quote of a string whose content starts at raw[from]; a string
// cut by leafMax is first brought back to its last whole escape and character, so that raw stays
// JSON.
func (d *decoder) closeString(from int, cut bool) {
	if d.over {
		return
	}
	if cut && from > 0 {
		d.raw = trimPartial(d.raw[:from+len(wholeEscapes(d.raw[from:]))])
	}
	d.keep([]byte{'"'})
}

// skipInto skips one value and writes its bytes, without the white space between tokens, to w:
// a hash of a call's arguments at the cost of reading them, whatever their size.
func (d *decoder) skipInto(w io.Writer) error {
	d.capture, d.raw, d.sink = true, d.raw[:0], w
	err := d.skip()
	if err == nil {
		w.Write(d.raw)
	}
	d.capture, d.raw, d.sink = false, d.raw[:0], nil
	return err
}

// numberInto reads a number into dst; a value of another type (null included) leaves it 0.
func (d *decoder) intInto(dst *int64) error {
	*dst = 0
	c, err := d.nonSpace()
	if err != nil {
		return err
	}
	switch {
	case c == '-':
		return d.number(c) // no duration is negative: checked, and left 0
	case c < '0' || c > '9':
		d.unread()
		return d.skip()
	}
	n, whole := int64(c-'0'), true
	for {
		b, err := d.r.Peek(1)
		if err != nil || b[0] < '0' || b[0] > '9' {
			break
		}
		if n > (1<<62)/10 {
			whole = false
		}
		n = n*10 + int64(b[0]-'0')
		d.r.Discard(1)
		d.off++
	}
	if b, err := d.r.Peek(1); err == nil && (b[0] == '.' || b[0] == 'e' || b[0] == 'E') {
		whole = false
		// The rest of the number is checked as any number: its fraction and exponent.
		if err := d.number('0'); err != nil {
			return err
		}
	}
	if whole {
		*dst = n
	}
	return nil
}

func (d *decoder) numberInto(dst *float64) error {
	*dst = 0
	c, err := d.nonSpace()
	if err != nil {
		return err
	}
	d.unread()
	if c != '-' && (c < '0' || c > '9') {
		return d.skip()
	}
	d.capture, d.raw = true, d.raw[:0]
	err = d.skip()
	if err == nil {
		*dst, _ = strconv.ParseFloat(string(d.raw), 64)
	}
	d.capture, d.raw = false, d.raw[:0]
	return err
}

func (d *decoder) fail(format string, args ...any) error {
	return fmt.Errorf("%w: at byte %d: %s", ErrMalformed, d.off, fmt.Sprintf(format, args...))
}

func (d *decoder) next() (byte, error) {
	c, err := d.r.ReadByte()
	if err != nil {
		if err == io.EOF {
			return 0, d.fail("unexpected end of input")
		}
		return 0, err
	}
	d.off++
	d.feedByte(c)
	d.lastKept = false
	if d.capture && !d.full() {
		d.raw = append(d.raw, c)
		d.lastKept = true
	}
	return c, nil
}

// full reports whether raw has reached keepMax (and sets over): nothing more is kept.
func (d *decoder) full() bool {
	if d.keepMax == 0 || d.sink != nil {
		return false
	}
	if len(d.raw) >= d.keepMax {
		d.over = true
	}
	return d.over
}

// unread gives back the byte just read by next.
func (d *decoder) unread() {
	d.r.UnreadByte()
	d.off--
	d.refeed = d.hashing
	if d.capture && d.lastKept && len(d.raw) > 0 {
		d.raw = d.raw[:len(d.raw)-1]
	}
	d.lastKept = false
}

// nonSpace returns the next byte that is not JSON white space.
func (d *decoder) nonSpace() (byte, error) {
	for {
		c, err := d.next()
		if err != nil {
			return 0, err
		}
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return c, nil
		}
		if d.capture && d.lastKept {
			d.raw = d.raw[:len(d.raw)-1]
			d.lastKept = false
		}
	}
}

// object reads an object, calling field for each key with the reader at the key's value.
// objectNotify is object with after called once each field's value is read: a codec tells the
// gate what it knows as soon as a value completes it, not when the next key starts, so that a
// stdin that stalls right after tool_name still lets the gate decide from it.
func (d *decoder) objectNotify(field func(key string) error, after func()) error {
	return d.object(func(key string) error {
		if err := field(key); err != nil {
			return err
		}
		after()
		return nil
	})
}

func (d *decoder) object(field func(key string) error) error {
	c, err := d.nonSpace()
	if err != nil {
		return err
	}
	if c != '{' {
		return d.fail("want '{', found %q", c)
	}
	c, err = d.nonSpace()
	if err != nil {
		return err
	}
	if c == '}' {
		return nil
	}
	for {
		if c != '"' {
			return d.fail("want a key, found %q", c)
		}
		key, err := d.str(maxName)
		if err != nil {
			return err
		}
		if c, err = d.nonSpace(); err != nil {
			return err
		}
		if c != ':' {
			return d.fail("want ':' after key %q", key)
		}
		if err := field(key); err != nil {
			return err
		}
		if c, err = d.nonSpace(); err != nil {
			return err
		}
		if c == '}' {
			return nil
		}
		if c != ',' {
			return d.fail("want ',' or '}', found %q", c)
		}
		if c, err = d.nonSpace(); err != nil {
			return err
		}
	}
}

// str reads the rest of a string whose opening quote was consumed, keeping at most max bytes of
// its raw (escaped) form, and decodes them with encoding/json so they match JSON exactly. The rest
// is read and checked but not kept, in buffer-sized steps.
func (d *decoder) str(max int) (string, error) {
	raw := []byte{'"'}
	for {
		c, err := d.next()
		if err != nil {
			return "", err
		}
		switch {
		case c == '"':
			return d.decodeRaw(raw, false)
		case c == '\\':
			esc, err := d.escape()
			if err != nil {
				return "", err
			}
			// An escape is kept whole or not at all; once cut, nothing more is kept.
			if len(raw)-1+len(esc) > max {
				return d.cutRest(raw)
			}
			raw = append(raw, esc...)
		case c < 0x20:
			return "", d.fail("control character in a string")
		default:
			if len(raw)-1 >= max {
				return d.cutRest(raw)
			}
			raw = append(raw, c)
		}
	}
}

// cutRest reads the rest of a string str cut (checking it as skip does), and returns what was
// kept of it, ending in "…".
func (d *decoder) cutRest(raw []byte) (string, error) {
	if err := d.skipString(); err != nil {
		return "", err
	}
	return d.decodeRaw(trimPartial(raw), true)
}

// decodeRaw decodes the raw string kept after its opening quote; a cut one ends in "…".
func (d *decoder) decodeRaw(raw []byte, cut bool) (string, error) {
	raw = append(raw, '"')
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", d.fail("bad string: %v", err)
	}
	if cut {
		s += "…"
	}
	return s, nil
}

// escape reads and checks the rest of an escape whose backslash was consumed; it returns the whole
// escape.
func (d *decoder) escape() ([]byte, error) {
	e, err := d.next()
	if err != nil {
		return nil, err
	}
	switch e {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return []byte{'\\', e}, nil
	case 'u':
		esc := []byte{'\\', 'u', 0, 0, 0, 0}
		for i := 2; i < 6; i++ {
			if esc[i], err = d.next(); err != nil {
				return nil, err
			}
			if !isHex(esc[i]) {
				return nil, d.fail("invalid character %q in a \\u escape", esc[i])
			}
		}
		return esc, nil
	}
	return nil, d.fail("invalid escape '\\%c'", e)
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// trimPartial drops what a cut left incomplete at the end of a raw string: the high half of a
// surrogate pair whose low half was not kept, or the first bytes of a multi-byte character.
func trimPartial(raw []byte) []byte {
	if n := len(raw); n >= 7 && raw[n-6] == '\\' && raw[n-5] == 'u' && (raw[n-4] == 'd' || raw[n-4] == 'D') &&
		strings.ContainsRune("89abAB", rune(raw[n-3])) && !(n >= 8 && raw[n-7] == '\\' && oddBackslashes(raw[:n-6])) {
		raw = raw[:n-6]
	}
	for i := len(raw) - 1; i > 0 && i >= len(raw)-utf8.UTFMax; i-- {
		if utf8.RuneStart(raw[i]) {
			if !utf8.FullRune(raw[i:]) {
				raw = raw[:i]
			}
			break
		}
	}
	return raw
}

// oddBackslashes reports whether b ends in an odd number of backslashes, that is whether the byte
// after b is escaped.
func oddBackslashes(b []byte) bool {
	n := 0
	for i := len(b) - 1; i >= 0 && b[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

func (d *decoder) stringInto(dst *string, max int) error {
	c, err := d.nonSpace()
	if err != nil {
		return err
	}
	if c == '"' {
		s, err := d.str(max)
		*dst = s
		return err
	}
	// null, or a field of another type than expected: skipped rather than failing the whole event,
	// and the field is empty (the last value of a repeated key wins).
	*dst = ""
	d.unread()
	return d.skip()
}

// mark looks at the next value without consuming it and sets *bad when it is neither of the kind
// that starts with want ('"', '{', '[') nor null: a field of another type than its writer's.
func (d *decoder) mark(bad *bool, want byte) error {
	c, err := d.nonSpace()
	if err != nil {
		return err
	}
	d.unread()
	if c != want && c != 'n' {
		*bad = true
	}
	return nil
}

// strictString is stringInto for a value that must be a string or null: another type sets *bad.
func (d *decoder) strictString(dst *string, max int, bad *bool) error {
	if err := d.mark(bad, '"'); err != nil {
		return err
	}
	return d.stringInto(dst, max)
}

// strictObject is objectOrSkip for a value that must be an object or null: another type sets
// *bad.
func (d *decoder) strictObject(bad *bool, field func(key string) error) error {
	if err := d.mark(bad, '{'); err != nil {
		return err
	}
	return d.objectOrSkip(field)
}

// strictArray is arrayOrSkip for a value that must be an array or null: another type sets *bad.
func (d *decoder) strictArray(bad *bool, elem func() error) error {
	if err := d.mark(bad, '['); err != nil {
		return err
	}
	return d.arrayOrSkip(elem)
}

func (d *decoder) boolInto(dst *bool) error {
	c, err := d.nonSpace()
	if err != nil {
		return err
	}
	switch c {
	case 't':
		*dst = true
		return d.literal("rue")
	case 'f':
		*dst = false
		return d.literal("alse")
	}
	*dst = false
	d.unread()
	return d.skip()
}

func (d *decoder) literal(rest string) error {
	for i := 0; i < len(rest); i++ {
		c, err := d.next()
		if err != nil {
			return err
		}
		if c != rest[i] {
			return d.fail("bad literal")
		}
	}
	return nil
}

// skip consumes one value of any kind without keeping it, checking its syntax. Nesting is tracked
// on an explicit stack, not by recursion, so a deeply nested tool_input cannot exhaust the stack.
func (d *decoder) skip() error {
	var stack []byte // the open containers: '{' or '['
	for {
		// A value.
		c, err := d.nonSpace()
		if err != nil {
			return err
		}
		closed := true
		switch {
		case c == '{':
			if c, err = d.nonSpace(); err != nil {
				return err
			}
			if c != '}' {
				if err := d.key(c); err != nil {
					return err
				}
				stack = append(stack, '{')
				closed = false
			}
		case c == '[':
			if c, err = d.nonSpace(); err != nil {
				return err
			}
			if c != ']' {
				d.unread()
				stack = append(stack, '[')
				closed = false
			}
		case c == '"':
			err = d.skipString()
		case c == 't':
			err = d.literal("rue")
		case c == 'f':
			err = d.literal("alse")
		case c == 'n':
			err = d.literal("ull")
		case c == '-' || '0' <= c && c <= '9':
			err = d.number(c)
		default:
			err = d.fail("want a value, found %q", c)
		}
		if err != nil {
			return err
		}
		if !closed {
			continue
		}
		// After a value: close containers until one goes on with another value.
		for {
			if len(stack) == 0 {
				return nil
			}
			if c, err = d.nonSpace(); err != nil {
				return err
			}
			top := stack[len(stack)-1]
			if c == ',' {
				if top == '{' {
					if c, err = d.nonSpace(); err != nil {
						return err
					}
					if err := d.key(c); err != nil {
						return err
					}
				}
				break
			}
			if top == '{' && c == '}' || top == '[' && c == ']' {
				stack = stack[:len(stack)-1]
				continue
			}
			if top == '{' {
				return d.fail("want ',' or '}', found %q", c)
			}
			return d.fail("want ',' or ']', found %q", c)
		}
	}
}

// key skips an object key whose first byte c was read, and the colon after it.
func (d *decoder) key(c byte) error {
	if c != '"' {
		return d.fail("want a key, found %q", c)
	}
	if err := d.skipString(); err != nil {
		return err
	}
	c, err := d.nonSpace()
	if err != nil {
		return err
	}
	if c != ':' {
		return d.fail("want ':' after a key, found %q", c)
	}
	return nil
}

// number checks the rest of a number whose first byte c was read (JSON's grammar: no leading
// zeros, no leading '+' or '.', digits after '.' and after the exponent).
func (d *decoder) number(c byte) error {
	digits := func() (int, error) {
		n := 0
		for {
			b, err := d.r.Peek(1)
			if err != nil || b[0] < '0' || b[0] > '9' {
				if err != nil && err != io.EOF {
					return n, err
				}
				return n, nil
			}
			d.feed(b[:1])
			if d.capture && !d.full() {
				d.raw = append(d.raw, b[0])
			}
			d.r.Discard(1)
			d.off++
			n++
		}
	}
	peek := func() byte {
		b, err := d.r.Peek(1)
		if err != nil {
			return 0
		}
		return b[0]
	}
	if c == '-' {
		var err error
		if c, err = d.next(); err != nil {
			return err
		}
		if c < '0' || c > '9' {
			return d.fail("want a digit after '-', found %q", c)
		}
	}
	if c != '0' {
		if _, err := digits(); err != nil {
			return err
		}
	}
	if peek() == '.' {
		d.next()
		if n, err := digits(); err != nil || n == 0 {
			if err != nil {
				return err
			}
			d.next()
			return d.fail("want a digit after '.'")
		}
	}
	if p := peek(); p == 'e' || p == 'E' {
		d.next()
		if p := peek(); p == '+' || p == '-' {
			d.next()
		}
		if n, err := digits(); err != nil || n == 0 {
			if err != nil {
				return err
			}
			d.next()
			return d.fail("want a digit in the exponent")
		}
	}
	return nil
}

// skipString consumes the rest of a string in buffer-sized steps, checking its escapes and that it
// holds no control characters; the escape state carries across buffer refills.
func (d *decoder) skipString() error {
	// esc: 0 outside an escape, 1 after a backslash, 2 to 5 inside \uXXXX (hex digits left + 1).
	esc := 0
	// from is where the string's content starts in raw while capturing; cut is set once leafMax
	// left some of it out.
	from, cut := len(d.raw), false
	for {
		n := d.r.Buffered()
		if n == 0 {
			n = 1
		}
		chunk, err := d.r.Peek(n)
		if len(chunk) == 0 {
			if err == io.EOF || err == nil {
				return d.fail("unexpected end of input in a string")
			}
			return err
		}
		for i, c := range chunk {
			bad := ""
			switch {
			case esc == 1:
				switch c {
				case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
					esc = 0
				case 'u':
					esc = 5
				default:
					bad = fmt.Sprintf("invalid escape '\\%c'", c)
				}
			case esc > 1:
				if !isHex(c) {
					bad = fmt.Sprintf("invalid character %q in a \\u escape", c)
				}
				if esc--; esc == 1 {
					esc = 0
				}
			case c == '\\':
				esc = 1
			case c == '"':
				d.feed(chunk[:i+1])
				if d.capture {
					d.keepString(chunk[:i], from, &cut)
					d.closeString(from, cut)
				}
				d.r.Discard(i + 1)
				d.off += int64(i + 1)
				return nil
			case c < 0x20:
				bad = "control character in a string"
			}
			if bad != "" {
				d.r.Discard(i + 1)
				d.off += int64(i + 1)
				return d.fail("%s", bad)
			}
		}
		d.feed(chunk)
		if d.capture {
			d.keepString(chunk, from, &cut)
		}
		d.r.Discard(len(chunk))
		d.off += int64(len(chunk))
	}
}

// objectOrSkip reads an object with field, or skips a value of another type (null included).
func (d *decoder) objectOrSkip(field func(key string) error) error {
	c, err := d.nonSpace()
	if err != nil {
		return err
	}
	d.unread()
	if c != '{' {
		return d.skip()
	}
	return d.object(field)
}

// arrayOrSkip reads an array, calling elem with the reader at each element, or skips a value of
// another type (null included).
func (d *decoder) arrayOrSkip(elem func() error) error {
	c, err := d.nonSpace()
	if err != nil {
		return err
	}
	if c != '[' {
		d.unread()
		return d.skip()
	}
	if c, err = d.nonSpace(); err != nil {
		return err
	}
	if c == ']' {
		return nil
	}
	d.unread()
	for {
		if err := elem(); err != nil {
			return err
		}
		if c, err = d.nonSpace(); err != nil {
			return err
		}
		if c == ']' {
			return nil
		}
		if c != ',' {
			return d.fail("want ',' or ']', found %q", c)
		}
	}
}

// wholeObject reports whether raw is one JSON object and nothing but white space after it, judged
// by its braces and brackets outside strings; it does not validate the rest (the decoder does).
// A codec's Skips may trust that nothing of the event is still to come only then.
func wholeObject(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '{' || raw[len(raw)-1] != '}' {
		return false
	}
	depth, inString, escaped := 0, false, false
	for i, c := range raw {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
			if depth == 0 && i != len(raw)-1 {
				return false
			}
			if depth < 0 {
				return false
			}
		}
	}
	return depth == 0 && !inString
}
