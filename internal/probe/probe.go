// Package probe owns the MCP half-open probe (docs/probes.md): a real handshake with one configured
// server — spawn or connect, initialize, tools/list, optionally one read-only tool call — each
// phase under its own deadline, and the mapping of what happened to a failure type and cause
// (docs/classification.md). It also owns the cache of tools/list results (docs/ledger.md, tools.json).
//
// A server is healthy only when it answered the handshake and listed its tools; "the process
// stayed alive for five seconds" (the baseline health-check hook) proves nothing, and a healthy
// answer is returned as soon as the last phase succeeds, never after waiting out a timer.
//
// The probe runs on the official go-sdk with four of its defaults changed, because each one is
// wrong for a probe (docs/probes.md):
//
//  1. Protocol version. The SDK's default sends server/discover (2026-07-28) first, which hangs
//     on legacy stdio servers that ignore unknown methods, kills strict ones that exit on a
//     first message other than initialize (go-sdk #1177), and doubles the requests sent to a
//     server that is already rate-limiting. The probe pins 2025-11-25 and retries once with
//     discovery only when the server says it speaks 2026-07-28 alone (-32022/-32021/-32020, or
//     an initialize error naming only modern versions).
//  2. HTTP facts. The SDK reports an HTTP status only as text and never exposes Retry-After or
//     WWW-Authenticate, so every request goes through a RoundTripper that records them (and adds
//     the configured headers). StreamableClientTransport gets MaxRetries -1 and
//     DisableStandaloneSSE, so that a failure is seen once and no GET stream is opened.
//  3. Process lifetime. CommandTransport signals only its direct child and waits 5 s before
//     SIGTERM, so `npx`, `uvx` and `sh -c` wrappers leave the real server running. The probe
//     starts stdio servers itself, in their own process group, talks to them over IOTransport,
//     and kills the whole group afterwards.
//  4. Capabilities and deadlines. The SDK's default client declares "roots", which changes what
//     some servers list; the probe declares none. The SDK has no per-request timeout; the probe
//     gives each phase its own deadline.
//
// # Outcomes
//
// Evidence is taken in order of trust: the deadline, the HTTP status, the transport error, the
// server's JSON-RPC error, the stdio process's end, the SDK's error text.
//
//	cause                      type        when
//	connection_refused         TIMEOUT     nothing listens (phase connect)
//	dns_error, connection_*    TIMEOUT     name lookup failed, connection reset/closed/failed
//	deadline                   TIMEOUT     a phase got no answer in time (Phase says which)
//	command_not_found          NOT_FOUND   the stdio command does not exist: a configuration failure
//	command_not_executable     NOT_FOUND   the stdio command exists but cannot be executed
//	spawn_failed               TIMEOUT     the stdio command could not be started for another reason
//	process_exited             TIMEOUT     the stdio server ended; Error has its exit status and stderr tail
//	http_401, http_403         AUTH        WWWAuthenticate holds the challenge; but a 401 with a
//	                                       challenge from a server configured without credentials
//	                                       is healthy with ClientAuth set (OAuth held by the client)
//	http_429                   RATE_LIMIT  RetryAfter holds the hint
//	http_408, http_5xx         TIMEOUT     RetryAfter when given
//	session_expired            TIMEOUT     404 after the session was established
//	http_404, http_405         NOT_FOUND   the URL is not an MCP endpoint (wrong path, legacy SSE server)
//	http_400, http_406/415     MALFORMED   request rejected; 406/415 are content negotiation (a proxy?)
//	protocol_error             MALFORMED   non-JSON on stdout, HTML from the endpoint, a non-MCP answer
//	version_mismatch           MALFORMED   no protocol version in common
//	tool_missing               NOT_FOUND   Options.Tool or CallTool is not in tools/list
//	invalid_params             MALFORMED   the optional call's arguments were rejected
//	tool_error, rpc_error      UNKNOWN     only the message can tell: classify Error to refine
//	tls_error                  UNKNOWN     certificate or handshake problem
//	canceled                   UNKNOWN     the caller cancelled ctx: not a fact about the server
package probe

