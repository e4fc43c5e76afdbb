package settings

// JSON with comments: Gemini CLI and Qwen Code strip // and /* */ comments from their settings.json
// before they parse it, so a user's file may hold them. The parser reads a comment as white space
// between tokens, which keeps it in the text around the members and elements it lies between, and
// so writes it back where it was.

import "bytes"

// ParseJSONC is Parse for a file of an agent that accepts comments in it: // and /* */ comments
// outside strings are allowed wherever white space is, and kept byte for byte.
func ParseJSONC(name string, data []byte) (*Doc, error) { return parse(name, data, true) }

// StripComments blanks the // and /* */ comments of JSON text outside its strings, as the
// agents that accept them in their settings do; every other byte stays where it was, so an error
// names the same offset. A comment left open runs to the end.
func StripComments(data []byte) []byte {
	if !bytes.Contains(data, []byte("/")) {
		return data
	}
	out := bytes.Clone(data)
	inString := false
	for i := 0; i < len(out); i++ {
		c := out[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '/' && i+1 < len(out) && out[i+1] == '/':
			for ; i < len(out) && out[i] != '\n'; i++ {
				out[i] = ' '
			}
		case c == '/' && i+1 < len(out) && out[i+1] == '*':
			end := bytes.Index(out[i+2:], []byte("*/"))
			stop := len(out)
			if end >= 0 {
				stop = i + 2 + end + 2
			}
			for ; i < stop; i++ {
				if out[i] != '\n' {
					out[i] = ' '
				}
			}
			i--
		}
	}
	return out
}
