package mcpconfig

import (
	"errors"
	"testing"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// FuzzParse checks that no input makes the parser panic, that every problem is a *FileError,
// and that every server returned is usable. The seeds run in the normal test suite.
func FuzzParse(f *testing.F) {
	seeds := []string{
		`{"mcpServers": {"s": {"command": "c", "args": ["a"], "env": {"K": "${V:-d}"}}}}`,
		`{"mcpServers": {"h": {"type": "http", "url": "https://${HOST}/mcp", "headers": {"A": "B"}}}}`,
		`{"mcpServers": {"cursor": {"url": "https://${HOST}/mcp"}, "both": {"url": "u", "command": "c"}}}`,
		`{"mcpServers": {"x": {"type": "ws", "url": "wss://h"}, "y": null, "z": []}}`,
		`{"mcpServers": {"dup": {"command": "a"}, "dup": {"command": "b"}}, "mcpServers": {}}`,
		`{"projects": {"/p": {"mcpServers": {"l": {"command": "l"}}}}, "mcpServers": {"u": {"command": "u"}}}`,
		`{"mcpServers": {"": {"command": "c"}}}`,
		`{"mcpServers": "nope"}`,
		`{"mcpServers": {"s": {"command": "c",}}}`,
		`[]`,
		``,
		`{"mcpServers": {"s": {"command": "${"}}}`,
		"{\"mcpServers\": {\"\xff\": {\"command\": \"c\"}}}",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	lookup := env(map[string]string{"V": "v", "HOST": "h"})
	f.Fuzz(func(t *testing.T, data []byte) {
		check := func(servers []Server, err error) {
			if err != nil {
				var fe *FileError
				if !errors.As(err, &fe) {
					t.Fatalf("error %v is not a *FileError", err)
				}
			}
			for _, s := range servers {
				if s.Name == "" || s.Sanitized != ledger.SanitizeServer(s.Name) || s.Transport == "" || s.Source != "f" {
					t.Fatalf("bad server %+v", s)
				}
				if s.Transport == TransportStdio && s.Command == "" {
					t.Fatalf("stdio server without command: %+v", s)
				}
				_ = s.Fingerprint()
			}
		}
		check(Parse("f", data, ScopeProject, lookup))
		check(parseProjects("f", data, []string{"/p"}, func(string) func(string) (string, bool) { return lookup }))
		agent, err := ParseAgentFile("f", data, ScopeProject)
		check(agent, err)
		for _, s := range agent {
			if len(s.fromEnv) > 0 || (s.Transport == TransportHTTP && s.URL == "") {
				t.Fatalf("agent file: server %+v took a value from the environment, or has no url", s)
			}
		}
	})
}
