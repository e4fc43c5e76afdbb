// Package fleet owns the shared board: circuits that every session of a team shares through a
// Redis the user configured (MCP_CIRCUIT_SHARED or the user configuration file, never a project
// file), so one trip protects every session on every machine and one half-open trial goes
// fleet-wide. The local ledger stays the audit trail: what a session learns from the board and
// decides on it is appended there with source: shared.
//
// It sits above states (whose pure decisions it runs on the board's circuits) and below
// internal/project and internal/gate, which call it.
//
// Each circuit is one Redis hash, mcb:{<namespace>:<server>}:<key>, with the fields gen (a
// generation bumped on every change), c (the circuit as JSON) and blocked (calls denied since the
// trip). All circuits of one server share the hash tag {<namespace>:<server>}, so a tool key and
// its server key live in one Redis Cluster slot: they are read in one pipelined round trip and
// written by one script, atomically.
package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// ErrConflict is returned by Write when another session changed a circuit since it was read.
var ErrConflict = errors.New("shared circuit changed since it was read")

// keyTTL is how long a circuit lingers on the board after its last change (plus the rest of its
// cooldown): long enough to carry a count across a working day, short enough that nothing stays.
const keyTTL = 24 * time.Hour

// Shared is one circuit as the board holds it.
type Shared struct {
	// Gen is the generation read; 0 when the board has no record of the key.
	Gen int64
	// Circuit is the circuit, nil when the board has no record of the key. Its Blocked is the
	// fleet's count.
	Circuit *states.Circuit
}

// Board is a connection to the shared board.
type Board struct {
	cfg    Config
	client *redis.Client
}

// Open connects lazily to the board of cfg: nothing is sent until the first call.
func Open(cfg Config) (*Board, error) {
	opt, err := redis.ParseURL(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("open shared board %s: %v", cfg.Redacted(), redactErr(err, cfg))
	}
	// One short-lived process per hook: no retries (a retry doubles the wait on a board that is
	// away), one connection, RESP2 and no CLIENT SETINFO so that connecting costs no round trip
	// beyond AUTH/SELECT when those are configured.
	opt.MaxRetries = -1
	opt.DialerRetries = 1 // its default, 5 dials 100 ms apart, would outlast the timeout on a refused port
	opt.PoolSize = 1
	opt.Protocol = 2
	opt.DisableIdentity = true
	opt.DialTimeout = cfg.Timeout
	opt.ReadTimeout = cfg.Timeout
	opt.WriteTimeout = cfg.Timeout
	opt.ContextTimeoutEnabled = true
	return &Board{cfg: cfg, client: redis.NewClient(opt)}, nil
}

// Config returns the board's configuration.
func (b *Board) Config() Config { return b.cfg }

// Close closes the connection.
func (b *Board) Close() error { return b.client.Close() }

// redisKey is the Redis key of a circuit key.
func (b *Board) redisKey(key string) string {
	return "mcb:{" + b.cfg.Namespace + ":" + ledger.Key(key).Server() + "}:" + key
}

// redactErr keeps the URL's secrets out of an error text.
func redactErr(err error, cfg Config) error {
	if err == nil {
		return nil
	}
	return errors.New(redactText(err.Error(), cfg))
}

// Ping measures one round trip to the board.
func (b *Board) Ping(ctx context.Context) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, b.cfg.Timeout)
	defer cancel()
	start := time.Now()
	err := b.client.Ping(ctx).Err()
	if err != nil {
		return 0, fmt.Errorf("ping shared board %s: %w", b.cfg.Redacted(), redactErr(err, b.cfg))
	}
	return time.Since(start), nil
}

// Read returns the shared circuits of keys (which must be of one server) in one pipelined round
// trip, bounded by the board's timeout.
func (b *Board) Read(ctx context.Context, keys []string) (map[string]Shared, error) {
	ctx, cancel := context.WithTimeout(ctx, b.cfg.Timeout)
	defer cancel()
	cmds := make([]*redis.SliceCmd, len(keys))
	_, err := b.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			cmds[i] = p.HMGet(ctx, b.redisKey(k), "gen", "c", "blocked")
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("read shared board %s: %w", b.cfg.Redacted(), redactErr(err, b.cfg))
	}
	out := make(map[string]Shared, len(keys))
	for i, k := range keys {
		sh, err := decode(k, cmds[i].Val())
		if err != nil {
			return nil, fmt.Errorf("read shared board %s: %s: %w", b.cfg.Redacted(), k, err)
		}
		out[k] = sh
	}
	return out, nil
}

func decode(key string, vals []any) (Shared, error) {
	var sh Shared
	if len(vals) != 3 || vals[0] == nil || vals[1] == nil {
		return sh, nil
	}
	gs, _ := vals[0].(string)
	gen, err := strconv.ParseInt(gs, 10, 64)
	if err != nil {
		return sh, fmt.Errorf("generation %q is not a number", gs)
	}
	cs, _ := vals[1].(string)
	var c states.Circuit
	if err := json.Unmarshal([]byte(cs), &c); err != nil {
		return sh, fmt.Errorf("circuit record: %w", err)
	}
	if c.Key != key || !c.State.Valid() {
		return sh, fmt.Errorf("circuit record names %q in state %q", c.Key, c.State)
	}
	c.Blocked = 0
	if bs, ok := vals[2].(string); ok {
		c.Blocked, _ = strconv.Atoi(bs)
	}
	sh.Gen, sh.Circuit = gen, &c
	return sh, nil
}

