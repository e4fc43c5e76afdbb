// Package fleet owns the shared board: circuits that the sessions of a team share through a Redis
// (single node or Cluster) the user configured (MCP_CIRCUIT_SHARED or the user configuration file,
// never a project file), so one trip protects every session that would fail the same way and one
// half-open trial goes fleet-wide. A circuit is shared by what fails together (Identity): a remote
// server's outage by its endpoint, AUTH and RATE_LIMIT by the credential, a stdio server's outage
// by the machine (docs/fleet.md). The local ledger stays the audit trail and keeps this machine's
// names: what a session learns from the board is appended there with source: shared.
//
// It sits above states (whose pure decisions it runs on the board's circuits) and mcpconfig (whose
// server definitions give the identities), and below internal/project and internal/gate, which call it.
//
// Each circuit is one Redis hash, mcb:{<namespace>:<group>}:<scope>:<tool>, with the fields gen (a
// generation bumped on every change), c (the circuit as JSON), blocked (calls denied since the
// trip), lease (the end of a trial permit by the board's own clock, in ms) and who (hashes of the
// sessions and machines that failed in this episode). All circuits of one server identity share
// the hash tag, so a decision's circuits live in one Redis Cluster slot: they are read by one
// script and written by one script, atomically.
package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/boardconn"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/redact"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/term"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// ErrConflict is returned by Write when another session changed a circuit since it was read, or
// holds the trial permit by the board's clock (then the error is also ErrPermitHeld).
var ErrConflict = errors.New("shared circuit changed since it was read")

// ErrPermitHeld is returned by Write when it would grant a trial permit while another runs by the
// board's clock.
var ErrPermitHeld = fmt.Errorf("%w: a trial permit runs by the board's clock", ErrConflict)

// keyTTL is how long a circuit lingers on the board after its last change (plus the rest of its
// cooldown): long enough to carry a count across a working day, short enough that nothing stays.
const keyTTL = 24 * time.Hour

// MaxRecord bounds a circuit record read from the board: ours are well under 4 KB (the error text
// is at most 500 characters). A larger one was written by something else: the read script checks
// the size on the board's side (HSTRLEN) and never reads it, so it neither crosses the network nor
// costs the board a copy (reading a 50 MB field into the script alone takes the board most of a
// second). Such a record is refused; the next write of this circuit replaces it.
const MaxRecord = 16 << 10

// ClockSlack is how far ahead of this machine's clock a board date may be and still be taken as
// written: machines of a fleet agree within seconds. Past it a date was written by a clock far
// ahead (or by hand) and is clamped.
const ClockSlack = 10 * time.Second

// maxDateAhead bounds the dates that say when a circuit may be tried again (open_until): the
// longest any trip sets is the retry hint's cap.
const maxDateAhead = states.MaxRetryHint

// Record is one circuit as the board holds it, for one scope of one local key.
type Record struct {
	// Scope is the identity scope the record is kept under (Identity.Outage or .Credential).
	Scope string
	// Gen is the generation read; 0 when the board has no record.
	Gen int64
	// Circuit is the circuit, with this machine's key and server name; nil when the board has no
	// usable record. Its Blocked is the fleet's count, its LeaseUntil the board clock's.
	Circuit *states.Circuit
	// Who counts the sessions and machines that failed in the circuit's episode.
	Who Who
	// Future is set when a date of the record lay beyond now + ClockSlack and was clamped: such a
	// record is no evidence of anything after a trip this machine made.
	Future bool
	// Clipped is set when a text of the record was longer than a stored text may be and was cut.
	Clipped bool
	// Refused says why a record the board holds was not used ("" when it was, or there is none).
	Refused string
}

// Who is the set of sessions and machines (as short hashes) that failed in an episode.
type Who struct {
	Sessions []string `json:"s,omitempty"`
	Machines []string `json:"m,omitempty"`
}

// maxWho bounds each list of Who.
const maxWho = 64

