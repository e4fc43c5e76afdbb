package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/failure"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/fallbacks"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/hookio"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/store"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/probe"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// hookBudget bounds a hook run: Claude Code would wait up to the hook's timeout, and a gate that
// hangs stalls every MCP call (SPEC §6: never past 3 s).
const hookBudget = 2500 * time.Millisecond

// maxDenyReason is the budget of a deny reason (SPEC §6).
const maxDenyReason = 1500

func hookCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:  "hook",
		Usage: "Claude Code hook entry point: reads the event JSON on stdin (PreToolUse, PostToolUse, PostToolUseFailure, SessionStart)",
		Description: "Wire it for PreToolUse, PostToolUse and PostToolUseFailure with matcher mcp__.*, and for\n" +
			"SessionStart, in exec form (command + args). Exits 0 and answers with JSON on stdout.",
		Flags:  []cli.Flag{dirFlag()},
		Action: e.hook,
	}
}

// hookRun is one hook invocation: it answers exactly once, either with the decision or, when the
// budget runs out first, with the on_error fallback.
type hookRun struct {
	e       *Env
	c       *cli.Context
	ev      hookio.Event
	now     time.Time
	mu      sync.Mutex
	done    bool
	onError string
}

func (h *hookRun) answer(a hookio.Answer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done {
		return
	}
	h.done = true
	h.e.Stdout.Write(a.Encode())
}

func (e *Env) hook(c *cli.Context) error {
	h := &hookRun{e: e, c: c, onError: states.OnErrorAllow}
	timer := time.AfterFunc(hookBudget, func() {
		h.fail(fmt.Errorf("no decision within %s", hookBudget))
		os.Exit(0)
	})
	defer timer.Stop()
	ev, err := hookio.Read(e.Stdin)
	if err != nil {
		// Unparsable input: allow, and say why (SPEC §6). Nothing is known of the tool.
		fmt.Fprintf(e.Stderr, "mcp-circuit-breaker: warning: hook: cannot read the event: %v; allowing the call\n", err)
		return nil
	}
	h.ev = ev
	if ev.Name != "SessionStart" && !strings.HasPrefix(ev.ToolName, "mcp__") {
		return nil // not an MCP tool: allowed at once, no state read
	}
	if h.now, err = e.now(); err != nil {
		h.fail(err)
		return nil
	}
	switch ev.Name {
	case "PreToolUse":
		err = h.pre()
	case "PostToolUse":
		err = h.post()
	case "PostToolUseFailure":
		err = h.failure()
	case "SessionStart":
		err = h.sessionStart()
	}
	if err != nil {
		h.fail(err)
	}
	return nil
}

// fail answers when the gate cannot decide: on PreToolUse it follows on_error; every event says so
// on stderr and in systemMessage, so a broken gate is visible and not silently off.
func (h *hookRun) fail(err error) {
	subject := h.ev.ToolName
	if subject == "" {
		subject = h.ev.Name // SessionStart has no tool
	}
	msg := fmt.Sprintf("mcp-circuit-breaker: the gate could not decide for %s: %v", subject, err)
	hint := "run 'mcp-circuit-breaker doctor' or 'mcp-circuit-breaker ledger verify'"
	if errors.Is(err, ledger.ErrCorrupt) {
		hint = "run 'mcp-circuit-breaker ledger verify', then 'mcp-circuit-breaker ledger repair'"
	}
	var a hookio.Answer
	if h.ev.Name == "PreToolUse" && h.onError == states.OnErrorDeny {
		a = hookio.Deny(msg + ". Policy on_error is deny, so MCP calls are blocked until the gate works again; do not retry, tell the user.")
		a.SystemMessage = msg + " — denied (on_error: deny); " + hint
	} else {
		a.SystemMessage = msg + " — allowed (on_error: allow); " + hint
	}
	fmt.Fprintln(h.e.Stderr, a.SystemMessage)
	h.answer(a)
}

func (h *hookRun) call() states.Call {
	return states.Call{Tool: h.ev.ToolName, Server: h.ev.MCPServer, SessionID: h.ev.SessionID,
		ToolUseID: h.ev.ToolUseID, Source: ledger.SourceHook}
}

