package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/mcpconfig"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// Modern-era JSON-RPC codes (2026-07-28): HeaderMismatch, MissingRequiredClientCapability,
// UnsupportedProtocolVersion. Seeing one on a pinned legacy handshake means "retry modern".
const (
	codeHeaderMismatch     = -32020
	codeMissingCapability  = -32021
	codeUnsupportedVersion = -32022
	// codeRejected is go-sdk's internal "rejected by transport" (jsonrpc2.ErrRejected). It
	// wraps HTTP 429/5xx and dial errors; it is not a wire code and says nothing itself.
	codeRejected = -32005
)

// classify turns the error that ended phase into the outcome, trying the evidence in order of
// trust (docs/probes.md): the deadline, the HTTP status, the transport error, the
// JSON-RPC error, the stdio process's end, and last the SDK's error text.
func (a *run) classify(err error, phase Phase, limit time.Duration) {
	last, lastOK, transErr := a.rec.evidence()
	what := phaseWhat(phase)
	switch {
	case errors.Is(a.ctx.Err(), context.Canceled):
		a.fail(ledger.Unknown, "canceled", phase, "probe canceled during "+what)
		return
	case last != nil:
		a.httpStatus(last, phase)
		return
	case transErr != nil && !errors.Is(transErr, context.DeadlineExceeded) && !errors.Is(transErr, context.Canceled):
		a.transport(transErr, phase)
		return
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(a.ctx.Err(), context.DeadlineExceeded):
		msg := fmt.Sprintf("no answer to %s within %v", what, limit)
		if errors.Is(a.ctx.Err(), context.DeadlineExceeded) {
			msg = "probe deadline exceeded during " + what
		}
		if a.proc != nil && a.proc.exitedWithin(0) {
			a.fail(ledger.Timeout, "process_exited", phase, a.proc.exitText(what))
			return
		}
		a.fail(ledger.Timeout, "deadline", phase, msg)
		return
	}
	var je *jsonrpc.Error
	if errors.As(err, &je) && je.Code != codeRejected {
		a.rpcError(je, phase)
		return
	}
	text := err.Error()
	if a.proc != nil && (errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) || isClosedText(text)) {
		// EOF on stdout usually means the server died; give the reaper a moment to say how.
		if a.proc.exitedWithin(300 * time.Millisecond) {
			a.fail(ledger.Timeout, "process_exited", phase, a.proc.exitText(what))
			return
		}
	}
	switch {
	case isDecodeText(text):
		msg := "invalid MCP message during " + what + ": " + errText(err)
		if lastOK != nil && !isMCPContentType(lastOK.contentType) {
			msg = fmt.Sprintf("HTTP %d with Content-Type %q during %s: not an MCP endpoint (a login page or a proxy?)", lastOK.status, lastOK.contentType, what)
		}
		a.fail(ledger.Malformed, "protocol_error", phase, msg)
	case strings.Contains(text, "unsupported protocol version"):
		a.fail(ledger.Malformed, "version_mismatch", phase, errText(err))
	case errors.Is(err, mcp.ErrSessionMissing):
		a.fail(ledger.Timeout, "session_expired", phase, "the server ended the session during "+what)
	case errors.Is(err, mcp.ErrConnectionClosed) || errors.Is(err, io.EOF) || isClosedText(text):
		a.fail(ledger.Timeout, "connection_closed", phase, "connection closed during "+what+": "+errText(err))
	default:
		a.fail(ledger.Unknown, "probe_error", phase, errText(err))
	}
}

// httpStatus classifies a non-2xx answer. 404 and 405 on the MCP endpoint mean the URL is not an
// MCP endpoint (wrong path, or a legacy HTTP+SSE server): NOT_FOUND, which needs a person, unless
// a session was established, where 404 means the server ended it. 406 and 415 are content
// negotiation failures, which a correct client never causes, so they point to a proxy:
// MALFORMED.
func (a *run) httpStatus(r *response, phase Phase) {
	o := &a.out
	o.Status = r.status
	o.RetryAfter = parseRetryAfter(r.retryAfter, r.date, a.opts.Now())
	if r.status == http.StatusUnauthorized || r.status == http.StatusForbidden {
		o.WWWAuthenticate = r.wwwAuth
	}
	cause := "http_" + strconv.Itoa(r.status)
	msg := fmt.Sprintf("HTTP %d %s on %s", r.status, http.StatusText(r.status), phaseWhat(phase))
	if m := rpcMessage(r.body); m != "" {
		msg += ": " + clip(m, 300)
	}
	if r.status == http.StatusUnauthorized && r.wwwAuth != "" && !HasCredentials(a.s) {
		// The server wants a token that only the client holds (OAuth): it is up and answering,
		// which is all the circuit needs to know (docs/probes.md).
		o.Status, o.ClientAuth, o.Healthy = r.status, true, true
		o.Duration = time.Since(a.start)
		return
	}
	var t ledger.FailureType
	switch s := r.status; {
	case s == 401 || s == 403:
		t = ledger.Auth
	case s == 429:
		t = ledger.RateLimit
	case s == 404 && (phase == PhaseList || phase == PhaseCall):
		t, cause = ledger.Timeout, "session_expired"
	case s == 404 || s == 405 || s == 410:
		t = ledger.NotFound
		msg += " (not an MCP endpoint: wrong path, or a legacy HTTP+SSE server?)"
	case s == 406 || s == 415:
		t = ledger.Malformed
	case s == 400:
		t = ledger.Malformed
	case s == 408 || s >= 500:
		t = ledger.Timeout
	default:
		t = ledger.Unknown
	}
	a.fail(t, cause, phase, msg)
}