func (w *Who) add(session, machine string) {
	if session != "" && len(w.Sessions) < maxWho && !contains(w.Sessions, session) {
		w.Sessions = append(w.Sessions, session)
	}
	if machine != "" && len(w.Machines) < maxWho && !contains(w.Machines, machine) {
		w.Machines = append(w.Machines, machine)
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Board is a connection to the shared board.
type Board struct {
	cfg     Config
	conn    boardconn.Conn
	cluster bool
}

// clusterURL reports whether a URL names several nodes (go-redis's ?addr=h:p form): the board is
// then a Redis Cluster.
func clusterURL(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && len(u.Query()["addr"]) > 0
}

// Open connects lazily to the board of cfg through dial (the binary's way to reach a Redis):
// nothing is sent until the first call. A URL with ?addr=host:port parameters names the nodes of
// a Redis Cluster.
func Open(cfg Config, dial boardconn.Dial) (*Board, error) {
	c, err := dial(cfg.URL, cfg.Timeout)
	if err != nil {
		return nil, fmt.Errorf("open shared board %s: %v", cfg.Redacted(), redactErr(err, cfg))
	}
	return &Board{cfg: cfg, conn: c, cluster: clusterURL(cfg.URL)}, nil
}

// Config returns the board's configuration.
func (b *Board) Config() Config { return b.cfg }

// Cluster reports whether the board is a Redis Cluster.
func (b *Board) Cluster() bool { return b.cluster }

// Close closes the connection.
func (b *Board) Close() error { return b.conn.Close() }

// tag is the hash tag of an identity's circuits.
func (b *Board) tag(id Identity) string { return "mcb:{" + b.cfg.Namespace + ":" + id.Group + "}:" }

// redisKey is the Redis key of the circuit of local key (of id's server) under scope.
func (b *Board) redisKey(id Identity, scope, key string) string {
	return b.tag(id) + scope + ":" + ledger.Key(key).Tool()
}

// redactErr keeps the URL's secrets out of an error text.
func redactErr(err error, cfg Config) error {
	if err == nil {
		return nil
	}
	return errors.New(redactText(err.Error(), cfg))
}

// Ping measures one round trip to the board (for a Cluster: loading its slots, then a PING).
func (b *Board) Ping(ctx context.Context) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, b.cfg.Timeout)
	defer cancel()
	start := time.Now()
	err := b.conn.Ping(ctx)
	if err != nil {
		return 0, fmt.Errorf("ping shared board %s: %w", b.cfg.Redacted(), redactErr(err, b.cfg))
	}
	return time.Since(start), nil
}

// readScript reads circuits with the board's size bounds applied on the board's side, and the
// board's clock. KEYS: the circuits. ARGV: MaxRecord. It returns the board's time in ms, then six
// values per key: gen, c, blocked, lease (ms left by the board's clock), who, and a flag (0 as
// stored, 2 refused: larger than MaxRecord, 3 not a hash). Every field is size-checked before it
// is read.
var readScript = boardconn.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local max = tonumber(ARGV[1])
local out = {now}
local function small(k, f, n)
  if redis.call('HSTRLEN', k, f) <= n then return redis.call('HGET', k, f) end
  return false
end
for i = 1, #KEYS do
  local k = KEYS[i]
  local gen, c, blocked, lease, who, flag = false, false, false, false, false, 0
  local ty = redis.call('TYPE', k).ok
  if ty == 'hash' then
    gen, blocked, who = small(k, 'gen', 20), small(k, 'blocked', 20), small(k, 'who', 8192)
    local l = tonumber(small(k, 'lease', 20) or '')
    if l then lease = l - now end
    if redis.call('HSTRLEN', k, 'c') <= max then
      c = redis.call('HGET', k, 'c')
    else
      flag = 2
    end
  elseif ty ~= 'none' then
    flag = 3
  end
  table.insert(out, gen)
  table.insert(out, c)
  table.insert(out, blocked)
  table.insert(out, lease)
  table.insert(out, who)
  table.insert(out, flag)
