// Package proxy is the circuit-breaking MCP proxy (docs/proxy.md): it starts one stdio MCP server,
// relays every JSON-RPC message between it and the client as the bytes they are, and puts the
// gate in the path of tools/call alone: a call whose circuit is OPEN is answered with the hook's
// deny text as an isError result and never reaches the server, and every call that goes is timed
// and its outcome recorded from the protocol itself (the JSON-RPC error code, isError, the server's
// exit, a call past hang_after).
package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/agent"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/failure"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/term"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// Config is one proxied stdio server and the streams of the client that started the proxy.
type Config struct {
	// Name is the server's name as the client knows it: its tools' circuits are
	// mcp__<Name>__<tool> (sanitized as Claude Code sanitizes names) and mcp__<Name>__*.
	Name string
	// Command and Args start the server; Env is its environment (nil: the proxy's own, so the
	// credentials the client gave pass through untouched); Dir is its working directory ("": the
	// proxy's).
	Command string
	Args    []string
	Env     []string
	Dir     string
	// Stdin and Stdout are the client's side of the stdio transport; Stderr gets the server's
	// stderr as it is, and the proxy's own notes.
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Gate decides each call and records its outcome (HookGate).
	Gate Decider
	// HangAfter is the policy's hang_after of a tool key: a call still unanswered then is recorded
	// as a TIMEOUT (cause hung) at once. 0 never does.
	HangAfter func(key string) time.Duration
	// HookDecided reports whether the agent's own hook (ours, on the same ledger) already wrote an
	// entry for the call with this tool-use id: it took the call's half-open trial permit, so the
	// proxy lets the call go as that trial instead of deciding it again. nil: never.
	HookDecided func(toolUseID string) bool
}

// stopGrace is how long the server gets to exit once the client has closed the proxy's stdin,
// first with its stdin closed, then after SIGTERM, before it is killed (the MCP stdio shutdown).
const stopGrace = 2 * time.Second

// exitMessage is the JSON-RPC error a call the server never answered gets when the server exits:
// the words Claude Code and the SDKs use for a transport that closed.
const exitMessage = "Connection closed: the MCP server process exited before answering"

