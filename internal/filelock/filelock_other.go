//go:build !unix

package filelock

import "time"

// Exclusive fails with ErrUnsupported: without flock(2) concurrent writers could interleave.
func Exclusive(string, Options) (func(), error) { return nil, ErrUnsupported }

// Shared fails with ErrUnsupported.
func Shared(string, time.Duration) (func(), error) { return nil, ErrUnsupported }

// TryShared fails with ErrUnsupported.
func TryShared(string) (func(), bool, error) { return nil, false, ErrUnsupported }

// TryExclusive fails with ErrUnsupported.
func TryExclusive(string) (func(), bool, error) { return nil, false, ErrUnsupported }
