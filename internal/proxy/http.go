package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"
)

// HTTPConfig is one proxied streamable HTTP server.
type HTTPConfig struct {
	Circuits
	// Upstream is the server's MCP endpoint. A request to the proxy's "/" goes to it; a request to
	// any other path goes to that path of the upstream's origin (OAuth metadata, a server that
	// serves its endpoint at a path of its own).
	Upstream *url.URL
	// Transport makes the upstream requests (nil: http.DefaultTransport). Every header of the
	// client's request but the hop-by-hop ones goes with it, Authorization included; the proxy
	// neither reads nor keeps them.
	Transport http.RoundTripper
	// Remote accepts requests whatever their Host header: set when the user chose to listen on a
	// non-loopback address. Otherwise a request must name a loopback host, so that a web page
	// cannot reach the proxy through DNS rebinding, as the go-sdk's own servers check.
	Remote bool
}

// maxBody bounds a client's POST the proxy reads before passing it on: the go-sdk servers' own
// limit.
const maxBody = 10 << 20

// sessionHeader is the streamable HTTP transport's session id header.
const sessionHeader = "Mcp-Session-Id"

// HTTP is the streamable HTTP proxy: an http.Handler that passes every request to the upstream
// server as it came, and every response back as it came, but for a POST of a tools/call, which
// the gate decides as the stdio proxy does. Close it when done.
type HTTP struct {
	*breaker
	cfg     HTTPConfig
	rp      *httputil.ReverseProxy
	origins *http.CrossOriginProtection

	mu sync.Mutex // guards pending
	// pending are the calls on their way, by session id and request id: their answer may come on
	// the POST's own stream or on a GET stream of the session (a resumed one).
	pending map[string]*httpCall
}

// httpCall is a tools/call on its way through the HTTP proxy.
type httpCall struct {
	*call
	// cancel ends the upstream request with errDeadline once the deadline passed; header is the
	// client's request's, for the cancellation sent upstream then.
	cancel context.CancelCauseFunc
	header http.Header
}

// errDeadline ends an upstream request whose call passed its deadline.
var errDeadline = errors.New("the call passed the circuit breaker's deadline")

// NewHTTP returns the HTTP proxy of cfg.
func NewHTTP(cfg HTTPConfig) (*HTTP, error) {
	if cfg.Name == "" || cfg.Upstream == nil || cfg.Upstream.Host == "" || (cfg.Upstream.Scheme != "http" && cfg.Upstream.Scheme != "https") {
		return nil, errors.New("proxy: a server name and an http(s) upstream URL are needed")
	}
	p := &HTTP{breaker: newBreaker(cfg.Circuits), cfg: cfg, pending: map[string]*httpCall{}, origins: http.NewCrossOriginProtection()}
	p.rp = &httputil.ReverseProxy{
		Rewrite:        p.rewrite,
		Transport:      cfg.Transport,
		FlushInterval:  -1, // every SSE event reaches the client as it comes
		ModifyResponse: p.modify,
		ErrorHandler:   p.upstreamFailed,
	}
	return p, nil
}

// Close ends the proxy's gate queue, after the runs already on it.
func (p *HTTP) Close() { p.close() }

func (p *HTTP) rewrite(pr *httputil.ProxyRequest) {
	u := *p.cfg.Upstream
	if pr.In.URL.Path != "/" && pr.In.URL.Path != "" {
		u.Path, u.RawPath, u.RawQuery = pr.In.URL.Path, pr.In.URL.RawPath, pr.In.URL.RawQuery
	} else if pr.In.URL.RawQuery != "" {
		u.RawQuery = pr.In.URL.RawQuery
	}
	pr.Out.URL = &u
	pr.Out.Host = ""
	// The client's own X-Forwarded-* headers are dropped by Rewrite; none are added: the server
	// sees the request as the client made it.
}

