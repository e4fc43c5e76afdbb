// Package respconn reaches the fleet-shared board for the lean hook: RESP2 over a TCP socket
// opened with system calls, a single node or a Redis Cluster, AUTH and SELECT as go-redis sends
// them. It links neither go-redis nor the net package, whose C resolver (with cgo on, as go
// install builds) would make the lean binary dynamic and cost every hook event, board or not, a
// third of a process start (docs/performance.md). What it does not speak, Usable says, so the
// lean hook hands that user's events to the full CLI as before: TLS (rediss://), URL options
// other than a Cluster's addr, and a host that is neither an IP address nor in /etc/hosts.
package respconn

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/boardconn"
)

// ErrUnsupported is wrapped by Usable's and Dial's errors for a board this package does not speak.
var ErrUnsupported = errors.New("the lean hook does not speak this board")

// Error is an error reply of the board (the text after "-"), as go-redis reports it.
type Error string

func (e Error) Error() string { return string(e) }

// target is a parsed board URL.
type target struct {
	user, pass string
	db         int
	// seeds are the nodes named ("host:port"): one, or a Cluster's.
	seeds   []string
	cluster bool
}

// hostsFile is where names are resolved: this package has no DNS resolver.
const hostsFile = "/etc/hosts"

// parse reads raw as go-redis's ParseURL or ParseClusterURL would, refusing (ErrUnsupported)
// what this package does not speak.
func parse(raw string) (target, error) {
	var t target
	u, err := url.Parse(raw)
	if err != nil {
		return t, err
	}
	if u.Scheme != "redis" {
		return t, fmt.Errorf("%w: scheme %s (TLS is the full CLI's)", ErrUnsupported, u.Scheme)
	}
	if u.User != nil {
		t.user = u.User.Username()
		t.pass, _ = u.User.Password()
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		host = "localhost"
	}
	if port == "" {
		port = "6379"
	}
	t.seeds = []string{joinHostPort(host, port)}
	q := u.Query()
	for k := range q {
		if k != "addr" {
			return t, fmt.Errorf("%w: the URL option %s", ErrUnsupported, k)
		}
	}
	if addrs := q["addr"]; len(addrs) > 0 {
		t.cluster = true
		for _, a := range addrs {
			h, p, ok := splitHostPort(a)
			if !ok || h == "" || p == "" {
				return t, fmt.Errorf("redis: unable to parse addr param: %s", a)
			}
			t.seeds = append(t.seeds, joinHostPort(h, p))
		}
		return t, nil
	}
	f := strings.FieldsFunc(u.Path, func(r rune) bool { return r == '/' })
	switch len(f) {
	case 0:
	case 1:
		if t.db, err = strconv.Atoi(f[0]); err != nil {
			return t, fmt.Errorf("redis: invalid database number: %q", f[0])
		}
	default:
		return t, fmt.Errorf("redis: invalid URL path: %s", u.Path)
	}
	return t, nil
}

// Usable reports why this package cannot reach the board at raw (an error wrapping
// ErrUnsupported), nil when it can: the lean hook then decides with the board itself.
func Usable(raw string) error {
	if err := platform(); err != nil {
		return err
	}
	t, err := parse(raw)
	if err != nil {
		return err
	}
	for _, s := range t.seeds {
		h, _, _ := splitHostPort(s)
		if _, err := resolve(h); err != nil {
			return err
		}
	}
	return nil
}

