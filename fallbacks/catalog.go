package fallbacks

import (
	"errors"
	"path"
	"strconv"
	"strings"

	multierror "github.com/hashicorp/go-multierror"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/term"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// CatalogFile is the catalog's file name inside the state directory DIR/.claude/mcp_circuit/.
const CatalogFile = "fallbacks.yaml"

// Catalog is a parsed fallbacks.yaml: tool globs mapped to substitutes. The zero value and a
// nil *Catalog are empty catalogs.
type Catalog struct {
	// Name is the file name given to the catalog reader (internal/yamlfile), for messages.
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
	// File is the name given to the catalog reader (internal/yamlfile).
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

// CatalogErrors joins a catalog's problems into the one error a catalog reader returns: a
// [*multierror.Error] that prints one problem per line; nil without problems.
func CatalogErrors(errs []*CatalogError) error {
	var all *multierror.Error
	for _, e := range errs {
		all = multierror.Append(all, e)
	}
	if all != nil {
		all.ErrorFormat = term.ListFormat
	}
	return all.ErrorOrNil()
}

// CatalogErrorsOf is the problems CatalogErrors joined into err; false when err is not such an
// error.
func CatalogErrorsOf(err error) ([]*CatalogError, bool) {
	var all *multierror.Error
	if !errors.As(err, &all) {
		return nil, false
	}
	out := make([]*CatalogError, 0, len(all.Errors))
	for _, e := range all.Errors {
		ce, ok := e.(*CatalogError)
		if !ok {
			return nil, false
		}
		out = append(out, ce)
	}
	return out, true
}
