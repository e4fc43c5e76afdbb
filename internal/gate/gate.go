// Package gate is the agent-neutral hook (docs/hook.md): one entry point for the events before a
// call, after a success, after a failure and at session start. An agent's codec decodes its stdin
// into an Event; the gate decides once with the circuits, records what happened and gives one
// Answer, which the codec encodes in the shape that agent honours. It never crashes and always
// answers within its budget; when it cannot decide it follows on_error and says so.
package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/fallbacks"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/failure"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/mcpconfig"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/message"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/redact"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/safefile"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/settings"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/term"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// Budget bounds a hook run from the moment its tool is known (tool_name read): Claude Code would
// wait up to the hook's timeout, and a gate that hangs stalls every MCP call (docs/hook.md).
const Budget = 2500 * time.Millisecond

// earlyAfter is how long the gate waits for a payload whose tool is known to be whole before it
// decides from the tool's name alone. The decoder reads 10 MB in about 11 ms; deciding while it
// reads saves nothing then (the answer waits for the end of stdin anyway) and costs a core the
// decoder could use.
const earlyAfter = 100 * time.Millisecond

// HookTimeout is the timeout install and the plugin give the hook (Claude Code's "timeout", in
// seconds there). A stdin that stalls before tool_name arrives does not eat the Budget: the run
// answers at the latest answerBy after it started, which stays inside HookTimeout.
const HookTimeout = 5 * time.Second

// answerBy bounds a whole run, however slowly its event arrives.
const answerBy = HookTimeout - 500*time.Millisecond

// TestOnlyBudget, when positive, replaces Budget in every run of this process, and answerBy
// moves with it (never below its own): only this module's testscript harness sets it (from MCB_TEST_HOOK_BUDGET), for
// a script whose event is heavy to read or decide (50 MB, a hand-over to the full CLI) under the
// race detector on a loaded machine, where the product's bound measures the machine, not the gate.
var TestOnlyBudget time.Duration

// budgets returns the run's Budget and answerBy. A test budget shorter than the product's keeps
// the product's answerBy: it stands for a call left no time to decide, not for an event that
// arrives late (a script that starts many calls at once on a loaded machine).
func budgets() (budget, by time.Duration) {
	if TestOnlyBudget > 0 {
		return TestOnlyBudget, max(TestOnlyBudget+answerBy-Budget, answerBy)
	}
	return Budget, answerBy
}

// scaled is d scaled as TestOnlyBudget scales Budget (d itself without it): the bounds of the
// probe a hook runs for half_open: probe, which live inside Budget.
func scaled(d time.Duration) time.Duration {
	if TestOnlyBudget > 0 {
		return time.Duration(float64(d) * float64(TestOnlyBudget) / float64(Budget))
	}
	return d
}

// fleetBudget bounds all exchanges with the fleet-shared board in one hook run, inside Budget.
const fleetBudget = time.Second

// probeBudget bounds the probe run for half_open: probe, inside Budget.
const probeBudget = 2 * time.Second

// MaxDenyReason is the budget of a deny reason, in characters (docs/hook.md).
const MaxDenyReason = 1500

// Config is what one hook run needs from its process.
type Config struct {
	// Project is the project the hook guards.
	Project *project.Project
	// Wire is the agent's codec: how its events are read and its answers written.
	Wire Wire
	// Getenv is the environment the gate obeys (internal/userenv): MCP_CIRCUIT_NOW,
	// MCP_CIRCUIT_FAIL_OPEN, HOME, and the agent's own directories for an Environ wire.
	Getenv func(string) string
	Stdin  io.Reader
	// First, when not nil, is the first read of the event, already made (Main's); Stdin then
	// holds it in front of what follows.
	First  []byte
	Stdout io.Writer
	Stderr io.Writer
	// Probe runs a recorded MCP probe of key (half_open: probe); nil makes the real call the trial.
	Probe func(ctx context.Context, key string) error
	// Exit ends the process when the budget runs out; nil means os.Exit.
	Exit func(int)

	// decisions, set by this package's tests, receives how many times Board.Gate decided on the
	// boards the run read: the one-decision rule (docs/hook.md) is checked with it.
	decisions *int
	// CatchUp, when set, starts a process that brings a missing or far-behind snapshot of the
	// project in dir up to date (DetachedCatchUp), so that no hook call spends its budget reading
	// a large ledger forwards; nil reads forwards in the call until its share of the budget ends.
	CatchUp func(dir string) error
	// Board binds the project to the fleet-shared board for one run (internal/hookboard); nil
	// without one. The lean binary reaches the board in its own process when it can (Main's
	// LeanBoard), else hands the event to the full CLI (HandOver).
	Board BindBoard
	// HandOver, when set, may hand the event to another process before the gate decides it: the
	// lean binary gives the full CLI every event of a user with a fleet-shared board. It gets
	// stdin as the event was read so far, and reports the exit status and whether it took the
	// event; it is asked only about MCP tools and SessionStart.
	HandOver func(stdin io.Reader) (code int, handed bool)
	// EnvNotice says which variables a project's settings set and the gate ignores
	// (internal/userenv); it goes into systemMessage once per change and at every SessionStart.
	EnvNotice func() string
}

// hookRun is one hook invocation: it answers exactly once, either with the decision or, when the
// budget runs out first, with what is known by then (a known-OPEN circuit's deny) or the on_error
// fallback.
type hookRun struct {
	cfg   Config
	p     *project.Project
	now   time.Time
	start time.Time
	// budget and answerBy are Budget and answerBy (budgets).
	budget, answerBy time.Duration
	// deadline is when the watchdog answers: budget after the tool was known, never past
	// answerBy after start.
	deadline time.Time

	mu      sync.Mutex // guards ev, onError, known, warning, done, code and expired: the budget timer reads them
	ev      Event
	onError string
	done    bool
	// code is the exit status of the answer given.
	code int
	// expired is set when the budget ran out: the answer then says nothing of the fleet board,
	// whose state the deciding goroutine may still be writing.
	expired bool
	// known is the answer decided from the tool's name alone while the rest of the event was still being
	// read; the watchdog gives it when the full decision does not come in time.
	known *Answer
	// warning is said in systemMessage of whatever answer goes out (an invalid policy.yaml).
	warning string
	// notice is Config.EnvNotice's text, once asked (noticeRead).
	notice     string
	noticeRead bool

	// early is the unlocked view read while the event was still arriving; pre reuses it.
	early *earlyView
	// pol is policy.yaml as read once by policy (polRead).
	pol     *states.Policy
	polRead bool
	// reasons memoizes deny reasons by circuit and block kind, so the deny prepared early is not
	// built twice.
	reasons map[string]string

	// fleet is the fleet-shared board bound to this call, nil without one; fleetErr is why a
	// configured board is not used.
	fleet       Board
	fleetErr    error
	fleetCancel context.CancelFunc

	servers     []mcpconfig.Server
	serversRead sync.Once

	// missedText is what the model reads about the earlier failures recorded for this event.
	missedText string
	// missedNotice tells the user of the trips those failures made (the agent's user channel).
	missedNotice string
	// answered are the failures the agent's record (Backlog) reported for this event: their
	// calls have their result, and are no hung ones.
	answered []Event
	// denied is set when the answer denied the call (guarded by mu).
	denied bool
	// boards are the views the run decided on, for Config.decisions.
	boards []*states.Board
}