// resolve returns the addresses of host: an IP literal, else its lines in /etc/hosts.
func resolve(host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	data, err := os.ReadFile(hostsFile)
	if err != nil {
		return nil, fmt.Errorf("%w: resolve %s: %v", ErrUnsupported, host, err)
	}
	var out []netip.Addr
	for line := range bytes.Lines(data) {
		if i := bytes.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(string(line))
		if len(f) < 2 {
			continue
		}
		a, err := netip.ParseAddr(f[0])
		if err != nil {
			continue
		}
		for _, name := range f[1:] {
			if strings.EqualFold(strings.TrimSuffix(name, "."), strings.TrimSuffix(host, ".")) {
				out = append(out, a.WithZone(""))
				break
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %s is not an IP address and not in %s (the full CLI resolves it by DNS)", ErrUnsupported, host, hostsFile)
	}
	return out, nil
}

// splitHostPort is net.SplitHostPort for "host:port" and "[v6]:port".
func splitHostPort(s string) (host, port string, ok bool) {
	if strings.HasPrefix(s, "[") {
		end := strings.Index(s, "]:")
		if end < 0 {
			return "", "", false
		}
		return s[1:end], s[end+2:], true
	}
	i := strings.LastIndexByte(s, ':')
	if i < 0 || strings.IndexByte(s[:i], ':') >= 0 {
		return "", "", false
	}
	return s[:i], s[i+1:], true
}

func joinHostPort(host, port string) string {
	if strings.IndexByte(host, ':') >= 0 {
		return "[" + host + "]:" + port
	}
	return host + ":" + port
}

// conn is a boardconn.Conn to one node or a Cluster.
type conn struct {
	// mu makes its exchanges one at a time: a hook run's are sequential anyway, and a second
	// goroutine (the watchdog's answer) waits rather than interleaving on the socket.
	mu      sync.Mutex
	t       target
	timeout time.Duration
	nodes   map[string]*node
	// slots maps a Cluster's slots to their masters, loaded on first use.
	slots []slotRange
}

type slotRange struct {
	start, end int
	addr       string
}

// Dial is a boardconn.Dial: it connects lazily, nothing is sent until the first call.
func Dial(raw string, timeout time.Duration) (boardconn.Conn, error) {
	t, err := parse(raw)
	if err != nil {
		return nil, err
	}
	return &conn{t: t, timeout: timeout, nodes: map[string]*node{}}, nil
}

// deadline is when the next exchange must end: the context's deadline, but at most the
// timeout from now (go-redis's read, write and dial timeouts, with the context's enabled).
func (c *conn) deadline(ctx context.Context) time.Time {
	d := time.Now().Add(c.timeout)
	if cd, ok := ctx.Deadline(); ok && cd.Before(d) {
		d = cd
	}
	return d
}

// node returns the connection to addr, dialled, authenticated and on its database.
func (c *conn) node(ctx context.Context, addr string) (*node, error) {
	if n := c.nodes[addr]; n != nil {
		return n, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n, err := dial(addr, c.deadline(ctx))
	if err != nil {
		return nil, err
	}
	// Sent in front of the node's first command, in the same write: the connection costs no
	// round trip of its own beyond the dial.
	if c.t.pass != "" {
		if c.t.user != "" {
			n.prelude = append(n.prelude, []any{"AUTH", c.t.user, c.t.pass})
		} else {
			n.prelude = append(n.prelude, []any{"AUTH", c.t.pass})
		}
	}
	if c.t.db > 0 && !c.t.cluster {
		n.prelude = append(n.prelude, []any{"SELECT", c.t.db})
	}
	c.nodes[addr] = n
	return n, nil
}

// do sends cmds to addr in one write and returns the last one's reply, or the first error reply
// (an Error) of them.
func (c *conn) do(ctx context.Context, addr string, cmds ...[]any) (any, error) {
	n, err := c.node(ctx, addr)
	if err != nil {
		return nil, err
	}
	reply, err := n.do(c.deadline(ctx), cmds...)
	if err != nil {
		var re Error
		if !errors.As(err, &re) || n.broken {
			// A broken connection is not used again.
			n.close()
			delete(c.nodes, addr)
		}
	}
	return reply, err
}

// seed runs cmd on the first seed node that answers, as go-redis's ClusterClient loads its state
// from any node it can reach.
func (c *conn) seed(ctx context.Context, cmd []any) (any, string, error) {
	var first error
	for _, s := range c.t.seeds {
		reply, err := c.do(ctx, s, cmd)
		if err == nil {
			return reply, s, nil
		}
		var re Error
		if errors.As(err, &re) {
			return nil, s, err
		}
		if first == nil {
			first = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, "", first
}

// loadSlots reads a Cluster's slot map (CLUSTER SLOTS) from a seed.
func (c *conn) loadSlots(ctx context.Context) error {
	reply, from, err := c.seed(ctx, []any{"CLUSTER", "SLOTS"})
	if err != nil {
		return err
	}
	ranges, ok := reply.([]any)
	if !ok {
		return fmt.Errorf("CLUSTER SLOTS answered %T", reply)
	}
	fromHost, _, _ := splitHostPort(from)
	var slots []slotRange
	for _, r := range ranges {
		f, ok := r.([]any)
		if !ok || len(f) < 3 {
			continue
		}
		start, ok1 := f[0].(int64)
		end, ok2 := f[1].(int64)
		m, ok3 := f[2].([]any)
		if !ok1 || !ok2 || !ok3 || len(m) < 2 {
			continue
		}
		host, _ := m[0].(string)
		port, ok := m[1].(int64)
		if !ok {
			continue
		}
		if host == "" || host == "?" {
			host = fromHost // the node asked
		}
		slots = append(slots, slotRange{int(start), int(end), joinHostPort(host, strconv.FormatInt(port, 10))})
	}
	if len(slots) == 0 {
		return errors.New("CLUSTER SLOTS named no master")
	}
	c.slots = slots
	return nil
}

// master returns the master that owns slot.
func (c *conn) master(slot int) string {
	for _, r := range c.slots {
		if slot >= r.start && slot <= r.end {
			return r.addr
		}
	}
	return c.slots[0].addr
}

// maxRedirects is go-redis's MaxRedirects as the board sets it: one MOVED, one more ASK.
const maxRedirects = 2

func (c *conn) Run(ctx context.Context, s *boardconn.Script, keys []string, args ...any) (any, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cmd := func(op, body string) []any {
		out := make([]any, 0, 3+len(keys)+len(args))
		out = append(out, op, body, len(keys))
		for _, k := range keys {
			out = append(out, k)
		}
		return append(out, args...)
	}
	run := func(addr string, asking bool) (any, error) {
		var pre [][]any
		if asking {
			pre = [][]any{{"ASKING"}}
		}
		reply, err := c.do(ctx, addr, append(pre, cmd("EVALSHA", s.Hash()))...)
		if boardconn.NoScript(err) {
			reply, err = c.do(ctx, addr, append(pre, cmd("EVAL", s.Src))...)
		}
		return reply, err
	}
	if !c.t.cluster {
		return run(c.t.seeds[0], false)
	}
	if c.slots == nil {
		if err := c.loadSlots(ctx); err != nil {
			return nil, err
		}
	}
	addr := c.seeds0()
	if len(keys) > 0 {
		addr = c.master(Slot(keys[0]))
	}
	asking := false
	for i := 0; ; i++ {
		reply, err := run(addr, asking)
		var re Error
		if i >= maxRedirects || !errors.As(err, &re) {
			return reply, err
		}
		f := strings.Fields(string(re))
		switch {
		case len(f) == 3 && f[0] == "MOVED":
			addr, asking = c.redirect(f[2]), false
			if slot, err := strconv.Atoi(f[1]); err == nil {
				c.slots = append([]slotRange{{slot, slot, addr}}, c.slots...)
			}
		case len(f) == 3 && f[0] == "ASK":
			addr, asking = c.redirect(f[2]), true
		default:
			return reply, err
		}
	}
}

// redirect is the address of a MOVED or ASK reply; one without a host is the node asked's.
func (c *conn) redirect(a string) string {
	if strings.HasPrefix(a, ":") {
		h, _, _ := splitHostPort(c.t.seeds[0])
		return joinHostPort(h, a[1:])
	}
	return a
}

func (c *conn) seeds0() string {
	if len(c.slots) > 0 {
		return c.slots[0].addr
	}
	return c.t.seeds[0]
}

func (c *conn) Scan(ctx context.Context, pattern string) ([]string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	masters := []string{c.t.seeds[0]}
	if c.t.cluster {
		if c.slots == nil {
			if err := c.loadSlots(ctx); err != nil {
				return nil, err
			}
		}
		masters = nil
		seen := map[string]bool{}
		for _, r := range c.slots {
			if !seen[r.addr] {
				seen[r.addr] = true
				masters = append(masters, r.addr)
			}
		}
	}
	var out []string
	for _, m := range masters {
		cursor := "0"
		for {
			reply, err := c.do(ctx, m, []any{"SCAN", cursor, "MATCH", pattern, "COUNT", 200})
			if err != nil {
				return out, err
			}
			f, ok := reply.([]any)
			if !ok || len(f) != 2 {
				return out, fmt.Errorf("SCAN answered %T", reply)
			}
			cursor, _ = f[0].(string)
			keys, _ := f[1].([]any)
			for _, k := range keys {
				if s, ok := k.(string); ok {
					out = append(out, s)
				}
			}
			if cursor == "0" || cursor == "" {
				break
			}
		}
	}
	return out, nil
}

func (c *conn) Ping(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, _, err := c.seed(ctx, []any{"PING"})
	return err
}

func (c *conn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for a, n := range c.nodes {
		n.close()
		delete(c.nodes, a)
	}
	return nil
}

// node is one connection, its first commands (AUTH, SELECT) not sent yet.
type node struct {
	addr    string
	f       *os.File
	r       *bufio.Reader
	prelude [][]any
	// broken is set when the connection cannot be used again: its AUTH or SELECT was refused.
	broken bool
}

func (n *node) close() { n.f.Close() }

// do writes cmds (after the prelude, once) in one write and reads their replies: the last
// command's, or the first error reply.
func (n *node) do(deadline time.Time, cmds ...[]any) (any, error) {
	pre := len(n.prelude)
	all := append(n.prelude, cmds...)
	var buf []byte
	for _, c := range all {
		buf = appendCommand(buf, c)
	}
	if err := n.f.SetDeadline(deadline); err != nil {
		return nil, err
	}
	if _, err := n.f.Write(buf); err != nil {
		return nil, fmt.Errorf("write tcp %s: %w", n.addr, err)
	}
	n.prelude = nil
	var first error
	var last any
	for i := range all {
		reply, err := readReply(n.r, 0)
		if err != nil {
			var re Error
			if !errors.As(err, &re) {
				return nil, fmt.Errorf("read tcp %s: %w", n.addr, err)
			}
			if first == nil {
				first = err
				n.broken = i < pre
			}
		}
		if i == len(all)-1 {
			last = reply
		}
	}
	if first != nil {
		return nil, first
	}
	return last, nil
}

// appendCommand appends cmd as a RESP array of bulk strings.
func appendCommand(b []byte, cmd []any) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(cmd)), 10)
	b = append(b, '\r', '\n')
	for _, a := range cmd {
		var s string
		switch v := a.(type) {
		case string:
			s = v
		case int:
			s = strconv.Itoa(v)
		case int64:
			s = strconv.FormatInt(v, 10)
		default:
			s = fmt.Sprint(v)
		}
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(s)), 10)
		b = append(b, '\r', '\n')
		b = append(b, s...)
		b = append(b, '\r', '\n')
	}
	return b
}

