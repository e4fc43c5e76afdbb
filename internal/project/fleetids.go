package project

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/fleet"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/safefile"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// idDeps is what one discovery of the MCP configuration depended on.
type idDeps struct {
	mu    sync.Mutex
	files []idFile
	env   map[string]string
}

// idFile is one file a discovery read, as it was just before: Absent, or its identity.
type idFile struct {
	Path   string        `json:"path"`
	Absent bool          `json:"absent,omitempty"`
	ID     ledger.FileID `json:"id"`
}

// stampFile stats, never opens: a FIFO planted as a configuration file must not block the hook.
func stampFile(path string) idFile {
	fi, err := os.Stat(path)
	if err != nil {
		return idFile{Path: path, Absent: errors.Is(err, os.ErrNotExist)}
	}
	return idFile{Path: path, ID: ledger.FileIDOf(fi)}
}

func (d *idDeps) read(path string) {
	st := stampFile(path)
	d.mu.Lock()
	d.files = append(d.files, st)
	d.mu.Unlock()
}

// envHash keeps a variable's value out of the cache.
func envHash(v string) string {
	if v == "" {
		return ""
	}
	sum := sha256.Sum256([]byte("mcp-circuit-breaker env\x00" + v))
	return hex.EncodeToString(sum[:12])
}

func (d *idDeps) lookedUp(name, value string) {
	d.mu.Lock()
	if d.env == nil {
		d.env = map[string]string{}
	}
	d.env[name] = envHash(value)
	d.mu.Unlock()
}

// idCache is the cached identities of one project's servers.
type idCache struct {
	V         int                       `json:"v"`
	Dir       string                    `json:"dir"`
	Namespace string                    `json:"namespace"`
	Local     fleet.Local               `json:"local"`
	Files     []idFile                  `json:"files"`
	Env       map[string]string         `json:"env"`
	IDs       map[string]fleet.Identity `json:"ids"`
}

const idCacheVersion = 1

// idCachePath is the cache file of this project: in the user's cache directory, never in the
// project (a cloned repository could plant one there).
func (p *Project) idCachePath() string {
	base := p.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home := p.Getenv("HOME")
		if home == "" {
			return ""
		}
		base = filepath.Join(home, ".cache")
	}
	sum := sha256.Sum256([]byte(p.Dir))
	return filepath.Join(base, "mcp-circuit-breaker", "fleet-ids", hex.EncodeToString(sum[:12])+".json")
}

// cachedIDs returns the cached identities when they still hold.
func (p *Project) cachedIDs(ns string, loc fleet.Local) (map[string]fleet.Identity, bool) {
	path := p.idCachePath()
	if path == "" {
		return nil, false
	}
	data, err := safefile.ReadBounded(path, 1<<20)
	if err != nil {
		return nil, false
	}
	var c idCache
	if json.Unmarshal(data, &c) != nil || c.V != idCacheVersion || c.Dir != p.Dir || c.Namespace != ns || c.Local != loc {
		return nil, false
	}
	for _, f := range c.Files {
		if stampFile(f.Path) != f {
			return nil, false
		}
	}
	for name, h := range c.Env {
		if envHash(p.Getenv(name)) != h {
			return nil, false
		}
	}
	return c.IDs, true
}

// saveIDs caches the identities of every server of the discovery this process made.
func (p *Project) saveIDs(ns string, loc fleet.Local) {
	path := p.idCachePath()
	servers, _ := p.Discover(nil)
	if path == "" {
		return
	}
	d := &p.local.deps
	d.mu.Lock()
	c := idCache{V: idCacheVersion, Dir: p.Dir, Namespace: ns, Local: loc, Files: d.files, Env: d.env, IDs: map[string]fleet.Identity{}}
	d.mu.Unlock()
	for _, s := range servers {
		if _, dup := c.IDs[s.Sanitized]; !dup {
			c.IDs[s.Sanitized] = fleet.IdentityOf(s.Sanitized, s, true, ns, loc)
		}
	}
	data, err := json.Marshal(c)
	if err != nil || os.MkdirAll(filepath.Dir(path), 0o700) != nil {
		return
	}
	safefile.WriteFileAtomic(path, data, 0o600) // a cache: a failed write only costs the next call a discovery
}
