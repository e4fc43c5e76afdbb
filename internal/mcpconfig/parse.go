package mcpconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	multierror "github.com/hashicorp/go-multierror"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/term"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// Parse reads the top-level "mcpServers" object of one configuration file (.mcp.json, the user
// part of ~/.claude.json, a settings file or an --mcp-config file). path is used only in errors
// and as each Server's Source; scope is recorded on each Server. A file without "mcpServers"
// holds no servers and is not an error. Bad entries are reported as [*FileError]s (joined) and
// skipped; the good ones are returned.
func Parse(path string, data []byte, scope Scope, lookup func(string) (string, bool)) ([]Server, error) {
	return parse(path, data, scope, func(string) func(string) (string, bool) { return lookup })
}

// parse is Parse with the variable lookup chosen per server name, so that an unapproved server
// never sees the environment.
func parse(path string, data []byte, scope Scope, lookupFor func(string) func(string) (string, bool)) ([]Server, error) {
	if err := validate(path, data); err != nil {
		return nil, err
	}
	off, found := seek(data, "mcpServers")
	if !found {
		return nil, nil
	}
	return parseServers(path, data, off, scope, lookupFor, false)
}

// ParseAgentFile is Parse for another agent's mcpServers file (Cursor's mcp.json), read only to
// resolve the names of its tools: no variable is expanded, and an entry with "url" and no "type"
// is a remote server, as that agent reads it (Claude Code would take it for a stdio server
// without a command, and the server would go unknown).
func ParseAgentFile(path string, data []byte, scope Scope) ([]Server, error) {
	return ParseAgentMember(path, data, scope, "")
}

// ParseAgentMember is ParseAgentFile for a file whose servers are its top-level member called
// member, each entry in the mcpServers shape (Crush's "mcp"); "" is "mcpServers".
func ParseAgentMember(path string, data []byte, scope Scope, member string) ([]Server, error) {
	if member == "" {
		member = "mcpServers"
	}
	if err := validate(path, data); err != nil {
		return nil, err
	}
	off, found := seek(data, member)
	if !found {
		return nil, nil
	}
	none := func(string) (string, bool) { return "", false }
	return parseServers(path, data, off, scope, func(string) func(string) (string, bool) { return none }, true)
}

// parseProjects reads projects[key].mcpServers of ~/.claude.json for the first key present.
func parseProjects(path string, data []byte, keys []string, lookupFor func(string) func(string) (string, bool)) ([]Server, error) {
	if err := validate(path, data); err != nil {
		return nil, err
	}
	for _, key := range keys {
		if off, found := seek(data, "projects", key, "mcpServers"); found {
			return parseServers(path, data, off, ScopeLocal, lookupFor, false)
		}
	}
	return nil, nil
}

// validate checks that the whole file is one JSON object, as JSON.parse in Claude Code would
// before it looks at any key: a syntax error anywhere makes the whole file unusable.
func validate(path string, data []byte) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return &FileError{Path: path, Line: 1, Column: 1, Err: fmt.Errorf("top level is a JSON %s, not an object", te.Value)}
		}
		return wrapDecode(path, data, err)
	}
	return nil
}

// wrapDecode turns a decoding error into a *FileError with the line and column the decoder
// reports, if any.
func wrapDecode(path string, data []byte, err error) error {
	if err == nil {
		return nil
	}
	fe := &FileError{Path: path, Err: err}
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		fe.Line, fe.Column = position(data, se.Offset)
	case errors.As(err, &te):
		fe.Line, fe.Column = position(data, te.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		fe.Line, fe.Column = position(data, int64(len(data)))
		fe.Err = errors.New("unexpected end of JSON input")
	}
	return fe
}

// position converts a byte offset into a 1-based line and column.
func position(data []byte, off int64) (line, col int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	if off < 0 {
		off = 0
	}
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

// seek follows keys through nested objects of data and returns the offset at which the value of
// the last key starts. It reports false when a key is absent or a value on the way is not an
// object (a null "projects" or "mcpServers" simply holds nothing). Of duplicate keys the last one
// counts, as with JSON.parse in Claude Code.
func seek(data []byte, keys ...string) (int64, bool) {
	var base int64
	for _, want := range keys {
		dec := json.NewDecoder(bytes.NewReader(data[base:]))
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			return 0, false
		}
		found := int64(-1)
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return 0, false
			}
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return 0, false
			}
			if k == want {
				found = base + dec.InputOffset() - int64(len(raw))
			}
		}
		if found < 0 {
			return 0, false
		}
		base = found
	}
	return base, true
}

