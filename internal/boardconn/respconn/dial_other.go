//go:build !unix

package respconn

import (
	"fmt"
	"runtime"
	"time"
)

// dial is unix only: elsewhere the lean hook hands a board user's events to the full CLI.
func dial(addr string, deadline time.Time) (*node, error) {
	return nil, fmt.Errorf("%w: on %s", ErrUnsupported, runtime.GOOS)
}

func platform() error { return fmt.Errorf("%w: on %s", ErrUnsupported, runtime.GOOS) }