// ServeHTTP passes the request on, deciding a tools/call first.
func (p *HTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !p.cfg.Remote && !loopbackHost(r.Host) {
		http.Error(w, fmt.Sprintf("Forbidden: the proxy listens on loopback and the Host header %q is not a loopback name", r.Host), http.StatusForbidden)
		return
	}
	if err := p.origins.Check(r); err != nil {
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	}
	if r.Method == http.MethodDelete {
		if session := r.Header.Get(sessionHeader); session != "" {
			p.forget(session)
		}
	}
	if r.Method != http.MethodPost || r.Body == nil {
		p.rp.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	r.Body.Close()
	if err != nil {
		http.Error(w, "the request body is too large or could not be read: "+err.Error(), http.StatusRequestEntityTooLarge)
		return
	}
	r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	session := r.Header.Get(sessionHeader)
	var req request
	switch {
	case bytes.Contains(body, toolsCall) && json.Unmarshal(body, &req) == nil && req.isCall():
		p.toolsCall(w, r, session, req)
		return
	case bytes.Contains(body, cancelled) && json.Unmarshal(body, &req) == nil && req.Method == "notifications/cancelled":
		// The client gave up on the call: its late answer is not an outcome.
		if c := p.take(session, req.Params.RequestID); c != nil && c.settle(false) {
			c.stop()
		}
	case isBatch(body):
		if refusal := refuseBatch(body); refusal != nil {
			w.Header().Set("Content-Type", "application/json")
			w.Write(bytes.TrimSuffix(refusal, []byte("\n")))
			return
		}
	}
	p.rp.ServeHTTP(w, r)
}

// toolsCall decides the tools/call req: denied, the client is answered here with the deny as a
// JSON response and the server never sees it; allowed, it goes on, timed.
func (p *HTTP) toolsCall(w http.ResponseWriter, r *http.Request, session string, req request) {
	c, deny := p.admit(req)
	if deny != nil {
		w.Header().Set("Content-Type", "application/json")
		w.Write(bytes.TrimSuffix(deny, []byte("\n")))
		return
	}
	hc := &httpCall{call: c, header: r.Header.Clone()}
	ctx, cancel := context.WithCancelCause(context.WithValue(r.Context(), callKey{}, hc))
	hc.cancel = cancel
	defer cancel(nil)
	p.mu.Lock()
	p.pending[pendingKey(session, req.ID)] = hc
	p.mu.Unlock()
	p.arm(c, p.hung, func(*call) { p.expired(session, hc) })
	p.rp.ServeHTTP(w, r.WithContext(ctx))
	c.mu.Lock()
	over := c.over
	c.mu.Unlock()
	switch {
	case over:
		p.take(session, req.ID)
	case r.Context().Err() != nil && c.settle(false):
		// The client went away unanswered: as a cancellation, nothing is recorded.
		c.stop()
		p.take(session, req.ID)
	}
	// A call whose stream the server ended unanswered stays pending: the server may answer it on
	// a resumed stream of the session (until the session is deleted), and hang_after still
	// counts for it.
}

// forget drops the pending calls of a session the client deleted: no answer can come for them.
func (p *HTTP) forget(session string) {
	p.mu.Lock()
	var gone []*httpCall
	for k, hc := range p.pending {
		if strings.HasPrefix(k, session+"\x00") {
			gone = append(gone, hc)
			delete(p.pending, k)
		}
	}
	p.mu.Unlock()
	for _, hc := range gone {
		if hc.settle(false) {
			hc.stop()
		}
	}
}

// callKey is the context key of the tools/call an upstream request carries.
type callKey struct{}

// expired answers a call at its deadline: the upstream request is ended (the client's stream then
// gets the error in the server's stead), and the server is told the call is cancelled.
func (p *HTTP) expired(session string, hc *httpCall) {
	if _, ok := p.expire(hc.call); !ok {
		return
	}
	hc.cancel(errDeadline)
	p.take(session, hc.id)
	go p.cancelUpstream(hc)
}

// cancelUpstream posts notifications/cancelled for hc's call to the server, with the headers of
// the call's own request (its session, protocol version and credentials).
func (p *HTTP) cancelUpstream(hc *httpCall) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	body := cancelLine(hc.id)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.cfg.Upstream.String(), bytes.NewReader(body))
	if err != nil {
		return
	}
	req.Header = hc.header.Clone()
	req.Header.Del("Content-Length")
	req.Header.Set("Content-Type", "application/json")
	rt := p.cfg.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	if resp, err := rt.RoundTrip(req); err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// take removes the pending call of session with request id, nil when there is none.
