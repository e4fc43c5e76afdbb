package project

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/safefile"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// awayMarker is the file in the state directory whose presence means "the shared board was found
// away and that was said": the next call that finds it away stays quiet, the first that finds it
// back removes it. It holds the time and reason, for doctor and status.
const awayMarker = "fleet_away"

// FleetAway records that the shared board was found away (err) and reports whether this is the
// first call to find it so since it was last reachable: only that one says so.
func (p *Project) FleetAway(err error, now time.Time) bool {
	if safefile.CheckStateDir(p.StateDir()) != nil {
		return true // a linked state directory is written through by nothing of ours: just say it
	}
	path := filepath.Join(p.StateDir(), awayMarker)
	f, ferr := safefile.OpenRegular(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if ferr != nil {
		return errors.Is(ferr, os.ErrNotExist) // no state directory yet: nothing remembers it, so say it
	}
	fmt.Fprintf(f, "%s %s\n", now.Format(time.RFC3339), Clip(err.Error(), 300))
	f.Close()
	return true
}

// FleetBack clears the away record once the board answers again; it reports whether there was one.
func (p *Project) FleetBack() bool {
	if safefile.CheckStateDir(p.StateDir()) != nil {
		return false
	}
	return os.Remove(filepath.Join(p.StateDir(), awayMarker)) == nil
}

// FleetAwaySince returns the recorded away line ("" when the board was not found away).
func (p *Project) FleetAwaySince() string {
	data, err := p.ReadStateFile(filepath.Join(p.StateDir(), awayMarker), 4096)
	if err != nil {
		return ""
	}
	return Clip(string(data), 400)
}

// SayOnce reports whether text, a notice kept in the state file name, differs from the one said
// last, and remembers it: a notice that holds while nothing changes is said once, not on every
// call. Without a state directory nothing remembers it, so it is said (and nothing is created).
func (p *Project) SayOnce(name, text string) bool {
	if safefile.CheckStateDir(p.StateDir()) != nil {
		return true
	}
	path := filepath.Join(p.StateDir(), name)
	if old, err := p.ReadStateFile(path, 64<<10); err == nil && string(old) == text {
		return false
	}
	f, err := safefile.OpenRegular(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return true
	}
	f.WriteString(text)
	f.Close()
	return true
}

// BoardURLVar is the variable that names the fleet-shared board (internal/fleet reads it, with
// its namespace and timeout variables beside it).
const BoardURLVar = "MCP_CIRCUIT_SHARED"

// BoardConfigPath is the user-scope configuration file that can name the board:
// $XDG_CONFIG_HOME/mcp-circuit-breaker/config.yaml, else ~/.config/mcp-circuit-breaker/config.yaml;
// "" without HOME and XDG_CONFIG_HOME.
func BoardConfigPath(getenv func(string) string) string {
	base := userDir(getenv, "XDG_CONFIG_HOME", ".config")
	if base == "" {
		return ""
	}
	return filepath.Join(base, "mcp-circuit-breaker", "config.yaml")
}

// UserCacheDir is our directory in the user's cache: $XDG_CACHE_HOME/mcp-circuit-breaker, else
// ~/.cache/mcp-circuit-breaker; "" without either. What is kept there was computed by us from
// the user's files, never taken from a project (which a cloned repository carries).
func UserCacheDir(getenv func(string) string) string {
	base := userDir(getenv, "XDG_CACHE_HOME", ".cache")
	if base == "" {
		return ""
	}
	return filepath.Join(base, "mcp-circuit-breaker")
}

// ProvenanceKeyPath is the user's provenance key (docs/security.md, "Provenance"):
// ~/.local/state/mcp-circuit-breaker/provenance.key; "" without an absolute HOME. It is under
// HOME alone, not $XDG_STATE_HOME: HOME is one of the variables a project's settings cannot set
// (internal/userenv), and a key a repository could point us at would let it sign its own entries.
func ProvenanceKeyPath(getenv func(string) string) string {
	home := getenv("HOME")
	if home == "" || !filepath.IsAbs(home) {
		return ""
	}
	return filepath.Join(home, ".local", "state", "mcp-circuit-breaker", ledger.ProvenanceKeyName)
}

// userDir is the XDG base directory xdg names, else dir under HOME; "" without either.
func userDir(getenv func(string) string, xdg, dir string) string {
	if base := getenv(xdg); base != "" {
		return base
	}
	if home := getenv("HOME"); home != "" {
		return filepath.Join(home, dir)
	}
	return ""
}

// BoardConfigured reports whether the user may have configured a board: the variable is set, or
// the configuration file holds a "url". It parses no YAML, for the lean hook, which links no board
// and hands such a run to the full CLI (internal/fleet's Load decides what is configured).
func BoardConfigured(getenv func(string) string) bool {
	if getenv(BoardURLVar) != "" {
		return true
	}
	path := BoardConfigPath(getenv)
	if path == "" {
		return false
	}
	data, err := safefile.ReadBounded(path, 64<<10)
	if errors.Is(err, os.ErrNotExist) {
		return false
	}
	return err != nil || bytes.Contains(data, []byte("url"))
}
