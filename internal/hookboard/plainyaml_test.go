package hookboard

import (
	"errors"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/fleet"
)

// plainCases are configuration files the lean hook reads itself (plain) or leaves to the full
// CLI; whatever it reads, it reads as yaml.v3 does.
var plainCases = []struct {
	in    string
	plain bool
}{
	{"shared:\n  url: redis://127.0.0.1:6379\n  timeout: 50ms\n", true},
	{"# mine\nshared:\n    url: 'redis://:p''w@h:1/2'   # the team's\n    namespace: \"team-a\"\n    secret: s3cr#t\n\n", true},
	{"shared:\n  url: redis://h\n  namespace: ~\n  other: 1\n", true},
	{"other:\n  - a\nshared:\n  url: redis://h\n", false},
	{"shared:\n  url: redis://h\n  timeout: 100\n", true},
	{"shared:\r\n  url: redis://h\r\n", true},
	{"shared:\n", true},
	{"", true},
	{"shared: {url: redis://h}\n", false},
	{"shared:\n  url: \"redis://h\\u0041\"\n", false},
	{"shared:\n  url: &a redis://h\n", false},
	{"shared:\n  url: |\n    redis://h\n", false},
	{"shared:\n  url: redis://h\n   namespace: x\n", false},
	{"shared:\n  url: redis://h\n  url: redis://i\n", false},
	{"shared:\n\turl: redis://h\n", false},
	{"---\nshared:\n  url: redis://h\n", false},
	{"shared:\n  url: a: b\n", false},
	{"shared:\n  url: 'open\n", false},
}

func TestPlainUserFile(t *testing.T) {
	for _, tt := range plainCases {
		var got fleet.UserFile
		err := plainUserFile([]byte(tt.in), &got)
		if tt.plain != (err == nil) || err != nil && !errors.Is(err, errNotPlain) {
			t.Errorf("plainUserFile(%q) = %v, want plain %v", tt.in, err, tt.plain)
			continue
		}
		if err != nil {
			continue
		}
		var want fleet.UserFile
		if err := yaml.Unmarshal([]byte(tt.in), &want); err != nil || got != want {
			t.Errorf("plainUserFile(%q) = %+v; yaml.v3: %+v, %v", tt.in, got, want, err)
		}
	}
}

// FuzzPlainUserFile: whatever the plain reader accepts, yaml.v3 reads the same way.
func FuzzPlainUserFile(f *testing.F) {
	for _, tt := range plainCases {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var got fleet.UserFile
		if plainUserFile([]byte(in), &got) != nil {
			return
		}
		var want fleet.UserFile
		if err := yaml.Unmarshal([]byte(in), &want); err != nil || got != want {
			t.Fatalf("plainUserFile(%q) = %+v; yaml.v3: %+v, %v", in, got, want, err)
		}
	})
}
