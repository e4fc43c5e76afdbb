package agent

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// The loop guard's hash of a call's arguments, computed over the compact JSON bytes the decoder
// feeds it while it skips them (white space between tokens already left out), a byte at a time, in
// memory that grows only with the nesting. Arguments a person would call the same call hash alike
// (docs/circuits.md, "Near-duplicates"):
//
//   - key order: an object's hash is a sum of its members' hashes, so their order does not count;
//     keys themselves are compared as written (a schema's names are case-sensitive);
//   - escapes: a string is hashed as the text it holds ("é" and "\u00e9" are one value);
//   - text: a string that reads as words (one with a blank between words, or a single plain word)
//     is hashed with its runs of white space made one blank, trimmed, and in lower case;
//   - identifiers stay exact: a string with a slash or backslash (a path, a URL), and a single token
//     with a digit, punctuation other than a hyphen or apostrophe, or an upper-case letter after a
//     lower-case one (an id, a SHA, a file name, a camelCase name) is hashed exactly as it reads,
//     case and inner spaces included (only white space around it is trimmed);
//   - arrays keep their order, and numbers and literals are hashed as written.

// normHash is the state of one such hash.
type normHash struct {
	table *crcTable
	stack []normFrame
	// result is the hash of the value once it is complete (done).
	result uint64
	done   bool

	// A scalar (number, literal) being read, and its hash so far.
	inScalar bool
	scalar   uint64

	// A string being read.
	inString bool
	isKey    bool
	// esc is 0 outside an escape, 1 after a backslash, 2 to 5 in the hex digits of \uXXXX (digits
	// left + 1); hex collects them, high a high surrogate waiting for its low half.
	esc  int
	hex  rune
	high rune
	// pend holds the first bytes of a multi-byte UTF-8 character.
	pend  [utf8.UTFMax]byte
	npend int
	str   normString
}

// normFrame is an open object or array.
type normFrame struct {
	object bool
	// sum adds up an object's member hashes; acc chains an array's element hashes, n counts them.
	sum, acc uint64
	n        uint64
	// key is the hash of the key whose value comes next.
	key uint64
}

// normString is what a string's text gives, rune by rune: its exact hash, its folded hash, and
// what decides which of the two stands for it.
type normString struct {
	exact, folded uint64
	started       bool // a rune other than white space was folded
	pendingSpace  bool // white space after it, not folded yet
	blank         bool // white space between words
	slash         bool
	ident         bool // a digit or identifier punctuation
	camel         bool // an upper-case letter after a lower-case one
	lastLower     bool
	buf           [utf8.UTFMax]byte
	// ws holds the white space after the last word, for the exact hash: written when a word
	// follows, left out at the end (a run longer than ws is written as it comes).
	ws  [64]byte
	nws int
}

// Tags keep apart values of different kinds whose bytes might hash alike.
const (
	tagObject uint64 = 0x9e3779b97f4a7c15
	tagArray  uint64 = 0xbf58476d1ce4e5b9
	tagString uint64 = 0x94d049bb133111eb
	tagText   uint64 = 0x2545f4914f6cdd1d
	tagKey    uint64 = 0xd6e8feb86659fd93
	tagScalar uint64 = 0xa0761d6478bd642f
)

// mix is SplitMix64's finalizer: every bit of x moves about half of the result's.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

func (h *normHash) reset(t *crcTable) {
	*h = normHash{table: t, stack: h.stack[:0]}
}

// write feeds bytes of the compact JSON text. Runs of plain ASCII inside a string value (what large
// arguments are made of) take a path of their own, a table lookup a byte.
func (h *normHash) write(b []byte) {
	for i := 0; i < len(b); {
		if h.inString && !h.isKey && h.esc == 0 && h.npend == 0 && h.high == 0 {
			j := i
			for j < len(b) && asciiClass[b[j]]&clPlain != 0 {
				j++
			}
			if j > i {
				h.asciiRun(b[i:j])
				i = j
				continue
			}
		}
		h.byte(b[i])
		i++
	}
}

