package failure

import (
	"bytes"
	"encoding/json"
	"hash/fnv"
	"strconv"
	"strings"
)

// ArgsFromJSON returns the leaf values of a call's arguments, a JSON object (or a JSON string
// holding one, as Copilot CLI and Cursor send them), in the order they appear: at most MaxArgs
// values, each clipped to MaxArgValue bytes. Nulls and empty strings are left out; anything that
// is not JSON yields the values read before it, so a text the agent cut short still names its
// target.
func ArgsFromJSON(data []byte) []Arg {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '"' {
		var inner string
		if json.Unmarshal(data, &inner) != nil {
			return nil
		}
		data = []byte(inner)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out []Arg
	// keys holds, per open container, the key the next value stands under: "" in an array.
	var keys []string
	var inObject []bool
	expectKey := false
	for len(out) < MaxArgs {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				inObject = append(inObject, v == '{')
				keys = append(keys, parentKey(keys))
				expectKey = v == '{'
			case '}', ']':
				if n := len(inObject); n > 0 {
					inObject, keys = inObject[:n-1], keys[:n-1]
				}
				expectKey = len(inObject) > 0 && inObject[len(inObject)-1]
			}
			continue
		case string:
			if expectKey {
				keys[len(keys)-1] = v
				expectKey = false
				continue
			}
			if v != "" {
				out = append(out, Arg{Key: lastKey(keys), Value: clipBytes(v, MaxArgValue)})
			}
		case json.Number:
			out = append(out, Arg{Key: lastKey(keys), Value: v.String()})
		case bool:
			out = append(out, Arg{Key: lastKey(keys), Value: strconv.FormatBool(v)})
		}
		if n := len(inObject); n > 0 && inObject[n-1] {
			expectKey = true
		}
	}
	return out
}

// parentKey is the key a new container inherits: the key it stands under, so that the elements
// of {"paths": ["a", "b"]} stand under "paths".
func parentKey(keys []string) string {
	if len(keys) == 0 {
		return ""
	}
	return keys[len(keys)-1]
}

func lastKey(keys []string) string { return parentKey(keys) }

// clipBytes cuts s to at most n bytes, at a rune boundary.
func clipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8Start(s[n]) {
		n--
	}
	return s[:n]
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// shapeOf identifies a failure text with what varies from call to call taken out: the values the
// call passed, quoted strings, numbers and hexadecimal ids. lower is the lower-cased text.
func shapeOf(lower string, args []Arg) string {
	if lower == "" {
		return ""
	}
	s := lower
	for _, a := range args {
		v := lowerASCII(strings.TrimSpace(a.Value))
		if len(v) < 3 {
			continue
		}
		s = strings.ReplaceAll(s, v, "\x00")
	}
	h := fnv.New64a()
	inQuote := byte(0)
	lastHole := false
	hole := func() {
		if !lastHole {
			h.Write([]byte{0})
			lastHole = true
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inQuote != 0:
			if c == inQuote {
				inQuote = 0
			}
			continue
		case c == '"' || c == '\'' || c == '`':
			inQuote = c
			hole()
			continue
		case c == 0 || (c >= '0' && c <= '9'):
			hole()
			continue
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			continue
		}
		if isHexRun(s, i) {
			for i < len(s) && isHexDigit(s[i]) {
				i++
			}
			i--
			hole()
			continue
		}
		h.Write([]byte{c})
		lastHole = false
	}
	return strconv.FormatUint(h.Sum64(), 16)
}

// isHexRun reports whether a run of at least 8 hexadecimal digits starts at s[i] (a SHA, a UUID
// part, a request id).
func isHexRun(s string, i int) bool {
	if i > 0 && isHexDigit(s[i-1]) {
		return false
	}
	n := 0
	for j := i; j < len(s) && isHexDigit(s[j]); j++ {
		n++
	}
	return n >= 8
}

func isHexDigit(c byte) bool { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') }
