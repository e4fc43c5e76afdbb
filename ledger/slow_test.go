package ledger

// testSlow is the YAML reader the tests read odd shapes with: internal/yamlfile's, which imports
// this package, so it is set from the external test package (yaml_test.go) before any test runs.
var testSlow SlowReader

// SetTestSlow sets testSlow.
func SetTestSlow(r SlowReader) { testSlow = r }
