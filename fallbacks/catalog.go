package fallbacks

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	multierror "github.com/hashicorp/go-multierror"
	"gopkg.in/yaml.v3"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/term"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// CatalogFile is the catalog's file name inside the state directory DIR/.claude/mcp_circuit/.
const CatalogFile = "fallbacks.yaml"

// Catalog is a parsed fallbacks.yaml: tool globs mapped to substitutes. The zero value and a
// nil *Catalog are empty catalogs.
type Catalog struct {
	// Name is the file name given to ParseCatalog, for messages.
	Name string
	// Entries are the valid entries, in file order.
	Entries []Entry
}

// Entry is one item of the catalog's fallbacks list.
type Entry struct {
	// Match is the tool glob, a path.Match pattern tested against the whole circuit key.
	Match string
	// Substitutes are the entry's valid substitutes, in file order.
	Substitutes []Substitute
	// Line is the entry's line in the file.
	Line int
}

// Substitute is one substitute of a catalog entry.
type Substitute struct {
	// Tool names the substitute: an MCP tool key (its circuit is checked) or a built-in invocation.
	Tool string
	// Command is the concrete invocation to use.
	Command string
	// Gap says what the substitute does not do that the failing tool did; may be empty.
	Gap string
	// When says when to use it; may be empty.
	When string
	// Types restricts the substitute to these failure types; empty means every type.
	Types []ledger.FailureType
	// Kind is KindSubstitute or KindLowerPermission.
	Kind string
	// Line is the substitute's line in the file.
	Line int
}

// Lookup returns the substitutes of every entry whose glob matches tool and whose type filter
// admits t, in file order. Lower-permission substitutes are returned only for ADMIN_GATED.
func (c *Catalog) Lookup(tool string, t ledger.FailureType) []Substitute {
	if c == nil {
		return nil
	}
	var out []Substitute
	for _, e := range c.Entries {
		if ok, _ := path.Match(e.Match, tool); !ok {
			continue
		}
		for _, s := range e.Substitutes {
			if s.admits(t) {
				out = append(out, s)
			}
		}
	}
	return out
}

// admits reports whether the substitute applies to a failure of type t.
func (s Substitute) admits(t ledger.FailureType) bool {
	if s.Kind == KindLowerPermission && t != ledger.AdminGated {
		return false
	}
	if len(s.Types) == 0 {
		return true
	}
	for _, x := range s.Types {
		if x == t {
			return true
		}
	}
	return false
}

// CatalogError is one problem found in a catalog file.
type CatalogError struct {
	// File is the name given to ParseCatalog.
	File string
	// Line is the 1-based line of the problem, 0 when unknown.
	Line int
	// Key is the path of the offending key, as fallbacks[0].substitutes[1].tool; empty for
	// problems of the whole file.
	Key string
	// Msg says what is wrong.
	Msg string
}

// Error formats the problem as "file:line: key: msg".
func (e *CatalogError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
	}
	if e.Key != "" {
		b.WriteString(": " + e.Key)
	}
	b.WriteString(": " + e.Msg)
	return b.String()
}

// ParseCatalog parses the fallbacks.yaml catalog in data; name is the file name used in messages.
// The format is described in the package doc. Every problem is reported at once, as a
// [CatalogError] each, in one [*multierror.Error] that prints one problem per line. The returned
// catalog is never nil: on problems it holds the entries and substitutes that validated, so a
// caller may still use them.
func ParseCatalog(name string, data []byte) (*Catalog, error) {
	p := &catalogParser{file: name, cat: &Catalog{Name: name}}
	p.parse(data)
	sort.SliceStable(p.errs, func(i, j int) bool { return p.errs[i].Line < p.errs[j].Line })
	var errs *multierror.Error
	for _, e := range p.errs {
		errs = multierror.Append(errs, e)
	}
	if errs != nil {
		errs.ErrorFormat = term.ListFormat
	}
	return p.cat, errs.ErrorOrNil()
}

// catalogParser collects the problems of one catalog file.
type catalogParser struct {
	file string
	cat  *Catalog
	errs []*CatalogError
}

// problem records one problem at node n (which may be nil).
func (p *catalogParser) problem(n *yaml.Node, key, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	p.errs = append(p.errs, &CatalogError{File: p.file, Line: line, Key: key, Msg: clean(fmt.Sprintf(format, args...))})
}

