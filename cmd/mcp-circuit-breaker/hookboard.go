package main

import (
	"gopkg.in/yaml.v3"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/boardconn/goredisconn"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/fleet"
)

// fullBoard is how the full CLI reaches the board: the user's file read with yaml.v3, the Redis
// through go-redis (TLS, Cluster and every URL option it reads).
func fullBoard() fleet.Client {
	return fleet.Client{Unmarshal: yaml.Unmarshal, Dial: goredisconn.Dial}
}
