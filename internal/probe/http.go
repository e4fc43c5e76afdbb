package probe

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// bodyPeek is how much of a non-2xx response body is kept as evidence (a JSON-RPC error in it
// tells a modern-only server from a plain 400).
const bodyPeek = 4096

// response is what the probe keeps of one HTTP response.
type response struct {
	method      string
	status      int
	contentType string
	retryAfter  string
	date        string
	wwwAuth     string
	body        []byte // first bodyPeek bytes, for non-2xx responses only
}

// recorder is the HTTP side channel: an http.RoundTripper that adds the configured headers to
// every request and records the status and headers of every response, which the go-sdk only
// reports as text (docs/probes.md).
type recorder struct {
	client    *http.Client
	transport *http.Transport
	headers   map[string]string
	// done ends every request still in flight when the probe is over: the SDK may leave one
	// behind (a cancellation notice to a server that hangs), which would hold a connection.
	done   context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	last     *response // the last non-2xx response in the current phase
	lastOK   *response // the last 2xx response in the current phase
	transErr error     // the last transport error (dial, TLS, reset) in the current phase
}

// sdkHeaders are set by the go-sdk for the protocol; a configured header must not replace them.
var sdkHeaders = map[string]bool{
	"Accept": true, "Content-Type": true, "Mcp-Session-Id": true, "Mcp-Protocol-Version": true,
	"Last-Event-Id": true, "Mcp-Method": true, "Mcp-Name": true,
}

// newRecorder returns a recorder with its own connection pool, whose dials time out after
// connect.
func newRecorder(headers map[string]string, connect time.Duration) *recorder {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second}).DialContext
	tr.TLSHandshakeTimeout = connect
	r := &recorder{transport: tr, headers: headers}
	r.done, r.cancel = context.WithCancel(context.Background())
	r.client = &http.Client{Transport: r}
	return r
}

// RoundTrip implements http.RoundTripper.
func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancel(req.Context())
	stop := context.AfterFunc(r.done, cancel)
	release := func() { stop(); cancel() }
	req = req.Clone(ctx)
	if len(r.headers) > 0 {
		for k, v := range r.headers {
			if ck := http.CanonicalHeaderKey(k); !sdkHeaders[ck] {
				if ck == "Host" {
					req.Host = v
					continue
				}
				req.Header.Set(ck, v)
			}
		}
	}
	resp, err := r.transport.RoundTrip(req)
	if err != nil {
		release()
		r.mu.Lock()
		r.transErr = err
		r.mu.Unlock()
		return nil, err
	}
	rec := &response{
		method:      req.Method,
		status:      resp.StatusCode,
		contentType: resp.Header.Get("Content-Type"),
		retryAfter:  resp.Header.Get("Retry-After"),
		date:        resp.Header.Get("Date"),
		wwwAuth:     resp.Header.Get("WWW-Authenticate"),
	}
	ok := resp.StatusCode >= 200 && resp.StatusCode < 300
	body := io.Reader(resp.Body)
	if !ok {
		// Peek without consuming: the SDK still reads the body to find a JSON-RPC error.
		peek, _ := io.ReadAll(io.LimitReader(resp.Body, bodyPeek))
		rec.body = peek
		body = io.MultiReader(bytes.NewReader(peek), resp.Body)
	}
	resp.Body = &releasingBody{Reader: body, c: resp.Body, release: release}
	r.mu.Lock()
	if ok {
		// A DELETE at teardown or a 202 for a notification says nothing about the request
		// that failed; only keep 2xx evidence of POSTs and GETs.
		if req.Method != http.MethodDelete {
			r.lastOK = rec
		}
	} else if req.Method != http.MethodDelete {
		r.last = rec
	}
	r.mu.Unlock()
	return resp, nil
}

// reset forgets the evidence of earlier phases. It is a no-op on a nil recorder (stdio).
func (r *recorder) reset() {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.last, r.lastOK, r.transErr = nil, nil, nil
	r.mu.Unlock()
}

// evidence returns what the current phase recorded.
func (r *recorder) evidence() (last, lastOK *response, transErr error) {
	if r == nil {
		return nil, nil, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last, r.lastOK, r.transErr
}

// close aborts whatever is still in flight and drops idle connections.
func (r *recorder) close() {
	r.cancel()
	r.transport.CloseIdleConnections()
}

// releasingBody releases a request's context when its response body is closed: a streamed (SSE)
// body must stay readable until then.
type releasingBody struct {
	io.Reader
	c       io.Closer
	release func()
	once    sync.Once
}

func (b *releasingBody) Close() error {
	err := b.c.Close()
	b.once.Do(b.release)
	return err
}

// parseRetryAfter reads a Retry-After value: delta-seconds or an HTTP-date (RFC 9110 §10.2.3),
// the latter relative to the response's Date header when present, else to now.
func parseRetryAfter(v, date string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return 0
		}
		return time.Duration(n) * time.Second
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0
	}
	if d, err := http.ParseTime(date); err == nil {
		now = d
	}
	if d := t.Sub(now); d > 0 {
		return d.Round(time.Second)
	}
	return 0
}