func (p *HTTP) take(session string, id json.RawMessage) *httpCall {
	key := pendingKey(session, id)
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.pending[key]
	delete(p.pending, key)
	return c
}

func pendingKey(session string, id json.RawMessage) string { return session + "\x00" + idKey(id) }

// modify watches the upstream's response for the answers of pending calls: a tools/call's own
// JSON or SSE response, and any SSE stream of a session with calls pending.
func (p *HTTP) modify(resp *http.Response) error {
	hc, _ := resp.Request.Context().Value(callKey{}).(*httpCall)
	session := resp.Request.Header.Get(sessionHeader)
	if hc != nil && resp.StatusCode >= 500 {
		// The server failed the call: the status is relayed as it came.
		p.failed(hc.call, fmt.Sprintf("HTTP %d %s from the MCP server", resp.StatusCode, http.StatusText(resp.StatusCode)))
		return nil
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		if hc != nil && hc.settle(false) {
			// A 4xx (a session the server forgot, a credential it refused) is the client's to
			// handle, as it is without the proxy: nothing is recorded.
			hc.stop()
		}
		return nil
	}
	media := strings.TrimSpace(strings.Split(resp.Header.Get("Content-Type"), ";")[0])
	switch {
	case media == "text/event-stream":
		resp.Body = &sseWatch{p: p, session: session, call: hc, in: resp.Body, r: bufio.NewReaderSize(resp.Body, 64<<10)}
	case hc != nil && media == "application/json":
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if hc.isExpired() || err == nil && !p.seen(session, data) {
			// Past the deadline: the client gets the timeout instead of the late answer.
			data = bytes.TrimSuffix(hc.deadlineAnswer(), []byte("\n"))
		} else if err != nil {
			return err
		}
		resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(data)), int64(len(data))
		resp.Header.Del("Content-Length")
	}
	return nil
}

// seen records the outcome of the pending call that the message data answers, if it does, and
// reports whether data is to be relayed (false for the late answer of a call answered at its
// deadline).
func (p *HTTP) seen(session string, data []byte) bool {
	p.mu.Lock()
	waiting := len(p.pending) > 0
	p.mu.Unlock()
	if !waiting {
		return true
	}
	var resp response
	if json.Unmarshal(data, &resp) != nil || !resp.isResponse() {
		return true
	}
	hc := p.take(session, resp.ID)
	if hc == nil {
		return true
	}
	return p.answered(hc.call, resp)
}

// upstreamFailed answers a request the upstream could not be reached for. For a tools/call that is
// the server's failure, recorded, and the client gets a JSON-RPC error; at the deadline, the
// timeout error; a client that went away gets nothing and nothing is recorded.
func (p *HTTP) upstreamFailed(w http.ResponseWriter, r *http.Request, err error) {
	hc, _ := r.Context().Value(callKey{}).(*httpCall)
	switch {
	case hc != nil && hc.deadlineAnswer() != nil:
		w.Header().Set("Content-Type", "application/json")
		w.Write(bytes.TrimSuffix(hc.deadlineAnswer(), []byte("\n")))
		return
	case r.Context().Err() != nil:
		if hc != nil && hc.settle(false) {
			hc.stop()
		}
		return
	case hc != nil:
		text := fmt.Sprintf("%s: %v", unreachableMessage, err)
		p.failed(hc.call, text)
		w.Header().Set("Content-Type", "application/json")
		w.Write(bytes.TrimSuffix(rpcErrorLine(hc.id, -32000, text), []byte("\n")))
		return
	}
	http.Error(w, fmt.Sprintf("%s: %v", unreachableMessage, err), http.StatusBadGateway)
}

// unreachableMessage begins the error a call gets when the upstream server cannot be reached.
const unreachableMessage = "the MCP server could not be reached"