type earlyView struct {
	// key is the tool the view was read for: the event's key can change once the whole event is
	// read (Claude Code's mcp_server comes after the arguments and can give the server its own key).
	key   string
	s     *states.Store
	board *states.Board
	err   error
	// first is the decision taken on board, nil when the board holds nothing for the tool.
	first *states.Decision
	// undecided are the tool's circuits the read ran out of time for (states.Undecided).
	undecided []states.Undecided
}

// Run handles one hook event and returns the exit status the process ends with: the one the codec
// gives for the answer, 0 for every codec whose agent reads the answer on stdout. Its own
// failures are answered per on_error and reported on stderr and in the answer's notice.
//
// The decision before a call needs only the tool's name: the event is read in a goroutine that
// reports the tool as soon as its name is read, and the gate decides from it while arguments of any
// size or speed are still arriving. When the budget runs out before the event is whole, a circuit
// known to be OPEN is denied; only what is truly unknown follows on_error.
func Run(cfg Config) int {
	if e, ok := cfg.Wire.(Environ); ok && cfg.Getenv != nil {
		cfg.Wire = e.WithGetenv(cfg.Getenv)
	}
	h := &hookRun{cfg: cfg, p: cfg.Project, onError: states.OnErrorAllow, start: time.Now()}
	h.budget, h.answerBy = budgets()
	h.deadline = h.start.Add(h.answerBy)
	exit := cfg.Exit
	if exit == nil {
		exit = os.Exit
	}
	timer := time.AfterFunc(h.answerBy, func() {
		h.mu.Lock()
		h.expired = true
		h.mu.Unlock()
		h.watchdog()
		h.mu.Lock()
		code := h.code
		h.mu.Unlock()
		exit(code)
	})
	defer timer.Stop()
	defer h.unbindFleet()
	now, nowErr := project.Now(cfg.Getenv)
	h.now = now
	// A project directory that does not exist is never created, read or written (a mistyped
	// --dir or CLAUDE_PROJECT_DIR must not make a tree and a ledger out of nothing).
	dirErr := project.CheckDir(h.p.Dir)
	type result struct {
		ev  Event
		err error
	}
	done := make(chan result, 1)
	seen := make(chan Event, 1)
	ev, rest, whole := h.quickEvent()
	if whole {
		// The whole event came in one read: decided here, without the reader goroutine.
		done <- result{ev, nil}
	} else {
		if cfg.HandOver != nil {
			// Too large for one read: whether it is handed over is decided before it is read on.
			timer.Stop()
			if code, handed := cfg.HandOver(rest); handed {
				return code
			}
			timer.Reset(time.Until(h.deadline))
		}
		go func() {
			ev, err := cfg.Wire.Decode(rest, h.serverList, func(ev Event) { seen <- ev })
			done <- result{ev, err}
		}()
	}
	// The tool is known: the Budget starts now (within answerBy of the start).
	known := func() {
		d := time.Now().Add(h.budget)
		if last := h.start.Add(h.answerBy); d.After(last) {
			d = last
		}
		if timer.Stop() {
			h.deadline = d
			timer.Reset(time.Until(d))
		}
	}
	var r result
	select {
	case r = <-done:
		// The event before the budget starts: a watchdog firing between the two (a starved
		// process) would otherwise answer as if no tool had been named, without its look for
		// a trip.
		if r.err == nil {
			h.setEvent(r.ev)
		}
		known()
	case ev := <-seen:
		h.setEvent(ev)
		known()
		// A payload that is whole soon is decided once, on all of it. One still streaming after
		// earlyAfter (a hostile or stalled stdin) is decided from the tool's name, so that the
		// watchdog can deny a circuit known to be OPEN; docs/hook.md has the measurements.
		wait := time.NewTimer(earlyAfter)
		select {
		case r = <-done:
		case <-wait.C:
			if ev.Kind == Before && serverTool(ev.Key) && ledger.ValidToolName(ev.Key) && nowErr == nil && dirErr == nil {
				h.bindFleet() // the early view reads the fleet board too
				h.prepare()
			}
			r = <-done
		}
		wait.Stop()
		if h.early != nil && r.err == nil && r.ev.Key != h.early.key {
			// The whole event names another circuit than its first fields did: what was read and
			// decided for those is not this call's, so it is decided again for the key it has.
			h.early = nil
			h.mu.Lock()
			h.known = nil
			h.mu.Unlock()
			h.setEvent(r.ev)
			h.unbindFleet() // bound to the first key's circuits
			h.fleet, h.fleetErr, h.fleetCancel = nil, nil, nil
			if r.ev.Kind == Before && serverTool(r.ev.Key) && ledger.ValidToolName(r.ev.Key) && nowErr == nil && dirErr == nil {
				h.bindFleet()
				h.prepare()
			}
		}
	}
	ev, err := r.ev, r.err
	if err != nil {
		// Unparsable input: allow, and say why (docs/hook.md). Nothing is known of the tool.
		term.Warnf(cfg.Stderr, "hook: cannot read the event: %v; allowing the call", err)
		return 0
	}
	h.setEvent(ev)
	if bl, ok := cfg.Wire.(Backlog); ok && ev.TranscriptPath != "" && nowErr == nil {
		// The agent ran no hook after its failed calls: record them before deciding this event.
		h.backlog(bl)
	}
	paired, turnEnd := false, false
	if sh, ok := cfg.Wire.(SilentHangs); ok && ev.SessionID != "" && nowErr == nil && dirErr == nil {
		paired, turnEnd = sh.SilentHangs(ev)
	}
	if paired {
		// Before anything returns at once: any later event of the session can show a call hung.
		if hung := h.pairHangs(h.answered, turnEnd); len(hung) > 0 {
			h.recordHung(hung)
		}
	}
	if ev.Kind != SessionStart && !serverTool(ev.Key) {
		return 0 // not an MCP tool, or of no server: allowed at once, no state read
	}
	// Only Claude Code has ToolSearch: another agent's model is not sent after a tool it lacks,
	// in a deny or in a trip's fallbacks.
	h.p.NoToolSearch = ev.Agent != "" && ev.Agent != "claude"
	if whole && cfg.HandOver != nil {
		timer.Stop()
		if code, handed := cfg.HandOver(rest); handed {
			return code
		}
		timer.Reset(time.Until(h.deadline))
	}
	if ev.Kind != SessionStart && !ledger.ValidToolName(ev.Key) {
		// No MCP tool is named so (agents sanitize names): record nothing, say why.
		term.Warnf(cfg.Stderr, "ignoring a hook event whose tool_name %s is not a tool name (blanks, control characters or over %d bytes)",
			redact.QuoteData(ev.Key, 80), ledger.MaxToolName)
		return 0
	}
	if dirErr != nil {
		h.noProject(dirErr)
		return h.exitCode()
	}
	if nowErr != nil {
		h.fail(nowErr)
		return h.exitCode()
	}
	if h.fleetCancel == nil {
		h.bindFleet()
	} else if h.fleet != nil {
		h.fleet.SetSession(ev.SessionID) // bound before the whole event was read
	}
	if len(ev.Missed) > 0 {
		h.recordMissed()
	}
	switch ev.Kind {
	case Before:
		err = h.pre()
	case Success:
		err = h.post()
	case Failure:
		err = h.failure()
	case SessionStart:
		err = h.sessionStart()
	}
	if err != nil {
		h.fail(err)
	}
	if paired && ev.Kind == Before && !h.deniedCall() {
		h.addPending() // allowed: kept until its post event comes
	}
	h.answer(Answer{}) // says the warning or the fleet board's news, if any, when nothing else was answered
	if cfg.decisions != nil {
		*cfg.decisions = h.countDecisions()
	}
	return h.exitCode()
}

