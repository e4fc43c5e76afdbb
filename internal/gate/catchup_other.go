//go:build !unix

package gate

import "errors"

// DetachedCatchUp is not available without unix sessions; the hook then catches up in the call.
func DetachedCatchUp(string) error { return errors.New("no detached catch-up on this system") }

// lowerPriority does nothing here: there is no detached catch-up.
func lowerPriority() {}
