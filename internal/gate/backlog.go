package gate

// Failures of agents that run no hook after a failed call (Codex CLI) are read by the next hook from
// what the agent keeps (its session transcript), from where the last read stopped. The position is
// kept per transcript in a state file that changes only under the ledger's lock, together with the
// failures it covers, so each failure is recorded once however many hooks run at the same time.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/failure"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/redact"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/safefile"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/term"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// Backlog is a Wire whose agent reports failed calls in no event but records them where a later
// hook can read them. Before the gate decides, and on every event of such an agent that names where
// (Event.TranscriptPath), it asks for the failures recorded after cursor.
type Backlog interface {
	// Backlog reads what ev's agent recorded after cursor ("" the first time; a value Backlog
	// returned before) and returns the failures found, which are never the gate's own denies.
	Backlog(ev Event, cursor string, servers Servers) (BacklogScan, error)
}

// BacklogScan is what one Backlog read found.
type BacklogScan struct {
	// Failures are Failure events with Key, Server, Error and ToolUseID set, and ArgsHash and
	// Args when the record keeps the call's arguments.
	Failures []Event
	// Cursor is where the next read starts; End is the cursor at the record's end.
	Cursor, End string
	// Advanced is how many bytes the read went past the old cursor; Size is the record's size.
	Advanced, Size int64
	// Skipped counts records too long to read; Replaced is set when the record is shorter than
	// the cursor (it was replaced, and is read from its end).
	Skipped  int
	Replaced bool
}

// cursorFile keeps the backlog cursors in the state directory: {"cursors": {id: {cursor, at}}}.
const cursorFile = "agent_cursors.json"

// Bounds of the cursor file: the most recent maxCursors transcripts are kept; a cursor that moved
// less than cursorLag bytes with no failure is not written (the next read goes over those bytes
// again, which costs less than taking the lock on every call).
const (
	maxCursors      = 64
	cursorLag       = 64 << 10
	maxCursorsBytes = 1 << 20
)

type cursorEntry struct {
	Cursor string    `json:"cursor"`
	At     time.Time `json:"at"`
}

type cursorDoc struct {
	Cursors map[string]cursorEntry `json:"cursors"`
}

// cursorID names ev's record in the cursor file without keeping its path.
func cursorID(ev Event) string {
	sum := sha256.Sum256([]byte(ev.TranscriptPath))
	return ev.Agent + ":" + hex.EncodeToString(sum[:12])
}

func (h *hookRun) cursorPath() string { return filepath.Join(h.p.StateDir(), cursorFile) }

// readCursors reads the cursor file; a missing one is empty. A file that cannot be read is said
// and treated as empty: at worst a failure already recorded is recorded again.
func (h *hookRun) readCursors() cursorDoc {
	doc := cursorDoc{Cursors: map[string]cursorEntry{}}
	data, err := h.p.ReadStateFile(h.cursorPath(), maxCursorsBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return doc
	}
	if err == nil {
		err = json.Unmarshal(data, &doc)
	}
	if err != nil {
		term.Warnf(h.cfg.Stderr, "cannot read %s (%v): reading the agent's transcript from its start", cursorFile, err)
		return cursorDoc{Cursors: map[string]cursorEntry{}}
	}
	if doc.Cursors == nil {
		doc.Cursors = map[string]cursorEntry{}
	}
	return doc
}

func (h *hookRun) writeCursors(doc cursorDoc) error {
	if len(doc.Cursors) > maxCursors {
		ids := make([]string, 0, len(doc.Cursors))
		for id := range doc.Cursors {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool { return doc.Cursors[ids[i]].At.After(doc.Cursors[ids[j]].At) })
		for _, id := range ids[maxCursors:] {
			delete(doc.Cursors, id)
		}
	}
	data, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	return safefile.WriteFileAtomic(h.cursorPath(), append(data, '\n'), 0o600)
}