// serverTool reports whether key names a tool of a server, the only calls a circuit decides: an MCP
// tool name with a server part. A name that only starts like one (mcp__ alone, mcp____x) belongs to
// no circuit, so it is let through at once, as a tool that is not an MCP tool is: VS Code sends
// every tool's name to the hook, whatever it is.
func serverTool(key string) bool { return ledger.Key(key).Server() != "" }

// countDecisions sums Board.Decisions over the distinct boards the run read.
func (h *hookRun) countDecisions() int {
	n := 0
	seen := map[*states.Board]bool{}
	for _, b := range h.boards {
		if b != nil && !seen[b] {
			seen[b] = true
			n += b.Decisions()
		}
	}
	return n
}

func (h *hookRun) exitCode() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.code
}

// serverList reads the project's MCP servers once, for a codec that resolves tool names through
// them; a configuration it cannot read in part still gives the servers it could.
func (h *hookRun) serverList() []mcpconfig.Server {
	h.serversRead.Do(func() {
		if sf, ok := h.cfg.Wire.(ServerFiles); ok {
			read := map[string]bool{}
			for _, f := range sf.ServerFiles(h.p.Dir, h.cfg.Getenv("HOME")) {
				if read[f.Path] {
					continue // a project in HOME: its file and the user's are one
				}
				read[f.Path] = true
				data, err := safefile.ReadBounded(f.Path, safefile.MaxConfigBytes)
				if err != nil {
					continue // absent, or unreadable: the other files and Claude Code's still count
				}
				scope := mcpconfig.ScopeUser
				if f.Project {
					scope = mcpconfig.ScopeProject
				}
				if f.Comments {
					data = settings.StripComments(data)
				}
				servers, _ := mcpconfig.ParseAgentMember(f.Path, data, scope, f.Member)
				h.servers = append(h.servers, servers...)
			}
		}
		claude, _ := h.p.Discover(nil)
		h.servers = append(h.servers, claude...)
	})
	return h.servers
}

func (h *hookRun) setEvent(ev Event) {
	h.mu.Lock()
	h.ev = ev
	h.mu.Unlock()
}

// prepare decides from the tool's name alone, without the lock, while the rest of the event is read: it
// keeps the view for pre, and the answer the watchdog gives if the event does not arrive in time.
func (h *hookRun) prepare() {
	s, board, err := h.view()
	h.decideEarly(s, board, err, true)
}

// decideEarly keeps the unlocked view for pre and decides on it, without the lock, what the
// watchdog answers when the run does not end in time: a deny of a circuit known OPEN, or of one
// the ledger has tripped whose state could not be read in time (states.Undecided); an allow of a
// call nothing blocks. stalled says the event itself is late (prepare), else the run is (pre).
func (h *hookRun) decideEarly(s *states.Store, board *states.Board, err error, stalled bool) {
	h.early = &earlyView{key: h.ev.Key, s: s, board: board, err: err}
	if err != nil {
		return
	}
	if a, ok := h.ambiguous(board); ok && !project.Shadow(h.cfg.Getenv) {
		h.setKnown(a)
		return
	}
	call := h.call()
	undecided := board.UndecidedOf(call.Tool)
	h.early.undecided = undecided
	if len(undecided) == 0 && !board.HoldsCall(call) {
		h.setKnown(Answer{})
		return
	}
	pol := h.policy()
	shadow := project.Shadow(h.cfg.Getenv)
	d := board.Gate(h.p.WithFingerprint(board, call), h.now, pol, shadow)
	h.early.first = &d
	switch {
	case !d.Allowed && (d.Block == states.BlockStreak || d.Block == states.BlockRunaway):
		// Not a known-OPEN circuit: a notice given once, which only the recorded deny may give (it
		// starts the streak over); when the event does not arrive in time, on_error decides.
	case !d.Allowed:
		// Known OPEN, whatever the circuits not read in time say.
		late := fmt.Sprintf("the hook ran out of its %s budget", h.budget)
		switch {
		case len(undecided) > 0:
			late = fmt.Sprintf("the state of %s could not be read from %s within %s", undecidedKeys(undecided), project.StateDirName, h.budget)
		case stalled:
			late = fmt.Sprintf("the hook event for %s did not arrive within %s", call.Tool, h.budget)
		}
		a := deny(h.denyReason(board, d, pol))
		a.Notice = fmt.Sprintf(term.Prefix+"%s; denied %s because its circuit %s is OPEN, without recording the blocked call", late, call.Tool, d.Circuit.Key)
		h.setKnown(a)
	case len(undecided) > 0 && undecided[0].Tripped && !shadow:
		h.setKnown(h.undecidedDeny(undecided[0]))
	case len(undecided) > 0:
		// Not known: the watchdog, and pre, follow on_error.
	case !d.Trial && len(d.Entries) == 0:
		h.setKnown(Answer{})
	}
}

// undecidedKeys names the circuits of us.
func undecidedKeys(us []states.Undecided) string {
	keys := make([]string, len(us))
	for i, u := range us {
		keys[i] = u.Key
	}
	return strings.Join(keys, " and ")
}

// undecidedDeny is the answer for a call whose circuit u the ledger has tripped but whose state
// could not be read within the budget: fail safe on what is known, deny it, and say why. Nothing
// is recorded (a blocked entry needs the state it is recorded on).
func (h *hookRun) undecidedDeny(u states.Undecided) Answer {
	a := deny(fmt.Sprintf("⚡ CIRCUIT POSSIBLY OPEN — %s\nThe ledger has opened the circuit %s, and its current state could not be read within the hook's budget "+
		"(a large ledger without a usable snapshot; the snapshot is being built). The call is denied rather than let through to a server that may be failing. "+
		"Do not retry at once: the next call decides from the snapshot.", h.ev.Key, u.Key))
	a.Notice = fmt.Sprintf(term.WarningPrefix+"the state of %s could not be read from %s within %s; denied %s because the ledger has tripped that circuit, without recording the blocked call",
		u.Key, project.StateDirName, Budget, h.ev.Key)
	return a
}

func (h *hookRun) setKnown(a Answer) {
	h.mu.Lock()
	h.known = &a
	h.mu.Unlock()
}

// watchdog answers when the budget runs out: what was decided from the tool's name when that is known,
// else on_error.
func (h *hookRun) watchdog() {
	h.mu.Lock()
	known, tool, kind := h.known, h.ev.Key, h.ev.Kind
	h.mu.Unlock()
	note := ""
	if known == nil && kind == Before && serverTool(tool) && ledger.ValidToolName(tool) && !project.Shadow(h.cfg.Getenv) {
		// Fail safe on what is known: before letting the call through, the trip index and a
		// short look from the ledger's start for a trip of its circuits (a slow read finds one
		// near the start last).
		if s, err := h.p.Store(false); err == nil {
			var k string
			if k, note = s.Tripped(ledger.Key(tool).Circuits(), min(scaled(watchdogLook), watchdogLook)); k != "" {
				a := h.undecidedDeny(states.Undecided{Key: k, Tripped: true})
				fmt.Fprintln(h.cfg.Stderr, a.Notice)
				h.answer(a)
				return
			}
		}
	}
	if known == nil {
		if tool == "" {
			h.fail(fmt.Errorf("the event's tool_name did not arrive within %s", h.answerBy))
		} else {
			err := fmt.Errorf("no decision within %s of reading the tool's name", h.budget)
			if note != "" {
				err = fmt.Errorf("%w; %s", err, note)
			}
			h.fail(err)
		}
		return
	}
	if known.Notice != "" {
		fmt.Fprintln(h.cfg.Stderr, known.Notice)
	}
	h.answer(*known)
}