// Run proxies until the client closes stdin (nil) or the server exits (an error saying how);
// ctx ending kills the server.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Name == "" || cfg.Command == "" {
		return errors.New("proxy: a server name and a command are needed")
	}
	cmd := exec.Command(cfg.Command, cfg.Args...)
	cmd.Env, cmd.Dir, cmd.Stderr = cfg.Env, cfg.Dir, cfg.Stderr
	// A child of the server that keeps its stderr open must not keep the proxy waiting.
	cmd.WaitDelay = stopGrace
	toServer, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("proxy: start %s: %w", cfg.Command, err)
	}
	// The server's stdout is a pipe of our own, not StdoutPipe: the process's exit is waited for
	// apart from reading what it wrote, so a client that stops reading cannot keep the proxy from
	// stopping the server.
	fromServer, serverOut, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("proxy: start %s: %w", cfg.Command, err)
	}
	defer fromServer.Close()
	cmd.Stdout = serverOut
	err = cmd.Start()
	serverOut.Close()
	if err != nil {
		return fmt.Errorf("proxy: start %s: %w", cfg.Command, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	r := &relay{cfg: cfg, toServer: toServer, pending: map[string]*call{}, jobs: make(chan job, 256)}
	r.client = &lockedWriter{w: cfg.Stdout}
	workerDone := make(chan struct{})
	go func() {
		defer close(workerDone)
		r.work()
	}()
	clientDone := make(chan error, 1)
	go func() { clientDone <- r.fromClient(bufio.NewReaderSize(cfg.Stdin, 64<<10)) }()
	serverDone := make(chan error, 1)
	go func() { serverDone <- r.fromServer(bufio.NewReaderSize(fromServer, 64<<10)) }()

	var result error
	select {
	case <-clientDone:
		// The client is gone: the server is asked to stop as the stdio transport says (stdin
		// closed, then SIGTERM, then SIGKILL), and its last lines are relayed while it does.
		toServer.Close()
		stopServer(cmd, exited)
		waitFor(serverDone, drainGrace)
	case <-serverDone:
		// The server closed its stdout: it is exiting, or no longer speaks to us either way.
		if !waitFor(exited, stopGrace) {
			cmd.Process.Kill()
			<-exited
		}
		result = r.exitedErr(cmd)
	case <-exited:
		waitFor(serverDone, drainGrace) // what it wrote before exiting still reaches the client
		result = r.exitedErr(cmd)
	case <-ctx.Done():
		cmd.Process.Kill()
		<-exited
		result = ctx.Err()
	}
	r.stopTimers()
	r.qmu.Lock()
	r.stopped = true
	close(r.jobs)
	r.qmu.Unlock()
	<-workerDone
	return result
}

// drainGrace bounds how long the server's last output is relayed once it has exited or been
// stopped (a child of it may hold its stdout open).
const drainGrace = time.Second

// stopServer stops the server whose stdin is closed: it gets stopGrace to exit, then SIGTERM and
// stopGrace more, then SIGKILL.
func stopServer(cmd *exec.Cmd, exited chan error) {
	if waitFor(exited, stopGrace) {
		return
	}
	cmd.Process.Signal(terminate)
	if waitFor(exited, stopGrace) {
		return
	}
	cmd.Process.Kill()
	<-exited
}

// exitedErr fails the calls the server left unanswered and says how it ended: nil for a server
// that exited with status 0 while no call was waiting (it ended its session, as the client may).
func (r *relay) exitedErr(cmd *exec.Cmd) error {
	status := "exited"
	ps := cmd.ProcessState
	if ps != nil {
		status = ps.String()
	}
	if r.serverExited(status) == 0 && ps != nil && ps.Success() {
		return nil
	}
	return fmt.Errorf("proxy: the MCP server %s %s", r.cfg.Name, status)
}

// waitFor reports whether ch delivered within d.
func waitFor(ch chan error, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}

// relay is one proxied session.
type relay struct {
	cfg      Config
	client   *lockedWriter
	toServer io.WriteCloser

	mu      sync.Mutex // guards pending
	pending map[string]*call

	// jobs is the one queue of gate runs, decided and recorded in the order the messages were
	// seen: an outcome is recorded before its response reaches the client, so the client's next
	// call (and the client's own hook) meets it.
	jobs chan job
	// qmu keeps jobs open while a message is queued on it: Run closes the queue under the write
	// lock once the session is over, and a message read after that is not decided or recorded.
	qmu     sync.RWMutex
	stopped bool
}

// job is one gate run; answer is nil for a record whose answer nobody waits for, and record marks
// a record whose writing is waited for.
type job struct {
	ev     gate.Event
	answer chan gate.Answer
	record bool
}

// call is a tools/call on its way to the server.
type call struct {
	id    json.RawMessage
	ev    gate.Event // the Before event: key, tool, arguments' hash, tool_use_id
	args  []byte
	start time.Time
	timer *time.Timer
	// hung is set once the call ran past hang_after and was recorded as a TIMEOUT: its late
	// answer is relayed and records nothing more.
	hung bool
}

func (r *relay) work() {
	for j := range r.jobs {
		a := r.cfg.Gate(j.ev)
		if a.Notice != "" {
			fmt.Fprintln(r.cfg.Stderr, a.Notice)
		}
		if j.answer != nil && !j.record {
			j.answer <- a
			continue
		}
		// What the hook would have told the model of an outcome (a step-2 message, a trip, a
		// close) goes to the client's log: the result itself is relayed as the server sent it.
		if a.Context != "" {
			r.note(a.Context)
		}
		if j.answer != nil {
			j.answer <- a
		}
	}
}

// note writes text the gate meant for the model to stderr, the client's log of the server: each
// line escaped, since it quotes what servers said.
func (r *relay) note(text string) {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = term.Escape(l)
	}
	fmt.Fprintln(r.cfg.Stderr, strings.Join(lines, "\n"))
}

// decide runs the gate for a call before it goes, after every outcome queued before it.
func (r *relay) decide(ev gate.Event) gate.Answer {
	ch := make(chan gate.Answer, 1)
	if !r.queue(job{ev: ev, answer: ch}) {
		return gate.Answer{} // the session is over: nothing reaches the server any more
	}
	return <-ch
}

func (r *relay) record(ev gate.Event) { r.queue(job{ev: ev}) }

// recorded records ev and returns once it is written: the answer it is the outcome of goes to the
// client after, so that the agent's own hook, if it runs ours too, finds the call counted.
func (r *relay) recorded(ev gate.Event) {
	done := make(chan gate.Answer, 1)
	if r.queue(job{ev: ev, answer: done, record: true}) {
		<-done
	}
}

