package fleet

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/mcpconfig"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// EnvMachine names this machine on the board, for the circuits of local (stdio) servers and of
// credentials the configuration does not show; the host name by default. Like the board's other
// variables it comes from the user only (Load refuses it from a project settings file).
const EnvMachine = "MCP_CIRCUIT_MACHINE"

// Identity is what the circuits of one local server are shared by on the board: what fails
// together, not the name this machine gives the server (docs/fleet.md).
//
// Its circuits live in the board's hash tag {<namespace>:<Group>}: the endpoint of a remote server
// or the launch line of a stdio one, so that every circuit a decision reads or writes is in one
// Redis Cluster slot. Inside it a circuit is kept by scope: Outage for outages, missing tools and
// admin gates, Credential for AUTH and RATE_LIMIT.
type Identity struct {
	// Server is the local (sanitized) server name, as in mcp__<server>__<tool>.
	Server string
	// Group is the hash tag's identity part: "e" + a hash of the normalized URL, "s" + a hash of
	// the launch line, or "n" + a hash of the name for a server the configuration does not have.
	Group string
	// Outage is the scope of outages: "ep" (the endpoint, for everyone) for a remote server,
	// "m=<machine hash>" for a stdio one, "u=<machine and user hash>" for an unknown one.
	Outage string
	// Credential is the scope of AUTH and RATE_LIMIT: "c=<HMAC of the credential>", or "u=…" (this
	// machine and user) when the configuration does not show the credential.
	Credential string
	// Kind says in words what Outage is shared by, for doctor and docs: "endpoint", "machine" or
	// "machine and user".
	Kind string
	// NoSecret is set when the configuration shows a credential but the board has no secret to
	// key its hash by (Keys.Secret): its AUTH and RATE_LIMIT circuits stay this machine's and user's.
	NoSecret bool `json:"no_secret,omitempty"`
}

// Local is this machine and user as the board sees them.
type Local struct {
	// Machine is $MCP_CIRCUIT_MACHINE, else the host name.
	Machine string
	// User is the Claude Code configuration directory ($CLAUDE_CONFIG_DIR, else $HOME): where a
	// client-held credential (OAuth) lives.
	User string
}

// LocalOf returns this machine and user from the environment.
func LocalOf(getenv func(string) string) Local {
	m := strings.TrimSpace(getenv(EnvMachine))
	if m == "" {
		m, _ = os.Hostname()
	}
	u := getenv("CLAUDE_CONFIG_DIR")
	if u == "" {
		u = getenv("HOME")
	}
	return Local{Machine: m, User: u}
}

