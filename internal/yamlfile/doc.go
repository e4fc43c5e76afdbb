// Package yamlfile reads the YAML a user writes with yaml.v3: policy.yaml into a states.Policy,
// fallbacks.yaml into a fallbacks.Catalog, and ledger items in shapes the ledger's own line reader
// does not know (flow style, block scalars, anchors). Every problem is reported with its line and
// key. It is apart from states, fallbacks and ledger so that the lean hook binary, which links no
// YAML library, stays cheap to start: it asks the full CLI (`hook --decode`), which uses this
// package, and keeps the answer.
package yamlfile