// yamlLine finds the line number yaml.v3 puts into its syntax errors.
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parse decodes data into nodes and walks them.
func (p *catalogParser) parse(data []byte) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if !errors.Is(err, io.EOF) {
			p.syntax(err)
		}
		return
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == nil:
		p.problem(&extra, "", "a second YAML document: the catalog is one document")
	case !errors.Is(err, io.EOF):
		p.syntax(err)
	}
	if len(doc.Content) == 0 {
		return
	}
	root := doc.Content[0]
	if isNull(root) {
		return
	}
	if !p.want(root, "", yaml.MappingNode) {
		return
	}
	for _, kv := range p.fields(root, "", "fallbacks") {
		p.entries(kv.val)
	}
}

// syntax records a YAML syntax error, with its line when yaml.v3 gives one.
func (p *catalogParser) syntax(err error) {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		p.problem(&yaml.Node{Line: line}, "", "%s", m[2])
		return
	}
	p.problem(nil, "", "%s", strings.TrimPrefix(msg, "yaml: "))
}

// keyValue is one pair of a mapping whose key is known.
type keyValue struct {
	name     string
	key, val *yaml.Node
}

// fields returns the known pairs of mapping n in file order, recording unknown, repeated and
// non-string keys. at is the path of n.
func (p *catalogParser) fields(n *yaml.Node, at string, known ...string) []keyValue {
	var out []keyValue
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			p.problem(k, at, "a key must be a string, got %s", kindName(k))
			continue
		}
		path := join(at, k.Value)
		switch {
		case seen[k.Value]:
			p.problem(k, path, "repeated key")
			continue
		case !isKnown(k.Value, known):
			p.problem(k, path, "unknown key (want %s)", strings.Join(known, ", "))
			continue
		}
		seen[k.Value] = true
		out = append(out, keyValue{k.Value, k, v})
	}
	return out
}

// entries walks the value of the fallbacks key.
func (p *catalogParser) entries(n *yaml.Node) {
	if isNull(n) || !p.want(n, "fallbacks", yaml.SequenceNode) {
		return
	}
	for i, item := range n.Content {
		at := fmt.Sprintf("fallbacks[%d]", i)
		if !p.want(item, at, yaml.MappingNode) {
			continue
		}
		if e, ok := p.entry(item, at); ok {
			p.cat.Entries = append(p.cat.Entries, e)
		}
	}
}

// entry walks one item of the fallbacks list. ok is false when the entry itself has a problem
// or keeps no valid substitute; a bad substitute drops only itself.
func (p *catalogParser) entry(n *yaml.Node, at string) (e Entry, ok bool) {
	e.Line = n.Line
	before := len(p.errs)
	kvs := p.fields(n, at, "match", "substitutes")
	bad := len(p.errs) > before
	var hasMatch, hasSubs bool
	for _, kv := range kvs {
		switch kv.name {
		case "match":
			hasMatch = true
			var isText bool
			e.Match, isText = p.text(kv.val, join(at, "match"))
			switch {
			case !isText:
				bad = true
			case strings.TrimSpace(e.Match) == "":
				p.problem(kv.val, join(at, "match"), "empty tool glob")
				bad = true
			case !validGlob(e.Match):
				p.problem(kv.val, join(at, "match"), "bad glob %q", e.Match)
				bad = true
			}
		case "substitutes":
			hasSubs = true
			e.Substitutes = p.substitutes(kv.val, join(at, "substitutes"))
		}
	}
	if !hasMatch {
		p.problem(n, join(at, "match"), "missing")
		bad = true
	}
	if !hasSubs {
		p.problem(n, join(at, "substitutes"), "missing")
	}
	return e, !bad && len(e.Substitutes) > 0
}

// substitutes walks an entry's substitutes list and returns the valid ones.
func (p *catalogParser) substitutes(n *yaml.Node, at string) []Substitute {
	if !p.want(n, at, yaml.SequenceNode) {
		return nil
	}
	if len(n.Content) == 0 {
		p.problem(n, at, "empty: list at least one substitute")
		return nil
	}
	var out []Substitute
	for i, item := range n.Content {
		sat := fmt.Sprintf("%s[%d]", at, i)
		if !p.want(item, sat, yaml.MappingNode) {
			continue
		}
		if s, ok := p.substitute(item, sat); ok {
			out = append(out, s)
		}
	}
	return out
}

