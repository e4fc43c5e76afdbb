// Package proxy is the circuit-breaking MCP proxy (docs/proxy.md): it starts one stdio MCP server
// (Run) or forwards to one streamable HTTP server (NewHTTP, Serve), relays every JSON-RPC message
// between it and the client as the bytes they are, and puts the
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
	"sync"
	"syscall"
	"time"
)

// Config is one proxied stdio server and the streams of the client that started the proxy.
type Config struct {
	Circuits
	// Command and Args start the server; Env is its environment (nil: the proxy's own, so the
	// credentials the client gave pass through untouched); Dir is its working directory ("": the
	// proxy's).
	Command string
	Args    []string
	Env     []string
	Dir     string
	// Stdin and Stdout are the client's side of the stdio transport; Circuits.Stderr gets the
	// server's stderr as it is, and the proxy's own notes.
	Stdin  io.Reader
	Stdout io.Writer
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
	r := &relay{breaker: newBreaker(cfg.Circuits), cfg: cfg, toServer: &lockedWriter{w: toServer}, pending: map[string]*call{}}
	r.client = &lockedWriter{w: cfg.Stdout}
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
	r.close()
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
	*breaker
	cfg      Config
	client   *lockedWriter
	toServer *lockedWriter

	mu      sync.Mutex // guards pending
	pending map[string]*call
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
		if json.Unmarshal(line, &req) == nil && req.isCall() {
			r.toolsCall(line, req)
			return
		}
		if isBatch(line) {
			if refusal := refuseBatch(line); refusal != nil {
				r.client.writeLine(refusal)
				return
			}
		}
	} else if bytes.Contains(line, cancelled) {
		var req request
		if json.Unmarshal(line, &req) == nil && req.Method == "notifications/cancelled" {
			// The client gave up on the call: its late answer, if any, is not an outcome. A call
			// cancelled past hang_after was already recorded as hung.
			if c := r.take(idKey(req.Params.RequestID)); c != nil && c.settle(false) {
				c.stop()
			}
		}
	}
	r.toServer.writeLine(line)
}

// toolsCall decides a tools/call: denied, it is answered here and the server never sees it;
// allowed (or a trial), it goes as it came and is timed.
func (r *relay) toolsCall(line []byte, req request) {
	c, deny := r.admit(req)
	if deny != nil {
		r.client.writeLine(deny)
		return
	}
	r.mu.Lock()
	r.pending[idKey(req.ID)] = c
	r.mu.Unlock()
	r.arm(c, r.hung, func(c *call) {
		// The deadline: the client is answered in the server's stead, and the server told to
		// stop; its late answer is dropped (the call stays pending for that).
		if answer, ok := r.expire(c); ok {
			r.client.writeLine(answer)
			r.toServer.writeLine(cancelLine(c.id))
		}
	})
	r.toServer.writeLine(line)
}

// take removes the pending call with id, nil when there is none.
func (r *relay) take(id string) *call {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.pending[id]
	delete(r.pending, id)
	return c
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
		if json.Unmarshal(line, &resp) == nil && resp.isResponse() {
			if c := r.take(idKey(resp.ID)); c != nil && !r.answered(c, resp) {
				return // answered at its deadline already
			}
		}
	}
	r.client.writeLine(line)
}

// serverExited fails every call the server left unanswered, toward the client with a JSON-RPC
// error and in the ledger as the server's (a process that exited).
func (r *relay) serverExited(status string) (failed int) {
	r.mu.Lock()
	calls := r.pending
	r.pending = map[string]*call{}
	r.mu.Unlock()
	for _, c := range calls {
		expired := c.isExpired()
		r.failed(c, fmt.Sprintf("%s (process exited: %s)", exitMessage, status))
		if !expired {
			r.client.writeLine(rpcErrorLine(c.id, -32000, exitMessage))
		}
	}
	return len(calls)
}

func (r *relay) stopTimers() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.pending {
		c.stop()
	}
}

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

// lockedWriter is the client's stdout (written by the relay from the server, the proxy's own
// answers and the exit handler) or the server's stdin (the client's lines and the proxy's
// cancellations): each line goes whole.
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
