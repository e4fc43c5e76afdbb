package fleet

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/url"
	"os"
	"path"
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

// IdentityOf returns the identity of server (its local sanitized name) given its configuration
// (ok false: no local file defines it) in namespace ns.
func IdentityOf(server string, cfg mcpconfig.Server, ok bool, ns string, loc Local) Identity {
	id := Identity{Server: server}
	user := "u=" + short("user", loc.Machine, loc.User)
	remote := ok && cfg.URL != "" && cfg.Transport != mcpconfig.TransportStdio
	switch {
	case remote:
		id.Group, id.Outage, id.Kind = "e"+short("endpoint", NormalizeURL(cfg.URL)), "ep", "endpoint"
	case ok && cfg.Command != "":
		id.Group, id.Outage, id.Kind = "s"+short(launchLine(cfg)...), "m="+short("machine", loc.Machine), "machine"
	default:
		id.Group, id.Outage, id.Kind = "n"+short("name", server), user, "machine and user"
	}
	id.Credential = user
	if ok {
		if creds := cfg.Credentials(); len(creds) > 0 {
			// An HMAC keyed by the namespace: equal credentials give equal scopes in one namespace,
			// and the board never holds a plain hash a guess could be checked against offline.
			mac := hmac.New(sha256.New, []byte("mcp-circuit-breaker credential v1\x00"+ns))
			mac.Write([]byte(id.Group))
			for _, c := range creds {
				mac.Write([]byte{0})
				mac.Write([]byte(c))
			}
			id.Credential = "c=" + hex.EncodeToString(mac.Sum(nil)[:8])
		}
	}
	return id
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
// lower case, the scheme's default port dropped, the path cleaned without a trailing slash, no
// user information, fragment or credential query parameter, the other parameters sorted. Two
// users who write one endpoint differently get one circuit.
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
		host = net.JoinHostPort(host, port)
	} else if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	p := ""
	if u.Path != "" {
		p = strings.TrimSuffix(path.Clean("/"+u.Path), "/")
	}
	q := u.Query()
	for k := range q {
		if mcpconfig.CredentialName(k) {
			q.Del(k)
		}
	}
	out := scheme + "://" + host + p
	if enc := q.Encode(); enc != "" {
		out += "?" + enc
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