// policy reads policy.yaml for a decision: an invalid file does not stop it (its valid parts and
// the built-in values apply), and the warning goes to stderr and into the answer's systemMessage.
func (h *hookRun) policy() *states.Policy {
	if h.polRead {
		return h.pol
	}
	pol, err := h.p.UsablePolicy()
	h.pol, h.polRead = pol, true
	if err != nil {
		h.warn(term.WarningPrefix + message.PolicyWarning(err))
	}
	h.setOnError(pol)
	return pol
}

// warn says msg once on stderr and in the systemMessage of whatever answer goes out.
func (h *hookRun) warn(msg string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if strings.Contains(h.warning, msg) {
		return
	}
	if h.warning != "" {
		h.warning += "\n"
	}
	h.warning += msg
	fmt.Fprintln(h.cfg.Stderr, msg)
}

// damaged says which ledger items the board was read without. Only a ledger of which nothing at
// all could be read leaves the gate unable to decide (on_error): the store's read fails then.
func (h *hookRun) damaged(s *states.Store, b *states.Board) {
	if d := b.Damage; d.Count > 0 {
		h.warn(term.WarningPrefix + d.Summary(s.Ledger.Path()))
	}
}

func (h *hookRun) answer(a Answer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done {
		return
	}
	h.done = true
	if n := h.envNotice(); n != "" && (h.ev.Kind == SessionStart || h.p.SayOnce(envNoticeMarker, n)) {
		if a.Notice != "" {
			a.Notice = term.WarningPrefix + n + "\n" + a.Notice
		} else {
			a.Notice = term.WarningPrefix + n
		}
	}
	if h.warning != "" {
		if a.Notice != "" {
			a.Notice = h.warning + "\n" + a.Notice
		} else {
			a.Notice = h.warning
		}
	}
	if !h.expired {
		if note, debug := h.fleetNotice(); note != "" {
			fmt.Fprintln(h.cfg.Stderr, note)
			if a.Notice != "" {
				note = a.Notice + "\n" + note
			}
			a.Notice = note
		} else if debug != "" {
			fmt.Fprintln(h.cfg.Stderr, debug)
		}
	}
	if h.missedNotice != "" {
		if a.Notice != "" {
			a.Notice = h.missedNotice + "\n" + a.Notice
		} else {
			a.Notice = h.missedNotice
		}
	}
	if h.missedText != "" && !a.Deny {
		if a.Context != "" {
			a.Context = h.missedText + "\n" + a.Context
		} else {
			a.Context = h.missedText
		}
	}
	h.denied = a.Deny
	r := h.cfg.Wire.Encode(h.ev, a)
	h.cfg.Stdout.Write(r.Stdout)
	h.cfg.Stderr.Write(r.Stderr)
	h.code = r.Exit
}

// deniedCall reports whether the call was denied: a denied call never runs, so no post event is
// waited for.
func (h *hookRun) deniedCall() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.denied
}

// envNoticeMarker remembers the last EnvNotice said, so that it is said once per change.
const envNoticeMarker = "env_ignored"

// envNotice is Config.EnvNotice, asked once.
func (h *hookRun) envNotice() string {
	if h.cfg.EnvNotice == nil {
		return ""
	}
	if !h.noticeRead {
		h.notice, h.noticeRead = h.cfg.EnvNotice(), true
	}
	return h.notice
}

// quickRead bounds the first read of stdin that quickEvent decodes on its own: an event of
// Claude Code's holds a few KB unless its arguments are a file, and a larger fresh buffer costs a
// new process more (in page faults) than decoding the event.
const quickRead = 16 << 10

// quickEvent decodes the first read of stdin, on the calling goroutine: Config.First when Main
// made it, else one read made here. Agents write the whole event at once, so one read usually
// holds it, and then no reader goroutine is started. When the read does not hold a whole event (a
// large or slow tool_input, or input that does not decode), ok is false. Either way rest is stdin
// with what was read put back in front, for the reader goroutine or a hand-over. A stdin that
// stalls before its first byte blocks here as it would in the goroutine: the watchdog answers.
func (h *hookRun) quickEvent() (ev Event, rest io.Reader, ok bool) {
	first, rest := h.cfg.First, h.cfg.Stdin
	if first == nil {
		first, rest = readOnce(h.cfg.Stdin)
	}
	if len(first) == 0 {
		return Event{}, rest, false
	}
	ev, err := h.cfg.Wire.Decode(bytes.NewReader(first), h.serverList, func(Event) {})
	return ev, rest, err == nil
}

// deny is an answer that blocks the call; reason is shown to the model.
func deny(reason string) Answer { return Answer{Deny: true, Reason: reason} }

// withContext is an answer that adds text to the model's context.
func withContext(text string) Answer { return Answer{Context: text} }

// bindFleet connects to the fleet-shared board when the user configured one (internal/fleet).
// A configuration that cannot be used is said once and the gate goes on with the local ledger.
func (h *hookRun) bindFleet() {
	tool := h.ev.Key
	if h.ev.Kind == SessionStart {
		tool = ""
	}
	// Every exchange with the board of this run shares one bound, so that a board answering just
	// under its timeout cannot add up to the hook's budget; past it the gate decides locally.
	ctx, cancel := context.WithTimeout(context.Background(), fleetBudget)
	h.fleetCancel = cancel
	if h.cfg.Board == nil {
		return
	}
	h.fleet, h.fleetErr = h.cfg.Board(ctx, h.p, tool, h.now, h.ev.SessionID)
	if h.fleet != nil {
		// Time spent queued on the ledger lock behind the project's other hooks is given back to
		// the board's exchanges, up to the margin the hook keeps to decide and answer.
		h.fleet.SetLatest(h.deadline.Add(-indexMargin))
	}
}

// unbindFleet ends the run's exchanges with the fleet board and closes its connection.
func (h *hookRun) unbindFleet() {
	if h.fleetCancel != nil {
		h.fleetCancel()
	}
	if h.fleet != nil {
		h.fleet.Close()
	}
}

// fleetNotice is the systemMessage about the fleet board for this answer: said once when the board
// is found away (or its configuration unusable), once when it answers again, otherwise nothing.
// debug is the line for stderr alone (the agent's debug log) of a call decided without the board
// after that was said: every such call says so there.
func (h *hookRun) fleetNotice() (notice, debug string) {
	switch {
	case h.fleetErr != nil:
		if h.p.FleetAway(h.fleetErr, h.now) {
			return fmt.Sprintf(term.WarningPrefix+"%v; circuits are decided from this project's ledger alone (said once)", h.fleetErr), ""
		}
		return "", fmt.Sprintf(term.Prefix+"%v; decided from this project's ledger alone", h.fleetErr)
	case h.fleet == nil:
	case h.fleet.Outcome().Away != nil:
		if h.p.FleetAway(h.fleet.Outcome().Away, h.now) {
			return fmt.Sprintf(term.WarningPrefix+"the fleet-shared board %s is unreachable (%v); circuits are decided from this project's ledger alone until it answers (said once; 'mcp-circuit-breaker doctor' checks it)",
				h.fleet.Redacted(), h.fleet.Outcome().Away), ""
		}
		return "", fmt.Sprintf(term.Prefix+"the fleet-shared board %s is still unreachable (%v); decided from this project's ledger alone",
			h.fleet.Redacted(), h.fleet.Outcome().Away)
	case h.fleet.Outcome().Shared:
		var notes []string
		if h.p.FleetBack() {
			notes = append(notes, fmt.Sprintf(term.Prefix+"the fleet-shared board %s answers again; circuits are shared again", h.fleet.Redacted()))
		}
		if l := h.fleet.Outcome(); l.Refused > 0 {
			// A record another writer left on the board that this session cannot trust: said
			// once per reason, and the circuit is decided without it.
			msg := fmt.Sprintf(term.WarningPrefix+"the fleet-shared board holds %d circuit record(s) for %s that this session refused (%s); they were decided without, and the next write replaces them ('mcp-circuit-breaker status --fleet' lists them)",
				l.Refused, ledger.Key(h.ev.Key).Server(), l.RefusedWhy)
			if h.p.SayOnce("fleet_refused", l.RefusedWhy) {
				notes = append(notes, msg)
			}
		}
		return strings.Join(notes, "\n"), ""
	}
	return "", ""
}