end
return out
`)

// slot is one Redis key read for a local key and scope.
type slot struct{ key, scope, rk string }

// Read returns the board's records of keys (local keys of id's server), per key one per scope of
// id, in one round trip bounded by the board's timeout. The records are validated, clipped and
// clamped as of now (clean).
func (b *Board) Read(ctx context.Context, id Identity, keys []string, now time.Time) (map[string][]Record, error) {
	ctx, cancel := context.WithTimeout(ctx, b.cfg.Timeout)
	defer cancel()
	var slots []slot
	for _, k := range keys {
		for _, sc := range id.Scopes() {
			slots = append(slots, slot{k, sc, b.redisKey(id, sc, k)})
		}
	}
	out := make(map[string][]Record, len(keys))
	if len(slots) == 0 {
		return out, nil
	}
	rks := make([]string, len(slots))
	for i, s := range slots {
		rks[i] = s.rk
	}
	vals, err := b.slice(ctx, readScript, rks, MaxRecord)
	if err != nil {
		return nil, fmt.Errorf("read shared board %s: %w", b.cfg.Redacted(), redactErr(err, b.cfg))
	}
	if len(vals) != 1+6*len(slots) {
		return nil, fmt.Errorf("read shared board %s: %d values for %d circuits", b.cfg.Redacted(), len(vals), len(slots))
	}
	for i, s := range slots {
		rec := decode(s.key, id.Server, vals[1+6*i:7+6*i], now)
		rec.Scope = s.scope
		out[s.key] = append(out[s.key], rec)
	}
	return out, nil
}

func str(v any) (string, bool) {
	s, ok := v.(string)
	return s, ok
}

// decode turns the read script's six values into a record of key (of server) as of now.
func decode(key, server string, vals []any, now time.Time) Record {
	var rec Record
	flag, _ := vals[5].(int64)
	switch flag {
	case 2:
		rec.Refused = "the record is larger than " + strconv.Itoa(MaxRecord>>10) + " KB"
	case 3:
		rec.Refused = "the key is not a hash"
	}
	// The generation even of a refused record: the next write replaces it.
	if gs, ok := str(vals[0]); ok {
		if g, err := strconv.ParseInt(gs, 10, 64); err == nil && g >= 0 {
			rec.Gen = g
		}
	}
	cs, ok := str(vals[1])
	if !ok {
		return rec
	}
	if rec.Gen == 0 {
		rec.Refused = "its generation is not a number"
		return rec
	}
	var c states.Circuit
	if err := json.Unmarshal([]byte(cs), &c); err != nil {
		rec.Refused = "the record is not a circuit: " + term.Clip(err.Error(), 80)
		return rec
	}
	clipped := len(c.Error) > redact.MaxStoredRunes || len(c.Cause) > 64
	blocked := 0
	if bs, ok := str(vals[2]); ok {
		blocked, _ = strconv.Atoi(bs)
	}
	future, err := clean(&c, key, server, blocked, now)
	if err != nil {
		rec.Refused = err.Error()
		return rec
	}
	if left, ok := vals[3].(int64); ok && c.State == ledger.HalfOpen {
		// The permit's end by the board's own clock, seen from this machine's: two machines
		// seconds apart agree on whether it still runs.
		c.LeaseUntil = now.Add(max(time.Duration(left)*time.Millisecond, 0))
	}
	if ws, ok := str(vals[4]); ok {
		var w Who
		if json.Unmarshal([]byte(ws), &w) == nil {
			w.Sessions, w.Machines = clipList(w.Sessions), clipList(w.Machines)
			rec.Who = w
		}
	}
	rec.Circuit, rec.Future, rec.Clipped = &c, future, clipped
	return rec
}

func clipList(l []string) []string {
	if len(l) > maxWho {
		l = l[:maxWho]
	}
	out := l[:0:0]
	for _, s := range l {
		if len(s) <= 32 {
			out = append(out, s)
		}
	}
	return out
}

// clean makes a record read from the board (which another version, a person or an attacker with
// access to the Redis may have written) safe to decide on and to copy into the local ledger: this
// machine's key and server name, a valid state and type, bounded counts, texts clipped and
// sanitized like every stored text, dates beyond now + ClockSlack clamped to now (and reported),
// trial times beyond now + the retry hint's cap clamped to it. It refuses a record whose state is
// not one of the three.
func clean(c *states.Circuit, key, server string, blocked int, now time.Time) (future bool, err error) {
	if !c.State.Valid() {
		return false, fmt.Errorf("the record's state %s is not CLOSED, OPEN or HALF-OPEN", redact.QuoteData(string(c.State), 20))
	}
	if c.FailureType != "" && !c.FailureType.Valid() {
		c.FailureType = ledger.Unknown
	}
	if c.State != ledger.Closed && c.FailureType == "" {
		c.FailureType = ledger.Unknown
	}
	c.Key, c.Server = key, server
	c.FailureCount = min(max(c.FailureCount, 0), 1000)
	c.Level = min(max(c.Level, 0), 16)
	c.Blocked = min(max(blocked, 0), 1<<30)
	c.RetryAfter = min(max(c.RetryAfter, 0), states.MaxRetryHint)
	c.Error = redact.StoredText(c.Error)
	c.Cause = term.Clip(redact.StoredText(c.Cause), 64)
	if c.ResetMethod != ledger.ResetProbeSuccess && c.ResetMethod != ledger.ResetUserForced {
		c.ResetMethod = ""
	}
	// A configuration fingerprint is of one machine's files: on another it would always differ and
	// release an AUTH circuit at once.
	c.Fingerprint, c.HandWritten, c.Unverified = "", false, false
	ahead := now.Add(ClockSlack)
	for _, t := range []*time.Time{&c.TrippedAt, &c.ResetAt, &c.LastAt} {
		if t.After(ahead) {
			*t, future = now, true
		}
	}
	if c.OpenUntil.After(now.Add(maxDateAhead)) {
		c.OpenUntil, future = now.Add(maxDateAhead), true
	}
	if c.LeaseUntil.After(now.Add(maxDateAhead)) {
		c.LeaseUntil, future = now, true
	}
	return future, nil
}

// Write is one change to a shared circuit.
type Write struct {
	// Key is the local key; Scope the identity scope it is kept under.
	Key, Scope string
	// Gen is the generation the change was decided on; the change is refused when the board's
	// differs. Ignored when Circuit is nil.
	Gen int64
	// Circuit is the new circuit; nil changes only the blocked count.
	Circuit *states.Circuit
	// ResetBlocked zeroes the blocked count before Blocked is added (a new trip or a close).
	ResetBlocked bool
	// Blocked is added to the blocked count.
	Blocked int
	// Lease, when positive, is a trial permit this write grants: the board ends it by its own
	// clock, and refuses the write while another permit runs by that clock.
	Lease time.Duration
	// Who, when set, replaces the episode's sessions and machines; ClearWho removes them.
	Who      *Who
	ClearWho bool
}

// writeScript applies writes to the circuits of one identity atomically: it first checks every
// generation (and that no trial permit runs by the board's clock where a write grants one) and
// changes nothing when one differs, then writes. Lua, rather than MULTI/WATCH, because the check
// and the write run on the server as one step in one round trip, and because Redis Cluster and
// Valkey run a script whose keys share a slot the same way. The decision itself stays in Go
// (states' pure functions): the script only guards against a lost update and a second permit.
//
// KEYS: the circuits' Redis keys. ARGV, seven per key: expected generation ("" = no circuit
// write), circuit JSON, "1" to reset the blocked count, blocked increment, lease ms (>0 grant,
// <0 clear, 0 keep), who JSON ("" keep, "-" clear), TTL ms. Returns 1 when written, 0 on a
// generation mismatch, 2 when a permit still runs.
var writeScript = boardconn.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local n = #KEYS
for i = 1, n do
  local b = (i-1)*7
  local want = ARGV[b+1]
  if want ~= '' then
    local gen = '0'
    if redis.call('TYPE', KEYS[i]).ok == 'hash' then
      gen = redis.call('HGET', KEYS[i], 'gen') or '0'
      if #gen > 18 or not string.match(gen, '^%d+$') then gen = '0' end
      if tonumber(ARGV[b+5]) > 0 then
        local l = redis.call('HGET', KEYS[i], 'lease')
        if l and #l <= 20 and tonumber(l) and tonumber(l) > now then return 2 end
      end
    end
    if gen ~= want then return 0 end
  end
end
for i = 1, n do
  local b = (i-1)*7
  local k = KEYS[i]
  local want, c, reset, incr, lease, who = ARGV[b+1], ARGV[b+2], ARGV[b+3], tonumber(ARGV[b+4]), tonumber(ARGV[b+5]), ARGV[b+6]
  local ty = redis.call('TYPE', k).ok
  if ty ~= 'hash' and ty ~= 'none' then redis.call('DEL', k) end
  if want ~= '' then
    redis.call('HSET', k, 'gen', tonumber(want) + 1, 'c', c)
  end
  if lease > 0 then redis.call('HSET', k, 'lease', now + lease) elseif lease < 0 then redis.call('HDEL', k, 'lease') end
  if who == '-' then redis.call('HDEL', k, 'who') elseif who ~= '' then redis.call('HSET', k, 'who', who) end
  if reset == '1' then redis.call('HSET', k, 'blocked', 0) end
  if incr > 0 then
    local r = redis.pcall('HINCRBY', k, 'blocked', incr)
    if type(r) == 'table' and r.err then redis.call('HSET', k, 'blocked', incr) end
  end
  redis.call('PEXPIRE', k, tonumber(ARGV[b+7]))
end
return 1
`)

