package main

import (
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

func TestProxyDeadline(t *testing.T) {
	pol := &states.Policy{Tools: []states.ToolRule{{Match: "mcp__slow__*", Rule: states.Rule{Deadline: 90 * time.Second}}}}
	tests := []struct {
		flag time.Duration
		pol  *states.Policy
		key  string
		want time.Duration
	}{
		{0, nil, "mcp__slow__run", 0},                             // none built in
		{0, pol, "mcp__slow__run", 90 * time.Second},              // policy.yaml's, for its tools
		{0, pol, "mcp__fast__run", 0},                             // and only for them
		{5 * time.Second, pol, "mcp__slow__run", 5 * time.Second}, // the flag wins
		{5 * time.Second, nil, "mcp__fast__run", 5 * time.Second},
	}
	for _, tt := range tests {
		if got := proxyDeadline(tt.flag, tt.pol)(tt.key); got != tt.want {
			t.Errorf("proxyDeadline(%s, policy %v)(%s) = %s, want %s", tt.flag, tt.pol != nil, tt.key, got, tt.want)
		}
	}
}
