package project

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"

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

// derivedCache is a value derived from the local MCP configuration (say, the fleet identities of a
// project's servers) with what its discovery read.
type derivedCache struct {
	V     int               `json:"v"`
	Dir   string            `json:"dir"`
	Key   string            `json:"key"`
	Files []idFile          `json:"files"`
	Env   map[string]string `json:"env"`
	Data  json.RawMessage   `json:"data"`
}

const derivedCacheVersion = 2

// derivedPath is the cache file of name for this project: in the user's cache directory, never in
// the project (a cloned repository could plant one there), nor in its work tree (OutsideWorkTree).
func (p *Project) derivedPath(name string) string {
	base := UserCacheDir(p.Getenv)
	if base == "" || OutsideWorkTree(base, p.Dir) != nil {
		return ""
	}
	sum := sha256.Sum256([]byte(p.Dir))
	return filepath.Join(base, name, hex.EncodeToString(sum[:12])+".json")
}

// CachedDerived fills v with what SaveDerived kept under name for key and reports whether it still
// holds: every file the discovery read is unchanged (device, inode, size, mtime, ctime) and every
// variable it expanded has the same value (kept as a hash). Discovering the configuration parses
// ~/.claude.json, which Claude Code grows to megabytes (a 5 MB one takes most of a second), so a
// value needed on the hook's hot path is derived once per change.
func (p *Project) CachedDerived(name, key string, v any) bool {
	path := p.derivedPath(name)
	if path == "" {
		return false
	}
	data, err := safefile.ReadBounded(path, 1<<20)
	if err != nil {
		return false
	}
	var c derivedCache
	if json.Unmarshal(data, &c) != nil || c.V != derivedCacheVersion || c.Dir != p.Dir || c.Key != key {
		return false
	}
	for _, f := range c.Files {
		if stampFile(f.Path) != f {
			return false
		}
	}
	for name, h := range c.Env {
		if envHash(p.Getenv(name)) != h {
			return false
		}
	}
	return json.Unmarshal(c.Data, v) == nil
}

// SaveDerived keeps v, derived from this process's discovery (Discover), under name for key. A
// cache: a failed write only costs the next call a discovery.
func (p *Project) SaveDerived(name, key string, v any) {
	path := p.derivedPath(name)
	if path == "" {
		return
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return
	}
	d := &p.local.deps
	d.mu.Lock()
	c := derivedCache{V: derivedCacheVersion, Dir: p.Dir, Key: key, Files: d.files, Env: d.env, Data: raw}
	d.mu.Unlock()
	data, err := json.Marshal(c)
	if err != nil || os.MkdirAll(filepath.Dir(path), 0o700) != nil {
		return
	}
	safefile.WriteFileAtomic(path, data, 0o600)
}
