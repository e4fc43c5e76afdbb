// Package settings reads and edits the JSON settings files that wire hooks into an agent (Claude
// Code's settings.json and settings.local.json first) without disturbing what it does not own.
//
// A file is parsed into an ordered tree whose every node remembers the exact bytes it was read
// from. Editing marks the containers it touches; writing emits untouched nodes byte for byte and
// re-indents only the touched containers, with the indentation unit the file already uses. A file
// that is edited and then edited back is therefore restored exactly, key order included, as long as
// it was written one member per line (the way Claude Code and every JSON formatter write it).
//
// Nothing here decodes into map[string]any: that would lose key order and rewrite numbers.
package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Kind is the JSON type of a node, with the scalars (strings, numbers, true, false, null) lumped
// together: they are only ever kept or replaced whole.
type Kind int

// The kinds.
const (
	Scalar Kind = iota
	Object
	Array
)

// Value is one node of a parsed (or built) JSON document.
type Value struct {
	kind Kind
	// raw is the node's text as read; nil for containers built here. Scalars always have it.
	raw     []byte
	members []*member
	elems   []*Value
	// dirty marks a container whose own members or elements were changed.
	dirty bool

	// The bytes around a node as read, so that an edit keeps every byte it does not touch (the
	// README's promise for settings files): lead is the text between the previous separator
	// ('[' or ',') and an array element, trail the text between it and the next ','; closeWS
	// is the text between a container's last member or element and its closing bracket; spread
	// says the container put its members on lines of their own (or was empty), so that members
	// added to it go on lines of their own too.
	lead, trail, closeWS []byte
	spread               bool
}

type member struct {
	// lead, colon and trail are the text before the key, between the key and the value (':'
	// included), and between the value and the next ','; nil for a member added here.
	lead, colon, trail []byte
	rawKey             []byte // the key as written, quotes and escapes included
	key                string
	value              *Value
}

// Kind returns the node's kind.
func (v *Value) Kind() Kind { return v.kind }