// backlog records the failures bl reports for the event's session, and keeps what it says about
// them for the answer (missedText, as for Event.Missed). It reads without the lock first: only when there is
// something to record, or the cursor moved far, does it take the lock, read again from the cursor
// as it then stands (another hook may have moved it), record and move the cursor.
func (h *hookRun) backlog(bl Backlog) {
	ev := h.ev
	id := cursorID(ev)
	cur := h.readCursors().Cursors[id].Cursor
	scan, err := bl.Backlog(ev, cur, h.serverList)
	if err != nil {
		term.Warnf(h.cfg.Stderr, "cannot read the failures %s recorded: %v", ev.Agent, err)
		return
	}
	// When a session resumes, its record holds only its past, which the hooks of that time read:
	// the position moves to its end, and nothing in it is counted again. A new session's record
	// has no past, and its start writes nothing.
	atStart := ev.Kind == SessionStart
	if atStart && (ev.Source == "" || ev.Source == "startup") {
		return
	}
	if atStart {
		if scan.End == "" || scan.End == cur {
			return
		}
		scan.Failures, scan.Cursor = nil, scan.End
	}
	if !atStart && len(scan.Failures) == 0 && scan.Advanced < cursorLag && !scan.Replaced {
		return
	}
	s, err := h.p.Store(true)
	if err != nil {
		term.Warnf(h.cfg.Stderr, "cannot record the failures %s recorded: %v", ev.Agent, err)
		return
	}
	pol := h.policy()
	secrets := h.p.Secrets()
	var outs []states.Outcome
	var werr error
	board, err := s.Update(func(b *states.Board) ([]ledger.Entry, error) {
		outs = nil
		doc := h.readCursors()
		if now := doc.Cursors[id].Cursor; now != cur && !atStart {
			var err error
			if scan, err = bl.Backlog(ev, now, h.serverList); err != nil {
				return nil, err
			}
		}
		work := b.Clone()
		var entries []ledger.Entry
		for _, f := range scan.Failures {
			if !ledger.Key(f.Key).IsMCP() || !ledger.ValidToolName(f.Key) {
				continue
			}
			r := failure.Classify(failure.Evidence{Text: f.Error, Tool: f.Key, Args: f.Args}, h.now)
			// The call's hash, when the record has its arguments, feeds the loop guard as a
			// failure event's does: the next identical call is denied on its PreToolUse.
			call := states.Call{Tool: f.Key, Server: f.Server, SessionID: f.SessionID, ToolUseID: f.ToolUseID, Source: ledger.SourceHook,
				Hash: f.ArgsHash}
			call.Fingerprint = h.p.Fingerprint(call.Tool, r.Type)
			out := work.Failure(call, project.FailureOf(r, redact.StoredTextKnown(f.Error, secrets)), h.now, pol)
			for _, e := range out.Entries {
				work.Apply(e)
			}
			entries = append(entries, out.Entries...)
			outs = append(outs, out)
		}
		doc.Cursors[id] = cursorEntry{Cursor: scan.Cursor, At: h.now}
		// Written before the entries are appended: if the append then fails, those failures are
		// lost (and said), never counted twice.
		werr = h.writeCursors(doc)
		return entries, nil
	})
	if err != nil {
		term.Warnf(h.cfg.Stderr, "cannot record the failures %s recorded: %v", ev.Agent, err)
		return
	}
	h.answered = scan.Failures
	if werr != nil {
		term.Warnf(h.cfg.Stderr, "cannot keep the position in %s's transcript (%v): its failures may be counted again", ev.Agent, werr)
	}
	if scan.Skipped > 0 {
		term.Warnf(h.cfg.Stderr, "%d records of %s's transcript were too long to read; a failure among them is not counted", scan.Skipped, ev.Agent)
	}
	var msgs, notices []string
	for _, out := range outs {
		msgs = append(msgs, h.p.FailureMessage(board, out, pol, h.now))
		if n := h.tripNotice(board, out.Tripped, pol); n != "" {
			notices = append(notices, n)
		}
	}
	h.missedNotice = strings.Join(notices, "\n")
	if len(msgs) > 0 {
		h.early = nil // decided before these failures were recorded
		msg := redact.RedactKnown(strings.Join(msgs, "\n\n"), secrets)
		h.missedText = term.Prefix + term.Clip(msg, 8000)
	}
}