func (h *hookRun) setOnError(pol *states.Policy) {
	h.mu.Lock()
	h.onError = pol.For(h.ev.Key, "").OnError
	h.mu.Unlock()
}

// fail answers when the gate cannot decide: on PreToolUse it follows on_error; every event says so
// on stderr and in systemMessage, so a broken gate is visible and not silently off.
func (h *hookRun) fail(err error) {
	h.mu.Lock()
	ev, onError := h.ev, h.onError
	h.mu.Unlock()
	subject := ev.Key
	if subject == "" {
		subject = ev.Hook // SessionStart has no tool
	}
	denied := ev.Kind == Before && onError == states.OnErrorDeny
	reason, notice := message.GateFailure(term.Prefix, subject, err, errors.Is(err, ledger.ErrCorrupt), denied)
	var a Answer
	if denied {
		a = deny(reason)
	}
	a.Notice = notice
	fmt.Fprintln(h.cfg.Stderr, a.Notice)
	h.answer(a)
}

// noProject answers an event for a project directory that does not exist: nothing is known there
// and nothing may be created, so the call goes ahead unchecked, and that is said loudly.
func (h *hookRun) noProject(err error) {
	subject := h.ev.Key
	if subject == "" {
		subject = h.ev.Hook
	}
	msg := fmt.Sprintf(term.WarningPrefix+"%v: the gate reads and creates nothing there, so %s goes ahead unchecked; "+
		"point --dir, MCP_CIRCUIT_DIR or CLAUDE_PROJECT_DIR at an existing project directory", err, subject)
	fmt.Fprintln(h.cfg.Stderr, msg)
	h.answer(Answer{Notice: msg})
}

// clock reads the time again (under the ledger lock): the real clock, or MCP_CIRCUIT_NOW when
// it pins it.
func (h *hookRun) clock() time.Time {
	if t, err := project.Now(h.cfg.Getenv); err == nil {
		return t
	}
	return h.now
}

func (h *hookRun) call() states.Call { return callOf(h.ev) }

func callOf(ev Event) states.Call {
	// The agent's server name is kept only when it is a server name of this tool
	// (ledger.ServerName): it is written to the ledger and shown to the model.
	server := ev.Server
	if ledger.ServerName(server, ledger.Key(ev.Key)) != server {
		server = ""
	}
	source := ledger.SourceHook
	if ev.Recorder != "" {
		source = ev.Recorder
	}
	return states.Call{Tool: ev.Key, Server: server, SessionID: ev.SessionID,
		ToolUseID: ev.ToolUseID, Source: source, Hash: ev.ArgsHash}
}

func (h *hookRun) pre() error {
	tool := h.ev.Key
	var s *states.Store
	var board *states.Board
	var first *states.Decision
	var err error
	if h.early == nil {
		s, board, err := h.view()
		h.decideEarly(s, board, err, false)
	}
	e := h.early
	s, board, err, first = e.s, e.board, e.err, e.first
	if err != nil {
		// The policy is read only off the hot path, so it is read here: an unreadable ledger must
		// follow on_error from policy.yaml, not the default.
		h.policy()
		return err
	}
	if a, ok := h.ambiguous(board); ok {
		if !project.Shadow(h.cfg.Getenv) {
			h.answer(a)
			return nil
		}
		term.Notef(h.cfg.Stderr, "shadow mode: would have denied %s (%s)", tool, strings.SplitN(a.Reason, "\n", 2)[0])
	}
	if len(e.undecided) > 0 {
		// Some of its circuits could not be read in time: what is known decides (decideEarly),
		// and nothing is recorded on what is not.
		h.mu.Lock()
		known := h.known
		h.mu.Unlock()
		if known == nil || !known.Deny {
			h.policy() // on_error from policy.yaml
			return &states.UndecidedError{Keys: e.undecided, Note: e.board.IndexNote}
		}
		fmt.Fprintln(h.cfg.Stderr, known.Notice)
		h.answer(*known)
		return nil
	}
	res, err := s.GateOn(board, states.GateRequest{
		Call: h.call(), Now: h.now, Clock: h.clock, Shadow: project.Shadow(h.cfg.Getenv),
		Policy: func() (*states.Policy, error) { return h.policy(), nil },
		Refine: h.p.WithFingerprint,
		First:  first, // decided once on this view, while the event was read
	})
	if err != nil {
		return err
	}
	h.boards = append(h.boards, res.Board)
	d, pol := res.Decision, res.Policy
	switch {
	case d.Shadow && d.Block == states.BlockStreak:
		term.Notef(h.cfg.Stderr, "shadow mode: would have denied %s once (%d different calls in a row failed on their own terms)", tool, d.Streak.Count)
	case d.Shadow && d.Block == states.BlockRunaway:
		term.Notef(h.cfg.Stderr, "shadow mode: would have denied %s once (the runaway guard: this session's last %d MCP calls failed in a row)", tool, d.Run.Count)
	case d.Shadow:
		term.Notef(h.cfg.Stderr, "shadow mode: would have denied %s (%s is %s)", tool, d.Circuit.Key, d.Circuit.State)
	case !d.Allowed && res.Unrecorded != nil && d.Block == states.BlockStreak:
		// The notice could not be recorded, so the streak would not start over: the call goes,
		// and the next one is held back instead.
		term.Warnf(h.cfg.Stderr, "%v; let %s go rather than hold it back for its streak of call errors without recording it", res.Unrecorded, tool)
	case !d.Allowed && res.Unrecorded != nil && d.Block == states.BlockRunaway:
		// As for the streak guard: an unrecorded deny would not start the run over.
		term.Warnf(h.cfg.Stderr, "%v; let %s go rather than hold it back for the session's failures in a row without recording it", res.Unrecorded, tool)
	case !d.Allowed && res.Unrecorded != nil:
		// The circuit is known to be OPEN: deny rather than let a dead call through; only its
		// blocked entry is lost, and that is said.
		msg := fmt.Sprintf(term.Prefix+"%v; denied %s (its circuit is OPEN) without recording the blocked call", res.Unrecorded, tool)
		fmt.Fprintln(h.cfg.Stderr, msg)
		a := deny(h.denyReason(res.Board, d, pol))
		a.Notice = msg
		h.answer(a)
	case !d.Allowed && d.Block == states.BlockRunaway:
		// The user hears of it too, once: the deny is the run's one notice.
		a := deny(h.denyReason(res.Board, d, pol))
		a.Notice = message.RunawayNotice(tool, *d.Run)
		h.answer(a)
	case !d.Allowed:
		h.answer(deny(h.denyReason(res.Board, d, pol)))
	case d.Trial && d.Probe:
		return h.probeTrial(s, d, pol)
	case d.Trial:
		h.answer(withContext(message.Trial(d)))
	}
	return nil
}

