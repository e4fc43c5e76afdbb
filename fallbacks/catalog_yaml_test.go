package fallbacks

// parseCatalog is the catalog reader the tests use: internal/yamlfile's, which imports this
// package, so it is set from the external test package (yaml_test.go) before any test runs.
var parseCatalog func(name string, data []byte) (*Catalog, error)

// SetTestCatalogReader sets parseCatalog.
func SetTestCatalogReader(r func(name string, data []byte) (*Catalog, error)) { parseCatalog = r }
