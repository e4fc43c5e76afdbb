// Package goredisconn reaches the fleet-shared board through go-redis, for the full CLI: a single
// node, a Redis Cluster (a URL with ?addr= parameters: go-redis's ClusterClient), TLS
// (rediss://) and every URL option go-redis reads.
package goredisconn

import (
	"context"
	"net/url"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/boardconn"
)

// conn is a go-redis client as a boardconn.Conn.
type conn struct {
	client  redis.UniversalClient
	cluster *redis.ClusterClient
}

// clusterURL reports whether a URL names several nodes (go-redis's ?addr=h:p form): the board is
// then a Redis Cluster.
func clusterURL(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && len(u.Query()["addr"]) > 0
}

// Dial is a boardconn.Dial: it connects lazily, nothing is sent until the first call.
func Dial(raw string, timeout time.Duration) (boardconn.Conn, error) {
	// One short-lived process per hook: no retries (a retry doubles the wait on a board that is
	// away), one connection, RESP2 and no CLIENT SETINFO.
	if clusterURL(raw) {
		opt, err := redis.ParseClusterURL(raw)
		if err != nil {
			return nil, err
		}
		opt.MaxRetries = -1
		opt.MaxRedirects = 2 // a slot that moved: one redirect, and one more for ASK during a migration
		opt.DialerRetries = 1
		opt.PoolSize = 1
		opt.Protocol = 2
		opt.DisableIdentity = true
		opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = timeout, timeout, timeout
		opt.ContextTimeoutEnabled = true
		c := redis.NewClusterClient(opt)
		return conn{client: c, cluster: c}, nil
	}
	opt, err := redis.ParseURL(raw)
	if err != nil {
		return nil, err
	}
	opt.MaxRetries = -1
	opt.DialerRetries = 1 // its default, 5 dials 100 ms apart, would outlast the timeout on a refused port
	opt.PoolSize = 1
	opt.Protocol = 2
	opt.DisableIdentity = true
	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = timeout, timeout, timeout
	opt.ContextTimeoutEnabled = true
	return conn{client: redis.NewClient(opt)}, nil
}

func (c conn) Run(ctx context.Context, s *boardconn.Script, keys []string, args ...any) (any, error) {
	r := c.client.EvalSha(ctx, s.Hash(), keys, args...)
	if boardconn.NoScript(r.Err()) {
		r = c.client.Eval(ctx, s.Src, keys, args...)
	}
	return r.Result()
}

func (c conn) Scan(ctx context.Context, pattern string) ([]string, error) {
	one := func(ctx context.Context, cl redis.Cmdable) ([]string, error) {
		var out []string
		iter := cl.Scan(ctx, 0, pattern, 200).Iterator()
		for iter.Next(ctx) {
			out = append(out, iter.Val())
		}
		return out, iter.Err()
	}
	if c.cluster == nil {
		return one(ctx, c.client)
	}
	var mu sync.Mutex
	var all []string
	err := c.cluster.ForEachMaster(ctx, func(ctx context.Context, cl *redis.Client) error {
		keys, err := one(ctx, cl)
		mu.Lock()
		all = append(all, keys...)
		mu.Unlock()
		return err
	})
	return all, err
}

func (c conn) Ping(ctx context.Context) error { return c.client.Ping(ctx).Err() }

func (c conn) Close() error { return c.client.Close() }
