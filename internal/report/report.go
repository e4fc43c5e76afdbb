// Package report owns the skill's Step 6 report: from the ledger's entries it derives, per
// circuit, the state, failures, trips, resets, calls blocked and time open, then recommendations
// per failure type and warnings, and renders them as Markdown or JSON.
package report

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/message"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/redact"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// Options selects and dates a report.
type Options struct {
	// Now is the time the report is made at.
	Now time.Time
	// Since keeps only activity at or after this time; zero keeps everything.
	Since time.Time
	// Session keeps only activity of this Claude Code session; "" keeps every session.
	Session string
	// Policy resolves cooldowns for circuits written by hand; nil is the built-in policy.
	Policy *states.Policy
	// ConfigFile returns where a server is configured ("" when unknown), for recommendations.
	ConfigFile func(server string) string
	// Fingerprint returns the current configuration fingerprint of the server of a key ("" when
	// unknown), so that a changed configuration shows an AUTH circuit as due for a trial; nil
	// means unknown.
	Fingerprint func(key string, t ledger.FailureType) string
	// Warnings are added by the caller (shadow mode, ledger problems, git-ignore).
	Warnings []string
	// Location is the zone Markdown shows times in, with its name; nil is UTC. JSON keeps UTC.
	Location *time.Location
	// Timeline gathers each circuit's spans and marks over the window, for the HTML report.
	Timeline bool
	// Costs, when not nil, are what the caller read of the transcripts of the sessions
	// CostSessions named, by session id: the report then has its token section (Report.Cost),
	// and a session without an entry here has no figures. CostsLeftOut counts the sessions the
	// caller did not read.
	Costs        map[string]*SessionCosts
	CostsLeftOut int
}

// Circuit is one row of the report.
type Circuit struct {
	Tool   string `json:"tool"`
	Server string `json:"server"`
	State  string `json:"state"`
	// Phase is where the circuit stands at the report's time (states.Phase): an OPEN circuit whose
	// cooldown is over is "trial_due".
	Phase        string  `json:"phase"`
	FailureType  *string `json:"failure_type"`
	FailureCount int     `json:"failure_count"`
	TrippedAt    *string `json:"tripped_at"`
	OpenUntil    *string `json:"open_until"`
	Blocked      int     `json:"blocked"`
	ResetAt      *string `json:"reset_at"`
	ResetMethod  *string `json:"reset_method"`
	Cause        *string `json:"cause"`
	TimeOpenS    int64   `json:"time_open_s"`
	// FailedCalls counts the failed calls recorded in the report's window; the circuit's own
	// figure is FailureCount (consecutive failures as of now), as status shows it.
	FailedCalls int `json:"failed_calls"`
	Trips       int `json:"trips"`
	// Evidence is the circuit's error text, which a server or a hand-edited ledger wrote, as data
	// (redact.DataText: no line breaks, tags or double quotes of its own); EvidenceSource says so.
	Evidence       string `json:"evidence,omitempty"`
	EvidenceSource string `json:"evidence_source,omitempty"`
	Closes         string `json:"closes,omitempty"`
	// label is the state as the table prints it (states.Standing.Label).
	label       string
	circuit     *states.Circuit
	lastTrip    time.Time
	lastReset   time.Time
	resetMethod string
	transportAt time.Time
	tl          *timeline
	// spans is the lane's history over the window (with Options.Timeline).
	spans []Span
}

// Report is the whole report.
type Report struct {
	Circuits        []*Circuit `json:"circuits"`
	Recommendations []string   `json:"recommendations"`
	Warnings        []string   `json:"warnings"`
	// CallsBlocked is the number of calls the gate denied in the window: each one a turn and its
	// tokens not spent on a dead tool.
	CallsBlocked int `json:"calls_blocked"`
	// WouldBlock counts calls shadow mode let through that the gate would have denied.
	WouldBlock int `json:"would_block"`
	// CallErrors are the calls that failed on their own terms (a missing file, a refused path,
	// invalid arguments), per tool: recorded, never counted against the tool.
	CallErrors []*CallErrors `json:"call_errors"`
	// LoopGuarded counts calls the loop guard denied: the same call, failing the same way, not
	// sent again.
	LoopGuarded int `json:"loop_guarded"`
	// StreakGuarded counts calls the streak guard held back once: the tool had refused that many
	// different calls in a row.
	StreakGuarded int `json:"streak_guarded"`
	// RunawayGuarded counts calls the runaway guard held back once: the session's MCP calls had
	// failed that many times in a row, across tools.
	RunawayGuarded int `json:"runaway_guarded"`
	// Held counts the failed calls (among the tools' failed_calls) held rather than counted: weak
	// evidence only, from a tool that had worked since its last counted failure.
	Held int `json:"held"`
	// FailedCalls and Trips count calls in the window once each: a server-wide failure writes an
	// entry for the tool's circuit and one for the server's, and is one failed call (and, when it
	// trips both, one trip). The circuits' own failed_calls and trips count per circuit.
	FailedCalls int `json:"failed_calls"`
	Trips       int `json:"trips"`
	// Cost is the token section (Options.Costs); nil when it was not asked for.
	Cost    *Cost     `json:"cost,omitempty"`
	Entries int       `json:"entries"`
	Now     time.Time `json:"-"`
	// loc is Options.Location.
	loc *time.Location
	// from is where the window starts: Options.Since, else the first entry in it.
	from time.Time
	// callMarks are the call errors of each tool, for the timeline (with Options.Timeline).
	callMarks map[string][]Mark
	// quotedNames is set when a tool's name is shown quoted (message.ShownKey): the Markdown
	// report then says where such names come from.
	quotedNames bool
	// failed and tripped are the calls counted in FailedCalls and Trips (callID).
	failed, tripped map[string]bool
}

