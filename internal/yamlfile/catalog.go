package yamlfile

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

	"gopkg.in/yaml.v3"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/fallbacks"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// Catalog parses the fallbacks.yaml catalog in data; name is the file name used in messages.
// The format is described in the fallbacks package doc. Every problem is reported at once, as a
// [fallbacks.CatalogError] each, in one error (fallbacks.CatalogErrors) that prints one problem per line. The returned
// catalog is never nil: on problems it holds the entries and substitutes that validated, so a
// caller may still use them.
func Catalog(name string, data []byte) (*fallbacks.Catalog, error) {
	p := &catalogParser{file: name, cat: &fallbacks.Catalog{Name: name}}
	p.parse(data)
	sort.SliceStable(p.errs, func(i, j int) bool { return p.errs[i].Line < p.errs[j].Line })
	return p.cat, fallbacks.CatalogErrors(p.errs)
}

// catalogParser collects the problems of one catalog file.
type catalogParser struct {
	file string
	cat  *fallbacks.Catalog
	errs []*fallbacks.CatalogError
}

// problem records one problem at node n (which may be nil).
func (p *catalogParser) problem(n *yaml.Node, key, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	p.errs = append(p.errs, &fallbacks.CatalogError{File: p.file, Line: line, Key: key, Msg: fallbacks.Clean(fmt.Sprintf(format, args...))})
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
func (p *catalogParser) entry(n *yaml.Node, at string) (e fallbacks.Entry, ok bool) {
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
func (p *catalogParser) substitutes(n *yaml.Node, at string) []fallbacks.Substitute {
	if !p.want(n, at, yaml.SequenceNode) {
		return nil
	}
	if len(n.Content) == 0 {
		p.problem(n, at, "empty: list at least one substitute")
		return nil
	}
	var out []fallbacks.Substitute
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
func (p *catalogParser) substitute(n *yaml.Node, at string) (fallbacks.Substitute, bool) {
	before := len(p.errs)
	s := fallbacks.Substitute{Kind: fallbacks.KindSubstitute, Line: n.Line}
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
			if ok && k != fallbacks.KindSubstitute && k != fallbacks.KindLowerPermission {
				p.problem(kv.val, kat, "unknown kind %q (want %s or %s)", k, fallbacks.KindSubstitute, fallbacks.KindLowerPermission)
			}
			if k != "" {
				s.Kind = k
			}
		case "types":
			s.Types = p.types(kv.val, kat)
		}
	}
	for _, req := range [...]struct{ name, v string }{{"tool", s.Tool}, {"command", s.Command}} {
		if fallbacks.Clean(req.v) != "" || (vals[req.name] != nil && vals[req.name].Kind != yaml.ScalarNode) {
			continue // present, or already reported as the wrong type
		}
		where := n // a missing key is reported at the substitute, an empty one at its value
		if vals[req.name] != nil {
			where = vals[req.name]
		}
		p.problem(where, join(at, req.name), "missing: a substitute needs a %s", req.name)
	}
	if s.Kind == fallbacks.KindLowerPermission && len(s.Types) > 0 && !containsType(s.Types, ledger.AdminGated) {
		p.problem(vals["types"], join(at, "types"), "a %s substitute applies to %s only; list it or drop types", fallbacks.KindLowerPermission, ledger.AdminGated)
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

// typeNames lists the valid failure types, for the messages of both files.
func typeNames() string {
	names := make([]string, len(ledger.FailureTypes))
	for i, t := range ledger.FailureTypes {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}
