package project

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/fleet"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/safefile"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// awayMarker is the file in the state directory whose presence means "the shared board was found
// away and that was said": the next call that finds it away stays quiet, the first that finds it
// back removes it. It holds the time and reason, for doctor and status.
const awayMarker = "fleet_away"

// BindFleet connects the project to the fleet-shared board, when the user configured one, for a
// call of tool (empty: no keys, as at SessionStart); every store the project returns afterwards
// decides through it. It returns nil without a configured board. A configuration that cannot be
// used (set by a project file, not a Redis URL) is an error: the caller says so and goes on alone.
func (p *Project) BindFleet(ctx context.Context, tool string, now time.Time, sessionID string) (*fleet.Binding, error) {
	cfg, err := fleet.Load(p.Getenv, p.Dir)
	if err != nil || cfg == nil {
		return nil, err
	}
	b, err := fleet.Open(*cfg)
	if err != nil {
		return nil, err
	}
	var keys []string
	if tool != "" {
		keys = ledger.Key(tool).Circuits()
	}
	p.Fleet = b.Bind(ctx, keys, now, sessionID)
	return p.Fleet, nil
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