// credentialWords mark a header or URL query parameter name that carries a credential.
var credentialWords = []string{"auth", "token", "key", "secret", "cookie", "session", "password", "credential"}

// HasCredentials reports whether s's configuration carries credentials of its own: a header or
// URL query parameter named like one (Authorization, X-API-Key, …), or URL userinfo. A server
// configured without any relies on the client's OAuth login.
func HasCredentials(s mcpconfig.Server) bool {
	isCred := func(name string) bool {
		name = strings.ToLower(name)
		for _, w := range credentialWords {
			if strings.Contains(name, w) {
				return true
			}
		}
		return false
	}
	for k := range s.Headers {
		if isCred(k) {
			return true
		}
	}
	if u, err := url.Parse(s.URL); err == nil {
		if u.User != nil {
			return true
		}
		for k := range u.Query() {
			if isCred(k) {
				return true
			}
		}
	}
	return false
}

// transport classifies an error below HTTP: the request never got an answer.
func (a *run) transport(err error, phase Phase) {
	text := errText(err)
	var dnsErr *net.DNSError
	var opErr *net.OpError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		a.fail(ledger.Timeout, "connection_refused", PhaseConnect, text)
	case errors.As(err, &dnsErr):
		a.fail(ledger.Timeout, "dns_error", PhaseConnect, text)
	case errors.Is(err, syscall.ECONNRESET):
		a.fail(ledger.Timeout, "connection_reset", phase, text)
	case errors.As(err, &opErr) && opErr.Timeout() && opErr.Op == "dial":
		a.fail(ledger.Timeout, "deadline", PhaseConnect, "connect timed out: "+text)
	case strings.Contains(text, "tls:") || strings.Contains(text, "x509:"):
		a.fail(ledger.Unknown, "tls_error", PhaseConnect, text)
	case errors.As(err, &opErr) && opErr.Op == "dial":
		a.fail(ledger.Timeout, "connection_failed", PhaseConnect, text)
	default:
		a.fail(ledger.Timeout, "connection_closed", phase, text)
	}
}

// rpcError classifies a JSON-RPC error the server returned.
func (a *run) rpcError(je *jsonrpc.Error, phase Phase) {
	msg := fmt.Sprintf("%s: %s (JSON-RPC %d)", phaseWhat(phase), clip(je.Message, 300), je.Code)
	switch je.Code {
	case codeUnsupportedVersion, codeHeaderMismatch, codeMissingCapability:
		a.fail(ledger.Malformed, "version_mismatch", phase, msg)
	case jsonrpc.CodeInvalidParams:
		if phase == PhaseInitialize {
			a.fail(ledger.Malformed, "version_mismatch", phase, msg)
			return
		}
		a.fail(ledger.Malformed, "invalid_params", phase, msg)
	case jsonrpc.CodeParseError, jsonrpc.CodeInvalidRequest:
		a.fail(ledger.Malformed, "protocol_error", phase, msg)
	case jsonrpc.CodeMethodNotFound:
		// initialize unknown: whatever answers is not an MCP server.
		a.fail(ledger.Malformed, "protocol_error", phase, msg)
	default:
		// -32603, -32000…: only the message can tell (an auth failure, a quota); leave the
		// type to a text classifier.
		a.fail(ledger.Unknown, "rpc_error", phase, msg)
	}
}