// entry is the on-disk shape of one server, the fields Claude Code's schema knows.
type entry struct {
	Type    *string           `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}

// parseServers reads the mcpServers object that starts at offset base of data; urlIsRemote reads
// an entry with "url" and no "type" as an http server (ParseAgentFile).
func parseServers(path string, data []byte, base int64, scope Scope, lookupFor func(string) func(string) (string, bool), urlIsRemote bool) ([]Server, error) {
	dec := json.NewDecoder(bytes.NewReader(data[base:]))
	tok, err := dec.Token()
	if err != nil {
		return nil, wrapDecode(path, data, err)
	}
	if tok == nil {
		return nil, nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		line, col := position(data, base)
		return nil, &FileError{Path: path, Line: line, Column: col, Err: errors.New(`"mcpServers" is not an object`)}
	}
	var errs *multierror.Error
	byName := map[string]Server{}
	var names []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, wrapDecode(path, data, err)
		}
		name, _ := k.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, wrapDecode(path, data, err)
		}
		// InputOffset is now just past the value; the value starts len(raw) bytes earlier.
		line, col := position(data, base+dec.InputOffset()-int64(len(raw)))
		s, err := parseEntry(name, raw, lookupFor(name), urlIsRemote)
		if err != nil {
			errs = multierror.Append(errs, &FileError{Path: path, Line: line, Column: col, Server: name, Err: err})
			delete(byName, name) // a later bad duplicate replaces an earlier good one
			continue
		}
		s.Scope, s.Source = scope, path
		if _, dup := byName[name]; !dup {
			names = append(names, name)
		}
		byName[name] = s
	}
	out := make([]Server, 0, len(names))
	for _, n := range names {
		if s, ok := byName[n]; ok {
			out = append(out, s)
		}
	}
	return out, problems(errs)
}

func parseEntry(name string, raw json.RawMessage, lookup func(string) (string, bool), urlIsRemote bool) (Server, error) {
	if name == "" {
		return Server{}, errors.New("empty server name")
	}
	var e entry
	if err := json.Unmarshal(raw, &e); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			if te.Field == "" {
				return Server{}, fmt.Errorf("entry is a JSON %s, not an object", te.Value)
			}
			return Server{}, fmt.Errorf("field %q: JSON %s where %s was expected", te.Field, te.Value, te.Type)
		}
		return Server{}, err
	}
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return Server{}, errors.New("entry is null, not an object")
	}
	s := Server{Name: name, Sanitized: ledger.SanitizeServer(name)}
	ex := expander{lookup: lookup}
	t := ""
	switch {
	case e.Type != nil:
		t = *e.Type
	case urlIsRemote && e.Command == "" && e.URL != "":
		t = string(TransportHTTP)
	}
	switch Transport(t) {
	case "", TransportStdio:
		// Claude Code reads an entry without "type" as stdio.
		s.Transport = TransportStdio
		if e.Command == "" {
			if e.URL != "" {
				return Server{}, errors.New(`no "command" (an entry with "url" needs "type": "http" or "sse")`)
			}
			return Server{}, errors.New(`stdio server without "command"`)
		}
		s.Command = ex.expand(e.Command)
		for _, a := range e.Args {
			s.Args = append(s.Args, ex.expand(a))
		}
		s.Env = ex.expandMap(e.Env)
	default:
		s.Transport = Transport(t)
		if e.URL == "" && (s.Transport == TransportHTTP || s.Transport == TransportSSE) {
			return Server{}, fmt.Errorf("%s server without \"url\"", t)
		}
		s.URL = ex.expand(e.URL)
		s.Headers = ex.expandMap(e.Headers)
	}
	s.Missing = ex.missing
	s.fromEnv = ex.values
	return s, nil
}

// expander expands `${VAR}` and `${VAR:-default}` and remembers the variables it could not
// resolve.
type expander struct {
	lookup  func(string) (string, bool)
	missing []string
	// values are the values taken from the environment: secrets to redact wherever they appear.
	values []string
}

func (x *expander) expand(s string) string {
	lookup := x.lookup
	if lookup != nil {
		lookup = func(k string) (string, bool) {
			v, ok := x.lookup(k)
			if ok && v != "" && !slices.Contains(x.values, v) {
				x.values = append(x.values, v)
			}
			return v, ok
		}
	}
	out, missing := Expand(s, lookup)
	for _, m := range missing {
		if !slices.Contains(x.missing, m) {
			x.missing = append(x.missing, m)
			sort.Strings(x.missing)
		}
	}
	return out
}

func (x *expander) expandMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = x.expand(v)
	}
	return out
}

// Expand replaces `${VAR}` and `${VAR:-default}` in s the way Claude Code does
// (services/mcp/envExpansion.ts): a set variable wins even when empty, an unset one takes the
// default, and an unset one without a default is left as written and reported in missing. `$VAR`
// without braces is not expanded, and there is no nesting: the reference ends at the first '}'.
// lookup may be nil (nothing is set).
func Expand(s string, lookup func(string) (string, bool)) (out string, missing []string) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i+2:], '}')
		if j <= 0 { // no closing brace, or "${}": literal, as the regex needs one or more chars
			if j == 0 {
				b.WriteString(s[:i+3])
				s = s[i+3:]
				continue
			}
			break
		}
		b.WriteString(s[:i])
		content := s[i+2 : i+2+j]
		ref := s[i : i+3+j]
		s = s[i+3+j:]
		name, def, hasDef := strings.Cut(content, ":-")
		if hasDef {
			// JS split(':-', 2) keeps only the text up to a second ":-"; do the same so the
			// value matches what Claude Code passes to the server.
			def, _, _ = strings.Cut(def, ":-")
		}
		if lookup != nil {
			if v, ok := lookup(name); ok {
				b.WriteString(v)
				continue
			}
		}
		if hasDef {
			b.WriteString(def)
			continue
		}
		if !slices.Contains(missing, name) {
			missing = append(missing, name)
		}
		b.WriteString(ref)
	}
	b.WriteString(s)
	return b.String(), missing
}

// problems returns errs as one error listing a problem per line, or nil when there is none.
func problems(errs *multierror.Error) error {
	if errs == nil {
		return nil
	}
	errs.ErrorFormat = term.ListFormat
	return errs
}
