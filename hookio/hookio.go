// Package hookio owns Claude Code hook I/O: reading a hook event from stdin, of any size, decoding
// only the fields the gate needs, and the JSON answers Claude Code reads back (SPEC §6).
package hookio

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Event is the part of a hook event the gate uses.
type Event struct {
	Name        string // hook_event_name
	SessionID   string
	Cwd         string
	ToolName    string
	ToolUseID   string
	Error       string // PostToolUseFailure
	IsInterrupt bool   // PostToolUseFailure
	Source      string // SessionStart: startup, resume, clear, compact, fork
	// MCPServer is mcp_server.name, the server's real (unsanitized) name, when Claude Code sends it.
	MCPServer string
}

// ErrMalformed is returned when stdin is not a JSON object.
var ErrMalformed = errors.New("hook input is not a JSON object")

// Limits on the fields that are kept; longer values are read to their end and cut.
const (
	maxName  = 1 << 10
	maxError = 64 << 10
)

// Read decodes one event. Values of fields it does not need (tool_input, tool_response, which can
// hold whole files) are skipped byte by byte without being stored, so memory stays flat whatever
// the input's size.
func Read(r io.Reader) (Event, error) {
	d := &decoder{r: bufio.NewReaderSize(r, 64<<10)}
	var ev Event
	err := d.object(func(key string) error {
		switch key {
		case "hook_event_name":
			return d.stringInto(&ev.Name, maxName)
		case "session_id":
			return d.stringInto(&ev.SessionID, maxName)
		case "cwd":
			return d.stringInto(&ev.Cwd, 4*maxName)
		case "tool_name":
			return d.stringInto(&ev.ToolName, maxName)
		case "tool_use_id":
			return d.stringInto(&ev.ToolUseID, maxName)
		case "error":
			return d.stringInto(&ev.Error, maxError)
		case "source":
			return d.stringInto(&ev.Source, maxName)
		case "is_interrupt":
			return d.boolInto(&ev.IsInterrupt)
		case "mcp_server":
			return d.object(func(k string) error {
				if k == "name" {
					return d.stringInto(&ev.MCPServer, maxName)
				}
				return d.skip()
			})
		}
		return d.skip()
	})
	if err != nil {
		return ev, err
	}
	return ev, nil
}

type decoder struct {
	r   *bufio.Reader
	off int64
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
	return c, nil
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
	}
}

// object reads an object, calling field for each key with the reader at the key's value.
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
// its raw form, and decodes the escapes with encoding/json so they match JSON exactly.
func (d *decoder) str(max int) (string, error) {
	raw := []byte{'"'}
	cut := false
	for {
		c, err := d.next()
		if err != nil {
			return "", err
		}
		if c == '\\' {
			e, err := d.next()
			if err != nil {
				return "", err
			}
			if len(raw) < max {
				raw = append(raw, c, e)
				if e == 'u' {
					for i := 0; i < 4; i++ {
						h, err := d.next()
						if err != nil {
							return "", err
						}
						raw = append(raw, h)
					}
				}
			} else {
				cut = true
			}
			continue
		}
		if c == '"' {
			break
		}
		if c < 0x20 {
			return "", d.fail("control character in a string")
		}
		if len(raw) < max {
			raw = append(raw, c)
		} else {
			cut = true
		}
	}
	if cut {
		// Do not end inside a multi-byte character or an escape: drop back to a safe point.
		for i := len(raw) - 1; i > 0 && i > len(raw)-8; i-- {
			if raw[i] == '\\' {
				raw = raw[:i]
				break
			}
		}
	}
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

func (d *decoder) stringInto(dst *string, max int) error {
	c, err := d.nonSpace()
	if err != nil {
		return err
	}
	if c == 'n' {
		return d.literal("ull")
	}
	if c != '"' {
		// A field of another type than expected is skipped rather than failing the whole event.
		d.r.UnreadByte()
		d.off--
		return d.skip()
	}
	s, err := d.str(max)
	*dst = s
	return err
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
	d.r.UnreadByte()
	d.off--
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

// skip consumes one value of any kind without keeping it. Nesting is tracked with a counter, not
// recursion, so a deeply nested tool_input cannot exhaust the stack.
func (d *decoder) skip() error {
	depth := 0
	for {
		c, err := d.nonSpace()
		if err != nil {
			return err
		}
		switch c {
		case '{', '[':
			depth++
			continue
		case '}', ']':
			depth--
			if depth < 0 {
				return d.fail("unbalanced %q", c)
			}
		case '"':
			if err := d.skipString(); err != nil {
				return err
			}
		case ',', ':':
			if depth == 0 {
				return d.fail("unexpected %q", c)
			}
			continue
		default:
			// A number or a literal: read up to a delimiter.
			for {
				n, err := d.r.Peek(1)
				if err != nil {
					if err == io.EOF {
						return d.fail("unexpected end of input")
					}
					return err
				}
				if b := n[0]; b == ',' || b == '}' || b == ']' || b == ' ' || b == '\n' || b == '\r' || b == '\t' {
					break
				}
				d.next()
			}
		}
		if depth == 0 {
			return nil
		}
	}
}

// skipString consumes the rest of a string in buffer-sized steps; the escape state carries across
// buffer refills.
func (d *decoder) skipString() error {
	esc := false
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
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				d.r.Discard(i + 1)
				d.off += int64(i + 1)
				return nil
			}
		}
		d.r.Discard(len(chunk))
		d.off += int64(len(chunk))
	}
}
