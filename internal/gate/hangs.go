package gate

// Hangs of agents that report none. Claude Code says a call was interrupted and how long it ran,
// so one stopped after hang_after is a TIMEOUT (cause hung). Codex CLI has no failure event (its
// transcript, when it writes one, has the failure), and Copilot CLI runs no post hook for a call
// rejected, denied or of result type timeout: such a hung call would go uncounted. So
// for them the gate pairs each call it allowed with its post event, per session: by the call's id
// when the agent gives one, else in call order per tool. A call still without one when the
// session's next pre-call, session or stop event arrives, hang_after or more after the call
// started, never returned a result: it hung, and is counted as a TIMEOUT. The pairs are kept in a
// state file under a lock of its own, so that hooks run at the same time for parallel calls each
// see the others' calls.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/filelock"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/safefile"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/term"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// SilentHangs is a Wire whose agent reports no timeout of an MCP call (docs/agents.md): the gate
// pairs its calls with their post events to find the hung ones.
type SilentHangs interface {
	// SilentHangs says whether the event's session's calls are paired, and whether the event
	// ends the agent's turn (Codex's Stop): every call of the turn is over then, so one that ran
	// less than hang_after without a post event was cancelled, refused or failed some other way,
	// and is dropped, never counted.
	SilentHangs(ev Event) (paired, turnEnd bool)
}

// PendingFile, in the state directory, keeps the calls allowed and not yet answered, {"sessions":
// {id: {at, calls}}}, each session by a hash of its id; PendingLock is its lock.
const (
	PendingFile = "pending_calls.json"
	PendingLock = "pending_calls.lock"
)

const (
	maxSessions  = 64
	maxPending   = 64
	maxPendingSz = 1 << 20
	// pendingWait bounds the wait for the pairs' lock: a hook never waits long for it, and when
	// it cannot have it the pairing of this event is skipped (said), never the call.
	pendingWait = 500 * time.Millisecond
)

type pendingCall struct {
	Key    string    `json:"key"`
	Server string    `json:"server,omitempty"`
	ID     string    `json:"id,omitempty"`
	At     time.Time `json:"at"`
}

type pendingSession struct {
	At    time.Time     `json:"at"`
	Calls []pendingCall `json:"calls"`
}

type pendingDoc struct {
	Sessions map[string]*pendingSession `json:"sessions"`
}

// pendingID names the event's session in the file without keeping its id.
func pendingID(ev Event) string {
	sum := sha256.Sum256([]byte(ev.SessionID))
	return ev.Agent + ":" + hex.EncodeToString(sum[:12])
}

