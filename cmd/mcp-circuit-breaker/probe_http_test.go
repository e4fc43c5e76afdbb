package main

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/testservers"
)

// TestProbeHTTPOutcomesRecorded probes the HTTP fault fixtures through the CLI and checks what
// reaches the ledger: the type, and for a 429 with Retry-After: 7 an open_until no earlier than
// now+7 s even when the policy's cooldown is shorter (docs/circuits.md, docs/probes.md).
func TestProbeHTTPOutcomesRecorded(t *testing.T) {
	srv := httptest.NewServer(testservers.Faults())
	defer srv.Close()
	cases := []struct {
		name, path, typ string
		code            int
	}{
		{"healthy", testservers.PathHealthy, "", 0},
		// OAuth: no credentials configured, the 401 is the client's to answer (docs/probes.md).
		{"401 oauth", testservers.Path401, "", 0},
		{"401 own key", testservers.Path401 + "?api_key=abcdef123", "AUTH", 3},
		{"429", testservers.Path429, "RATE_LIMIT", 3},
		{"503", testservers.Path503, "TIMEOUT", 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			sd := filepath.Join(dir, ".claude", "mcp_circuit")
			os.MkdirAll(sd, 0o700)
			os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(fmt.Sprintf(`{"mcpServers":{"web":{"type":"http","url":%q}}}`, srv.URL+c.path)), 0o600)
			// A 1 s cooldown with no jitter: only the retry hint can push open_until to now+7 s.
			os.WriteFile(filepath.Join(sd, "policy.yaml"), []byte("defaults:\n  cooldown: 1s\n  jitter: 0\n"), 0o600)
			const now = "2026-11-29T12:00:00Z"
			if _, code := runCLI(t, dir, nil, "trip", "mcp__web__*", "--type", "TIMEOUT"); code != 0 {
				t.Fatalf("trip exited %d", code)
			}
			// The server comes from .mcp.json and is not approved in Claude Code: the test vouches for it.
			out, code := runCLI(t, dir, nil, "probe", "--server", "web", "--json", "--allow-unapproved")
			if code != c.code {
				t.Fatalf("probe exited %d, want %d\n%s", code, c.code, out)
			}
			var res struct {
				Results []struct {
					Healthy    bool    `json:"healthy"`
					Type       *string `json:"type"`
					RetryAfter *string `json:"retry_after"`
				} `json:"results"`
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Results) != 1 {
				t.Fatalf("probe --json: %v\n%s", err, out)
			}
			r := res.Results[0]
			if c.typ == "" {
				if !r.Healthy {
					t.Fatalf("want healthy: %s", out)
				}
				if st, _ := runCLI(t, dir, nil, "status", "--json"); !json.Valid([]byte(st)) || containsOpen(t, st) {
					t.Errorf("a healthy probe left a circuit open: %s", st)
				}
				return
			}
			if r.Healthy || r.Type == nil || *r.Type != c.typ {
				t.Fatalf("want %s: %s", c.typ, out)
			}
			st, _ := runCLI(t, dir, nil, "status", "--json")
			var status struct {
				Circuits []struct {
					Tool        string `json:"tool"`
					State       string `json:"state"`
					FailureType string `json:"failure_type"`
					OpenUntil   string `json:"open_until"`
				} `json:"circuits"`
			}
			json.Unmarshal([]byte(st), &status)
			if len(status.Circuits) != 1 || status.Circuits[0].State != "OPEN" || status.Circuits[0].FailureType != c.typ {
				t.Fatalf("after the probe: %s", st)
			}
			t.Logf("%s: %s open until %s", c.name, status.Circuits[0].FailureType, status.Circuits[0].OpenUntil)
			if c.name == "429" {
				if r.RetryAfter == nil || *r.RetryAfter != "7s" {
					t.Errorf("retry_after %v, want 7s", r.RetryAfter)
				}
				until, err := time.Parse(time.RFC3339, status.Circuits[0].OpenUntil)
				n, _ := time.Parse(time.RFC3339, now)
				if err != nil || until.Before(n.Add(7*time.Second)) {
					t.Errorf("open_until %s, want ≥ now+7s (%s)", status.Circuits[0].OpenUntil, n.Add(7*time.Second).Format(time.RFC3339))
				}
			}
		})
	}
}

func containsOpen(t *testing.T, status string) bool {
	var s struct {
		Circuits []struct {
			State string `json:"state"`
		} `json:"circuits"`
	}
	json.Unmarshal([]byte(status), &s)
	for _, c := range s.Circuits {
		if c.State != "CLOSED" {
			return true
		}
	}
	return false
}

// TestStep2AdviceOAuthServer follows our own step-2 advice on a tool of an OAuth-protected remote
// server (it answers 401 with a WWW-Authenticate challenge; its configuration holds no token,
// only Claude Code does): the suggested 'probe TOOL' must say the server is reachable and leave
// no AUTH circuit, where it used to open every tool of the server as AUTH (docs/probes.md).
func TestStep2AdviceOAuthServer(t *testing.T) {
	srv := httptest.NewServer(testservers.Faults())
	defer srv.Close()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, ".claude", "mcp_circuit"), 0o700)
	os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(fmt.Sprintf(`{"mcpServers":{"web":{"type":"http","url":%q}}}`, srv.URL+testservers.Path401)), 0o600)
	var advice string
	for range 2 {
		advice, _ = runCLI(t, dir, nil, "record", "mcp__web__search", "--error", "MCP error -32001: Request timed out")
	}
	if !strings.Contains(advice, "mcp-circuit-breaker probe mcp__web__search") {
		t.Fatalf("the step-2 advice does not suggest 'probe mcp__web__search':\n%s", advice)
	}
	// The server comes from .mcp.json, which Claude Code has not approved here: the test vouches.
	out, code := runCLI(t, dir, nil, "probe", "mcp__web__search", "--allow-unapproved")
	if code != 0 || !strings.Contains(out, "reachable") || !strings.Contains(out, "authentication is the client's") || strings.Contains(out, "AUTH (") {
		t.Fatalf("probe exited %d, want 0 and 'reachable; authentication is the client's':\n%s", code, out)
	}
	st, _ := runCLI(t, dir, nil, "status", "--json")
	if strings.Contains(st, `"AUTH"`) || containsOpen(t, st) {
		t.Errorf("after following the advice: %s", st)
	}
}
