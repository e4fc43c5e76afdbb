package proxy

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/agent"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/failure"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/term"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// Circuits is what the stdio and the HTTP proxy share: the server's name, the gate and the
// policy's times.
type Circuits struct {
	// Name is the server's name as the client knows it: its tools' circuits are
	// mcp__<Name>__<tool> (sanitized as Claude Code sanitizes names) and mcp__<Name>__*.
	Name string
	// Stderr gets the proxy's own notes (and, for stdio, the server's stderr as it is).
	Stderr io.Writer
	// Gate decides each call and records its outcome (HookGate).
	Gate Decider
	// HangAfter is the policy's hang_after of a tool key: a call still unanswered then is recorded
	// as a TIMEOUT (cause hung) at once. 0 never does.
	HangAfter func(key string) time.Duration
	// Deadline is how long a call of a tool key may run before the proxy answers the client with
	// a JSON-RPC error -32001 "Request timed out" in the server's stead, records a TIMEOUT, and
	// tells the server the call is cancelled (notifications/cancelled); the server's late answer
	// is dropped. nil or 0: no deadline, the client's own timeout applies.
	Deadline func(key string) time.Duration
	// HookDecided reports whether the agent's own hook (ours, on the same ledger) already wrote an
	// entry for the call with this tool-use id: it took the call's half-open trial permit, so the
	// proxy lets the call go as that trial instead of deciding it again. nil: never.
	HookDecided func(toolUseID string) bool
}

// timeoutCode and timeoutMessage are the JSON-RPC error a call past its deadline gets: the
// TypeScript SDK's RequestTimeout, which clients already show as a timed-out call.
const (
	timeoutCode    = -32001
	timeoutMessage = "Request timed out"
)

// breaker is the gate's side of one proxy run: the one queue of gate runs, decided and recorded
// in the order the messages were seen, so that an outcome is recorded before its response reaches
// the client, and the client's next call (and the client's own hook) meets it.
type breaker struct {
	Circuits
	jobs chan job
	// qmu keeps jobs open while a message is queued on it: close shuts the queue under the write
	// lock once the session is over, and a message read after that is not decided or recorded.
	qmu     sync.RWMutex
	stopped bool
	done    chan struct{}
}

func newBreaker(c Circuits) *breaker {
	b := &breaker{Circuits: c, jobs: make(chan job, 256), done: make(chan struct{})}
	go func() {
		defer close(b.done)
		b.work()
	}()
	return b
}

// close ends the queue and waits for the gate runs already on it.
func (b *breaker) close() {
	b.qmu.Lock()
	if !b.stopped {
		b.stopped = true
		close(b.jobs)
	}
	b.qmu.Unlock()
	<-b.done
}

// job is one gate run; answer is nil for a record whose answer nobody waits for, and record marks
// a record whose writing is waited for.
type job struct {
	ev     gate.Event
	answer chan gate.Answer
	record bool
}

func (b *breaker) work() {
	for j := range b.jobs {
		a := b.Gate(j.ev)
		if a.Notice != "" {
			fmt.Fprintln(b.Stderr, a.Notice)
		}
		if j.answer != nil && !j.record {
			j.answer <- a
			continue
		}
		// What the hook would have told the model of an outcome (a step-2 message, a trip, a
		// close) goes to the client's log: the result itself is relayed as the server sent it.
		if a.Context != "" {
			b.note(a.Context)
		}
		if j.answer != nil {
			j.answer <- a
		}
	}
}

// note writes text the gate meant for the model to stderr, the client's log of the server: each
// line escaped, since it quotes what servers said.
func (b *breaker) note(text string) {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = term.Escape(l)
	}
	fmt.Fprintln(b.Stderr, strings.Join(lines, "\n"))
}

// decide runs the gate for a call before it goes, after every outcome queued before it.
func (b *breaker) decide(ev gate.Event) gate.Answer {
	ch := make(chan gate.Answer, 1)
	if !b.queue(job{ev: ev, answer: ch}) {
		return gate.Answer{} // the session is over: nothing reaches the server any more
	}
	return <-ch
}

func (b *breaker) record(ev gate.Event) { b.queue(job{ev: ev}) }

// recorded records ev and returns once it is written: the answer it is the outcome of goes to the
// client after, so that the agent's own hook, if it runs ours too, finds the call counted.
func (b *breaker) recorded(ev gate.Event) {
	done := make(chan gate.Answer, 1)
	if b.queue(job{ev: ev, answer: done, record: true}) {
		<-done
	}
}

// queue puts j on the queue; false once the session is over.
func (b *breaker) queue(j job) bool {
	b.qmu.RLock()
	defer b.qmu.RUnlock()
	if b.stopped {
		return false
	}
	b.jobs <- j
	return true
}

// request is what the proxy reads of a message from the client: only a tools/call (and a
// cancellation of one) is looked at.
type request struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      struct {
			ToolUseID string `json:"claudecode/toolUseId"`
		} `json:"_meta"`
		RequestID json.RawMessage `json:"requestId"`
	} `json:"params"`
}