// ambiguous is the deny of a call whose tool name may also stand for other circuits' tools
// (Event.Readings, Copilot CLI's <server>-<tool> when two configured servers start it), when one
// of them is not CLOSED, or the call's own circuit has a trial due: the gate cannot tell which
// server the agent will call, so it denies rather than guess, and the name cannot be a trial's.
// ok is false when the name has one reading, when every reading is CLOSED, and when the call's
// own circuit denies it: that is the usual deny, which records the blocked call. A deny for an
// ambiguous name records nothing.
func (h *hookRun) ambiguous(board *states.Board) (Answer, bool) {
	if len(h.ev.Readings) == 0 || board == nil {
		return Answer{}, false
	}
	pol := h.policy()
	call := h.call()
	own := board.Gate(call, h.now, pol, false)
	if !own.Allowed {
		return Answer{}, false
	}
	key, b, d := call.Tool, board, own
	if !own.Trial {
		d = states.Decision{Allowed: true}
		for _, k := range h.ev.Readings {
			if !serverTool(k) || !ledger.ValidToolName(k) {
				continue
			}
			s, err := h.storeFor(k, false)
			if err != nil {
				continue
			}
			rb, err := s.View()
			if err != nil || !rb.Holds(k) {
				continue
			}
			c := call
			c.Tool, c.Server = k, ""
			if rd := rb.Gate(c, h.now, pol, false); !rd.Allowed || rd.Trial {
				key, b, d = k, rb, rd
				break
			}
		}
		if d.Allowed && !d.Trial {
			return Answer{}, false
		}
	}
	if d.Allowed {
		// A trial is due, but not one an ambiguous name may take: denied as OPEN, trial now.
		d = states.Decision{Circuit: d.Circuit, Block: states.BlockOpen, RetryAt: h.now}
	}
	reason := h.buildDenyReasonFor(b, d, pol, key)
	called := h.ev.Tool
	if !ledger.ValidToolName(called) {
		called = h.ev.Key
	}
	line := message.Ambiguous(called, append([]string{h.ev.Key}, h.ev.Readings...), key)
	if first, rest, ok := strings.Cut(reason, "\n"); ok {
		reason = first + "\n" + line + rest
	}
	return deny(reason), true
}

// denyReason is what the model reads when a call is denied: the notice, type and cause, when a
// trial becomes possible, "do not retry", and the best fallbacks that fit in the budget.
func (h *hookRun) denyReason(b *states.Board, d states.Decision, pol *states.Policy) string {
	memo := d.Circuit.Key + "\x00" + d.Block
	if r, ok := h.reasons[memo]; ok {
		return r
	}
	r := h.buildDenyReasonFor(b, d, pol, h.ev.Key)
	if h.reasons == nil {
		h.reasons = map[string]string{}
	}
	h.reasons[memo] = r
	return r
}

// buildDenyReasonFor is the deny reason of decision d about the call of tool key.
func (h *hookRun) buildDenyReasonFor(b *states.Board, d states.Decision, pol *states.Policy, key string) string {
	switch d.Block {
	case states.BlockLoop:
		return redact.RedactKnown(h.calledAs(message.LoopReason(key, *d.Loop, d.RetryAt, h.now), key), h.p.Secrets())
	case states.BlockStreak:
		return redact.RedactKnown(h.calledAs(message.StreakReason(key, *d.Streak), key), h.p.Secrets())
	case states.BlockRunaway:
		return h.runawayReason(b, d, key)
	}
	var sb strings.Builder
	origin := ""
	if h.fleet != nil && d.Circuit != nil {
		origin = h.fleet.Origin(d.Circuit.Key)
	}
	sb.WriteString(h.calledAs(message.DenyHead(d, key, h.now, pol, origin), key))
	req, err := h.p.DenyFallbacks(b, d, h.now)
	if err != nil {
		term.Warnf(h.cfg.Stderr, "fallbacks: %v", err)
	}
	// The ledger's texts in it may have been written by hand: redact every configured value.
	head := redact.RedactKnown(sb.String(), h.p.Secrets())
	room := MaxDenyReason - len([]rune(head))
	if room < 100 {
		head = string([]rune(head)[:MaxDenyReason-100])
		room = 100
	}
	return head + fallbacks.Short(fallbacks.Propose(req), room)
}

// runawayReason is the runaway guard's deny reason: what happened (message.RunawayReason), then,
// for each server of the run, the fallbacks of its latest failing tool that fit in the budget
// (substitutes and ways to degrade; waiting is no advice for a session that is running away).
func (h *hookRun) runawayReason(b *states.Board, d states.Decision, key string) string {
	head := redact.RedactKnown(h.calledAs(message.RunawayReason(key, *d.Run), key), h.p.Secrets())
	latest := map[string]string{} // server → its tool that failed last in the run
	var servers []string
	for _, k := range d.Run.Tools {
		srv := ledger.Key(k).Server()
		if _, ok := latest[srv]; !ok {
			servers = append(servers, srv)
		}
		latest[srv] = k
	}
	var sb strings.Builder
	sb.WriteString(head)
	for i, srv := range servers {
		room := (MaxDenyReason - len([]rune(sb.String()))) / (len(servers) - i)
		if room < 100 {
			break
		}
		circ := b.Get(latest[srv])
		if circ == nil {
			circ = &states.Circuit{Key: latest[srv], State: ledger.Closed}
		}
		c := *circ
		if c.FailureType == "" {
			c.FailureType = d.Run.Type
		}
		req, err := h.p.FallbackRequestUntil(b, &c, h.now, h.now)
		if err != nil {
			term.Warnf(h.cfg.Stderr, "fallbacks: %v", err)
		}
		var opts []fallbacks.Option
		for _, o := range fallbacks.Propose(req) {
			if o.Kind != fallbacks.KindRetry {
				opts = append(opts, o)
			}
		}
		line := "\nInstead of " + srv + " (" + c.Key + "): "
		if short := fallbacks.Short(opts, room-len([]rune(line))); short != "" {
			sb.WriteString(line + short)
		}
	}
	return sb.String()
}

// calledAs puts, after the first line of a deny reason, the name the agent gave the tool when it
// is not the circuit key the reason speaks of (message.CalledAs); the agent's name is one it sent,
// so only a valid tool name is repeated to the model.
func (h *hookRun) calledAs(reason, key string) string {
	if !ledger.ValidToolName(h.ev.Tool) {
		return reason
	}
	line := message.CalledAs(h.ev.Tool, key)
	first, rest, ok := strings.Cut(reason, "\n")
	if line == "" || !ok {
		return reason
	}
	return first + "\n" + line + rest
}

// indexMargin is what a hook keeps of its budget for deciding and answering when, on a large
// ledger without a snapshot, it reads the whole ledger backwards to save the provisional snapshot
// (states.Bound.IndexBy) that makes the next calls fast.
const indexMargin = 400 * time.Millisecond

// watchdogLook bounds the watchdog's look for a trip of a call's circuits before it lets the call
// through (states.Store.Tripped): the answer still comes within HookTimeout. A test budget shorter
// than the product's shortens it in proportion (a call left no time), a longer one does not.
const watchdogLook = 250 * time.Millisecond

// answerMargin is what a hook keeps of its budget for answering (a deny appends under the lock)
// when its read of a large ledger without a snapshot runs long: past it the read stops, and a
// circuit it could not read is denied when the ledger has tripped it (states.Bound.StopBy).
const answerMargin = 350 * time.Millisecond