// Str returns the value of a string node.
func (v *Value) Str() (string, bool) {
	if v == nil || v.kind != Scalar || len(v.raw) == 0 || v.raw[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(v.raw, &s) != nil {
		return "", false
	}
	return s, true
}

// Float returns the value of a number node.
func (v *Value) Float() (float64, bool) {
	if v == nil || v.kind != Scalar {
		return 0, false
	}
	var f float64
	if json.Unmarshal(v.raw, &f) != nil {
		return 0, false
	}
	return f, true
}

// Bool returns the value of a true or false node.
func (v *Value) Bool() (bool, bool) {
	if v == nil || v.kind != Scalar {
		return false, false
	}
	switch string(v.raw) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// Strings returns the elements of an array of strings; ok is false when v is not one.
func (v *Value) Strings() (out []string, ok bool) {
	if v == nil || v.kind != Array {
		return nil, false
	}
	out = []string{}
	for _, e := range v.elems {
		s, ok := e.Str()
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}

// TypeName names the node's JSON type for messages: "an object", "a string", …
func (v *Value) TypeName() string {
	switch {
	case v == nil:
		return "missing"
	case v.kind == Object:
		return "an object"
	case v.kind == Array:
		return "an array"
	case len(v.raw) > 0 && v.raw[0] == '"':
		return "a string"
	case string(v.raw) == "true" || string(v.raw) == "false":
		return "a boolean"
	case string(v.raw) == "null":
		return "null"
	}
	return "a number"
}

// Get returns the value of key in an object, nil when v is not an object or has no such key. Of
// repeated keys the last wins, as in JavaScript's JSON.parse, which Claude Code uses.
func (v *Value) Get(key string) *Value {
	if v == nil || v.kind != Object {
		return nil
	}
	for i := len(v.members) - 1; i >= 0; i-- {
		if v.members[i].key == key {
			return v.members[i].value
		}
	}
	return nil
}

// Keys returns an object's keys in file order, each once; nil when v is not an object.
func (v *Value) Keys() []string {
	if v == nil || v.kind != Object {
		return nil
	}
	var out []string
	for _, m := range v.members {
		if !slices.Contains(out, m.key) {
			out = append(out, m.key)
		}
	}
	return out
}

// Set replaces the value of key in an object (its last occurrence), or appends the key at the
// end. Setting a scalar to an equal text is not a change.
func (v *Value) Set(key string, val *Value) {
	for i := len(v.members) - 1; i >= 0; i-- {
		m := v.members[i]
		if m.key != key {
			continue
		}
		if m.value.kind == Scalar && val.kind == Scalar && bytes.Equal(m.value.raw, val.raw) {
			return
		}
		m.value = val
		v.dirty = true
		return
	}
	v.members = append(v.members, &member{rawKey: quote(key), key: key, value: val})
	v.dirty = true
}

// Delete removes every occurrence of key from an object.
func (v *Value) Delete(key string) {
	kept := v.members[:0]
	for _, m := range v.members {
		if m.key == key {
			v.dirty = true
			continue
		}
		kept = append(kept, m)
	}
	v.members = kept
}

// Len returns the number of members or elements.
func (v *Value) Len() int {
	if v == nil {
		return 0
	}
	if v.kind == Object {
		return len(v.members)
	}
	return len(v.elems)
}

// Elems returns an array's elements.
func (v *Value) Elems() []*Value {
	if v == nil || v.kind != Array {
		return nil
	}
	return v.elems
}

// Append adds an element at the end of an array.
func (v *Value) Append(e *Value) {
	v.elems = append(v.elems, e)
	v.dirty = true
}

// RemoveAt removes the i-th element of an array.
func (v *Value) RemoveAt(i int) {
	v.elems = append(v.elems[:i], v.elems[i+1:]...)
	v.dirty = true
}

// NewObject returns an empty object node.
func NewObject() *Value { return &Value{kind: Object, dirty: true} }

// NewArray returns an array node holding elems.
func NewArray(elems ...*Value) *Value { return &Value{kind: Array, elems: elems, dirty: true} }

// String returns a string node.
func String(s string) *Value { return &Value{kind: Scalar, raw: quote(s)} }

// Int returns a number node.
func Int(n int) *Value { return &Value{kind: Scalar, raw: fmt.Appendf(nil, "%d", n)} }

// StringArray returns an array node of strings.
func StringArray(ss []string) *Value {
	a := NewArray()
	for _, s := range ss {
		a.elems = append(a.elems, String(s))
	}
	return a
}

// quote encodes s as a JSON string, leaving <, > and & alone (they are not HTML here).
func quote(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return bytes.TrimRight(b.Bytes(), "\n")
}

// modified reports whether v or anything under it changed.
func (v *Value) modified() bool {
	if v.dirty {
		return true
	}
	for _, m := range v.members {
		if m.value.modified() {
			return true
		}
	}
	for _, e := range v.elems {
		if e.modified() {
			return true
		}
	}
	return false
}

// inlineMax is the longest array of scalars written on one line, as ["hook"].
const inlineMax = 60

// write emits v at depth: unchanged nodes as read, changed containers that were read with the
// text around their unchanged members and elements as read, new containers one member per line.
func (v *Value) write(b *bytes.Buffer, depth int, indent string) {
	if v.raw != nil && !v.modified() {
		b.Write(v.raw)
		return
	}
	pad := func(d int) {
		for range d {
			b.WriteString(indent)
		}
	}
	if v.raw != nil && v.kind != Scalar {
		v.splice(b, depth, indent)
		return
	}
	switch v.kind {
	case Scalar:
		b.Write(v.raw)
	case Object:
		if len(v.members) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteString("{\n")
		for i, m := range v.members {
			pad(depth + 1)
			b.Write(m.rawKey)
			b.WriteString(": ")
			m.value.write(b, depth+1, indent)
			if i < len(v.members)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		pad(depth)
		b.WriteByte('}')
	case Array:
		if len(v.elems) == 0 {
			b.WriteString("[]")
			return
		}
		if line, ok := v.inline(); ok {
			b.WriteString(line)
			return
		}
		b.WriteString("[\n")
		for i, e := range v.elems {
			pad(depth + 1)
			e.write(b, depth+1, indent)
			if i < len(v.elems)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		pad(depth)
		b.WriteByte(']')
	}
}

// splice writes a changed container that was read: each member or element that was there keeps
// the text around it, new ones go on lines of their own (or after a space, in a container written
// on one line), and the closing bracket keeps its place.
func (v *Value) splice(b *bytes.Buffer, depth int, indent string) {
	open, close := byte('{'), byte('}')
	n := len(v.members)
	if v.kind == Array {
		open, close, n = '[', ']', len(v.elems)
	}
	b.WriteByte(open)
	if n == 0 {
		if len(bytes.TrimSpace(v.closeWS)) > 0 {
			b.Write(v.closeWS) // a comment that was all the container held
		}
		b.WriteByte(close)
		return
	}
	newLead := func(i int) {
		switch {
		case v.spread:
			b.WriteByte('\n')
			for range depth + 1 {
				b.WriteString(indent)
			}
		case i > 0:
			b.WriteByte(' ')
		}
	}
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		var lead, trail []byte
		if v.kind == Object {
			m := v.members[i]
			lead, trail = m.lead, m.trail
			if lead == nil {
				newLead(i)
			}
			b.Write(lead)
			b.Write(m.rawKey)
			if m.colon != nil {
				b.Write(m.colon)
			} else {
				b.WriteString(": ")
			}
			m.value.write(b, depth+1, indent)
		} else {
			e := v.elems[i]
			lead, trail = e.lead, e.trail
			if lead == nil {
				newLead(i)
			}
			b.Write(lead)
			e.write(b, depth+1, indent)
		}
		if i < n-1 {
			b.Write(trail)
		}
	}
	if v.spread && !bytes.Contains(v.closeWS, []byte("\n")) {
		if len(bytes.TrimSpace(v.closeWS)) > 0 {
			b.Write(v.closeWS) // a comment an empty container held
		}
		b.WriteByte('\n')
		for range depth {
			b.WriteString(indent)
		}
	} else {
		b.Write(v.closeWS)
	}
	b.WriteByte(close)
}

// inline returns a short array of scalars on one line.
func (v *Value) inline() (string, bool) {
	parts := make([]string, len(v.elems))
	n := 0
	for i, e := range v.elems {
		if e.kind != Scalar {
			return "", false
		}
		parts[i] = string(e.raw)
		n += len(parts[i]) + 2
	}
	if n > inlineMax {
		return "", false
	}
	return "[" + strings.Join(parts, ", ") + "]", true
}

// SyntaxError is returned for a file that is not valid JSON. Line and Col are 1-based; Col counts
// bytes.
type SyntaxError struct {
	File      string
	Line, Col int
	Msg       string
}

// Error formats the problem as "file:line:col: not valid JSON: msg".
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s:%d:%d: not valid JSON: %s", e.File, e.Line, e.Col, e.Msg)
}

// ErrNotObject is returned when the top level of a settings file is not a JSON object.
var ErrNotObject = errors.New("the top level is not a JSON object")

// Doc is a parsed settings file.
type Doc struct {
	// Name is the file name used in messages.
	Name   string
	orig   []byte
	prefix []byte // bytes before the top-level value
	suffix []byte // bytes after it
	root   *Value
	indent string
	// atRoot says the file's top-level object is itself the event → matcher groups object (Devin
	// CLI's hooks.v1.json), not its "hooks" member.
	atRoot bool
}

// HooksAtRoot makes the document's top-level object its hooks object, event names at the top
// level (Devin CLI's .devin/hooks.v1.json), for Handlers, Ensure and Remove.
func (d *Doc) HooksAtRoot() { d.atRoot = true }

// Parse parses data, the content of the file name. An empty (or all-blank) file is an empty
// object. Invalid JSON gives a *SyntaxError with the decoder's line and column; a top level that
// is not an object gives an error wrapping ErrNotObject.
func Parse(name string, data []byte) (*Doc, error) { return parse(name, data, false) }

// parse is Parse, and ParseJSONC when comments is set.
func parse(name string, data []byte, comments bool) (*Doc, error) {
	d := &Doc{Name: name, orig: data, indent: "  "}
	if len(bytes.TrimSpace(data)) == 0 {
		d.root = &Value{kind: Object}
		d.suffix = []byte("\n")
		return d, nil
	}
	probeData := data
	if comments {
		// Blanked in a copy of the same length, so an error names the offset in the file itself.
		probeData = StripComments(data)
	}
	var probe any
	if err := json.Unmarshal(probeData, &probe); err != nil {
		return nil, syntaxError(name, data, err)
	}
	p := &parser{data: data}
	p.ws()
	start := p.pos
	d.prefix = data[:start]
	d.root = p.value()
	d.suffix = data[p.pos:]
	if d.root.kind != Object {
		return nil, fmt.Errorf("%s: %w (it is %s)", name, ErrNotObject, d.root.TypeName())
	}
	d.indent = detectIndent(data[start+1:])
	return d, nil
}

// syntaxError turns a decoder error into a *SyntaxError with a position.
func syntaxError(name string, data []byte, err error) error {
	off, msg := len(data), err.Error()
	var se *json.SyntaxError
	if errors.As(err, &se) {
		// Offset counts the bytes read, the offending one included.
		off = max(int(se.Offset)-1, 0)
		if msg == "unexpected end of JSON input" {
			off, msg = len(data), "unexpected end of file"
		}
	}
	line, col := position(data, off)
	return &SyntaxError{File: name, Line: line, Col: col, Msg: msg}
}

// position converts a byte offset to a 1-based line and column.
func position(data []byte, off int) (line, col int) {
	if off > len(data) {
		off = len(data)
	}
	line = 1 + bytes.Count(data[:off], []byte("\n"))
	col = off - (bytes.LastIndexByte(data[:off], '\n') + 1) + 1
	return line, col
}

// detectIndent returns the indentation of the first member line after the opening brace, or two
// spaces when the object is written on one line.
func detectIndent(afterBrace []byte) string {
	i := 0
	for i < len(afterBrace) && (afterBrace[i] == ' ' || afterBrace[i] == '\t' || afterBrace[i] == '\r' || afterBrace[i] == '\n') {
		i++
	}
	ws := afterBrace[:i]
	nl := bytes.LastIndexByte(ws, '\n')
	if nl < 0 {
		return "  "
	}
	unit := string(ws[nl+1:])
	if unit == "" || strings.Trim(unit, " \t") != "" {
		return "  "
	}
	return unit
}

// Root returns the top-level object.
func (d *Doc) Root() *Value { return d.root }

// Changed reports whether the document differs from the file it was read from.
func (d *Doc) Changed() bool { return d.root.modified() }

// Bytes returns the document's text: the original bytes when nothing changed, else the edited
// document with the original leading bytes and a trailing newline.
func (d *Doc) Bytes() []byte {
	if !d.Changed() {
		return d.orig
	}
	var b bytes.Buffer
	b.Write(d.prefix)
	d.root.write(&b, 0, d.indent)
	switch {
	case bytes.HasSuffix(d.suffix, []byte("\n")):
		b.Write(d.suffix)
	case len(bytes.TrimSpace(d.suffix)) > 0:
		// A comment after the object, with no line end after it: kept, and the file ends a line.
		b.Write(d.suffix)
		b.WriteByte('\n')
	default:
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// parser records the spans of an already validated JSON text.
type parser struct {
	data []byte
	pos  int
}

// ws skips white space, and comments with it: a strict file has none (Parse checked it first), and
// a file read by ParseJSONC keeps them in the text around its members.
func (p *parser) ws() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\r', '\n':
			p.pos++
		case '/':
			if p.pos+1 >= len(p.data) {
				return
			}
			switch p.data[p.pos+1] {
			case '/':
				for p.pos < len(p.data) && p.data[p.pos] != '\n' {
					p.pos++
				}
			case '*':
				end := bytes.Index(p.data[p.pos+2:], []byte("*/"))
				if end < 0 {
					p.pos = len(p.data)
					return
				}
				p.pos += 2 + end + 2
			default:
				return
			}
		default:
			return
		}
	}
}

func (p *parser) value() *Value {
	p.ws()
	start := p.pos
	switch p.data[p.pos] {
	case '{':
		v := &Value{kind: Object}
		v.closeWS, v.spread = p.items('}', func(lead []byte) *[]byte {
			ks := p.pos
			p.skipString()
			rawKey := p.data[ks:p.pos]
			var key string
			json.Unmarshal(rawKey, &key)
			cs := p.pos
			p.ws()
			p.pos++ // ':'
			p.ws()
			m := &member{lead: lead, colon: p.data[cs:p.pos], rawKey: rawKey, key: key}
			m.value = p.value()
			v.members = append(v.members, m)
			return &m.trail
		})
		v.raw = p.data[start:p.pos]
		return v
	case '[':
		v := &Value{kind: Array}
		v.closeWS, v.spread = p.items(']', func(lead []byte) *[]byte {
			e := p.value()
			e.lead = lead
			v.elems = append(v.elems, e)
			return &e.trail
		})
		v.raw = p.data[start:p.pos]
		return v
	case '"':
		p.skipString()
	default:
		// A number or a literal never holds '/': one there starts a comment.
		for p.pos < len(p.data) && !strings.ContainsRune(",}] \t\r\n/", rune(p.data[p.pos])) {
			p.pos++
		}
	}
	return &Value{kind: Scalar, raw: p.data[start:p.pos]}
}

// items reads the members or elements of a container whose opening bracket is at p.pos, up to
// and including its closing bracket close. item reads one at p.pos, given the text before it
// (lead), and returns where to keep the text after it (trail); the last one's trail becomes the
// container's closeWS instead. spread says the container was empty or put a line break before
// one of its items or its closing bracket.
func (p *parser) items(close byte, item func(lead []byte) (trail *[]byte)) (closeWS []byte, spread bool) {
	p.pos++ // the opening bracket
	ls := p.pos
	p.ws()
	if p.data[p.pos] == close {
		closeWS = p.data[ls:p.pos]
		p.pos++
		return closeWS, true
	}
	for {
		p.ws()
		lead := p.data[ls:p.pos]
		spread = spread || bytes.IndexByte(lead, '\n') >= 0
		trail := item(lead)
		ts := p.pos
		p.ws()
		*trail = p.data[ts:p.pos]
		c := p.data[p.pos]
		p.pos++
		ls = p.pos
		if c == close {
			closeWS, *trail = *trail, nil
			return closeWS, spread || bytes.IndexByte(closeWS, '\n') >= 0
		}
	}
}

func (p *parser) skipString() {
	p.pos++ // opening quote
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case '\\':
			p.pos += 2
		case '"':
			p.pos++
			return
		default:
			p.pos++
		}
	}
}