// isCall reports whether req is a tools/call the gate decides.
func (req request) isCall() bool {
	return req.Method == "tools/call" && len(req.ID) > 0 && req.Params.Name != ""
}

// admit decides the tools/call req: denied, it returns the answer the client gets instead (the
// server never sees the call); allowed (or a trial), the call to time (arm).
func (b *breaker) admit(req request) (c *call, deny []byte) {
	key := string(ledger.NameKey(b.Name, req.Params.Name))
	args := req.Params.Arguments
	if len(args) == 0 {
		args = []byte("{}")
	}
	hash, _ := agent.HashArgs(args)
	ev := gate.Event{Kind: gate.Before, Agent: "proxy", Recorder: ledger.SourceProxy, Key: key, Tool: key,
		Server: b.Name, ArgsHash: hash, ToolUseID: req.Params.Meta.ToolUseID}
	var a gate.Answer
	if ev.ToolUseID == "" || b.HookDecided == nil || !b.HookDecided(ev.ToolUseID) {
		a = b.decide(ev)
	}
	if a.Deny {
		return nil, denied(req.ID, a.Reason)
	}
	if a.Context != "" {
		b.note(a.Context) // a trial: the real call is it
	}
	return &call{id: req.ID, ev: ev, args: args, start: time.Now()}, nil
}

// arm starts call c's timers: onHang runs once hang_after passed, onDeadline once the deadline did.
func (b *breaker) arm(c *call, onHang, onDeadline func(*call)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if b.HangAfter != nil {
		if d := b.HangAfter(c.ev.Key); d > 0 {
			c.timers = append(c.timers, time.AfterFunc(d, func() { onHang(c) }))
		}
	}
	if b.Deadline != nil {
		if d := b.Deadline(c.ev.Key); d > 0 {
			c.timers = append(c.timers, time.AfterFunc(d, func() { onDeadline(c) }))
		}
	}
}

// hung records call c, still unanswered at hang_after, as the hook records a call interrupted
// after it: a TIMEOUT with cause hung. The call itself goes on.
func (b *breaker) hung(c *call) {
	if !c.settle(true) {
		return
	}
	ev := c.outcome(gate.Failure)
	ev.Interrupt = true
	b.record(ev)
}

// expire records call c, still unanswered at its deadline, as a TIMEOUT (unless hang_after
// already did), and returns the error response the client gets for it; ok is false when the call
// was answered first.
func (b *breaker) expire(c *call) (answer []byte, ok bool) {
	c.mu.Lock()
	if c.over {
		c.mu.Unlock()
		return nil, false
	}
	c.over, c.expired = true, true
	c.answer = rpcErrorLine(c.id, timeoutCode, timeoutMessage)
	wasHung := c.hung
	c.mu.Unlock()
	c.stop()
	if !wasHung {
		ev := c.outcome(gate.Failure)
		ev.Code, ev.Error = timeoutCode, fmt.Sprintf("%s: no answer within the deadline of %s", timeoutMessage, ev.Duration.Round(time.Millisecond))
		b.recorded(ev)
	}
	return c.answer, true
}

// answered records the outcome of call c from the server's response resp, unless it was already
// recorded (hung) or settled (past its deadline, cancelled); ok is false when the client already
// had its answer and resp must be dropped.
func (b *breaker) answered(c *call, resp response) (ok bool) {
	c.mu.Lock()
	over, wasHung, expired := c.over, c.hung, c.expired
	c.over = true
	c.mu.Unlock()
	if over {
		return !expired
	}
	c.stop()
	if !wasHung {
		b.recorded(resp.outcome(c))
	}
	return true
}

// failed records call c as failed by the transport (the server exited, the upstream is
// unreachable or answered 5xx) with text, unless hang_after already recorded it.
func (b *breaker) failed(c *call, text string) {
	c.mu.Lock()
	over, wasHung := c.over, c.hung
	c.over = true
	c.mu.Unlock()
	c.stop()
	if over || wasHung {
		return
	}
	ev := c.outcome(gate.Failure)
	ev.Error = text
	b.recorded(ev)
}

// call is a tools/call on its way to the server.
type call struct {
	id    json.RawMessage
	ev    gate.Event // the Before event: key, tool, arguments' hash, tool_use_id
	args  []byte
	start time.Time
	mu    sync.Mutex
	// timers are hang_after's and the deadline's.
	timers []*time.Timer
	// hung is set once the call ran past hang_after and was recorded as a TIMEOUT: its late
	// answer is relayed and records nothing more.
	hung bool
	// over is set once the call's outcome is known (answered, failed, cancelled, past its
	// deadline); expired once the client was answered in the server's stead, so the server's late
	// answer is dropped; answer is that answer.
	over, expired bool
	answer        []byte
}