// Write applies writes (to circuits of id) atomically; ErrConflict when a generation moved or a
// permit still runs.
func (b *Board) Write(ctx context.Context, id Identity, now time.Time, writes []Write) error {
	if len(writes) == 0 {
		return nil
	}
	// The last guard of provenance: a circuit resting on entries this user's gate did not write
	// never reaches the board, whatever a caller planned (plan leaves them out already).
	writes = slices.DeleteFunc(slices.Clone(writes), func(w Write) bool { return w.Circuit != nil && w.Circuit.Unverified })
	if len(writes) == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, b.cfg.Timeout)
	defer cancel()
	keys := make([]string, len(writes))
	args := make([]any, 0, 7*len(writes))
	for i, w := range writes {
		keys[i] = b.redisKey(id, w.Scope, w.Key)
		want, data := "", ""
		ttl := keyTTL
		var lease int64
		if w.Circuit != nil {
			c := *w.Circuit
			c.Fingerprint, c.HandWritten, c.Blocked = "", false, 0
			j, err := json.Marshal(c)
			if err != nil {
				return fmt.Errorf("write shared board: %s: %w", w.Key, err)
			}
			want, data = strconv.FormatInt(w.Gen, 10), string(j)
			for _, t := range []time.Time{c.OpenUntil, c.LeaseUntil} {
				if d := t.Sub(now); d > 0 && keyTTL+d > ttl {
					ttl = keyTTL + d
				}
			}
			switch {
			case w.Lease > 0:
				lease = max(w.Lease.Milliseconds(), 1)
			case c.State != ledger.HalfOpen:
				lease = -1
			}
		}
		reset := "0"
		if w.ResetBlocked {
			reset = "1"
		}
		who := ""
		switch {
		case w.ClearWho:
			who = "-"
		case w.Who != nil:
			j, _ := json.Marshal(w.Who)
			who = string(j)
		}
		args = append(args, want, data, reset, w.Blocked, lease, who, ttl.Milliseconds())
	}
	reply, err := b.conn.Run(ctx, writeScript, keys, args...)
	n, ok := reply.(int64)
	if err == nil && !ok {
		err = fmt.Errorf("the write script answered %T, not a number", reply)
	}
	if err != nil {
		return fmt.Errorf("write shared board %s: %w", b.cfg.Redacted(), redactErr(err, b.cfg))
	}
	switch n {
	case 1:
		return nil
	case 2:
		return ErrPermitHeld
	}
	return ErrConflict
}