// callID names the call an entry records: the entries a server-wide failure writes for the tool's
// circuit and the server's share its instant, server, session and tool_use_id.
func callID(e ledger.Entry) string {
	return e.At.UTC().Format(time.RFC3339Nano) + "\x00" + e.Server + "\x00" + ledger.Key(e.Tool).Server() + "\x00" + e.SessionID + "\x00" + e.ToolUseID
}

// countOnce adds one to *n the first time id is seen in seen.
func countOnce(seen *map[string]bool, id string, n *int) {
	if *seen == nil {
		*seen = map[string]bool{}
	}
	if !(*seen)[id] {
		(*seen)[id] = true
		*n++
	}
}

// CallErrors are one tool's calls that failed on their own terms in the window.
type CallErrors struct {
	Tool  string `json:"tool"`
	Count int    `json:"count"`
	// Types lists the failure types and causes seen, most frequent first ("NOT_FOUND http_404 ×3").
	Types string `json:"types"`
	// LastError is the text of the newest one, as data (redact.DataText); LastErrorSource says
	// where it is quoted from.
	LastError       string  `json:"last_error"`
	LastErrorSource string  `json:"last_error_source"`
	LastAt          *string `json:"last_at"`
	ways            map[string]int
	lastAt          time.Time
}

// Build replays entries into circuits and gathers the window's activity.
func Build(entries []ledger.Entry, o Options) *Report {
	var b states.Board
	rows := map[string]*Circuit{}
	r := &Report{Now: o.Now, Entries: len(entries), loc: o.Location}
	var cs costs
	calls := map[string]*CallErrors{}
	for _, e := range entries {
		prev := b.Get(e.Tool)
		prevState := ledger.Closed
		if prev != nil {
			prevState = prev.State
		}
		b.Apply(e)
		c := b.Get(e.Tool)
		if !inWindow(e, o) {
			continue
		}
		if o.Costs != nil {
			cs.note(prevState, e)
		}
		if states.IsCallError(e) {
			ce := calls[e.Tool]
			if ce == nil {
				ce = &CallErrors{Tool: message.ShownKey(e.Tool), LastErrorSource: message.EvidenceSource, ways: map[string]int{}}
				calls[e.Tool] = ce
			}
			ce.Count++
			ce.ways[strings.TrimSpace(string(e.FailureType)+" "+redact.CauseText(e.Cause))]++
			ce.LastError, ce.lastAt = redact.DataText(e.Error, redact.MaxStoredRunes), e.At
			if o.Timeline {
				at := entryTime(e)
				if r.from.IsZero() || at.Before(r.from) {
					r.from = at
				}
				if r.callMarks == nil {
					r.callMarks = map[string][]Mark{}
				}
				r.callMarks[e.Tool] = append(r.callMarks[e.Tool], Mark{At: at, Kind: MarkCallError, Type: e.FailureType, Cause: e.Cause})
			}
			if rows[e.Tool] != nil {
				rows[e.Tool].circuit = c
			}
			continue
		}
		row := rows[e.Tool]
		if row == nil {
			row = &Circuit{Tool: message.ShownKey(e.Tool)}
			if o.Timeline {
				row.tl = &timeline{}
			}
			rows[e.Tool] = row
		}
		row.circuit = c
		if row.tl != nil {
			at := entryTime(e)
			if r.from.IsZero() || at.Before(r.from) {
				r.from = at
			}
			row.tl.note(e, at, prevState, c)
		}
		switch e.Event {
		case ledger.EventBlocked:
			r.CallsBlocked++
			row.Blocked++
			switch e.Cause {
			case states.CauseLoopGuard:
				r.LoopGuarded++
			case states.CauseStreakGuard:
				r.StreakGuarded++
			case states.CauseRunaway:
				r.RunawayGuarded++
			}
			continue
		case ledger.EventWouldBlock:
			r.WouldBlock++
			continue
		}
		if states.IsFailure(prevState, e) {
			row.FailedCalls++
			countOnce(&r.failed, callID(e), &r.FailedCalls)
		}
		if states.IsHeld(e) {
			r.Held++
		}
		if states.Opens(prevState, e) {
			row.Trips++
			countOnce(&r.tripped, callID(e), &r.Trips)
			row.lastTrip = c.TrippedAt
			if states.IsTransportCause(c.Cause) {
				row.transportAt = c.TrippedAt
			}
		}
		if c.State == ledger.Closed && prevState != ledger.Closed {
			row.lastReset, row.resetMethod = c.ResetAt, c.ResetMethod
			if !row.lastTrip.IsZero() && c.ResetAt.After(row.lastTrip) {
				row.TimeOpenS += int64(c.ResetAt.Sub(row.lastTrip) / time.Second)
			}
		}
	}
	keys := make([]string, 0, len(rows))
	for k, row := range rows {
		if row.FailedCalls == 0 && row.Trips == 0 && row.Blocked == 0 && row.circuit.State == ledger.Closed && row.lastReset.IsZero() {
			continue // only successes in the window: nothing to report
		}
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		ri, rj := rows[keys[i]], rows[keys[j]]
		if oi, oj := ri.circuit.State != ledger.Closed, rj.circuit.State != ledger.Closed; oi != oj {
			return oi
		}
		return keys[i] < keys[j]
	})
	if !o.Since.IsZero() {
		r.from = o.Since
	}
	for _, k := range keys {
		row := rows[k]
		row.fill(o)
		if row.tl != nil {
			row.spans = row.tl.finish(r.from, o.Now)
			if m := r.callMarks[k]; len(m) > 0 {
				row.tl.marks = append(row.tl.marks, m...)
				delete(r.callMarks, k)
			}
		}
		r.Circuits = append(r.Circuits, row)
	}
	r.CallErrors = []*CallErrors{}
	for _, ce := range calls {
		type way struct {
			name string
			n    int
		}
		var ws []way
		for k, n := range ce.ways {
			ws = append(ws, way{k, n})
		}
		sort.Slice(ws, func(i, j int) bool { return ws[i].n > ws[j].n || ws[i].n == ws[j].n && ws[i].name < ws[j].name })
		var parts []string
		for _, w := range ws {
			parts = append(parts, fmt.Sprintf("%s ×%d", w.name, w.n))
		}
		ce.Types, ce.LastAt = strings.Join(parts, ", "), timep(ce.lastAt)
		r.CallErrors = append(r.CallErrors, ce)
	}
	sort.Slice(r.CallErrors, func(i, j int) bool { return r.CallErrors[i].Tool < r.CallErrors[j].Tool })
	for _, row := range r.Circuits {
		if !message.PlainKey(row.circuit.Key) {
			r.quotedNames = true
		}
	}
	for _, ce := range r.CallErrors {
		if strings.HasPrefix(ce.Tool, `"`) {
			r.quotedNames = true
		}
	}
	if o.Costs != nil {
		r.Cost = cs.build(o)
	}
	r.Recommendations = recommendations(r.Circuits, o)
	// A warning may name what a ledger holds (a problem's quoted value): it cannot write a tag.
	for _, w := range append(append([]string{}, o.Warnings...), multiServer(r.Circuits)...) {
		r.Warnings = append(r.Warnings, noTags.Replace(w))
	}
	if r.Warnings == nil {
		r.Warnings = []string{}
	}
	if r.Circuits == nil {
		r.Circuits = []*Circuit{}
	}
	return r
}