func short(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// Keys are what the board's identity hashes are keyed by.
type Keys struct {
	// Namespace separates boards on one Redis.
	Namespace string
	// Secret is held by the board's users only (Config.Secret: shared.secret, else the board's
	// password): the credential HMAC, and the hashes of what else may be a secret (a stdio
	// server's environment, a URL's user information), are keyed by it, so that someone who can
	// list the board's keys (every key name holds its scope's hash) cannot test guesses against
	// them. "" when there is none: then no credential is shared across machines at all.
	Secret string
}

// mac is the keyed hash of parts under keys' secret, hex, for a key name: a label, then each part
// NUL-terminated.
func (k Keys) mac(label string, parts ...string) string {
	m := hmac.New(sha256.New, []byte("mcp-circuit-breaker identity v2\x00"+k.Secret+"\x00"+k.Namespace))
	m.Write([]byte(label))
	for _, p := range parts {
		m.Write([]byte{0})
		m.Write([]byte(p))
	}
	return hex.EncodeToString(m.Sum(nil)[:8])
}

// IdentityOf returns the identity of server (its local sanitized name) given its configuration
// (ok false: no local file defines it), keyed by keys, on this machine and user loc.
//
// A remote server is its normalized endpoint (NormalizeURL), and, when its URL holds user
// information, that too (keyed): https://alice@host and https://bob@host are kept apart. A stdio
// server is its launch line and its environment (keyed): a repository's server with the user's
// command but an environment of its own (another proxy, another account) is another program.
func IdentityOf(server string, cfg mcpconfig.Server, ok bool, keys Keys, loc Local) Identity {
	id := Identity{Server: server}
	user := "u=" + short("user", loc.Machine, loc.User)
	remote := ok && cfg.URL != "" && cfg.Transport != mcpconfig.TransportStdio
	switch {
	case remote:
		group := []string{"endpoint", NormalizeURL(cfg.URL)}
		if ui := urlUser(cfg.URL); ui != "" {
			if keys.Secret == "" {
				// Without a secret, a hash of it in every key name could be guessed: the
				// circuits stay this machine's and user's.
				id.Group, id.Outage, id.Kind = "u"+short("userinfo", server, loc.Machine, loc.User), user, "machine and user"
				break
			}
			group = append(group, "user:"+keys.mac("userinfo", ui))
		}
		id.Group, id.Outage, id.Kind = "e"+short(group...), "ep", "endpoint"
	case ok && cfg.Command != "":
		line := launchLine(cfg)
		if env := envLine(cfg); env != "" {
			line = append(line, "env:"+keys.mac("env", env))
		}
		id.Group, id.Outage, id.Kind = "s"+short(line...), "m="+short("machine", loc.Machine), "machine"
	default:
		id.Group, id.Outage, id.Kind = "n"+short("name", server), user, "machine and user"
	}
	id.Credential = user
	if ok && keys.Secret == "" {
		id.NoSecret = len(cfg.Credentials()) > 0
	}
	if ok && keys.Secret != "" {
		if creds := cfg.Credentials(); len(creds) > 0 {
			// An HMAC keyed by the board's secret: equal credentials give equal scopes, and
			// the board never holds a hash a guess could be checked against without it.
			id.Credential = "c=" + keys.mac("credential", append([]string{id.Group}, creds...)...)
		}
	}
	return id
}

// urlUser is the user information of raw ("user" or "user:password"), "" without any.
func urlUser(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.User == nil {
		return ""
	}
	return u.User.String()
}

// envLine is a stdio server's environment as one text, sorted: every variable, its value
// included (secrets too: the caller keys its hash).
func envLine(cfg mcpconfig.Server) string {
	if len(cfg.Env) == 0 {
		return ""
	}
	kv := make([]string, 0, len(cfg.Env))
	for k, v := range cfg.Env {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	return strings.Join(kv, "\x00")
}

// launchLine is what identifies a stdio server's program: its command and the arguments that are
// not secrets (a token in the arguments is the credential's business, not the program's).
func launchLine(cfg mcpconfig.Server) []string {
	secret := map[string]bool{}
	for _, c := range cfg.Credentials() {
		if v, ok := strings.CutPrefix(c, "arg:"); ok {
			k, val, _ := strings.Cut(v, "=")
			secret[k+"="+val] = true
			secret[val] = true
		}
	}
	out := []string{"launch", cfg.Command}
	for _, a := range cfg.Args {
		if !secret[a] {
			out = append(out, a)
		}
	}
	return out
}

// NormalizeURL is the endpoint of an MCP server URL as the board shares it: scheme and host in
// lower case, the scheme's default port dropped, the path cleaned without a trailing slash but
// never decoded (a%2Fb is not a/b), no user information or fragment, the query parameters kept as
// written and sorted, but for those that carry a credential (they are in the credential's
// identity instead: mcpconfig.Server.Credentials). Two users who write one endpoint differently
// get one circuit; two endpoints never get one.
func NormalizeURL(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Host == "" || u.Scheme == "" {
		return "raw:" + strings.TrimSpace(raw)
	}
	scheme := strings.ToLower(u.Scheme)
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if scheme == "http" && port == "80" || scheme == "https" && port == "443" {
		port = ""
	}
	if port != "" {
		host = joinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	p := ""
	if ep := u.EscapedPath(); ep != "" {
		// Cleaned as written: an escaped slash stays an escape, so it is never a separator.
		p = strings.TrimSuffix(path.Clean("/"+ep), "/")
	}
	var params []string
	for _, kv := range strings.Split(u.RawQuery, "&") {
		if kv == "" {
			continue
		}
		k, _, _ := strings.Cut(kv, "=")
		if name, err := url.QueryUnescape(k); err == nil && mcpconfig.CredentialName(name) {
			continue
		}
		params = append(params, kv)
	}
	sort.Strings(params)
	out := scheme + "://" + host + p
	if len(params) > 0 {
		out += "?" + strings.Join(params, "&")
	}
	if _, err := url.Parse(out); err != nil {
		return "raw:" + strings.TrimSpace(raw) // a host Go parses but cannot print back ("::")
	}
	return out
}

// ScopeFor is the scope of a circuit of failure type t: the credential's for AUTH and RATE_LIMIT,
// the outage's for everything else.
func (id Identity) ScopeFor(t ledger.FailureType) string {
	if t == ledger.Auth || t == ledger.RateLimit {
		return id.Credential
	}
	return id.Outage
}

// Scopes are the identity's scopes, the outage's first; one when both are the same.
func (id Identity) Scopes() []string {
	if id.Outage == id.Credential {
		return []string{id.Outage}
	}
	return []string{id.Outage, id.Credential}
}

// Describe says in words what the server's circuits are shared by, for doctor.
func (id Identity) Describe() string {
	out := "outages by " + map[string]string{"endpoint": "its endpoint (every user of the URL)", "machine": "this machine",
		"machine and user": "this machine and user (no MCP configuration defines it)"}[id.Kind]
	switch {
	case id.Credential == id.Outage:
	case strings.HasPrefix(id.Credential, "c="):
		out += ", AUTH and RATE_LIMIT by its configured credential"
	case id.NoSecret:
		out += ", AUTH and RATE_LIMIT by this machine and user (the board has no secret to key the credential's hash by: set shared.secret or a password on the board)"
	default:
		out += ", AUTH and RATE_LIMIT by this machine and user (the credential is not in the configuration)"
	}
	return out
}

// ScopeKind says in a word or three what a scope shares a circuit by: "endpoint", "machine",
// "credential" or "machine and user".
func ScopeKind(scope string) string {
	switch {
	case scope == "ep":
		return "endpoint"
	case strings.HasPrefix(scope, "m="):
		return "machine"
	case strings.HasPrefix(scope, "c="):
		return "credential"
	}
	return "machine and user"
}

// joinHostPort is net.JoinHostPort (this package links no net, for the lean hook): an IPv6
// literal goes in brackets.
func joinHostPort(host, port string) string {
	if strings.IndexByte(host, ':') >= 0 {
		return "[" + host + "]:" + port
	}
	return host + ":" + port
}