// slice runs a script whose reply is an array.
func (b *Board) slice(ctx context.Context, s *boardconn.Script, keys []string, args ...any) ([]any, error) {
	reply, err := b.conn.Run(ctx, s, keys, args...)
	if err != nil {
		return nil, err
	}
	vals, ok := reply.([]any)
	if !ok {
		return nil, fmt.Errorf("the read script answered %T, not an array", reply)
	}
	return vals, nil
}

// scan returns the keys matching pattern, on every master of a Cluster. It is not for the hook's
// path.
func (b *Board) scan(ctx context.Context, pattern string) ([]string, error) {
	return b.conn.Scan(ctx, pattern)
}

// Listed is one circuit of List: as the board holds it, named as its last writer named it.
type Listed struct {
	Record
	// Group is the identity group it is kept under (Record.Scope says by what it is shared).
	Group string
	// RedisKey is where it is; Record.Circuit is nil and Record.Refused says why when it was
	// refused.
	RedisKey string
}

// List returns every circuit of the namespace, for status --fleet and report --fleet, named as
// their last writers named them (another machine's names). It scans (never KEYS) and reads each
// record with the read script's bounds; it is not for the hook's path.
func (b *Board) List(ctx context.Context, now time.Time) ([]Listed, error) {
	keys, err := b.scan(ctx, "mcb:{"+escapeGlob(b.cfg.Namespace)+":*")
	if err != nil {
		return nil, fmt.Errorf("list shared board %s: %w", b.cfg.Redacted(), redactErr(err, b.cfg))
	}
	var out []Listed
	for _, rk := range keys {
		vals, err := b.slice(ctx, readScript, []string{rk}, MaxRecord)
		if err != nil {
			return nil, fmt.Errorf("list shared board %s: %w", b.cfg.Redacted(), redactErr(err, b.cfg))
		}
		if len(vals) != 7 {
			continue
		}
		// The writer's own names are in the record; they are only shown.
		name, server := "", ""
		if cs, ok := str(vals[2]); ok {
			var c states.Circuit
			if json.Unmarshal([]byte(cs), &c) == nil && ledger.ValidToolName(c.Key) && ledger.Key(c.Key).IsMCP() {
				name, server = c.Key, ledger.Key(c.Key).Server()
			}
		}
		group, scope := splitRedisKey(rk)
		if name == "" {
			// Expired between scan and read, or a record this version refuses (too large, not a
			// circuit): listed by its Redis key, so that a person sees it.
			if flag, _ := vals[6].(int64); flag == 2 || flag == 3 {
				rec := decode("", "", vals[1:], now)
				rec.Scope = scope
				out = append(out, Listed{Record: rec, Group: group, RedisKey: rk})
			}
			continue
		}
		rec := decode(name, server, vals[1:], now)
		rec.Scope = scope
		if rec.Circuit == nil && rec.Refused == "" {
			continue
		}
		out = append(out, Listed{Record: rec, Group: group, RedisKey: rk})
	}
	return out, nil
}