// store returns the project's store, bounded to the circuits of the event's tool and its server:
// without a usable snapshot the hook still decides within its budget (states.Bound).
func (h *hookRun) store(create bool) (*states.Store, error) { return h.storeFor(h.ev.Key, create) }

// storeFor is store for the circuits of tool ("" for every circuit: SessionStart).
func (h *hookRun) storeFor(tool string, create bool) (*states.Store, error) {
	s, err := h.p.Store(create)
	if err != nil {
		return nil, err
	}
	var keys []string
	switch {
	case tool != "":
		keys = ledger.Key(tool).Circuits()
	case h.cfg.CatchUp == nil:
		// SessionStart lists every circuit: without a catch-up it reads the whole ledger.
		return s, nil
	}
	// SessionStart asks for no key: on a large ledger without a snapshot it gets every circuit
	// from the provisional snapshot, or, when there is none, writes it (time allowing) and gets a
	// Partial board, and the catch-up runs: it never reads every item within its budget.
	s.Bound = &states.Bound{Keys: keys, Deadline: h.deadline.Add(-h.budget / 2), IndexBy: h.deadline.Add(-indexMargin),
		StopBy: h.deadline.Add(-answerMargin)}
	if h.cfg.CatchUp != nil {
		s.Bound.CatchUp = func() {
			if err := h.cfg.CatchUp(h.p.Dir); err != nil {
				term.Warnf(h.cfg.Stderr, "the snapshot of a large ledger could not be brought up to date in the background (%v); each call reads what it needs from the ledger's end", err)
			}
		}
	}
	return s, nil
}

// view reads the current circuits without the lock.
func (h *hookRun) view() (*states.Store, *states.Board, error) {
	s, err := h.store(false)
	if err != nil {
		return nil, nil, err
	}
	board, err := s.View()
	if err == nil {
		h.damaged(s, board)
	}
	h.boards = append(h.boards, board)
	return s, board, err
}

func (h *hookRun) post() error {
	s, board, err := h.view()
	if err != nil {
		return err
	}
	tool := h.ev.Key
	success := func(b *states.Board) states.Outcome { return b.Success(h.call(), h.now) }
	if h.ev.Empty {
		// An empty result is recorded, to count the tool's row of them (docs/circuits.md).
		pol := h.policy()
		success = func(b *states.Board) states.Outcome { return b.EmptyResult(h.call(), h.now, pol) }
	} else if board.Quiet(tool) && board.Run(h.ev.SessionID, h.now) == nil || len(success(board).Entries) == 0 {
		return nil // the hot path writes nothing
	}
	if h.proxyCounted(h.ev) {
		return nil
	}
	var out states.Outcome
	if _, err := s.Update(func(b *states.Board) ([]ledger.Entry, error) {
		out = success(b)
		return out.Entries, nil
	}); err != nil {
		return err
	}
	var closed []string
	for _, en := range out.Entries {
		if en.ResetMethod != "" {
			closed = append(closed, en.Tool)
		}
	}
	var a Answer
	if len(closed) > 0 {
		a = Answer{Context: message.TrialClosed(closed), Notice: message.CloseNotice(closed, "a trial call succeeded")}
	}
	if out.EmptyStreak > 0 {
		a.Context = strings.TrimPrefix(a.Context+"\n"+message.EmptyStreak(tool, out.EmptyStreak), "\n")
	}
	if !a.IsZero() {
		h.answer(a)
	}
	return nil
}

func (h *hookRun) failure() error {
	msg, notice, err := h.recordFailure(h.ev)
	if err != nil || msg == "" {
		return err
	}
	h.answer(Answer{Context: msg, Notice: notice})
	return nil
}

// recordFailure counts the failure ev and returns what the model reads about it ("" for a quick
// interrupt, which never counts; a call interrupted after hang_after is a TIMEOUT, cause hung),
// and, when it tripped circuits, the notice that tells the user (once: only the failure that trips
// says it).
func (h *hookRun) recordFailure(ev Event) (msg, notice string, err error) {
	if h.proxyCounted(ev) {
		return "", "", nil
	}
	// The call's tool and argument values are evidence too: a text that names what the call asked
	// for is about that call (docs/classification.md).
	fe := failure.Evidence{Text: ev.Error, Code: ev.Code, Interrupt: ev.Interrupt, Duration: ev.Duration, Tool: ev.Key, Args: ev.Args}
	if fe.Interrupt && fe.Duration >= time.Second {
		// Only a call that ran for a while can have hung: the policy is read for those alone.
		fe.HangAfter = h.policy().For(ev.Key, ledger.Timeout).HangAfter
	}
	r := failure.Classify(fe, h.now)
	if r.Interrupt {
		return "", "", nil // the user pressed Esc on a call that had not hung: nothing counted
	}
	pol := h.policy()
	s, err := h.storeFor(ev.Key, true)
	if err != nil {
		return "", "", err
	}
	call := callOf(ev)
	call.Fingerprint = h.p.Fingerprint(call.Tool, r.Type)
	// The server's configured values (its env, headers, expanded variables) are redacted too: a
	// server that echoes its token in an error must not put it in the ledger. Read outside the lock.
	secrets := h.p.Secrets()
	text := redact.StoredTextKnown(ev.Error, secrets)
	var out states.Outcome
	board, err := s.Update(func(b *states.Board) ([]ledger.Entry, error) {
		out = b.Failure(call, project.FailureOf(r, text), h.now, pol)
		return out.Entries, nil
	})
	if err != nil {
		return "", "", err
	}
	// The failure is recorded whatever else is damaged; the damage is said.
	h.damaged(s, board)
	// The message quotes earlier entries too, which may have been written by hand.
	msg = redact.RedactKnown(h.p.FailureMessage(board, out, pol, h.now), secrets)
	return term.Prefix + term.Clip(msg, 8000), h.tripNotice(board, out.Tripped, pol), nil
}

// proxyCounted reports whether hook event ev is of a call the MCP proxy already recorded: an
// agent whose server runs through the proxy and that runs our hook too sees each call twice, and
// the proxy, which saw it on the wire first, has counted it (docs/proxy.md).
func (h *hookRun) proxyCounted(ev Event) bool {
	if ev.Recorder != "" || ev.ToolUseID == "" {
		return false
	}
	s, err := h.p.Store(false)
	if err != nil {
		return false
	}
	return s.Ledger.Recorded(ev.ToolUseID, ledger.SourceProxy)
}

// recordMissed counts the failures of earlier calls that the agent sent no event for (Event.Missed)
// before the event itself is handled, so that this call meets the circuit they tripped; what the
// model reads about them goes into this answer's context unless the call is denied (the deny
// reason then says it all). A failure that cannot be recorded is said, and the event is still
// handled.
func (h *hookRun) recordMissed() {
	var msgs, notices []string
	for _, m := range h.ev.Missed {
		if m.Kind != Failure || !ledger.Key(m.Key).IsMCP() || !ledger.ValidToolName(m.Key) {
			continue
		}
		if m.SessionID == "" {
			m.SessionID = h.ev.SessionID
		}
		msg, notice, err := h.recordFailure(m)
		if notice != "" {
			notices = append(notices, notice)
		}
		if err != nil {
			term.Warnf(h.cfg.Stderr, "hook: cannot record the earlier failure of %s: %v", m.Key, err)
			continue
		}
		if msg != "" {
			msgs = append(msgs, msg)
		}
	}
	h.missedText = strings.Join(msgs, "\n")
	if h.missedNotice != "" {
		notices = append([]string{h.missedNotice}, notices...) // the hung calls' trips
	}
	h.missedNotice = strings.Join(notices, "\n")
}