func (h *hookRun) pre() error {
	s, err := h.e.openStore(h.c, false)
	if err != nil {
		return err
	}
	tool := h.ev.ToolName
	board, err := s.View()
	if err != nil {
		// The policy is read only off the hot path, so it is read here: an unreadable ledger must
		// follow on_error from policy.yaml, not the default.
		if pol, perr := h.e.loadPolicy(h.c); perr == nil {
			h.onError = pol.For(tool, "").OnError
		}
		return err
	}
	if board.Get(tool) == nil && board.Get(states.ServerKey(tool)) == nil {
		return nil // the hot path: nothing recorded for this tool or its server
	}
	pol, err := h.e.loadPolicy(h.c)
	if err != nil {
		return err
	}
	h.onError = pol.For(tool, "").OnError
	call := h.e.withFingerprint(h.c, board, h.call())
	shadow := h.e.shadow()
	if d := board.Gate(call, h.now, pol, shadow); d.Allowed && !d.Trial && len(d.Entries) == 0 {
		return nil
	}
	// Decide again under the lock: only one caller may take a half-open permit.
	var d states.Decision
	board, err = s.Update(func(b *states.Board) ([]ledger.Entry, error) {
		d = b.Gate(call, h.now, pol, shadow)
		return d.Entries, nil
	})
	if err != nil {
		return err
	}
	switch {
	case d.Shadow:
		fmt.Fprintf(h.e.Stderr, "mcp-circuit-breaker: shadow mode: would have denied %s (%s is %s)\n", tool, d.Circuit.Key, d.Circuit.State)
	case !d.Allowed:
		h.answer(hookio.Deny(h.denyReason(board, d, pol)))
	case d.Trial && d.Probe:
		return h.probeTrial(s, d, pol)
	case d.Trial:
		h.answer(hookio.Context("PreToolUse", fmt.Sprintf(
			"mcp-circuit-breaker: %s was OPEN (%s) and its cooldown is over: this call is the single HALF-OPEN trial. If it succeeds the circuit closes; if it fails the circuit re-opens with a doubled cooldown, so do not retry it on failure.",
			d.Circuit.Key, d.Circuit.FailureType)))
	}
	return nil
}

// denyReason is what the model reads when a call is denied: the notice, type and cause, when a
// trial becomes possible, "do not retry", and the best fallbacks that fit in the budget.
func (h *hookRun) denyReason(b *states.Board, d states.Decision, pol *states.Policy) string {
	c := d.Circuit
	var sb strings.Builder
	sb.WriteString(states.Notice(c))
	sb.WriteString("\n")
	if c.Key != h.ev.ToolName {
		fmt.Fprintf(&sb, "%s is blocked because the server circuit %s is open: every tool of this server is blocked.\n", h.ev.ToolName, c.Key)
	}
	if d.Block == states.BlockInFlight {
		sb.WriteString("A trial call is in flight for this circuit; wait for its result.\n")
	}
	sb.WriteString(tripDetail(c, h.now, pol))
	sb.WriteString("\nDo not retry this tool. Use a fallback:\n")
	req, err := h.e.fallbackRequest(h.c, b, c, h.now)
	if err != nil {
		fmt.Fprintf(h.e.Stderr, "mcp-circuit-breaker: warning: fallbacks: %v\n", err)
	}
	head := sb.String()
	room := maxDenyReason - len([]rune(head))
	if room < 100 {
		head = string([]rune(head)[:maxDenyReason-100])
		room = 100
	}
	return head + fallbacks.Short(fallbacks.Propose(req), room)
}