// ListFor returns the circuits the board holds for the identities of this machine's servers,
// named with this machine's keys (at SessionStart).
func (b *Board) ListFor(ctx context.Context, ids []Identity, now time.Time) ([]*states.Circuit, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	// One scan of the namespace, however many servers: a SCAN walks the whole keyspace.
	all, err := b.scan(ctx, "mcb:{"+escapeGlob(b.cfg.Namespace)+":*")
	if err != nil {
		return nil, fmt.Errorf("list shared board %s: %w", b.cfg.Redacted(), redactErr(err, b.cfg))
	}
	var out []*states.Circuit
	for _, id := range ids {
		seen := map[string]bool{}
		var tools []string
		for _, rk := range all {
			rest, ok := strings.CutPrefix(rk, b.tag(id))
			if !ok {
				continue
			}
			scope, tool, _ := strings.Cut(rest, ":")
			if (scope == id.Outage || scope == id.Credential) && tool != "" && !seen[tool] {
				seen[tool] = true
				tools = append(tools, "mcp__"+id.Server+"__"+tool)
			}
		}
		if len(tools) == 0 {
			continue
		}
		recs, err := b.Read(ctx, id, tools, now)
		if err != nil {
			return nil, err
		}
		for _, k := range tools {
			if c := inForce(recs[k], "", now); c != nil && c.Circuit != nil {
				out = append(out, c.Circuit)
			}
		}
	}
	return out, nil
}

// ShownKey is a circuit's Redis key as it may be printed: a credential scope's hash (c=…) is
// replaced, since a hash of a credential is nothing to show anyone, even keyed.
func ShownKey(rk string) string {
	i := strings.Index(rk, "}:c=")
	if i < 0 {
		return rk
	}
	rest := rk[i+len("}:c="):]
	if j := strings.IndexByte(rest, ':'); j >= 0 {
		return rk[:i] + "}:c=…" + rest[j:]
	}
	return rk[:i] + "}:c=…"
}

// splitRedisKey returns the group and scope of a circuit's Redis key.
func splitRedisKey(rk string) (group, scope string) {
	_, rest, _ := strings.Cut(rk, "{")
	tag, rest, _ := strings.Cut(rest, "}:")
	if i := strings.LastIndexByte(tag, ':'); i >= 0 {
		group = tag[i+1:]
	}
	scope, _, _ = strings.Cut(rest, ":")
	return group, scope
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