// substitute walks one substitute; ok is false when it has a problem.
func (p *catalogParser) substitute(n *yaml.Node, at string) (Substitute, bool) {
	before := len(p.errs)
	s := Substitute{Kind: KindSubstitute, Line: n.Line}
	vals := map[string]*yaml.Node{}
	for _, kv := range p.fields(n, at, "tool", "command", "gap", "when", "types", "kind") {
		vals[kv.name] = kv.val
		kat := join(at, kv.name)
		switch kv.name {
		case "tool":
			s.Tool, _ = p.text(kv.val, kat)
		case "command":
			s.Command, _ = p.text(kv.val, kat)
		case "gap":
			s.Gap, _ = p.text(kv.val, kat)
		case "when":
			s.When, _ = p.text(kv.val, kat)
		case "kind":
			k, ok := p.text(kv.val, kat)
			if ok && k != KindSubstitute && k != KindLowerPermission {
				p.problem(kv.val, kat, "unknown kind %q (want %s or %s)", k, KindSubstitute, KindLowerPermission)
			}
			if k != "" {
				s.Kind = k
			}
		case "types":
			s.Types = p.types(kv.val, kat)
		}
	}
	for _, req := range [...]struct{ name, v string }{{"tool", s.Tool}, {"command", s.Command}} {
		if clean(req.v) != "" || (vals[req.name] != nil && vals[req.name].Kind != yaml.ScalarNode) {
			continue // present, or already reported as the wrong type
		}
		where := n // a missing key is reported at the substitute, an empty one at its value
		if vals[req.name] != nil {
			where = vals[req.name]
		}
		p.problem(where, join(at, req.name), "missing: a substitute needs a %s", req.name)
	}
	if s.Kind == KindLowerPermission && len(s.Types) > 0 && !containsType(s.Types, ledger.AdminGated) {
		p.problem(vals["types"], join(at, "types"), "a %s substitute applies to %s only; list it or drop types", KindLowerPermission, ledger.AdminGated)
	}
	return s, len(p.errs) == before
}

// types walks a types value: a list of failure type names or one name.
func (p *catalogParser) types(n *yaml.Node, at string) []ledger.FailureType {
	if isNull(n) {
		return nil
	}
	items := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		items = n.Content
	}
	var out []ledger.FailureType
	for i, item := range items {
		iat := at
		if n.Kind == yaml.SequenceNode {
			iat = fmt.Sprintf("%s[%d]", at, i)
		}
		v, ok := p.text(item, iat)
		if !ok {
			continue
		}
		t, valid := ledger.ParseFailureType(v)
		if !valid {
			p.problem(item, iat, "unknown failure type %q (want one of %s)", v, typeNames())
			continue
		}
		if !containsType(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// text returns the scalar value of n; a null is empty, anything but a scalar is a problem.
func (p *catalogParser) text(n *yaml.Node, at string) (string, bool) {
	if isNull(n) {
		return "", true
	}
	if !p.want(n, at, yaml.ScalarNode) {
		return "", false
	}
	return n.Value, true
}

// want records a problem unless n has the wanted kind.
func (p *catalogParser) want(n *yaml.Node, at string, kind yaml.Kind) bool {
	if n.Kind == yaml.AliasNode {
		p.problem(n, at, "aliases are not supported: write the value out")
		return false
	}
	if n.Kind != kind {
		p.problem(n, at, "want %s, got %s", kindWord[kind], kindName(n))
		return false
	}
	return true
}

// isNull reports an explicit or implicit YAML null (~, null, or nothing).
func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// kindWord names a wanted kind for messages.
var kindWord = map[yaml.Kind]string{yaml.MappingNode: "a mapping", yaml.SequenceNode: "a list", yaml.ScalarNode: "a string"}

// kindName names the kind of n for messages.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if isNull(n) {
			return "null"
		}
		return "a string"
	case yaml.AliasNode:
		return "an alias"
	case yaml.DocumentNode:
		return "a document"
	}
	return "nothing"
}

// validGlob reports whether pattern is a well-formed path.Match pattern.
func validGlob(pattern string) bool {
	_, err := path.Match(pattern, "")
	return err == nil
}

// join appends key to the key path at.
func join(at, key string) string {
	if at == "" {
		return key
	}
	return at + "." + key
}

// isKnown reports whether k is one of known.
func isKnown(k string, known []string) bool {
	for _, x := range known {
		if k == x {
			return true
		}
	}
	return false
}

// containsType reports whether ts holds t.
func containsType(ts []ledger.FailureType, t ledger.FailureType) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

// typeNames lists the valid failure types for messages.
func typeNames() string {
	names := make([]string, len(ledger.FailureTypes))
	for i, t := range ledger.FailureTypes {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}
