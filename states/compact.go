package states

import (
	"bytes"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// CompactResult says what Compact did.
type CompactResult struct {
	Before, After int
	Backup        string
}

// Compact rewrites the history older than cutoff into a summary: an entry older than cutoff is
// dropped when its circuit went idle (CLOSED, count 0) after it and no later than cutoff, so every
// circuit that is open or counting at the cutoff keeps its whole record since it left idle, and the
// compacted ledger replays to the same circuits. What was dropped is summarised in comments at the
// top (per key: entries, trips, blocked calls), and the old file is kept as a backup.
func (s *Store) Compact(cutoff, now time.Time) (CompactResult, error) {
	var res CompactResult
	unlock, err := s.Ledger.Lock()
	if err != nil {
		return res, err
	}
	defer unlock()
	entries, err := s.Ledger.ReadAll()
	if err != nil {
		return res, err
	}
	res.Before = len(entries)
	// lastIdle[key] is the index of the last entry, at or before cutoff, after which key was idle.
	lastIdle := map[string]int{}
	var b Board
	for i, e := range entries {
		if entryTime(e).After(cutoff) {
			break
		}
		b.Apply(e)
		if forgettable(b.Get(e.Tool), cutoff) {
			lastIdle[e.Tool] = i
		}
	}
	type sum struct{ entries, trips, blocked int }
	dropped := map[string]*sum{}
	var out bytes.Buffer
	var kept []ledger.Entry
	var replay Board
	for i, e := range entries {
		prev := ledger.Closed
		if c := replay.Get(e.Tool); c != nil {
			prev = c.State
		}
		replay.Apply(e)
		if li, ok := lastIdle[e.Tool]; ok && i <= li {
			d := dropped[e.Tool]
			if d == nil {
				d = &sum{}
				dropped[e.Tool] = d
			}
			d.entries++
			// Trips are counted as Apply counts them: a failed probe opens a circuit too.
			if Opens(prev, e) {
				d.trips++
			}
			if e.Event == ledger.EventBlocked || e.Event == ledger.EventWouldBlock {
				d.blocked++
			}
			continue
		}
		kept = append(kept, e)
	}
	res.After = len(kept)
	fmt.Fprintf(&out, "# compacted at %s: %d entries up to %s summarised here, %d kept\n",
		now.UTC().Format(ledger.TimeFormat), res.Before-res.After, cutoff.UTC().Format(ledger.TimeFormat), res.After)
	keys := make([]string, 0, len(dropped))
	for k := range dropped {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		d := dropped[k]
		fmt.Fprintf(&out, "# %q: %d entries, %d trips, %d calls blocked\n", k, d.entries, d.trips, d.blocked)
	}
	for _, e := range kept {
		out.Write(ledger.Encode(e))
	}
	if res.Before == res.After {
		return res, nil
	}
	res.Backup, err = s.Ledger.Replace(out.Bytes(), now)
	if err != nil {
		return res, err
	}
	os.Remove(s.snapshotPath())
	return res, nil
}

// entryTime places an entry in time: its "at", or for hand-written entries without one, its reset
// or trip time; an entry with no time at all counts as old.
func entryTime(e ledger.Entry) time.Time {
	for _, t := range []time.Time{e.At, e.ResetAt, e.TrippedAt} {
		if !t.IsZero() {
			return t
		}
	}
	return time.Time{}
}

// MaxRepeatAge is how long the loop guard's memory of a call can matter: no cooldown is longer than
// 24 h (policy's limit), so a call that last failed longer ago can no longer be held back.
const MaxRepeatAge = 24 * time.Hour

// forgettable reports whether compaction may drop c's history up to here: it is idle, or at rest
// with only a memory of its calls too old to matter at the cutoff (the loop guard's, a streak of
// call errors, a failure held). That its tool worked is forgotten with the history that said so:
// its next failure on weak evidence counts, as a new tool's does.
func forgettable(c *Circuit, cutoff time.Time) bool {
	if c.Idle() || c.OnlyWorked() {
		return true
	}
	if !c.AtRest() {
		return false
	}
	for _, at := range []time.Time{c.Streak.At, c.Held.At} {
		if !at.IsZero() && at.After(cutoff.Add(-CallMemoryAge)) {
			return false
		}
	}
	for _, r := range c.Repeats {
		if r.At.After(cutoff.Add(-MaxRepeatAge)) {
			return false
		}
	}
	return true
}
