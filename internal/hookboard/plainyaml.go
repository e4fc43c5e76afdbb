package hookboard

import (
	"errors"
	"fmt"
	"strings"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/fleet"
)

// errNotPlain is plainUserFile's answer to a file it does not read exactly as yaml.v3 would: the
// lean hook then hands the event to the full CLI, which reads it with yaml.v3.
var errNotPlain = errors.New("the configuration file is not in the plain block form the lean hook reads")

// plainUserFile reads the user configuration file into a *fleet.UserFile (fleet.Load's
// unmarshal) when it is in the plain block form the documentation shows, one scalar per line:
//
//	shared:
//	  url: redis://…
//	  namespace: team-a
//
// with comments and blank lines, and nothing else at the top level. Anything
// else (flow style, anchors, tags, block scalars, escapes, a key written twice, tabs, several
// documents, characters that are not printable ASCII) is errNotPlain, never a guess.
func plainUserFile(data []byte, v any) error {
	f, ok := v.(*fleet.UserFile)
	if !ok {
		return fmt.Errorf("read the configuration file into %T: %w", v, errNotPlain)
	}
	for i, b := range data {
		// ASCII only, no control characters but line ends (\n, \r\n): YAML's other line breaks
		// (a lone \r, NEL, LS, PS), its byte-order mark and non-printable characters are the full
		// CLI's to read.
		if b >= 0x7f || b < 0x20 && b != '\n' && b != '\r' || b == '\r' && (i+1 == len(data) || data[i+1] != '\n') {
			return errNotPlain
		}
	}
	seen := map[string]bool{}
	inShared, indent := false, ""
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSuffix(line, "\r")
		body := strings.TrimLeft(line, " ")
		if body == "" || strings.HasPrefix(body, "#") {
			continue
		}
		if body == line { // a top-level key
			key, val, ok := keyValue(body)
			if !ok || seen[key] || key != "shared" {
				return errNotPlain // the file holds the board's block alone
			}
			seen[key] = true
			if val != "" {
				return errNotPlain // shared: {url: …} is flow style
			}
			inShared = true
			continue
		}
		if !inShared {
			return errNotPlain
		}
		in := line[:len(line)-len(body)]
		if indent == "" {
			indent = in
		}
		if in != indent {
			return errNotPlain
		}
		key, raw, ok := keyValue(body)
		if !ok || seen["shared."+key] {
			return errNotPlain
		}
		seen["shared."+key] = true
		val, err := scalar(raw)
		if err != nil {
			return err
		}
		switch key {
		case "url":
			f.Shared.URL = val
		case "namespace":
			f.Shared.Namespace = val
		case "timeout":
			f.Shared.Timeout = val
		case "secret":
			f.Shared.Secret = val
		}
	}
	return nil
}

// keyValue splits "key: value" (or "key:") with a plain key.
func keyValue(s string) (key, val string, ok bool) {
	i := strings.Index(s, ":")
	if i <= 0 {
		return "", "", false
	}
	key, rest := s[:i], s[i+1:]
	if rest != "" && rest[0] != ' ' {
		return "", "", false
	}
	for _, r := range key {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return "", "", false
		}
	}
	return key, strings.TrimSpace(rest), true
}

// scalar is the string value of a one-line scalar: plain, or quoted without escapes; "" for an
// empty value or null.
func scalar(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	switch s[0] {
	case '"', '\'':
		end := strings.IndexByte(s[1:], s[0])
		for s[0] == '\'' && end >= 0 && 2+end < len(s) && s[2+end] == '\'' {
			next := strings.IndexByte(s[3+end:], '\'')
			if next < 0 {
				return "", errNotPlain
			}
			end += 2 + next
		}
		if end < 0 {
			return "", errNotPlain
		}
		val, rest := s[1:1+end], strings.TrimSpace(s[2+end:])
		if rest != "" && !strings.HasPrefix(rest, "#") || s[0] == '"' && strings.ContainsAny(val, "\\") {
			return "", errNotPlain
		}
		if s[0] == '\'' {
			val = strings.ReplaceAll(val, "''", "'")
		}
		return val, nil
	case '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '%', '@', '`':
		return "", errNotPlain
	}
	if i := strings.Index(s, " #"); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	if strings.Contains(s, ": ") || strings.HasSuffix(s, ":") {
		return "", errNotPlain
	}
	switch s {
	case "~", "null", "Null", "NULL":
		return "", nil
	}
	return s, nil
}