// noTags turns angle brackets into ‹ ›, as quoted data has them (redact.QuoteData), so that no
// text in the report can close the <system-reminder> Claude Code wraps context in.
var noTags = strings.NewReplacer("<", "‹", ">", "›")

func strp(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func timep(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	return strp(t.UTC().Format(ledger.TimeFormat))
}

func (row *Circuit) fill(o Options) {
	c := row.circuit
	// A ledger's server name is shown only when it is one of its key's (ledger.ServerName), and
	// quoted when the key is not one the gate writes.
	row.Server = message.ShownServer(c.Server, c.Key)
	fp := ""
	if o.Fingerprint != nil && c.State != ledger.Closed && c.Fingerprint != "" {
		fp = o.Fingerprint(c.Key, c.FailureType)
	}
	st := c.StandingAt(o.Now, o.Policy, fp)
	row.State, row.Phase, row.label = string(st.State), string(st.Phase), st.Label()
	row.FailureType = strp(string(c.FailureType))
	row.FailureCount = st.FailureCount
	row.TrippedAt = timep(row.lastTrip)
	row.ResetAt = timep(row.lastReset)
	row.ResetMethod = strp(row.resetMethod)
	row.Cause = strp(redact.CauseText(c.Cause))
	if c.State != ledger.Closed {
		row.OpenUntil = timep(c.TrialAt(o.Policy))
		if !c.TrippedAt.IsZero() && o.Now.After(c.TrippedAt) {
			row.TimeOpenS += int64(o.Now.Sub(c.TrippedAt) / time.Second)
		}
		row.Closes = message.Closes(c, st, o.Now)
		row.Evidence = c.Error
	} else if row.FailedCalls > 0 {
		row.Evidence = c.Error
	}
	if row.Evidence != "" {
		row.Evidence, row.EvidenceSource = redact.DataText(row.Evidence, redact.MaxStoredRunes), message.EvidenceSource
	}
}

// multiServer is the skill's multi_server_failure escalation: two or more servers opened with
// transport causes within one minute point at the local machine, not the servers.
func multiServer(rows []*Circuit) []string {
	var trips []states.Trip
	for _, r := range rows {
		if !r.transportAt.IsZero() {
			trips = append(trips, states.Trip{Server: r.Server, At: r.transportAt})
		}
	}
	group, at := states.MultiServer(trips)
	if group == nil {
		return nil
	}
	return []string{fmt.Sprintf("multi_server_failure: servers %s opened with transport failures within one minute of %s: the likely cause is local (network down, VPN, laptop asleep), not the servers. Check the connection, then run 'mcp-circuit-breaker probe --all'.",
		strings.Join(group, ", "), at.UTC().Format(time.RFC3339))}
}

// recommendations gives one line per server and failure type among the circuits that are not
// CLOSED (a server circuit and its tools' circuits share the fix), naming the keys concerned.
func recommendations(rows []*Circuit, o Options) []string {
	out := []string{}
	keys := map[string][]string{}
	var order []*Circuit
	for _, r := range rows {
		c := r.circuit
		if c.State == ledger.Closed {
			continue
		}
		g := r.Server + "\x00" + string(c.FailureType)
		if _, ok := keys[g]; !ok {
			order = append(order, r)
		}
		keys[g] = append(keys[g], c.Key)
	}
	for _, r := range order {
		c := r.circuit
		where := "the server's MCP configuration (.mcp.json, ~/.claude.json)"
		if o.ConfigFile != nil {
			if f := o.ConfigFile(r.Server); f != "" {
				where = f
			}
		}
		var rec string
		switch c.FailureType {
		case ledger.Auth:
			rec = fmt.Sprintf("AUTH failure → refresh the credentials of server %s in %s (token, API key or OAuth login); the changed configuration allows a trial at once", r.Server, where)
		case ledger.AdminGated:
			key := message.ShownKey(c.Key)
			rec = fmt.Sprintf("ADMIN_GATED → ask an instance/org admin to approve or enable server %s; meanwhile use the lower-permission path ('mcp-circuit-breaker fallbacks %s', option 1b), then 'mcp-circuit-breaker probe %s'", r.Server, key, key)
		case ledger.RateLimit:
			rec = fmt.Sprintf("RATE_LIMIT → wait for the quota of %s (trial at %s); spread calls out or raise the plan's quota", r.Server, deref(r.OpenUntil, "the retry hint"))
		case ledger.NotFound:
			rec = fmt.Sprintf("NOT_FOUND → the tool is gone or renamed: run 'mcp-circuit-breaker probe --server %s' to refresh its tool list, and use the listed name or a substitute", r.Server)
		case ledger.Timeout:
			rec = fmt.Sprintf("TIMEOUT → check that server %s runs and is reachable (command or url in %s); 'mcp-circuit-breaker probe --server %s' performs a real handshake", r.Server, where, r.Server)
		case ledger.Malformed:
			rec = fmt.Sprintf("MALFORMED → the request or response does not match the tool's schema: check the arguments against the tool's input schema, or update server %s", r.Server)
		default:
			rec = fmt.Sprintf("%s → read the evidence and classify it again: mcp-circuit-breaker classify --error '…'", orUnknown(c.FailureType))
		}
		shown := make([]string, 0, len(keys[r.Server+"\x00"+string(c.FailureType)]))
		for _, k := range keys[r.Server+"\x00"+string(c.FailureType)] {
			shown = append(shown, message.ShownKey(k))
		}
		out = append(out, strings.Join(shown, ", ")+": "+rec)
	}
	return out
}

func deref(s *string, def string) string {
	if s == nil {
		return def
	}
	return *s
}

func orUnknown(t ledger.FailureType) string {
	if t == "" {
		return string(ledger.Unknown)
	}
	return string(t)
}