import (
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/term"

	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/mcpconfig"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/toolcache"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// Phase names the step of a probe in which it ended.
type Phase string

// The phases, in order.
const (
	PhaseConnect    Phase = "connect"    // spawn a stdio server, or reach an HTTP endpoint
	PhaseInitialize Phase = "initialize" // the initialize handshake (or server/discover)
	PhaseList       Phase = "list"       // tools/list, every page
	PhaseCall       Phase = "call"       // the optional tool call
)

// Protocol selects the protocol era of the first attempt.
type Protocol string

// The protocol policies.
const (
	// ProtocolAuto pins 2025-11-25 and retries once with 2026-07-28 discovery when the server
	// signals it speaks only that. It is the default.
	ProtocolAuto Protocol = ""
	// ProtocolLegacy pins 2025-11-25 and never retries.
	ProtocolLegacy Protocol = "legacy"
	// ProtocolModern uses the SDK's default: server/discover first, initialize as fallback.
	ProtocolModern Protocol = "modern"
)

// legacyVersion is the last protocol revision with the initialize handshake, spoken by every
// server seen in practice (docs/probes.md).
const legacyVersion = "2025-11-25"

// maxPages bounds tools/list pagination, so a server that always returns a cursor cannot keep
// a probe busy until its deadline.
const maxPages = 20

// Options tunes a probe. The zero value is usable: every zero field takes the default named in
// its comment.
type Options struct {
	// Connect bounds spawning a stdio server or opening the connection to an HTTP one (TCP and
	// TLS, or the SSE stream). Default 5 s.
	Connect time.Duration
	// Initialize bounds the handshake. For stdio servers it includes their start-up, which for
	// npx/uvx packages can take seconds. Default 15 s.
	Initialize time.Duration
	// List bounds tools/list, all pages together. Default 5 s.
	List time.Duration
	// Call bounds the optional tool call. Default 10 s.
	Call time.Duration
	// Terminate is how long a healthy stdio server gets to exit after its stdin is closed, and
	// again after SIGTERM, before its process group is killed. Default 100 ms.
	Terminate time.Duration

	// Tool is a tool the server must list, by its real name or by the sanitized tool part of
	// mcp__<server>__<tool>; when it is absent the outcome is NOT_FOUND, cause tool_missing.
	// Empty skips the check.
	Tool string
	// CallTool is a tool to call after listing (optional). It is called only when the server
	// annotates it readOnlyHint, unless AllowWrite is set; otherwise the call is skipped with a
	// warning.
	CallTool string
	// CallArgs are the arguments of CallTool.
	CallArgs map[string]any
	// AllowWrite permits calling a CallTool that is not annotated read-only.
	AllowWrite bool

	// StderrLimit is how many trailing bytes of a stdio server's stderr are kept for the error
	// text. Default 2048.
	StderrLimit int
	// Protocol picks the protocol era policy; default [ProtocolAuto].
	Protocol Protocol
	// Dir is the working directory of stdio servers; empty means the caller's.
	Dir string
	// Environ is the base environment of stdio servers, to which the server's configured env is
	// added; nil means the caller's environment (os.Environ). Claude Code also sets
	// CLAUDE_PROJECT_DIR; callers that want parity add it here.
	Environ []string
	// Now reads the clock, used only to turn an HTTP-date Retry-After into a duration when the
	// response carries no Date header. Default time.Now.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.Connect, 5*time.Second)
	def(&o.Initialize, 15*time.Second)
	def(&o.List, 5*time.Second)
	def(&o.Call, 10*time.Second)
	def(&o.Terminate, 100*time.Millisecond)
	if o.StderrLimit <= 0 {
		o.StderrLimit = 2048
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Tool is one entry of a server's tools/list, as the tools cache keeps it.
type Tool = toolcache.Tool

// Outcome is the result of one probe. It holds no secret: configured header and env values and
// URL query values are redacted from every text field.
type Outcome struct {
	// Server is the server's configured (real) name.
	Server string
	// Transport is how the server was reached.
	Transport mcpconfig.Transport
	// Healthy reports that the handshake, tools/list, the expected tool and the optional call
	// all succeeded.
	Healthy bool
	// Type is the failure type; empty when Healthy. UNKNOWN means only the text could tell
	// (a tool's error content, a server's JSON-RPC error message): callers may refine it by
	// classifying Error.
	Type ledger.FailureType
	// Cause is the finer cause (connection_refused, deadline, http_401, process_exited,
	// tool_missing, …); empty when Healthy.
	Cause string
	// Error is the failure text, with a stdio server's stderr tail when it exited; empty when
	// Healthy.
	Error string
	// Phase is the phase the probe failed in; empty when Healthy.
	Phase Phase
	// Status is the HTTP status behind the failure, 0 when none.
	Status int
	// RetryAfter is the server's Retry-After hint, 0 when none.
	RetryAfter time.Duration
	// WWWAuthenticate is the challenge of a 401 or 403 (it names the authorization server and
	// scope, not a credential).
	WWWAuthenticate string
	// ClientAuth is set on a healthy outcome when the server answered 401 with a challenge and
	// its configuration carries no credentials of its own: it is reachable, and authenticating
	// is the client's business (Claude Code holds the OAuth token; docs/probes.md). Tools is then nil.
	ClientAuth bool
	// Duration is the time from the start of the probe to its verdict; tearing the server down
	// afterwards is not included.
	Duration time.Duration
	// ProtocolVersion is the negotiated protocol version, when the handshake succeeded.
	ProtocolVersion string
	// ServerInfo is the server's "name/version", when the handshake succeeded.
	ServerInfo string
	// Tools is the server's tool list, when tools/list succeeded.
	Tools []Tool
	// Warnings are things worth telling that did not make the server unhealthy.
	Warnings []string
}

// Probe performs one probe of s and returns its outcome; it never returns before the server it
// started (and every process that server started) is gone. ctx bounds the whole probe on top of
// the per-phase deadlines of opts; if ctx is cancelled (not expired) the outcome has cause
// "canceled" and type UNKNOWN, and should not be recorded as a failure of the server.
func Probe(ctx context.Context, s mcpconfig.Server, opts Options) Outcome {
	opts = opts.withDefaults()
	start := time.Now()
	switch s.Transport {
	case mcpconfig.TransportStdio, mcpconfig.TransportHTTP, mcpconfig.TransportSSE:
	default:
		return Outcome{
			Server: s.Name, Transport: s.Transport, Type: ledger.Unknown, Cause: "unsupported_transport",
			Phase: PhaseConnect, Error: fmt.Sprintf("transport %q is not supported by the probe", s.Transport),
			Duration: time.Since(start),
		}
	}
	version := legacyVersion
	if opts.Protocol == ProtocolModern {
		version = "" // the SDK's latest: server/discover first
	}
	o, modern := attempt(ctx, s, opts, version, start)
	if modern && opts.Protocol == ProtocolAuto {
		o, _ = attempt(ctx, s, opts, "", start)
		o.Warnings = append(o.Warnings, "server rejected protocol "+legacyVersion+"; retried with server/discover (2026-07-28)")
	}
	return o
}

// Target describes what probing s will start or contact, for telling the user before a probe
// runs (docs/probes.md): the command line of a stdio server, or the URL of an HTTP one, with the names
// (never the values) of its env variables and headers. Arguments are shown as configured: a
// token passed as an argument appears, so redact the text before storing it anywhere.
func Target(s mcpconfig.Server) string {
	var b strings.Builder
	switch s.Transport {
	case mcpconfig.TransportStdio:
		b.WriteString(quoteArg(s.Command))
		for _, a := range s.Args {
			b.WriteByte(' ')
			b.WriteString(quoteArg(a))
		}
		if keys := sortedKeys(s.Env); len(keys) > 0 {
			b.WriteString(" (env: " + strings.Join(keys, ", ") + ")")
		}
	default:
		b.WriteString(string(s.Transport) + " " + newRedactor(s).url(s.URL))
		if keys := sortedKeys(s.Headers); len(keys) > 0 {
			b.WriteString(" (headers: " + strings.Join(keys, ", ") + ")")
		}
	}
	return b.String()
}

// attempt is one probe under one protocol policy. modern reports that the server signalled it
// speaks only 2026-07-28, so a retry with discovery may succeed.
func attempt(ctx context.Context, s mcpconfig.Server, opts Options, version string, start time.Time) (o Outcome, modern bool) {
	a := &run{ctx: ctx, s: s, opts: opts, red: newRedactor(s), start: start}
	a.out = Outcome{Server: s.Name, Transport: s.Transport}
	defer a.teardown()
	modern = a.do(version)
	a.out.Error = a.red.text(a.out.Error)
	for i, w := range a.out.Warnings {
		a.out.Warnings[i] = a.red.text(w)
	}
	return a.out, modern
}

// run holds the state of one attempt.
type run struct {
	ctx   context.Context
	s     mcpconfig.Server
	opts  Options
	red   *redactor
	start time.Time
	out   Outcome

	proc         *process  // stdio
	rec          *recorder // http, sse
	cs           *mcp.ClientSession
	cancelStream context.CancelFunc
}

func (a *run) do(version string) (modern bool) {
	// Phase connect.
	var t mcp.Transport
	streamCtx, cancel := context.WithCancel(a.ctx)
	a.cancelStream = cancel
	switch a.s.Transport {
	case mcpconfig.TransportStdio:
		p, err := startProcess(a.s, a.opts)
		if err != nil {
			t, cause := startFailure(err)
			a.fail(t, cause, PhaseConnect, "start "+quoteArg(a.s.Command)+": "+errText(err)+startHint(cause))
			return false
		}
		a.proc = p
		if noProcessGroups != "" {
			a.out.Warnings = append(a.out.Warnings, noProcessGroups)
		}
		t = &mcp.IOTransport{Reader: p.stdout, Writer: p.stdin}
	case mcpconfig.TransportHTTP:
		a.rec = newRecorder(a.s.Headers, a.opts.Connect)
		t = &mcp.StreamableClientTransport{Endpoint: a.s.URL, HTTPClient: a.rec.client, MaxRetries: -1, DisableStandaloneSSE: true}
	case mcpconfig.TransportSSE:
		a.rec = newRecorder(a.s.Headers, a.opts.Connect)
		t = &mcp.SSEClientTransport{Endpoint: a.s.URL, HTTPClient: a.rec.client}
	}
	conn, err := connectWithin(streamCtx, t, a.opts.Connect)
	if err != nil {
		a.classify(err, PhaseConnect, a.opts.Connect)
		return false
	}

	// Phase initialize.
	client := mcp.NewClient(&mcp.Implementation{Name: "mcp-circuit-breaker-probe", Version: "1"},
		&mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	a.rec.reset()
	ictx, icancel := context.WithTimeout(a.ctx, a.opts.Initialize)
	cs, err := connectSession(ictx, client, conn, version)
	icancel()
	if err != nil {
		modern = version != "" && a.modernSignal(err)
		a.classify(err, PhaseInitialize, a.opts.Initialize)
		return modern
	}
	a.cs = cs
	res := cs.InitializeResult()
	a.out.ProtocolVersion = res.ProtocolVersion
	if res.ServerInfo != nil {
		a.out.ServerInfo = res.ServerInfo.Name
		if res.ServerInfo.Version != "" {
			a.out.ServerInfo += "/" + res.ServerInfo.Version
		}
	}

	// Phase list.
	if res.Capabilities == nil || res.Capabilities.Tools == nil {
		a.out.Warnings = append(a.out.Warnings, "server does not declare the tools capability")
		a.out.Tools = []Tool{}
	} else if !a.list() {
		return false
	}
	if a.opts.Tool != "" && findTool(a.out.Tools, a.opts.Tool) == nil {
		a.fail(ledger.NotFound, "tool_missing", PhaseList, fmt.Sprintf("tool %q is not in tools/list (%s)", a.opts.Tool, toolSummary(a.out.Tools)))
		return false
	}

	// Phase call.
	if a.opts.CallTool != "" && !a.call() {
		return false
	}
	a.out.Healthy = true
	a.out.Duration = time.Since(a.start)
	return false
}

func (a *run) list() bool {
	a.rec.reset()
	lctx, cancel := context.WithTimeout(a.ctx, a.opts.List)
	defer cancel()
	tools := []Tool{}
	params := &mcp.ListToolsParams{}
	for page := 0; ; page++ {
		if page == maxPages {
			a.out.Warnings = append(a.out.Warnings, fmt.Sprintf("tools/list still had a next page after %d pages; the list is truncated", maxPages))
			break
		}
		res, err := a.cs.ListTools(lctx, params)
		if err != nil {
			var je *jsonrpc.Error
			if errors.As(err, &je) && je.Code == jsonrpc.CodeMethodNotFound {
				a.out.Warnings = append(a.out.Warnings, "server does not implement tools/list")
				break
			}
			a.classify(err, PhaseList, a.opts.List)
			return false
		}
		for _, t := range res.Tools {
			if t == nil {
				continue
			}
			tools = append(tools, Tool{Name: t.Name, Description: t.Description, ReadOnly: t.Annotations != nil && t.Annotations.ReadOnlyHint})
		}
		if res.NextCursor == "" {
			break
		}
		params = &mcp.ListToolsParams{Cursor: res.NextCursor}
	}
	a.out.Tools = tools
	return true
}

func (a *run) call() bool {
	t := findTool(a.out.Tools, a.opts.CallTool)
	if t == nil {
		a.fail(ledger.NotFound, "tool_missing", PhaseCall, fmt.Sprintf("tool %q is not in tools/list (%s)", a.opts.CallTool, toolSummary(a.out.Tools)))
		return false
	}
	if !t.ReadOnly && !a.opts.AllowWrite {
		a.out.Warnings = append(a.out.Warnings, fmt.Sprintf("call of %q skipped: the server does not annotate it readOnlyHint", t.Name))
		return true
	}
	a.rec.reset()
	cctx, cancel := context.WithTimeout(a.ctx, a.opts.Call)
	defer cancel()
	res, err := a.cs.CallTool(cctx, &mcp.CallToolParams{Name: t.Name, Arguments: a.opts.CallArgs})
	if err != nil {
		var je *jsonrpc.Error
		if errors.As(err, &je) {
			switch je.Code {
			case jsonrpc.CodeMethodNotFound:
				a.fail(ledger.NotFound, "tool_missing", PhaseCall, "call "+t.Name+": "+je.Message)
				return false
			case jsonrpc.CodeInvalidParams:
				a.fail(ledger.Malformed, "invalid_params", PhaseCall, "call "+t.Name+": "+je.Message)
				return false
			}
		}
		a.classify(err, PhaseCall, a.opts.Call)
		return false
	}
	if res.IsError {
		var parts []string
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				parts = append(parts, tc.Text)
			}
		}
		a.fail(ledger.Unknown, "tool_error", PhaseCall, "call "+t.Name+" returned isError: "+clip(strings.Join(parts, " "), 500))
		return false
	}
	return true
}

// fail records a failure verdict.
func (a *run) fail(t ledger.FailureType, cause string, phase Phase, msg string) {
	a.out.Healthy = false
	a.out.Type, a.out.Cause, a.out.Phase, a.out.Error = t, cause, phase, msg
	a.out.Duration = time.Since(a.start)
}

// teardown closes the session and makes sure nothing the probe started survives it.
func (a *run) teardown() {
	if a.cs != nil {
		// Close sends DELETE on HTTP (bounded by the SDK at 5 s) and closes the pipes on stdio;
		// neither may hold the probe up, and its error says nothing about health (a healthy
		// server killed by a signal reports "signal: terminated").
		done := make(chan struct{})
		go func() { a.cs.Close(); close(done) }()
		select {
		case <-done:
		case <-time.After(time.Second):
		}
	}
	if a.proc != nil {
		a.proc.stop(a.out.Healthy, a.opts.Terminate)
	}
	if a.rec != nil {
		a.rec.close()
	}
	if a.cancelStream != nil {
		a.cancelStream()
	}
}

// connectWithin runs t.Connect under a deadline without tying the connection's lifetime to it:
// the SSE transport keeps the context of Connect for its event stream, so that context must live
// as long as the session, while Connect itself must not take longer than d.
func connectWithin(ctx context.Context, t mcp.Transport, d time.Duration) (mcp.Connection, error) {
	type result struct {
		c   mcp.Connection
		err error
	}
	ch := make(chan result, 1)
	cctx, cancel := context.WithCancel(ctx)
	go func() {
		c, err := t.Connect(cctx)
		ch <- result{c, err}
	}()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case r := <-ch:
		if r.err != nil {
			cancel()
			return nil, r.err
		}
		// cancel is kept alive by the connection: it is released when the caller's stream
		// context ends.
		context.AfterFunc(ctx, cancel)
		return r.c, nil
	case <-timer.C:
		cancel()
		<-ch
		return nil, fmt.Errorf("connect: %w", context.DeadlineExceeded)
	}
}

// preconnected is a Transport whose connection is already open.
type preconnected struct{ c mcp.Connection }

func (p preconnected) Connect(context.Context) (mcp.Connection, error) { return p.c, nil }

// findTool finds name among tools by real or sanitized name.
func findTool(tools []Tool, name string) *Tool {
	for i := range tools {
		if tools[i].Name == name {
			return &tools[i]
		}
	}
	for i := range tools {
		if ledger.Sanitize(tools[i].Name) == name {
			return &tools[i]
		}
	}
	return nil
}

// toolSummary names up to ten tools, for tool_missing messages.
func toolSummary(tools []Tool) string {
	if len(tools) == 0 {
		return "the server lists no tools"
	}
	names := make([]string, 0, 10)
	for i, t := range tools {
		if i == 10 {
			names = append(names, "…")
			break
		}
		names = append(names, t.Name)
	}
	return fmt.Sprintf("%d tools: %s", len(tools), strings.Join(names, ", "))
}

// clip is term.Clip, the one clipping rule.
func clip(s string, n int) string { return term.Clip(s, n) }

// connectGrace is how long past the initialize deadline the probe waits for the SDK's Connect to
// return: on a failed handshake the SDK closes the connection, and that close can wait on its
// best-effort cancellation notice to a server that never answers, up to 5 s (seen under load: a
// 300 ms deadline took 5.3 s), which the hook's probe budget cannot afford.
const connectGrace = 250 * time.Millisecond

// connectSession runs the initialize handshake on conn within ctx, and gives up connectGrace past
// ctx's end without waiting for the SDK's teardown; a session that still comes up after that is
// closed in the background.
func connectSession(ctx context.Context, client *mcp.Client, conn mcp.Connection, version string) (*mcp.ClientSession, error) {
	type result struct {
		cs  *mcp.ClientSession
		err error
	}
	done := make(chan result, 1)
	go func() {
		cs, err := client.Connect(ctx, preconnected{conn}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		done <- result{cs, err}
	}()
	select {
	case r := <-done:
		return r.cs, r.err
	case <-ctx.Done():
	}
	select {
	case r := <-done:
		return r.cs, r.err
	case <-time.After(connectGrace):
		go func() {
			if r := <-done; r.cs != nil {
				r.cs.Close()
			}
		}()
		return nil, ctx.Err()
	}
}