// Write is one change to a shared circuit.
type Write struct {
	Key string
	// Gen is the generation the change was decided on; the change is refused when the board's
	// differs. Ignored when Circuit is nil.
	Gen int64
	// Circuit is the new circuit; nil changes only the blocked count.
	Circuit *states.Circuit
	// ResetBlocked zeroes the blocked count before Blocked is added (a new trip or a close).
	ResetBlocked bool
	// Blocked is added to the blocked count.
	Blocked int
}

// writeScript applies writes to the circuits of one server atomically: it first checks every
// generation and changes nothing when one differs, then writes. Lua, rather than MULTI/WATCH,
// because the check and the write run on the server as one step in one round trip (WATCH needs a
// read, a MULTI and an EXEC on a dedicated connection), and because Redis Cluster and Valkey run
// a script whose keys share a slot the same way. The decision itself stays in Go (states' pure
// functions): the script only guards against a lost update, so the policy has one implementation.
//
// KEYS: the circuits' Redis keys. ARGV, four per key: expected generation ("" = no circuit
// write), circuit JSON, "1" to reset the blocked count, blocked increment; then the TTL in ms per
// key. Returns 1 when written, 0 on a generation mismatch.
var writeScript = redis.NewScript(`
local n = #KEYS
for i = 1, n do
  local want = ARGV[(i-1)*4+1]
  if want ~= '' then
    local gen = redis.call('HGET', KEYS[i], 'gen') or '0'
    if gen ~= want then return 0 end
  end
end
for i = 1, n do
  local base = (i-1)*4
  local want, c, reset, incr = ARGV[base+1], ARGV[base+2], ARGV[base+3], tonumber(ARGV[base+4])
  if want ~= '' then
    redis.call('HSET', KEYS[i], 'gen', tonumber(want) + 1, 'c', c)
  end
  if reset == '1' then redis.call('HSET', KEYS[i], 'blocked', 0) end
  if incr > 0 then redis.call('HINCRBY', KEYS[i], 'blocked', incr) end
  redis.call('PEXPIRE', KEYS[i], tonumber(ARGV[n*4+i]))
end
return 1
`)

// Write applies writes (to keys of one server) atomically; ErrConflict when a generation moved.
func (b *Board) Write(ctx context.Context, now time.Time, writes []Write) error {
	if len(writes) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, b.cfg.Timeout)
	defer cancel()
	keys := make([]string, len(writes))
	args := make([]any, 0, 5*len(writes))
	for i, w := range writes {
		keys[i] = b.redisKey(w.Key)
		want, data := "", ""
		if w.Circuit != nil {
			c := *w.Circuit
			// A configuration fingerprint is of one machine's files: on another it would always
			// differ and release an AUTH circuit at once.
			c.Fingerprint, c.HandWritten, c.Blocked = "", false, 0
			j, err := json.Marshal(c)
			if err != nil {
				return fmt.Errorf("write shared board: %s: %w", w.Key, err)
			}
			want, data = strconv.FormatInt(w.Gen, 10), string(j)
		}
		reset := "0"
		if w.ResetBlocked {
			reset = "1"
		}
		args = append(args, want, data, reset, w.Blocked)
	}
	for _, w := range writes {
		ttl := keyTTL
		if w.Circuit != nil {
			for _, t := range []time.Time{w.Circuit.OpenUntil, w.Circuit.LeaseUntil} {
				if d := t.Sub(now); d > 0 && keyTTL+d > ttl {
					ttl = keyTTL + d
				}
			}
		}
		args = append(args, ttl.Milliseconds())
	}
	n, err := writeScript.Run(ctx, b.client, keys, args...).Int()
	if err != nil {
		return fmt.Errorf("write shared board %s: %w", b.cfg.Redacted(), redactErr(err, b.cfg))
	}
	if n == 0 {
		return ErrConflict
	}
	return nil
}

// List returns every circuit of the namespace, for status --fleet and report --fleet. It scans
// (never KEYS) and reads each record; it is not for the hook's path.
func (b *Board) List(ctx context.Context) ([]*states.Circuit, error) {
	var out []*states.Circuit
	iter := b.client.Scan(ctx, 0, "mcb:{"+escapeGlob(b.cfg.Namespace)+":*", 200).Iterator()
	for iter.Next(ctx) {
		rk := iter.Val()
		vals, err := b.client.HMGet(ctx, rk, "gen", "c", "blocked").Result()
		if err != nil {
			return nil, fmt.Errorf("list shared board %s: %w", b.cfg.Redacted(), redactErr(err, b.cfg))
		}
		var c states.Circuit
		cs, _ := vals[1].(string)
		if cs == "" || json.Unmarshal([]byte(cs), &c) != nil || !c.State.Valid() {
			continue // expired between scan and read, or not ours
		}
		if bs, ok := vals[2].(string); ok {
			c.Blocked, _ = strconv.Atoi(bs)
		}
		out = append(out, &c)
	}
	if err := iter.Err(); err != nil {
		return nil, fmt.Errorf("list shared board %s: %w", b.cfg.Redacted(), redactErr(err, b.cfg))
	}
	return out, nil
}

// escapeGlob escapes the glob characters of a SCAN MATCH pattern.
func escapeGlob(s string) string {
	var out []byte
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', ']', '\\':
			out = append(out, '\\')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// isCounter reports whether an entry only counts a call.
func isCounter(e ledger.Entry) bool {
	return e.Event == ledger.EventBlocked || e.Event == ledger.EventWouldBlock
}