// sseWatch relays an SSE stream event by event, recording the outcome of each pending call whose
// answer it carries before that event reaches the client. At the call's deadline it ends the
// stream with the timeout error in the server's stead.
type sseWatch struct {
	p       *HTTP
	session string
	call    *httpCall // the stream's own tools/call, nil for a GET stream
	in      io.ReadCloser
	r       *bufio.Reader
	out     []byte // what is ready for the client
	event   []byte // the event being read, as its bytes
	data    []byte // its data lines, joined
	err     error
	// sent is set once the stream carried the deadline's answer in the server's stead.
	sent bool
}

func (s *sseWatch) Read(b []byte) (int, error) {
	for len(s.out) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		s.fill()
	}
	n := copy(b, s.out)
	s.out = s.out[n:]
	return n, nil
}

// fill reads one line of the stream, and moves a whole event to out once its blank line came.
func (s *sseWatch) fill() {
	line, err := s.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		// A line longer than the buffer: kept whole, as its parts come.
		s.event = append(s.event, line...)
		s.addData(line, false)
		return
	}
	if len(line) > 0 {
		s.event = append(s.event, line...)
		trimmed := bytes.TrimRight(line, "\r\n")
		switch {
		case len(trimmed) == 0 && err == nil:
			s.flush()
		case bytes.HasPrefix(trimmed, []byte("data:")):
			s.addData(line, true)
		}
	}
	if err != nil {
		if s.call != nil && s.call.deadlineAnswer() != nil {
			// The deadline ended the upstream stream: the client gets the timeout instead, once.
			s.event, s.data = nil, nil
			s.answer()
			s.err = io.EOF
			return
		}
		s.out = append(s.out, s.event...) // a last event without its blank line goes as it came
		s.event = nil
		s.err = err
	}
}

// addData adds a data line (or a part of a long one) to the event's data.
func (s *sseWatch) addData(line []byte, first bool) {
	if first {
		if len(s.data) > 0 {
			s.data = append(s.data, '\n')
		}
		v := bytes.TrimPrefix(bytes.TrimRight(line, "\r\n"), []byte("data:"))
		s.data = append(s.data, bytes.TrimPrefix(v, []byte(" "))...)
		return
	}
	if len(s.data) > 0 || bytes.HasPrefix(s.event, []byte("data:")) {
		s.data = append(s.data, line...)
	}
}

// flush ends the event: its outcome recorded, it goes to the client (unless it is the late answer
// of a call already answered at its deadline).
func (s *sseWatch) flush() {
	switch {
	case s.call != nil && s.call.isExpired() && answers(s.data, s.call.id):
		// The late answer of this stream's own call, past its deadline: the timeout goes instead.
		s.answer()
	case len(s.data) == 0 || s.p.seen(s.session, s.data):
		s.out = append(s.out, s.event...)
	}
	s.event, s.data = s.event[:0:0], s.data[:0]
}

// answers reports whether the message data is the response to request id.
func answers(data []byte, id json.RawMessage) bool {
	var resp response
	return json.Unmarshal(data, &resp) == nil && resp.isResponse() && idKey(resp.ID) == idKey(id)
}

// answer puts the deadline's answer of the stream's call on the stream, once.
func (s *sseWatch) answer() {
	if a := s.call.deadlineAnswer(); a != nil && !s.sent {
		s.sent = true
		s.out = append(s.out, sseEvent(a)...)
	}
}

func (s *sseWatch) Close() error { return s.in.Close() }

// sseEvent is message line as an SSE message event.
func sseEvent(line []byte) []byte {
	return []byte("event: message\ndata: " + string(bytes.TrimSuffix(line, []byte("\n"))) + "\n\n")
}

// isBatch reports whether body is a JSON array: a JSON-RPC batch.
func isBatch(body []byte) bool {
	b := bytes.TrimLeft(body, " \t\r\n")
	return len(b) > 0 && b[0] == '['
}

// loopbackHost reports whether the Host header host (with or without its port) names the
// loopback interface.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Serve serves the HTTP proxy of cfg on l until ctx ends, then shuts it down.
func Serve(ctx context.Context, l net.Listener, cfg HTTPConfig) error {
	p, err := NewHTTP(cfg)
	if err != nil {
		return err
	}
	defer p.Close()
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.Background(), stopGrace)
		defer cancel()
		srv.Shutdown(sctx)
		<-done
		return ctx.Err()
	}
}
