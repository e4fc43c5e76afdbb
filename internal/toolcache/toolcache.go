// Package toolcache owns the cache of tools/list results that probes write (docs/ledger.md, tools.json)
// and fallbacks read to find similar tools on other servers. It is apart from the probe so that the
// hook, which reads it, does not link the MCP SDK.
package toolcache

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/filelock"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/safefile"
)

// Tool is one entry of a server's tools/list.
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// ReadOnly is the server's readOnlyHint annotation.
	ReadOnly bool `json:"read_only,omitempty"`
}

// LockWait bounds the wait for the tools cache lock: a probe saving its result holds it for one
// read and one atomic write.
const LockWait = 5 * time.Second

// ToolsFile is the name of the tools/list cache inside the state directory (docs/ledger.md).
const ToolsFile = "tools.json"

// maxDescription bounds each cached tool description, so that one verbose server cannot bloat
// a file that fallbacks read on every trip.
const maxDescription = 1024

// ServerTools is one server's entry in the tools cache.
type ServerTools struct {
	Tools    []Tool    `json:"tools"`
	ProbedAt time.Time `json:"probed_at"`
}

// toolsDoc is the file format: versioned so that a later change can be told apart.
type toolsDoc struct {
	Version int                    `json:"version"`
	Servers map[string]ServerTools `json:"servers"`
}

// LoadTools reads stateDir/tools.json. A missing file is an empty map, not an error.
func LoadTools(stateDir string) (map[string]ServerTools, error) {
	path := filepath.Join(stateDir, ToolsFile)
	if err := safefile.CheckStateDir(stateDir); err != nil {
		return nil, fmt.Errorf("read tools cache: %w", err)
	}
	data, err := safefile.ReadRegular(path, safefile.MaxStateBytes)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]ServerTools{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read tools cache: %w", err)
	}
	var doc toolsDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("parse tools cache %s: %w", path, err)
	}
	if doc.Servers == nil {
		doc.Servers = map[string]ServerTools{}
	}
	return doc.Servers, nil
}

// SaveTools records server's tools as probed at now in stateDir/tools.json, keeping the other
// servers' entries. The file is replaced atomically (temporary file in the same directory,
// fsync, rename, directory fsync) with mode 0600, and read-modify-write cycles of concurrent
// probes are serialized by a lock file (tools.json.lock), so no entry is lost. stateDir is
// created with mode 0700 if needed. A corrupt existing file is replaced rather than kept: the
// cache is rebuilt by probes and holds nothing else.
func SaveTools(stateDir, server string, tools []Tool, now time.Time) error {
	if _, err := safefile.MakeStateDir(stateDir); err != nil {
		return err
	}
	// The ledger's lock discipline (internal/filelock): a bounded wait, a lock file never
	// followed through a link.
	unlock, err := filelock.Exclusive(filepath.Join(stateDir, ToolsFile+".lock"), filelock.Options{Wait: LockWait})
	if err != nil {
		return fmt.Errorf("lock tools cache: %w", err)
	}
	defer unlock()

	servers, err := LoadTools(stateDir)
	if errors.Is(err, safefile.ErrUnsafeFile) {
		return fmt.Errorf("write tools cache: %w", err)
	}
	if err != nil {
		servers = map[string]ServerTools{}
	}
	kept := make([]Tool, len(tools))
	for i, t := range tools {
		t.Description = clip(t.Description, maxDescription)
		kept[i] = t
	}
	servers[server] = ServerTools{Tools: kept, ProbedAt: now.UTC()}
	data, err := json.MarshalIndent(toolsDoc{Version: 1, Servers: servers}, "", "  ")
	if err != nil {
		return fmt.Errorf("encode tools cache: %w", err)
	}
	if err := safefile.WriteFileAtomic(filepath.Join(stateDir, ToolsFile), append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("write tools cache: %w", err)
	}
	return nil
}

// clip cuts s to at most n bytes without splitting a UTF-8 sequence, marking the cut with "…".
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && s[i]&0xC0 == 0x80 {
		i--
	}
	return s[:i] + "…"
}