// Classes of ASCII bytes for asciiRun.
const (
	clPlain = 1 << iota // printable ASCII other than '"' and '\\', or a blank
	clSpace
	clSlash
	clIdent // a digit, or punctuation other than '-' and '\''
	clUpper
	clLower
)

var asciiClass = func() (t [256]byte) {
	for c := 0; c < 128; c++ {
		r := rune(c)
		switch {
		case c == '"' || c == '\\':
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
			t[c] = clPlain | clSpace
		case c < 0x20 || c == 0x7f:
		case c == '/':
			t[c] = clPlain | clSlash
		case unicode.IsDigit(r) || unicode.IsPunct(r) && r != '-' && r != '\'' || unicode.IsSymbol(r):
			t[c] = clPlain | clIdent
		case unicode.IsUpper(r):
			t[c] = clPlain | clUpper
		case unicode.IsLower(r):
			t[c] = clPlain | clLower
		default:
			t[c] = clPlain
		}
	}
	return t
}()

// asciiRun is rune for each byte of run, plain ASCII of a string value, with the CRCs kept inverted
// across the run (crcTable.update's own form).
func (h *normHash) asciiRun(run []byte) {
	s, t := &h.str, h.table
	ex, fo := ^s.exact, ^s.folded
	for _, c := range run {
		cl := asciiClass[c]
		if cl&clSpace != 0 {
			if s.started {
				s.pendingSpace = true
				if s.nws == len(s.ws) {
					for _, w := range s.ws[:s.nws] {
						ex = t[byte(ex)^w] ^ ex>>8
					}
					s.nws = 0
				}
				s.ws[s.nws] = c
				s.nws++
			}
			s.lastLower = false
			continue
		}
		if s.pendingSpace {
			fo = t[byte(fo)^' '] ^ fo>>8
			for _, w := range s.ws[:s.nws] {
				ex = t[byte(ex)^w] ^ ex>>8
			}
			s.pendingSpace, s.blank, s.nws = false, true, 0
		}
		ex = t[byte(ex)^c] ^ ex>>8
		s.started = true
		switch {
		case cl&clSlash != 0:
			s.slash = true
		case cl&clIdent != 0:
			s.ident = true
		case cl&clUpper != 0:
			if s.lastLower {
				s.camel = true
			}
			c += 'a' - 'A'
		}
		s.lastLower = cl&clLower != 0
		fo = t[byte(fo)^c] ^ fo>>8
	}
	s.exact, s.folded = ^ex, ^fo
}

func (h *normHash) byte(c byte) {
	if h.inString {
		h.stringByte(c)
		return
	}
	if h.inScalar {
		if c != ',' && c != '}' && c != ']' {
			h.scalar = h.table.update(h.scalar, []byte{c})
			return
		}
		h.endScalar()
	}
	switch c {
	case '{', '[':
		h.stack = append(h.stack, normFrame{object: c == '{'})
	case '}', ']':
		if len(h.stack) == 0 {
			return // not JSON: the decoder says so
		}
		f := h.stack[len(h.stack)-1]
		h.stack = h.stack[:len(h.stack)-1]
		if f.object {
			h.value(mix(f.sum ^ tagObject))
		} else {
			h.value(mix(f.acc ^ tagArray + f.n))
		}
	case ',', ':':
	case '"':
		h.inString, h.esc, h.high, h.npend, h.str = true, 0, 0, 0, normString{}
		// A string in an object is its key when no key waits for its value.
		h.isKey = len(h.stack) > 0 && h.stack[len(h.stack)-1].object && h.stack[len(h.stack)-1].key == 0
	default:
		h.inScalar, h.scalar = true, h.table.update(0, []byte{c})
	}
}

func (h *normHash) endScalar() {
	h.inScalar = false
	h.value(mix(h.scalar ^ tagScalar))
}

// value hands the hash of a complete value to what holds it.
func (h *normHash) value(v uint64) {
	if len(h.stack) == 0 {
		h.result, h.done = v, true
		return
	}
	f := &h.stack[len(h.stack)-1]
	if f.object {
		f.sum += mix(f.key*31 ^ v)
		f.key = 0
		return
	}
	f.acc = mix(f.acc ^ v)
	f.n++
}