// tripNotice is the user's notice of the circuits keys that a failure just tripped on board, one
// line each; "" when it tripped none.
func (h *hookRun) tripNotice(board *states.Board, keys []string, pol *states.Policy) string {
	var lines []string
	for _, k := range keys {
		if c := board.Get(k); c != nil && c.State == ledger.Open {
			lines = append(lines, message.TripNotice(c, pol, h.now))
		}
	}
	return strings.Join(lines, "\n")
}

func (h *hookRun) sessionStart() error {
	_, board, err := h.view()
	if err != nil {
		return err
	}
	if board.Partial {
		// A large ledger without a snapshot: the catch-up was started; saying nothing would read
		// as "every circuit is CLOSED".
		msg := term.Prefix + "this project's ledger is large and its snapshot is being rebuilt in the background, so the circuits that are not CLOSED are not listed here; the gate still denies calls to OPEN tools. Run 'mcp-circuit-breaker status' to list them."
		a := Answer{Context: msg, Notice: msg}
		h.answer(a)
		return nil
	}
	pol := h.policy()
	var lines []string
	for _, k := range board.Keys() {
		if c := board.Get(k); c.State != ledger.Closed {
			lines = append(lines, "- "+message.DescribeStanding(c, h.p.StandingOf(c, h.now, pol), h.now))
		}
	}
	fleetLine := ""
	if h.fleet != nil {
		// The circuits other sessions opened come into the context too, not only at the first
		// call of each tool; the listing shares the run's bound for the board.
		ctx, cancel := context.WithTimeout(context.Background(), fleetBudget)
		shared, lerr := h.fleet.List(ctx, board.Keys(), h.now)
		cancel()
		if lerr != nil {
			fleetLine = message.FleetUnreachable(h.fleet.Redacted())
		} else {
			sort.Slice(shared, func(i, j int) bool { return shared[i].Key < shared[j].Key })
			for _, c := range shared {
				if l := board.Get(c.Key); c.State != ledger.Closed && (l == nil || l.State == ledger.Closed) {
					lines = append(lines, "- "+message.Describe(c, h.now, pol)+" (from the fleet-shared board)")
				}
			}
		}
	}
	shadow := project.Shadow(h.cfg.Getenv)
	var a Answer
	if len(lines) > 0 {
		a = withContext(message.SessionStart(lines, shadow))
	}
	if fleetLine != "" {
		if a.Context == "" {
			a.Context = fleetLine
		} else {
			a.Context += "\n" + fleetLine
		}
	}
	if shadow {
		a.Notice = term.Prefix + message.ShadowWarning
	}
	h.answer(a)
	return nil
}

// probeTrial runs the MCP probe that half_open: probe asks for instead of letting the real call be
// the trial: healthy closes the circuit and lets the call go; unhealthy re-opens it and denies.
// The permit (taken under the lock) keeps concurrent callers out while the probe runs without it.
// A probe that cannot run (no local config for the server, no probe binary) leaves the real call
// as the trial.
func (h *hookRun) probeTrial(s *states.Store, d states.Decision, pol *states.Policy) error {
	key := d.Circuit.Key
	var perr error = errors.New("no prober configured")
	// Claude Code's approvals bind us (docs/probes.md): a repository's server the user has not approved
	// is never started or connected to, so its trial is the real call, which Claude Code gates.
	unapproved := ""
	if srv, ok := h.p.ServerConfig(key); ok && !srv.Approval.Usable() {
		unapproved = fmt.Sprintf("server %s from %s is %s (%s), so no probe starts it", srv.Name, srv.Source, srv.Approval, srv.ApprovalNote)
		perr = errors.New(unapproved)
	} else if h.cfg.Probe != nil {
		// The probe and its stop fit in what is left of the hook's budget.
		wait := min(scaled(probeBudget), time.Until(h.deadline.Add(-probeStopGrace-100*time.Millisecond)))
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		perr = h.cfg.Probe(ctx, key)
		cancel()
	}
	if perr != nil {
		term.Warnf(h.cfg.Stderr, "half_open: probe for %s: %v; the call itself is the trial", key, perr)
		a := withContext(message.Trial(d))
		if unapproved != "" {
			a.Notice = term.Prefix + "half_open: probe for " + key + " falls back to a passive trial: " + unapproved + ". Approve the server in Claude Code to let the gate probe it."
		}
		h.answer(a)
		return nil
	}
	board, err := s.View()
	if err != nil {
		return err
	}
	if c := board.Get(key); c.Idle() || c.State == ledger.Closed {
		h.answer(Answer{Context: message.ProbeClosed(key), Notice: message.CloseNotice([]string{key}, "a probe of its server succeeded")})
		return nil
	}
	// The probe re-opened the circuit: this call is denied like any other while OPEN.
	res, err := s.GateOn(board, states.GateRequest{Call: h.call(), Now: h.now,
		Policy: func() (*states.Policy, error) { return pol, nil }})
	h.boards = append(h.boards, board, res.Board)
	if err != nil {
		return err
	}
	if !res.Allowed {
		a := deny(h.denyReason(res.Board, res.Decision, pol))
		// The probe re-opened the circuit: a trip, said to the user once, here.
		a.Notice = h.tripNotice(res.Board, []string{key}, pol)
		if res.Unrecorded != nil {
			a.Notice = strings.TrimSpace(a.Notice + "\n" + fmt.Sprintf(term.Prefix+"%v; denied %s without recording the blocked call", res.Unrecorded, h.ev.Key))
		}
		h.answer(a)
	}
	return nil
}

// Deadlines of a probe run by the hook (half_open: probe): each phase's bound, and the bound on the
// whole probe CLI, which stays under probeBudget so that the CLI ends on its own (stopping the
// server's process group and recording a TIMEOUT) before the hook has to stop it.
const (
	hookProbeConnect    = 500 * time.Millisecond
	hookProbeInitialize = 1200 * time.Millisecond
	hookProbeList       = 500 * time.Millisecond
	hookProbeTimeout    = probeBudget - 300*time.Millisecond
	// probeStopGrace is how long the probe CLI gets, after SIGTERM, to stop its server and exit
	// before it is killed; probeBudget plus this stays within Budget.
	probeStopGrace = 300 * time.Millisecond
)

// ExecProber returns a Probe that runs `bin probe KEY --dir DIR` with the hook's deadlines; the CLI
// records its outcome in the ledger itself. Exit 0 (healthy) and 3 (unhealthy) are results;
// anything else is an error. When ctx ends first the CLI gets SIGTERM, on which it cancels the probe
// and kills the server's process group, and SIGKILL only probeStopGrace later, so no server it
// started outlives the hook.
func ExecProber(bin, dir string, env []string) func(context.Context, string) error {
	return func(ctx context.Context, key string) error {
		cmd := exec.CommandContext(ctx, bin, "probe", key, "--dir", dir, "--timeout", scaled(hookProbeTimeout).String(),
			"--connect-timeout", scaled(hookProbeConnect).String(), "--initialize-timeout", scaled(hookProbeInitialize).String(),
			"--list-timeout", scaled(hookProbeList).String())
		cmd.Env = env
		cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
		cmd.WaitDelay = probeStopGrace
		var stderr strings.Builder
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 3 {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s probe %s: %v: %s", bin, key, err, project.Clip(errorLine(stderr.String()), 300))
		}
		return nil
	}
}

// errorLine picks the CLI's error line out of its stderr, else the last line.
func errorLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for _, l := range lines {
		if msg, ok := strings.CutPrefix(l, term.ErrorPrefix); ok {
			return msg
		}
	}
	return lines[len(lines)-1]
}
