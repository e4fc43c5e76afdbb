package fleet

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/mcpconfig"
)

// FuzzRedactURL: whatever the URL, the redacted form keeps no user name or password of it.
func FuzzRedactURL(f *testing.F) {
	for _, s := range []string{"redis://:pw@h:6379/0", "rediss://user:s3cret@h:6380", "redis://h?password=x", "redis://[::1]:6379", "%zz", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got := RedactURL(raw)
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" || u.User == nil {
			return
		}
		r, err := url.Parse(got)
		if err != nil {
			t.Fatalf("RedactURL(%q) = %q, which does not parse: %v", raw, got, err)
		}
		if _, has := r.User.Password(); has || r.User.Username() != "xxxxx" {
			t.Fatalf("RedactURL(%q) = %q keeps user information", raw, got)
		}
	})
}

// FuzzDecode: a record read from the board (which another version, a person or an attacker may
// have written) decodes or is refused, never panics, and a decoded one names the key it was read
// for, in a valid state, with its texts clipped and its dates clamped.
func FuzzDecode(f *testing.F) {
	f.Add("1", `{"key":"mcp__s__t","state":"OPEN","failure_count":3}`, "2", int64(5))
	f.Add("x", `{}`, "", int64(0))
	f.Add("7", `{"key":"mcp__s__u","state":"CLOSED","last_at":"2099-01-01T00:00:00Z","error":"`+strings.Repeat("e", 3000)+`"}`, "-1", int64(-9))
	f.Fuzz(func(t *testing.T, gen, c, blocked string, lease int64) {
		now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
		rec := decode("mcp__s__t", "s", []any{gen, c, blocked, lease, nil, int64(0)}, now)
		if rec.Circuit == nil {
			return
		}
		got := rec.Circuit
		if got.Key != "mcp__s__t" || got.Server != "s" || !got.State.Valid() {
			t.Fatalf("decoded %+v for another key or an invalid state", got)
		}
		if len([]rune(got.Error)) > 500 || got.FailureCount < 0 || got.Blocked < 0 {
			t.Fatalf("decoded %+v: unclipped text or a negative count", got)
		}
		if got.LastAt.After(now.Add(ClockSlack)) || got.TrippedAt.After(now.Add(ClockSlack)) || got.OpenUntil.After(now.Add(maxDateAhead)) {
			t.Fatalf("decoded %+v: a date beyond the clamp", got)
		}
	})
}

// FuzzNormalizeURL: whatever the URL a configuration holds, its endpoint keeps no user
// information and no credential parameter, so neither reaches the board's key hashes in clear
// form by way of a display, and two spellings that parse alike give one endpoint.
func FuzzNormalizeURL(f *testing.F) {
	for _, s := range []string{"https://u:pw@h:443/mcp/?token=x&b=1", "HTTP://H:80", "https://[::1]:8443/a/../b", "%zz", "", "mcp.example/mcp"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got := NormalizeURL(raw)
		if strings.HasPrefix(got, "raw:") {
			return
		}
		u, err := url.Parse(got)
		if err != nil {
			t.Fatalf("NormalizeURL(%q) = %q, which does not parse: %v", raw, got, err)
		}
		if u.User != nil {
			t.Fatalf("NormalizeURL(%q) = %q keeps user information", raw, got)
		}
		for k := range u.Query() {
			if mcpconfig.CredentialName(k) {
				t.Fatalf("NormalizeURL(%q) = %q keeps a credential parameter", raw, got)
			}
		}
	})
}