// settle marks c hung (hang) or over (a cancellation); false when it already was.
func (c *call) settle(hang bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.over || (hang && c.hung) {
		return false
	}
	if hang {
		c.hung = true
	} else {
		c.over = true
	}
	return true
}

// stop stops c's timers.
func (c *call) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range c.timers {
		t.Stop()
	}
}

// isExpired reports whether the client got c's answer at its deadline.
func (c *call) isExpired() bool { return c.deadlineAnswer() != nil }

// deadlineAnswer is the error the client gets in the server's stead, nil while the deadline has
// not passed.
func (c *call) deadlineAnswer() []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.answer
}

// outcome is the event that records how call c ended.
func (c *call) outcome(kind gate.Kind) gate.Event {
	ev := c.ev
	ev.Kind = kind
	ev.Duration = time.Since(c.start)
	if kind == gate.Failure {
		ev.Args = failure.ArgsFromJSON(c.args)
	}
	return ev
}

// response is what the proxy reads of a message from the server that may answer a pending call.
type response struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result *struct {
		IsError bool `json:"isError"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// isResponse reports whether resp answers a request (it has an id and no method).
func (resp response) isResponse() bool { return resp.Method == "" && len(resp.ID) > 0 }

// outcome is how the server's answer resp ended call c: a JSON-RPC error by its code and message,
// an isError result by its text (with the call's arguments, which the classifier weighs), else a
// success.
func (resp response) outcome(c *call) gate.Event {
	switch {
	case resp.Error != nil:
		ev := c.outcome(gate.Failure)
		ev.Code, ev.Error = resp.Error.Code, resp.Error.Message
		if ev.Error == "" {
			ev.Error = fmt.Sprintf("MCP error %d", resp.Error.Code)
		}
		return ev
	case resp.Result != nil && resp.Result.IsError:
		ev := c.outcome(gate.Failure)
		var texts []string
		for _, ct := range resp.Result.Content {
			if ct.Type == "text" && ct.Text != "" {
				texts = append(texts, ct.Text)
			}
		}
		ev.Error = strings.Join(texts, "\n")
		if ev.Error == "" {
			ev.Error = "the tool returned an error result with no text"
		}
		return ev
	}
	return c.outcome(gate.Success)
}

// denied is the answer to a call the gate denied: a CallToolResult with isError, whose text is the
// hook's deny reason, so the model reads what it reads under the hook.
func denied(id json.RawMessage, reason string) []byte {
	msg, _ := json.Marshal(resultResponse{JSONRPC: "2.0", ID: id, Result: toolResult{
		Content: []textContent{{Type: "text", Text: reason}}, IsError: true}})
	return append(msg, '\n')
}

// rpcErrorLine is a JSON-RPC error response to id, with its newline.
func rpcErrorLine(id json.RawMessage, code int, message string) []byte {
	msg, _ := json.Marshal(errorResponse{JSONRPC: "2.0", ID: id, Error: rpcError{Code: code, Message: message}})
	return append(msg, '\n')
}

// cancelLine is the notifications/cancelled the server gets for a call the proxy answered at its
// deadline, as a client's SDK sends one for a call it timed out.
func cancelLine(id json.RawMessage) []byte {
	msg, _ := json.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		Method  string `json:"method"`
		Params  any    `json:"params"`
	}{"2.0", "notifications/cancelled", struct {
		RequestID json.RawMessage `json:"requestId"`
		Reason    string          `json:"reason"`
	}{id, "the circuit breaker's deadline passed"}})
	return append(msg, '\n')
}

// The messages the proxy writes itself, in the order of keys the SDKs write.
type (
	resultResponse struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  toolResult      `json:"result"`
	}
	toolResult struct {
		Content []textContent `json:"content"`
		IsError bool          `json:"isError"`
	}
	textContent struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	errorResponse struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}
	rpcError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
)

// batchMessage explains why a JSON-RPC batch holding a tools/call is refused.
const batchMessage = "the circuit breaker does not pass a tools/call inside a JSON-RPC batch (MCP removed batches in 2025-06-18): send each call alone"

// refuseBatch is the answer to the JSON-RPC batch body when it holds a tools/call: an error for
// each request in it, none of which reaches the server. nil for any other batch, which passes as
// it came (docs/proxy.md, batches).
func refuseBatch(body []byte) []byte {
	var msgs []json.RawMessage
	if json.Unmarshal(body, &msgs) != nil {
		return nil
	}
	var calls bool
	reqs := make([]request, len(msgs))
	for i, m := range msgs {
		if json.Unmarshal(m, &reqs[i]) == nil && reqs[i].Method == "tools/call" {
			calls = true
		}
	}
	if !calls {
		return nil
	}
	out := []errorResponse{}
	for _, r := range reqs {
		if r.Method != "" && len(r.ID) > 0 {
			out = append(out, errorResponse{JSONRPC: "2.0", ID: r.ID, Error: rpcError{Code: -32600, Message: batchMessage}})
		}
	}
	data, _ := json.Marshal(out)
	return append(data, '\n')
}
