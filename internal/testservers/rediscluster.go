package testservers

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisCluster is a Redis Cluster of real redis-server processes (masters only) that a test
// started on free 127.0.0.1 ports, its 16384 slots split evenly between them.
type RedisCluster struct {
	Nodes []*Redis
}

// StartRedisCluster starts an n-node cluster for the test and stops it at the test's end.
func StartRedisCluster(t testing.TB, n int) *RedisCluster {
	t.Helper()
	skipWithoutRedis(t)
	c, err := NewRedisCluster(t.TempDir(), n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	return c
}

// NewRedisCluster starts an n-node cluster with its files under dir; the caller stops it. The
// cluster is made from Go (CLUSTER ADDSLOTSRANGE and MEET) rather than with redis-cli --cluster
// create, so that only redis-server is needed.
func NewRedisCluster(dir string, n int) (*RedisCluster, error) {
	c := &RedisCluster{}
	for i := range n {
		d := filepath.Join(dir, "node"+strconv.Itoa(i))
		r, err := newRedis(d, "", []string{"--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(d, "nodes.conf"),
			"--cluster-node-timeout", "5000", "--cluster-require-full-coverage", "yes"})
		if err != nil {
			c.Stop()
			return nil, err
		}
		c.Nodes = append(c.Nodes, r)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	per := 16384 / n
	for i, r := range c.Nodes {
		cl := r.client()
		lo, hi := i*per, (i+1)*per-1
		if i == n-1 {
			hi = 16383
		}
		err := cl.ClusterAddSlotsRange(ctx, lo, hi).Err()
		if err == nil && i > 0 {
			err = cl.ClusterMeet(ctx, "127.0.0.1", strconv.Itoa(c.Nodes[0].Port)).Err()
		}
		cl.Close()
		if err != nil {
			c.Stop()
			return nil, fmt.Errorf("make redis cluster: node %d: %w", i, err)
		}
	}
	// Every node must know every other and see the whole cluster as ok.
	for {
		ok := true
		for _, r := range c.Nodes {
			cl := r.client()
			info, err := cl.ClusterInfo(ctx).Result()
			nodes, nerr := cl.ClusterNodes(ctx).Result()
			cl.Close()
			if err != nil || nerr != nil || !strings.Contains(info, "cluster_state:ok") || strings.Count(strings.TrimSpace(nodes), "\n")+1 != n ||
				strings.Contains(nodes, "handshake") {
				ok = false
			}
		}
		if ok {
			return c, nil
		}
		select {
		case <-ctx.Done():
			c.Stop()
			return nil, fmt.Errorf("make redis cluster: not ok within 30s")
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (r *Redis) client() *redis.Client {
	return redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(r.Port), Password: r.Password, MaxRetries: -1})
}

// URL is the cluster in go-redis's URL form: the first node, and the others as addr parameters.
func (c *RedisCluster) URL() string {
	u := "redis://127.0.0.1:" + strconv.Itoa(c.Nodes[0].Port)
	for i, r := range c.Nodes[1:] {
		sep := "&"
		if i == 0 {
			sep = "?"
		}
		u += sep + "addr=127.0.0.1:" + strconv.Itoa(r.Port)
	}
	return u
}

// Stop kills every node.
func (c *RedisCluster) Stop() {
	for _, r := range c.Nodes {
		r.Stop()
	}
}