// queue puts j on the queue; false once the session is over.
func (r *relay) queue(j job) bool {
	r.qmu.RLock()
	defer r.qmu.RUnlock()
	if r.stopped {
		return false
	}
	r.jobs <- j
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

// fromClient relays the client's messages to the server until the client closes its end.
func (r *relay) fromClient(in *bufio.Reader) error {
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			r.clientLine(line)
		}
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

var (
	toolsCall = []byte(`"tools/call"`)
	cancelled = []byte(`"notifications/cancelled"`)
)

func (r *relay) clientLine(line []byte) {
	if bytes.Contains(line, toolsCall) {
		var req request
		if json.Unmarshal(line, &req) == nil && req.Method == "tools/call" && len(req.ID) > 0 && req.Params.Name != "" {
			r.toolsCall(line, req)
			return
		}
	} else if bytes.Contains(line, cancelled) {
		var req request
		if json.Unmarshal(line, &req) == nil && req.Method == "notifications/cancelled" {
			// The client gave up on the call: its late answer, if any, is not an outcome. A call
			// cancelled past hang_after was already recorded as hung.
			if c := r.take(idKey(req.Params.RequestID)); c != nil && c.timer != nil {
				c.timer.Stop()
			}
		}
	}
	r.toServer.Write(line)
}

// toolsCall decides a tools/call: denied, it is answered here and the server never sees it;
// allowed (or a trial), it goes as it came and is timed.
func (r *relay) toolsCall(line []byte, req request) {
	key := string(ledger.NameKey(r.cfg.Name, req.Params.Name))
	args := req.Params.Arguments
	if len(args) == 0 {
		args = []byte("{}")
	}
	hash, _ := agent.HashArgs(args)
	ev := gate.Event{Kind: gate.Before, Agent: "proxy", Recorder: ledger.SourceProxy, Key: key, Tool: key,
		Server: r.cfg.Name, ArgsHash: hash, ToolUseID: req.Params.Meta.ToolUseID}
	var a gate.Answer
	if ev.ToolUseID == "" || r.cfg.HookDecided == nil || !r.cfg.HookDecided(ev.ToolUseID) {
		a = r.decide(ev)
	}
	if a.Deny {
		r.client.writeLine(denied(req.ID, a.Reason))
		return
	}
	if a.Context != "" {
		r.note(a.Context) // a trial: the real call is it
	}
	c := &call{id: req.ID, ev: ev, args: args, start: time.Now()}
	id := idKey(req.ID)
	if r.cfg.HangAfter != nil {
		if d := r.cfg.HangAfter(key); d > 0 {
			c.timer = time.AfterFunc(d, func() { r.hung(id, c) })
		}
	}
	r.mu.Lock()
	r.pending[id] = c
	r.mu.Unlock()
	r.toServer.Write(line)
}

// hung records a call still unanswered at hang_after as the hook records a call interrupted after
// it: a TIMEOUT with cause hung. The call itself goes on.
func (r *relay) hung(id string, c *call) {
	r.mu.Lock()
	if r.pending[id] != c || c.hung {
		r.mu.Unlock()
		return
	}
	c.hung = true
	r.mu.Unlock()
	ev := c.outcome(gate.Failure)
	ev.Interrupt = true
	r.record(ev)
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

// take removes the pending call with id, nil when there is none.
func (r *relay) take(id string) *call {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.pending[id]
	delete(r.pending, id)
	return c
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

// fromServer relays the server's messages to the client until the server closes stdout.
func (r *relay) fromServer(in *bufio.Reader) error {
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			r.serverLine(line)
		}
		if err != nil {
			return err
		}
	}
}

func (r *relay) serverLine(line []byte) {
	r.mu.Lock()
	waiting := len(r.pending) > 0
	r.mu.Unlock()
	if waiting {
		var resp response
		if json.Unmarshal(line, &resp) == nil && resp.Method == "" && len(resp.ID) > 0 {
			if c := r.take(idKey(resp.ID)); c != nil {
				if c.timer != nil {
					c.timer.Stop()
				}
				if !c.hung {
					r.recorded(resp.outcome(c))
				}
			}
		}
	}
	r.client.writeLine(line)
}

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

// serverExited fails every call the server left unanswered, toward the client with a JSON-RPC
// error and in the ledger as the server's (a process that exited).
func (r *relay) serverExited(status string) (failed int) {
	r.mu.Lock()
	calls := r.pending
	r.pending = map[string]*call{}
	r.mu.Unlock()
	for _, c := range calls {
		if c.timer != nil {
			c.timer.Stop()
		}
		if !c.hung {
			ev := c.outcome(gate.Failure)
			ev.Error = fmt.Sprintf("%s (process exited: %s)", exitMessage, status)
			r.recorded(ev)
		}
		msg, _ := json.Marshal(errorResponse{JSONRPC: "2.0", ID: c.id, Error: rpcError{Code: -32000, Message: exitMessage}})
		r.client.writeLine(append(msg, '\n'))
	}
	return len(calls)
}

func (r *relay) stopTimers() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.pending {
		if c.timer != nil {
			c.timer.Stop()
		}
	}
}

// denied is the answer to a call the gate denied: a CallToolResult with isError, whose text is the
// hook's deny reason, so the model reads what it reads under the hook.
func denied(id json.RawMessage, reason string) []byte {
	msg, _ := json.Marshal(resultResponse{JSONRPC: "2.0", ID: id, Result: toolResult{
		Content: []textContent{{Type: "text", Text: reason}}, IsError: true}})
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

// idKey is a request id as a map key: ids are strings or numbers, and 1 and "1" are different ids.
func idKey(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return "s" + s
		}
	}
	return "n" + string(raw)
}

// lockedWriter is the client's stdout, written by the relay from the server, the proxy's own
// answers and the exit handler: each line goes whole.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) writeLine(b []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w.Write(b)
}

// terminate is the signal that asks the server to stop.
var terminate os.Signal = syscall.SIGTERM