// Bounds on what a reply may hold: the board's records are under 16 KB each (fleet.MaxRecord) and
// a scan's pages hold a few hundred keys; a reply past these was not written by a Redis.
const (
	maxBulk  = 8 << 20
	maxArray = 1 << 20
	maxDepth = 8
)

// readReply reads one RESP2 reply: a string, an int64, nil, a []any, or an Error.
func readReply(r *bufio.Reader, depth int) (any, error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return nil, fmt.Errorf("malformed reply %q", clip(line))
	}
	body := string(line[1 : len(line)-2])
	switch line[0] {
	case '+':
		return body, nil
	case '-':
		return nil, Error(body)
	case ':':
		n, err := strconv.ParseInt(body, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("malformed integer reply %q", clip(line))
		}
		return n, nil
	case '$':
		n, err := strconv.Atoi(body)
		switch {
		case err != nil || n > maxBulk:
			return nil, fmt.Errorf("malformed bulk reply %q", clip(line))
		case n < 0:
			return nil, nil
		}
		buf := make([]byte, n+2)
		if _, err := readFull(r, buf); err != nil {
			return nil, err
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(body)
		switch {
		case err != nil || n > maxArray || depth >= maxDepth:
			return nil, fmt.Errorf("malformed array reply %q", clip(line))
		case n < 0:
			return nil, nil
		}
		out := make([]any, n)
		for i := range out {
			v, err := readReply(r, depth+1)
			var re Error
			if errors.As(err, &re) {
				// An error inside an array (a script's table can hold one): kept as go-redis does.
				out[i] = err
				continue
			}
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	return nil, fmt.Errorf("malformed reply %q", clip(line))
}

func readFull(r *bufio.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func clip(b []byte) []byte {
	if len(b) > 40 {
		return b[:40]
	}
	return b
}

// Slot is the Redis Cluster slot of key: CRC16 of its hash tag (the text between the first { and
// the next }, when not empty), else of the whole key, modulo 16384.
func Slot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return int(crc16(key)) % 16384
}

// crc16 is CRC-16/XMODEM, the checksum of the Cluster's key slots.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}
