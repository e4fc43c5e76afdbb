// Package boardconn is what the fleet-shared board (internal/fleet) needs of a connection to its
// Redis: run a Lua script on the node that owns its keys, scan the keys of every master, ping.
// Two binaries reach the board in two ways behind this one interface: the full CLI through
// go-redis (goredisconn), the lean hook through a small RESP client of its own (respconn), which
// links neither go-redis nor the net package, so that a hook with no board configured starts as
// a minimal program does (docs/performance.md).
package boardconn

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"strings"
	"sync"
	"time"
)

// Conn is one connection (one node, or the nodes of a Redis Cluster) to the board.
type Conn interface {
	// Run runs s with keys and args (EVALSHA, then EVAL when the board does not hold the script)
	// on the node that owns the keys' slot, and returns its reply: an int64, a string, nil, or a
	// []any of those.
	Run(ctx context.Context, s *Script, keys []string, args ...any) (any, error)
	// Scan returns every key matching pattern, on every master of a Cluster.
	Scan(ctx context.Context, pattern string) ([]string, error)
	// Ping makes one round trip to the board.
	Ping(ctx context.Context) error
	// Close closes the connection.
	Close() error
}

// Dial connects lazily to the board at url (redis://, rediss://, a Cluster by its ?addr=
// parameters) with timeout bounding each dial, read and write.
type Dial func(url string, timeout time.Duration) (Conn, error)

// Script is a Lua script, which the board caches by its SHA-1.
type Script struct {
	Src string
	// hash is the SHA-1, computed on first use: the scripts are package variables of a binary
	// whose every start (a hook event about no MCP tool too) would pay for it otherwise.
	hash func() string
}

// NewScript returns src as a Script.
func NewScript(src string) *Script {
	return &Script{Src: src, hash: sync.OnceValue(func() string {
		h := sha1.Sum([]byte(src))
		return hex.EncodeToString(h[:])
	})}
}

// Hash is the script's SHA-1 in hex, the name EVALSHA runs it by.
func (s *Script) Hash() string { return s.hash() }

// NoScript reports whether err is the board's answer to EVALSHA of a script it does not hold.
func NoScript(err error) bool { return err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") }