// withPending runs edit on the pairs under their lock and writes them back when edit says so.
func (h *hookRun) withPending(create bool, edit func(doc *pendingDoc) bool) error {
	dir := h.p.StateDir()
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		if !create {
			return nil // no state yet: no call is waiting
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
	}
	if err := safefile.CheckStateDir(dir); err != nil {
		return err
	}
	if _, err := os.Lstat(filepath.Join(dir, PendingFile)); !create && errors.Is(err, fs.ErrNotExist) {
		return nil // no call is waiting: no lock taken (Copilot runs this for every tool it calls)
	}
	unlock, err := filelock.Exclusive(filepath.Join(dir, PendingLock), filelock.Options{Wait: pendingWait})
	if err != nil {
		return err
	}
	defer unlock()
	doc := &pendingDoc{Sessions: map[string]*pendingSession{}}
	data, err := h.p.ReadStateFile(filepath.Join(dir, PendingFile), maxPendingSz)
	switch {
	case err == nil:
		if json.Unmarshal(data, doc) != nil || doc.Sessions == nil {
			doc = &pendingDoc{Sessions: map[string]*pendingSession{}} // damaged: started afresh
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if !edit(doc) {
		return nil
	}
	for id, s := range doc.Sessions {
		if s == nil || len(s.Calls) == 0 {
			delete(doc.Sessions, id)
		}
	}
	if len(doc.Sessions) > maxSessions {
		ids := make([]string, 0, len(doc.Sessions))
		for id := range doc.Sessions {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool { return doc.Sessions[ids[i]].At.After(doc.Sessions[ids[j]].At) })
		for _, id := range ids[maxSessions:] {
			delete(doc.Sessions, id)
		}
	}
	if len(doc.Sessions) == 0 {
		// No call is waiting: the file goes, and the next event of these agents takes no lock.
		if err := os.Remove(filepath.Join(dir, PendingFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	// Not synced: the file is rewritten before every call, and one a crash damaged is started
	// afresh above, losing only the pairs of the calls then running.
	return safefile.ReplaceFile(filepath.Join(dir, PendingFile), append(out, '\n'), 0o600)
}

// pairHangs is called before the event is decided: a post event (or a failure the agent's record
// reported, answered) closes its call; a pre-call, session or stop event takes every call of the
// session without a post event since hang_after or more for a hung one, and returns them as
// failures to count before this event is decided.
func (h *hookRun) pairHangs(answered []Event, turnEnd bool) []Event {
	ev := h.ev
	id := pendingID(ev)
	var hung []Event
	err := h.withPending(false, func(doc *pendingDoc) bool {
		s := doc.Sessions[id]
		if s == nil {
			return false
		}
		changed := false
		for _, a := range append(answered, ev) {
			if a.Kind == Success || a.Kind == Failure {
				if i := s.match(a); i >= 0 {
					s.Calls = append(s.Calls[:i], s.Calls[i+1:]...)
					changed = true
				}
			}
		}
		if ev.Kind == Success || ev.Kind == Failure {
			return changed // a sibling's result says nothing of this session's other calls
		}
		kept := s.Calls[:0]
		for _, c := range s.Calls {
			after := h.policy().For(c.Key, ledger.Timeout).HangAfter
			ran := h.now.Sub(c.At)
			if after <= 0 || ran < after {
				if !turnEnd {
					kept = append(kept, c) // still running, within hang_after
				}
				continue
			}
			hung = append(hung, Event{
				Kind: Failure, Agent: ev.Agent, Key: c.Key, Server: c.Server, SessionID: ev.SessionID, ToolUseID: c.ID,
				Interrupt: true, Duration: ran,
				Error: fmt.Sprintf("no result came for this call: %s reported no post-call event for it, and the session went on %s after the call started (hang_after %s): it hung",
					ev.Agent, ran.Round(time.Second), after.Round(time.Second)),
			})
		}
		changed = changed || len(kept) != len(s.Calls)
		s.Calls = kept
		return changed
	})
	if err != nil {
		term.Warnf(h.cfg.Stderr, "cannot pair %s's calls with their results (%v): a call that hung is not seen this time", ev.Agent, err)
		return nil
	}
	return hung
}

// match is the index of the call a post event answers: its id, else the oldest call of its tool
// (an agent without ids runs a tool's calls and reports them in order); -1 when none.
func (s *pendingSession) match(ev Event) int {
	if ev.ToolUseID != "" {
		for i, c := range s.Calls {
			if c.ID == ev.ToolUseID {
				return i
			}
		}
	}
	for i, c := range s.Calls {
		if c.Key == ev.Key && (c.ID == "" || ev.ToolUseID == "") {
			return i
		}
	}
	return -1
}

// addPending keeps the allowed call ev until its post event comes.
func (h *hookRun) addPending() {
	ev := h.ev
	id := pendingID(ev)
	err := h.withPending(true, func(doc *pendingDoc) bool {
		s := doc.Sessions[id]
		if s == nil {
			s = &pendingSession{}
			doc.Sessions[id] = s
		}
		if len(s.Calls) >= maxPending {
			s.Calls = s.Calls[1:] // the oldest: a session this busy has long moved past it
		}
		s.At = h.now
		s.Calls = append(s.Calls, pendingCall{Key: ev.Key, Server: ev.Server, ID: ev.ToolUseID, At: h.now})
		return true
	})
	if err != nil {
		term.Warnf(h.cfg.Stderr, "cannot keep %s's call until its result (%v): if it hangs, it is not seen", ev.Agent, err)
	}
}

// recordHung counts the hung calls pairHangs found, and keeps what the model reads about them with
// the other earlier failures (missedText).
func (h *hookRun) recordHung(hung []Event) {
	var msgs, notices []string
	for _, m := range hung {
		if !ledger.ValidToolName(m.Key) {
			continue
		}
		msg, notice, err := h.recordFailure(m)
		if notice != "" {
			notices = append(notices, notice)
		}
		if err != nil {
			term.Warnf(h.cfg.Stderr, "hook: cannot record the hung call of %s: %v", m.Key, err)
			continue
		}
		if msg != "" {
			msgs = append(msgs, msg)
		}
	}
	if len(msgs) > 0 {
		h.early = nil // decided before these failures were recorded
		if h.missedText != "" {
			msgs = append([]string{h.missedText}, msgs...)
		}
		h.missedText = strings.Join(msgs, "\n")
	}
	if len(notices) > 0 {
		// The user is told of the trips the hung calls made, as of the earlier failures'.
		if h.missedNotice != "" {
			notices = append([]string{h.missedNotice}, notices...)
		}
		h.missedNotice = strings.Join(notices, "\n")
	}
}