func (h *hookRun) post() error {
	s, err := h.e.openStore(h.c, false)
	if err != nil {
		return err
	}
	board, err := s.View()
	if err != nil {
		return err
	}
	tool := h.ev.ToolName
	if board.Get(tool).Idle() && board.Get(states.ServerKey(tool)).Idle() {
		return nil // the hot path writes nothing
	}
	var out states.Outcome
	if _, err := s.Update(func(b *states.Board) ([]ledger.Entry, error) {
		out = b.Success(h.call(), h.now)
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
	if len(closed) > 0 {
		h.answer(hookio.Context("PostToolUse", fmt.Sprintf("mcp-circuit-breaker: the call succeeded; circuit CLOSED for %s (reset_method: probe_success). The tool may be used again.", strings.Join(closed, ", "))))
	}
	return nil
}

func (h *hookRun) failure() error {
	r := failure.Classify(failure.Evidence{Text: h.ev.Error, Interrupt: h.ev.IsInterrupt}, h.now)
	if r.Interrupt {
		return nil // the user pressed Esc: not a failure, nothing counted
	}
	pol, err := h.e.loadPolicy(h.c)
	if err != nil {
		return err
	}
	s, err := h.e.openStore(h.c, true)
	if err != nil {
		return err
	}
	call := h.call()
	call.Fingerprint = h.e.fingerprint(h.c, call.Tool, r.Type)
	var out states.Outcome
	board, err := s.Update(func(b *states.Board) ([]ledger.Entry, error) {
		out = b.Failure(call, r, failure.StoredText(h.ev.Error), h.now, pol)
		return out.Entries, nil
	})
	if err != nil {
		return err
	}
	msg := h.e.failureMessage(h.c, board, out, pol, h.now)
	h.answer(hookio.Context("PostToolUseFailure", "mcp-circuit-breaker: "+clipRunes(msg, 8000)))
	return nil
}

func clipRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func (h *hookRun) sessionStart() error {
	s, err := h.e.openStore(h.c, false)
	if err != nil {
		return err
	}
	board, err := s.View()
	if err != nil {
		return err
	}
	pol, err := h.e.loadPolicy(h.c)
	if err != nil {
		return err
	}
	var lines []string
	for _, k := range board.Keys() {
		if c := board.Get(k); c.State != ledger.Closed {
			lines = append(lines, "- "+states.Describe(c, h.now, pol))
		}
	}
	var a hookio.Answer
	if len(lines) > 0 {
		text := "mcp-circuit-breaker: these MCP circuits are not CLOSED (from .claude/mcp_circuit/circuit_log.yaml, which outlives the context window):\n" +
			strings.Join(lines, "\n") +
			"\nDo not call tools whose circuit is OPEN: the PreToolUse gate denies them. For alternatives run: mcp-circuit-breaker fallbacks TOOL"
		a = hookio.Context("SessionStart", clipRunes(text, 9000))
	}
	if h.e.shadow() {
		a.SystemMessage = "mcp-circuit-breaker: " + shadowWarning
	}
	h.answer(a)
	return nil
}

// probeBudget bounds the probe the gate runs for half_open: probe, inside the hook's budget.
var probeBudget = probe.Options{Connect: 500 * time.Millisecond, Initialize: 1200 * time.Millisecond, List: 500 * time.Millisecond}

// probeTrial runs the MCP probe that half_open: probe asks for instead of letting the real call be
// the trial: healthy closes the circuit and lets the call go; unhealthy re-opens it and denies.
// The permit (taken under the lock) keeps concurrent callers out while the probe runs without it.
func (h *hookRun) probeTrial(s *store.Store, d states.Decision, pol *states.Policy) error {
	key := d.Circuit.Key
	srv, ok := h.e.serverConfig(h.c, key)
	if !ok {
		h.answer(hookio.Context("PreToolUse", fmt.Sprintf(
			"mcp-circuit-breaker: %s is due for a trial and the policy asks for a probe, but server %s is in no local config file (plugin or remote server): this call is the single HALF-OPEN trial instead. Do not retry it on failure.",
			key, states.ServerOf(key))))
		return nil
	}
	t := probeTarget{server: srv, key: key}
	if !ledger.IsServerKey(key) {
		t.tool = key[len("mcp__"+states.ServerOf(key)+"__"):]
	}
	opts := probeBudget
	opts.Tool, opts.Dir = t.tool, mustDir(h.e, h.c)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	o := probe.Probe(ctx, srv, opts)
	cancel()
	if _, err := h.e.recordProbe(s, pol, t, o, h.now); err != nil {
		return err
	}
	if o.Healthy {
		h.answer(hookio.Context("PreToolUse", fmt.Sprintf(
			"mcp-circuit-breaker: %s was OPEN; a probe of server %s just succeeded (handshake and tools/list in %d ms), so the circuit is CLOSED and this call goes ahead.",
			key, srv.Name, o.Duration.Milliseconds())))
		return nil
	}
	// The probe re-opened the circuit: this call is denied like any other while OPEN.
	var nd states.Decision
	board, err := s.Update(func(b *states.Board) ([]ledger.Entry, error) {
		nd = b.Gate(h.call(), h.now, pol, false)
		return nd.Entries, nil
	})
	if err != nil {
		return err
	}
	if !nd.Allowed {
		h.answer(hookio.Deny(h.denyReason(board, nd, pol)))
	}
	return nil
}
