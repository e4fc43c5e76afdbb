package project

import (
	"errors"
	"fmt"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/fallbacks"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// Decoder reads what only a YAML library reads: policy.yaml, fallbacks.yaml, and ledger items in
// shapes the ledger's own reader does not know. The full CLI passes internal/yamlfile's; the lean
// hook, which links no YAML library (its start-up alone would cost every hook event more than the
// gate's work), one that asks the full CLI and keeps the answers (internal/gate).
type Decoder struct {
	// Policy reads policy.yaml for the decisions that go on when it is invalid: the valid parts, and
	// a *states.PolicyError listing every problem.
	Policy func(name string, data []byte) (*states.Policy, error)
	// Catalog reads fallbacks.yaml: the valid entries, and every problem.
	Catalog func(name string, data []byte) (*fallbacks.Catalog, error)
	// Item reads a ledger item in another shape than the one Encode writes.
	Item ledger.SlowReader
	// Prefetch, when set, is shown each chunk of ledger items before Item is asked about them
	// (ledger.Ledger.Prefetch): the lean hook reads all their odd shapes with one process.
	Prefetch func(chunk []byte)
}

// errNoDecoder is a file read by a process that was given no reader for it (a test's project).
var errNoDecoder = errors.New("no YAML reader in this process")

// The decoding kinds of `mcp-circuit-breaker hook --decode KIND`, the full CLI's answer to a lean
// hook that met YAML it cannot read.
const (
	DecodePolicy  = "policy"
	DecodeCatalog = "catalog"
	DecodeItem    = "item"
	// DecodeItems is many items at once: a JSON array of their texts, each read as from line 1;
	// the answer is a JSON array of Decoded, one per text.
	DecodeItems = "items"
)

// Decoded is what `hook --decode` prints: the value of its kind, and the problems found.
type Decoded struct {
	Policy  *states.Policy            `json:"policy,omitempty"`
	Catalog *fallbacks.Catalog        `json:"catalog,omitempty"`
	Entry   *ledger.Entry             `json:"entry,omitempty"`
	Problem *ledger.Problem           `json:"problem,omitempty"`
	Invalid *states.PolicyError       `json:"invalid_policy,omitempty"`
	Errs    []*fallbacks.CatalogError `json:"catalog_errors,omitempty"`
}

// Decode runs dec on data of kind (one of the Decode* kinds), named name, starting at line.
func (dec Decoder) Decode(kind, name string, line int, data []byte) (Decoded, error) {
	var d Decoded
	switch kind {
	case DecodePolicy:
		pol, err := dec.Policy(name, data)
		d.Policy = pol
		if err != nil {
			var pe *states.PolicyError
			if !errors.As(err, &pe) {
				return d, err
			}
			d.Invalid = pe
		}
	case DecodeCatalog:
		cat, err := dec.Catalog(name, data)
		d.Catalog = cat
		if err != nil {
			errs, ok := fallbacks.CatalogErrorsOf(err)
			if !ok {
				return d, err
			}
			d.Errs = errs
		}
	case DecodeItem:
		e, p := dec.Item(data, line)
		d.Entry, d.Problem = &e, p
	default:
		return d, fmt.Errorf("decode %q: not one of %s, %s, %s", kind, DecodePolicy, DecodeCatalog, DecodeItem)
	}
	return d, nil
}

// PolicyResult is the decoded policy as Decoder.Policy returns it.
func (d Decoded) PolicyResult() (*states.Policy, error) {
	if d.Invalid != nil {
		return d.Policy, d.Invalid
	}
	return d.Policy, nil
}

// CatalogResult is the decoded catalog as Decoder.Catalog returns it.
func (d Decoded) CatalogResult() (*fallbacks.Catalog, error) {
	return d.Catalog, fallbacks.CatalogErrors(d.Errs)
}

// ItemResult is the decoded item as Decoder.Item returns it.
func (d Decoded) ItemResult() (ledger.Entry, *ledger.Problem) {
	if d.Entry == nil {
		return ledger.Entry{}, d.Problem
	}
	return *d.Entry, d.Problem
}