// sum is the hash of the value fed, in hex.
func (h *normHash) sum() string {
	if h.inScalar {
		h.endScalar()
	}
	return fmt.Sprintf("%016x", h.result)
}

func (h *normHash) stringByte(c byte) {
	switch {
	case h.esc == 1:
		h.esc = 0
		switch c {
		case 'u':
			h.esc, h.hex = 5, 0
		case 'b':
			h.rune('\b')
		case 'f':
			h.rune('\f')
		case 'n':
			h.rune('\n')
		case 'r':
			h.rune('\r')
		case 't':
			h.rune('\t')
		default:
			h.rune(rune(c)) // \" \\ \/
		}
	case h.esc > 1:
		h.hex = h.hex<<4 | rune(hexValue(c)) // checked by the decoder
		if h.esc--; h.esc == 1 {
			h.esc = 0
			h.escaped(h.hex)
		}
	case c == '\\':
		h.esc = 1
	case c == '"':
		h.endString()
	case c < utf8.RuneSelf:
		h.rune(rune(c))
	default:
		h.pend[h.npend] = c
		h.npend++
		if utf8.FullRune(h.pend[:h.npend]) || h.npend == utf8.UTFMax {
			r, _ := utf8.DecodeRune(h.pend[:h.npend])
			h.npend = 0
			h.rune(r)
		}
	}
}

// escaped takes the rune of a \u escape, joining a surrogate pair.
func (h *normHash) escaped(r rune) {
	switch {
	case 0xd800 <= r && r < 0xdc00:
		if h.high != 0 {
			h.rune(utf8.RuneError)
		}
		h.high = r
		return
	case 0xdc00 <= r && r < 0xe000 && h.high != 0:
		r = 0x10000 + (h.high-0xd800)<<10 + (r - 0xdc00)
		h.high = 0
	case h.high != 0:
		h.high = 0
		h.rune(utf8.RuneError)
	}
	h.rune(r)
}

// rune takes one character of a string's text.
func (h *normHash) rune(r rune) {
	if h.high != 0 {
		h.high = 0
		h.rune(utf8.RuneError)
	}
	s := &h.str
	n := utf8.EncodeRune(s.buf[:], r)
	if h.isKey {
		s.exact = h.table.update(s.exact, s.buf[:n])
		return
	}
	if unicode.IsSpace(r) {
		if s.started {
			// Kept as it is for the exact hash, unless nothing follows it (trimmed).
			s.pendingSpace = true
			if s.nws+n > len(s.ws) {
				s.exact = h.table.update(s.exact, s.ws[:s.nws])
				s.nws = 0
			}
			s.nws += copy(s.ws[s.nws:], s.buf[:n])
		}
		s.lastLower = false
		return
	}
	if s.pendingSpace {
		s.folded = h.table.update(s.folded, []byte{' '})
		s.exact = h.table.update(s.exact, s.ws[:s.nws])
		s.pendingSpace, s.blank, s.nws = false, true, 0
	}
	s.exact = h.table.update(s.exact, s.buf[:n])
	s.started = true
	switch {
	case r == '/' || r == '\\':
		s.slash = true
	case unicode.IsDigit(r) || unicode.IsPunct(r) && r != '-' && r != '\'' || unicode.IsSymbol(r):
		s.ident = true
	}
	upper := unicode.IsUpper(r)
	if upper && s.lastLower {
		s.camel = true
	}
	s.lastLower = unicode.IsLower(r)
	n = utf8.EncodeRune(s.buf[:], unicode.ToLower(r))
	s.folded = h.table.update(s.folded, s.buf[:n])
}

func (h *normHash) endString() {
	if h.high != 0 {
		h.high = 0
		h.rune(utf8.RuneError)
	}
	if h.npend > 0 {
		h.npend = 0
		h.rune(utf8.RuneError)
	}
	h.inString = false
	s := &h.str
	if h.isKey {
		h.stack[len(h.stack)-1].key = mix(s.exact^tagKey) | 1 // never 0: 0 is "no key"
		return
	}
	if s.slash || !s.blank && (s.ident || s.camel) {
		h.value(mix(s.exact ^ tagString))
		return
	}
	h.value(mix(s.folded ^ tagText))
}
