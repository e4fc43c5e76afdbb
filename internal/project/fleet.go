package project

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/fleet"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/mcpconfig"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/safefile"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// awayMarker is the file in the state directory whose presence means "the shared board was found
// away and that was said": the next call that finds it away stays quiet, the first that finds it
// back removes it. It holds the time and reason, for doctor and status.
const awayMarker = "fleet_away"

// BindFleet connects the project to the fleet-shared board, when the user configured one, for a
// call of tool (empty: no keys, as at SessionStart); every store the project returns afterwards
// decides through it. The circuits are shared by the identity of tool's server (what fails
// together: its endpoint, credential or machine), taken from the local MCP configuration. It
// returns nil without a configured board. A configuration that cannot be used (set by a project
// file, not a Redis URL) is an error: the caller says so and goes on alone.
func (p *Project) BindFleet(ctx context.Context, tool string, now time.Time, sessionID string) (*fleet.Binding, error) {
	var keys []string
	if tool != "" {
		keys = ledger.Key(tool).Circuits()
	}
	return p.BindFleetKeys(ctx, keys, now, sessionID)
}

// BindFleetKeys is BindFleet for circuit keys of one server; when one of them is the server key,
// every circuit the board holds for the server's identity is bound too (a healthy probe or a reset
// of the server closes them all, also those this project never saw).
func (p *Project) BindFleetKeys(ctx context.Context, keys []string, now time.Time, sessionID string) (*fleet.Binding, error) {
	cfg, err := fleet.Load(p.Getenv, p.Dir)
	if err != nil || cfg == nil {
		return nil, err
	}
	b, err := fleet.Open(*cfg)
	if err != nil {
		return nil, err
	}
	var id fleet.Identity
	if len(keys) > 0 {
		id = p.FleetIdentity(ledger.Key(keys[0]).Server(), cfg.Namespace)
	}
	p.Fleet = b.Bind(ctx, id, keys, now, sessionID, fleet.LocalOf(p.Getenv))
	for _, k := range keys {
		if ledger.Key(k).IsServer() {
			if shared, err := b.ListFor(ctx, []fleet.Identity{id}, now); err == nil {
				for _, c := range shared {
					p.Fleet.Widen([]string{c.Key})
				}
			}
			break
		}
	}
	return p.Fleet, nil
}

// FleetIdentity is the identity the board shares the circuits of server (a sanitized name) by,
// from the local MCP configuration. It is on the hook's hot path whenever a board is configured,
// and discovering the configuration parses ~/.claude.json, which Claude Code grows to megabytes
// (a 5 MB one takes most of a second): the identities are cached in the user's cache directory,
// valid while every file the discovery read is unchanged (device, inode, size, mtime, ctime) and
// every variable it expanded has the same value (kept as a hash).
func (p *Project) FleetIdentity(server, namespace string) fleet.Identity {
	loc := fleet.LocalOf(p.Getenv)
	if ids, ok := p.cachedIDs(namespace, loc); ok {
		if id, ok := ids[server]; ok {
			return id
		}
		return fleet.IdentityOf(server, mcpconfig.Server{}, false, namespace, loc)
	}
	cfg, ok := p.ServerConfig(string(ledger.ServerKey(server)))
	p.saveIDs(namespace, loc)
	return fleet.IdentityOf(server, cfg, ok, namespace, loc)
}

// FleetIdentities are the identities of every server of the local MCP configuration, and of the
// servers of extra keys (circuits this project knows of) that it lacks.
func (p *Project) FleetIdentities(namespace string, extra []string) []fleet.Identity {
	servers, _ := p.Discover(nil)
	seen := map[string]bool{}
	var out []fleet.Identity
	for _, s := range servers {
		if !seen[s.Sanitized] {
			seen[s.Sanitized] = true
			out = append(out, fleet.IdentityOf(s.Sanitized, s, true, namespace, fleet.LocalOf(p.Getenv)))
		}
	}
	for _, k := range extra {
		if s := ledger.Key(k).Server(); s != "" && !seen[s] {
			seen[s] = true
			out = append(out, p.FleetIdentity(s, namespace))
		}
	}
	return out
}

// FleetCircuits returns the circuits the board holds for this project's servers (its MCP
// configuration's, and those of extra keys), named with this project's keys; nil without a board.
func (p *Project) FleetCircuits(ctx context.Context, extra []string, now time.Time) ([]*states.Circuit, error) {
	cfg, err := fleet.Load(p.Getenv, p.Dir)
	if err != nil || cfg == nil {
		return nil, err
	}
	b, err := fleet.Open(*cfg)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	return b.ListFor(ctx, p.FleetIdentities(cfg.Namespace, extra), now)
}

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
