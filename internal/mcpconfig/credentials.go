package mcpconfig

import (
	"net/url"
	"sort"
	"strings"
)

// Credentials returns the configured values that carry the server's credential, each prefixed by
// where it is configured ("header:authorization=…", "env:GITHUB_TOKEN=…", "arg:…", "url:…"),
// sorted: the headers and environment variables whose names say they hold a credential, secret
// arguments (by their flag) and the URL's password and credential query parameters. Two sessions
// with equal Credentials authenticate as the same principal; an empty result means the credential
// is not in the configuration (OAuth held by the client, or none at all). The values are secrets:
// hash them (internal/fleet does, with an HMAC) and never print or store them.
func (s Server) Credentials() []string {
	var out []string
	for k, v := range s.Headers {
		if credentialName(k) && strings.TrimSpace(v) != "" {
			out = append(out, "header:"+strings.ToLower(k)+"="+strings.TrimSpace(v))
		}
	}
	for k, v := range s.Env {
		if credentialName(k) && v != "" {
			out = append(out, "env:"+k+"="+v)
		}
	}
	for i, a := range s.Args {
		if k, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(k, "-") && v != "" && secretArg(a) {
			out = append(out, "arg:"+k+"="+v)
		}
		if i > 0 && secretFlag(s.Args[i-1]) {
			out = append(out, "arg:"+s.Args[i-1]+"="+a)
		}
	}
	if u, err := url.Parse(s.URL); err == nil {
		if u.User != nil {
			out = append(out, "url:user="+u.User.String())
		}
		for k, vs := range u.Query() {
			if credentialName(k) {
				for _, v := range vs {
					out = append(out, "url:"+k+"="+v)
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// CredentialName reports whether a header, variable or query parameter name says it carries a
// credential: Authorization and Cookie, or a name with a word such as TOKEN, KEY, SECRET, PASSWORD,
// AUTH, CREDENTIAL or PAT (GITHUB_PERSONAL_ACCESS_TOKEN, X-Api-Key, api_key, access_token).
func CredentialName(name string) bool { return credentialName(name) }

func credentialName(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "authorization", "proxy-authorization", "cookie":
		return true
	}
	for _, w := range strings.FieldsFunc(n, func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
		switch w {
		case "token", "key", "apikey", "secret", "password", "passwd", "auth", "credential", "credentials", "pat", "session", "bearer":
			return true
		}
	}
	return false
}
