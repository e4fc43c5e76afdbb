package yamlfile

import (
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// Item reads a ledger item in any valid YAML shape (ledger.SlowReader): flow style, block
// scalars, anchors, comments between keys. yaml.v3 also rejects repeated keys.
func Item(text []byte, firstLine int) (ledger.Entry, *ledger.Problem) {
	var doc yaml.Node
	if err := yaml.Unmarshal(text, &doc); err != nil {
		return ledger.Entry{}, itemProblem(err, firstLine)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.SequenceNode || len(doc.Content[0].Content) != 1 {
		return ledger.Entry{}, &ledger.Problem{Line: firstLine, Kind: ledger.Invalid, Msg: "not a single list item"}
	}
	m := doc.Content[0].Content[0]
	if m.Kind != yaml.MappingNode {
		return ledger.Entry{}, &ledger.Problem{Line: firstLine, Kind: ledger.Invalid, Msg: "a list item must be a mapping of keys (tool, state, …)"}
	}
	fields := make([]ledger.ItemField, 0, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		kn, vn := m.Content[i], m.Content[i+1]
		f := ledger.ItemField{Key: kn.Value, KeyScalar: kn.Kind == yaml.ScalarNode, Line: firstLine + kn.Line - 1}
		if vn.Kind == yaml.ScalarNode {
			f.Scalar, f.Value, f.Null = true, vn.Value, vn.Tag == "!!null"
		}
		// The value written back on its key's line: a list or mapping must be in flow style ("0:"
		// or "- a" on one line is no value), and an alias is written as what it names.
		if vn.Kind == yaml.AliasNode && vn.Alias != nil {
			vn = vn.Alias
		}
		if vn.Kind == yaml.SequenceNode || vn.Kind == yaml.MappingNode {
			vn.Style |= yaml.FlowStyle
		}
		out, err := yaml.Marshal(vn)
		if err != nil {
			return ledger.Entry{}, &ledger.Problem{Line: f.Line, Kind: ledger.Invalid, Msg: err.Error()}
		}
		f.Flow = ledger.FlowValue(out)
		fields = append(fields, f)
	}
	return ledger.FromFields(firstLine, fields)
}

// itemProblem is yaml.v3's error as a problem at an absolute line.
func itemProblem(err error, base int) *ledger.Problem {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := base
	// yaml.v3 says "line N: …"; make the number absolute.
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if i := strings.IndexByte(rest, ':'); i > 0 {
			if n, err := strconv.Atoi(rest[:i]); err == nil {
				line = base + n - 1
				msg = strings.TrimSpace(rest[i+1:])
			}
		}
	}
	p := &ledger.Problem{Line: line, Kind: ledger.Invalid, Msg: msg}
	if strings.Contains(msg, "already defined") {
		p.Kind, p.Msg = ledger.Merged, msg+": "+ledger.MergedHint
	}
	return p
}
