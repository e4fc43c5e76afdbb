package fleet

import (
	"context"
	"encoding/json"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/boardconn"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/mcpconfig"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// Client is how a binary reaches the board: its reader of the user's configuration file and its
// connection to a Redis. The full CLI's reads YAML and dials through go-redis; the lean hook's
// links neither (internal/gate, docs/performance.md).
type Client struct {
	// Unmarshal reads the user's configuration file into a *UserFile (Load).
	Unmarshal func(data []byte, v any) error
	// Dial connects to a Redis.
	Dial boardconn.Dial
	// Config, when not nil, is the configuration Load already returned in this run, so that it is
	// not loaded twice.
	Config *Config
}

// BindProject connects project p to the board, when the user configured one, for a call of tool
// (empty: no keys, as at SessionStart); every store p returns afterwards decides through it
// (p.Shared). The circuits are shared by the identity of tool's server (what fails together: its
// endpoint, credential or machine), taken from the local MCP configuration. It returns nil
// without a configured board. A configuration that cannot be used (set by a project file, not a
// Redis URL) is an error: the caller says so and goes on alone.
func (cl Client) BindProject(ctx context.Context, p *project.Project, tool string, now time.Time, sessionID string) (*Binding, error) {
	var keys []string
	if tool != "" {
		keys = ledger.Key(tool).Circuits()
	}
	return cl.BindProjectKeys(ctx, p, keys, now, sessionID)
}

// BindProjectKeys is BindProject for circuit keys of one server; when the first, the decision's
// target, is the server key, every circuit the board holds for the server's identity is bound too
// (a healthy probe or a reset of the server closes them all, also those this project never saw).
// A call of a tool, whose keys are the tool's and then its server's, binds those two alone: the
// listing scans the board's whole namespace, which grows with every circuit of every team, and
// the hook must not pay for that on each call within its bound for the board.
func (cl Client) BindProjectKeys(ctx context.Context, p *project.Project, keys []string, now time.Time, sessionID string) (*Binding, error) {
	b, cfg, err := cl.openFor(p)
	if err != nil || b == nil {
		return nil, err
	}
	var id Identity
	if len(keys) > 0 {
		id = ProjectIdentity(p, ledger.Key(keys[0]).Server(), cfg.Keys())
	}
	bd := b.Bind(ctx, id, keys, now, sessionID, LocalOf(p.Getenv))
	p.Shared = bd
	if len(keys) > 0 && ledger.Key(keys[0]).IsServer() {
		if shared, err := b.ListFor(ctx, []Identity{id}, now); err == nil {
			for _, c := range shared {
				bd.Widen([]string{c.Key})
			}
		}
	}
	return bd, nil
}

// idsCache names the cache of the identities of a project's servers (project.CachedDerived).
const idsCache = "fleet-ids"

// idsKey is what the cached identities also depend on: the namespace, the secret (by a hash: the
// cache is a file) and the machine.
func idsKey(keys Keys, loc Local) string {
	b, _ := json.Marshal(struct {
		Namespace string `json:"namespace"`
		Secret    string `json:"secret,omitempty"`
		Local     Local  `json:"local"`
	}{keys.Namespace, short("secret", keys.Secret), loc})
	return string(b)
}

// ProjectIdentity is the identity the board shares the circuits of server (a sanitized name) by,
// from p's local MCP configuration. It is on the hook's hot path whenever a board is configured,
// so the identities are cached (project.CachedDerived) while the configuration is unchanged.
func ProjectIdentity(p *project.Project, server string, keys Keys) Identity {
	loc := LocalOf(p.Getenv)
	var ids map[string]Identity
	if p.CachedDerived(idsCache, idsKey(keys, loc), &ids) {
		if id, ok := ids[server]; ok {
			return id
		}
		return IdentityOf(server, mcpconfig.Server{}, false, keys, loc)
	}
	cfg, ok := p.ServerConfig(string(ledger.ServerKey(server)))
	saveIdentities(p, keys, loc)
	return IdentityOf(server, cfg, ok, keys, loc)
}

// saveIdentities caches the identities of every server of the discovery this process made.
func saveIdentities(p *project.Project, keys Keys, loc Local) {
	servers, _ := p.Discover(nil)
	ids := map[string]Identity{}
	for _, s := range servers {
		if _, dup := ids[s.Sanitized]; !dup {
			ids[s.Sanitized] = IdentityOf(s.Sanitized, s, true, keys, loc)
		}
	}
	p.SaveDerived(idsCache, idsKey(keys, loc), ids)
}

// ProjectIdentities are the identities of every server of p's local MCP configuration, and of the
// servers of extra keys (circuits this project knows of) that it lacks.
func ProjectIdentities(p *project.Project, keys Keys, extra []string) []Identity {
	servers, _ := p.Discover(nil)
	seen := map[string]bool{}
	var out []Identity
	for _, s := range servers {
		if !seen[s.Sanitized] {
			seen[s.Sanitized] = true
			out = append(out, IdentityOf(s.Sanitized, s, true, keys, LocalOf(p.Getenv)))
		}
	}
	for _, k := range extra {
		if s := ledger.Key(k).Server(); s != "" && !seen[s] {
			seen[s] = true
			out = append(out, ProjectIdentity(p, s, keys))
		}
	}
	return out
}

// ProjectCircuits returns the circuits the board holds for p's servers (its MCP configuration's,
// and those of extra keys), named with p's keys; nil without a board.
func (cl Client) ProjectCircuits(ctx context.Context, p *project.Project, extra []string, now time.Time) ([]*states.Circuit, error) {
	b, cfg, err := cl.openFor(p)
	if err != nil || b == nil {
		return nil, err
	}
	defer b.Close()
	return b.ListFor(ctx, ProjectIdentities(p, cfg.Keys(), extra), now)
}

// openFor opens the board the user configured for project p; nil, nil, nil without one.
func (cl Client) openFor(p *project.Project) (*Board, *Config, error) {
	cfg := cl.Config
	if cfg == nil {
		var err error
		if cfg, err = Load(p.Getenv, p.Dir, cl.Unmarshal); err != nil || cfg == nil {
			return nil, nil, err
		}
	}
	b, err := Open(*cfg, cl.Dial)
	if err != nil {
		return nil, nil, err
	}
	return b, cfg, nil
}
