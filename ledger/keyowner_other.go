//go:build !unix

package ledger

// ownKeyFile has no owner or mode to check where files have no Unix permissions.
func ownKeyFile(string) error { return nil }