// modernSignal reports whether the failed initialize says the server speaks only 2026-07-28
// (docs/probes.md): a 400 whose body carries a modern error code, such a
// code in the SDK's error, or an invalid-params answer whose data lists only modern versions.
func (a *run) modernSignal(err error) bool {
	if last, _, _ := a.rec.evidence(); last != nil && last.status == http.StatusBadRequest {
		if c, _ := rpcCode(last.body); isModernCode(c) {
			return true
		}
	}
	var je *jsonrpc.Error
	if !errors.As(err, &je) {
		return false
	}
	if isModernCode(je.Code) {
		return true
	}
	if je.Code == jsonrpc.CodeInvalidParams && len(je.Data) > 0 {
		var data struct {
			Supported []string `json:"supported"`
		}
		if json.Unmarshal(je.Data, &data) == nil && len(data.Supported) > 0 {
			for _, v := range data.Supported {
				if v < "2026-07-28" {
					return false
				}
			}
			return true
		}
	}
	return false
}

func isModernCode(c int64) bool {
	return c == codeUnsupportedVersion || c == codeHeaderMismatch || c == codeMissingCapability
}

// rpcCode and rpcMessage read a JSON-RPC error object out of an HTTP body, whatever its id
// (TS servers send "id": null, which the SDK does not decode).
func rpcCode(body []byte) (int64, string) {
	var m struct {
		Error *struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &m) != nil || m.Error == nil {
		return 0, ""
	}
	return m.Error.Code, m.Error.Message
}

func rpcMessage(body []byte) string {
	_, msg := rpcCode(body)
	return msg
}

func phaseWhat(p Phase) string {
	switch p {
	case PhaseConnect:
		return "connect"
	case PhaseInitialize:
		return "initialize"
	case PhaseList:
		return "tools/list"
	case PhaseCall:
		return "tools/call"
	}
	return string(p)
}

// isDecodeText recognises the SDK's messages for bytes that are not MCP: garbage on a stdio
// server's stdout, a non-JSON or non-SSE HTTP body.
func isDecodeText(s string) bool {
	for _, m := range []string{"invalid character", "unsupported content type", "failed to decode",
		"invalid trailing data", "cannot unmarshal", "unexpected end of JSON", "invalid message", "looking for beginning"} {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

func isClosedText(s string) bool {
	return strings.Contains(s, "connection closed") || strings.Contains(s, "client is closing") ||
		strings.Contains(s, "broken pipe") || strings.Contains(s, "file already closed")
}

func isMCPContentType(ct string) bool {
	return strings.HasPrefix(ct, "application/json") || strings.HasPrefix(ct, "text/event-stream")
}

// errText is an error's text, one line, bounded.
func errText(err error) string {
	return clip(strings.Join(strings.Fields(err.Error()), " "), 1000)
}

// redactor removes the secrets a server's configuration holds from any text the probe
// produces: header values (and the token of "Bearer x"), env values, URL userinfo and query
// values. Short values are left alone: replacing "1" or "true" everywhere would garble the
// text and protect nothing.
type redactor struct {
	secrets []string
	rawURL  string
	safeURL string
}

const minSecret = 6

func newRedactor(s mcpconfig.Server) *redactor {
	r := &redactor{}
	add := func(v string) {
		if len(v) >= minSecret {
			r.secrets = append(r.secrets, v)
		}
	}
	for _, v := range s.Headers {
		add(v)
		if _, tok, ok := strings.Cut(v, " "); ok {
			add(strings.TrimSpace(tok))
		}
	}
	for _, v := range s.Env {
		add(v)
	}
	if u, err := url.Parse(s.URL); err == nil && s.URL != "" {
		if p, ok := u.User.Password(); ok {
			add(p)
		}
		q := u.Query()
		for k, vs := range q {
			for _, v := range vs {
				add(v)
			}
			q[k] = []string{"REDACTED"}
		}
		if len(q) > 0 || u.User != nil {
			u.User = nil
			u.RawQuery = q.Encode()
			r.rawURL, r.safeURL = s.URL, u.String()
		}
	}
	// Longest first, so that a token is not half-replaced by a shorter secret inside it.
	for i := 1; i < len(r.secrets); i++ {
		for j := i; j > 0 && len(r.secrets[j]) > len(r.secrets[j-1]); j-- {
			r.secrets[j], r.secrets[j-1] = r.secrets[j-1], r.secrets[j]
		}
	}
	return r
}

func (r *redactor) text(s string) string {
	if r.rawURL != "" {
		s = strings.ReplaceAll(s, r.rawURL, r.safeURL)
	}
	for _, v := range r.secrets {
		s = strings.ReplaceAll(s, v, "[REDACTED]")
	}
	return s
}

func (r *redactor) url(u string) string {
	if r.rawURL != "" && u == r.rawURL {
		return r.safeURL
	}
	return u
}
