package fleet

import (
	"net/url"
	"testing"
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

// FuzzDecode: a record read from the board (which another version or a person may have written)
// decodes or is refused, never panics, and a decoded one names the key it was read for.
func FuzzDecode(f *testing.F) {
	f.Add("1", `{"key":"mcp__s__t","state":"OPEN","failure_count":3}`, "2")
	f.Add("x", `{}`, "")
	f.Add("7", `{"key":"mcp__s__u","state":"CLOSED"}`, "-1")
	f.Fuzz(func(t *testing.T, gen, c, blocked string) {
		sh, err := decode("mcp__s__t", []any{gen, c, blocked})
		if err == nil && sh.Circuit != nil && (sh.Circuit.Key != "mcp__s__t" || !sh.Circuit.State.Valid()) {
			t.Fatalf("decoded %+v for another key or an invalid state", sh.Circuit)
		}
	})
}
