package report

// The tokens the window's MCP calls cost, per server and per tool (docs/report.md, Tokens): what
// the failed calls cost, what the blocked calls cost themselves, and an estimate of what blocking
// saved. The figures come from the agents' transcripts, which the caller reads (Options.Costs);
// a session without one has no figures, and the report says so.

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/message"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/redact"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/term"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// CallCost is what one call cost in tokens, as its session's transcript records it.
type CallCost struct {
	// Tool is the tool the transcript says was called (mcp__server__tool), "" when unknown: a
	// call the server's circuit blocked is recorded on the server's key, and this names its tool.
	Tool string
	// Turn is the call's share of the output tokens of the model turn that made it.
	Turn int
	// Result is the tokens of the result the model read, estimated from its text.
	Result int
}

// Tokens is the call's whole cost.
func (c CallCost) Tokens() int { return c.Turn + c.Result }

// SessionCosts is what the caller found of one session's transcripts.
type SessionCosts struct {
	// Agent names the agent whose transcripts were read ("Claude Code").
	Agent string `json:"agent,omitempty"`
	// Transcripts are the files read, as the report shows them.
	Transcripts []string `json:"transcripts"`
	// Missing says why the session has no figures ("" when its transcripts were read).
	Missing string `json:"missing,omitempty"`
	// Calls are the costs of the session's calls found in its transcripts, by tool_use_id.
	Calls map[string]CallCost `json:"-"`
}

// CostSession is one session whose calls the report would cost: the caller reads its transcripts.
type CostSession struct {
	ID string
	// Calls are the tool_use_ids of its failed and blocked calls in the window.
	Calls []string
	// Last is its newest entry in the window.
	Last time.Time
}

// Figures are the token figures of one tool, one server or the whole window.
type Figures struct {
	// FailedCalls counts the calls that failed (each once, whatever circuits it counted on);
	// FailedCosted those of them found in a transcript, whose tokens TokensFailed adds up.
	FailedCalls  int `json:"failed_calls"`
	FailedCosted int `json:"failed_calls_costed"`
	TokensFailed int `json:"tokens_failed"`
	// Blocked counts the calls the gate denied; BlockedCosted those found in a transcript, whose
	// own tokens (their turn's share and the deny's text) TokensBlocked adds up.
	Blocked       int `json:"blocked"`
	BlockedCosted int `json:"blocked_costed"`
	TokensBlocked int `json:"tokens_blocked"`
	// BlockedEstimated counts the blocked calls that have an estimate: their session made a
	// failed call of the same tool (or server) that was costed. TokensSaved is that estimate.
	BlockedEstimated int `json:"blocked_estimated"`
	TokensSaved      int `json:"tokens_saved_estimate"`
}

func (f *Figures) add(g Figures) {
	f.FailedCalls += g.FailedCalls
	f.FailedCosted += g.FailedCosted
	f.TokensFailed += g.TokensFailed
	f.Blocked += g.Blocked
	f.BlockedCosted += g.BlockedCosted
	f.TokensBlocked += g.TokensBlocked
	f.BlockedEstimated += g.BlockedEstimated
	f.TokensSaved += g.TokensSaved
}

// ToolCost is one tool's figures.
type ToolCost struct {
	Tool string `json:"tool"`
	Figures
}

// ServerCost is one server's figures, the sum of its tools'.
type ServerCost struct {
	// Server is the server's name as the ledger records it (its real name when known).
	Server string `json:"server"`
	Figures
	Tools []*ToolCost `json:"tools"`
	// key is the server part of its tools' keys.
	key string
}

// Cost is the report's token section.
type Cost struct {
	// Available is false when no session of the window had a transcript to read: the figures
	// are then zero and not shown, and Sessions say why.
	Available bool `json:"available"`
	Figures
	Servers []*ServerCost `json:"servers"`
	// Sessions are the sessions whose calls were to be costed, by id.
	Sessions map[string]*SessionCosts `json:"sessions"`
	// NoSession counts the failed and blocked calls recorded without a session id (the CLI's
	// own records): no transcript can be found for them.
	NoSession int `json:"calls_without_session"`
	// LeftOut counts the sessions not read (beyond the most recent ones the caller read).
	LeftOut int `json:"sessions_left_out"`
	// Assumptions say how the figures are made, for the reader under the figures.
	Assumptions []string `json:"assumptions"`
}

// MarshalJSON writes the section; without figures (Available false) the token fields are null
// and no server is listed: no transcript, no figure, rather than a zero that reads as "cost
// nothing".
func (c *Cost) MarshalJSON() ([]byte, error) {
	type plain Cost
	if c.Available {
		return json.Marshal((*plain)(c))
	}
	return json.Marshal(struct {
		Available     bool                     `json:"available"`
		FailedCalls   int                      `json:"failed_calls"`
		TokensFailed  *int                     `json:"tokens_failed"`
		Blocked       int                      `json:"blocked"`
		TokensBlocked *int                     `json:"tokens_blocked"`
		TokensSaved   *int                     `json:"tokens_saved_estimate"`
		Servers       []*ServerCost            `json:"servers"`
		Sessions      map[string]*SessionCosts `json:"sessions"`
		NoSession     int                      `json:"calls_without_session"`
		LeftOut       int                      `json:"sessions_left_out"`
	}{FailedCalls: c.FailedCalls, Blocked: c.Blocked, Servers: []*ServerCost{}, Sessions: c.Sessions, NoSession: c.NoSession, LeftOut: c.LeftOut})
}

// costCall is one failed or blocked call of the window.
type costCall struct {
	// server is the part of the tool's key that names its server, name the server's real name
	// when the ledger records it.
	session, id, tool, server, name string
	failed, blocked                 bool
	at                              time.Time
	// n counts the calls a record without ids stands for (costs.noID).
	n int
}

// costs gathers the calls of the window for the token section.
type costs struct {
	calls map[string]*costCall // by session and tool_use_id
	order []*costCall
	// noID are the calls recorded without a tool_use_id or session, per tool: counted, never costed.
	noID map[string]*costCall
}

// note records e (in the window, applied to a circuit in state prev) when it is a failed or
// blocked call of a session's model: not a probe, not what the fleet board said, not a call that
// failed on its own terms (those are the call's cost, shown apart).
func (cs *costs) note(prev ledger.State, e ledger.Entry) {
	failed := states.IsFailure(prev, e) && e.Source != ledger.SourceProbe && e.Event != ledger.EventProbe
	blocked := e.Event == ledger.EventBlocked && e.Source != ledger.SourceShared
	if !failed && !blocked {
		return
	}
	k := ledger.Key(e.Tool)
	server, name := k.Server(), e.Server
	if name == "" {
		name = server
	}
	if e.ToolUseID == "" || e.SessionID == "" {
		// One record per call: a server-wide failure is also written on the server's key.
		if k.IsServer() && failed {
			return
		}
		key := e.Tool + "\x00" + fmt.Sprint(failed)
		if cs.noID == nil {
			cs.noID = map[string]*costCall{}
		}
		c := cs.noID[key]
		if c == nil {
			c = &costCall{tool: e.Tool, server: server, name: name, failed: failed, blocked: blocked}
			cs.noID[key] = c
		}
		c.n++
		return
	}
	id := e.SessionID + "\x00" + e.ToolUseID
	if cs.calls == nil {
		cs.calls = map[string]*costCall{}
	}
	c := cs.calls[id]
	if c == nil {
		c = &costCall{session: e.SessionID, id: e.ToolUseID, tool: e.Tool, server: server, name: name}
		cs.calls[id] = c
		cs.order = append(cs.order, c)
	}
	if ledger.Key(c.tool).IsServer() && !k.IsServer() {
		c.tool = e.Tool // the tool's own key names the call better
	}
	c.failed = c.failed || failed
	c.blocked = c.blocked || blocked && !c.failed
	c.at = entryTime(e)
}

// CostSessions returns the sessions whose failed and blocked calls in the window of o a report
// would cost, the most recent first: the caller reads their transcripts into Options.Costs. It
// reads the entries once, without replaying them: the report replays them after.
func CostSessions(entries []ledger.Entry, o Options) []CostSession {
	cs := gather(entries, o)
	by := map[string]*CostSession{}
	var out []*CostSession
	for _, c := range cs.order {
		s := by[c.session]
		if s == nil {
			s = &CostSession{ID: c.session}
			by[c.session] = s
			out = append(out, s)
		}
		s.Calls = append(s.Calls, c.id)
		if c.at.After(s.Last) {
			s.Last = c.at
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Last.After(out[j].Last) })
	res := make([]CostSession, len(out))
	for i, s := range out {
		res[i] = *s
	}
	return res
}

// gather finds the calls of the window in one pass, without replaying the circuits: a call with a
// session and a call id was written by the hook, whose failures say so in their event (only
// entries written by hand need the state before them, and those name no call).
func gather(entries []ledger.Entry, o Options) *costs {
	cs := &costs{}
	for _, e := range entries {
		if e.ToolUseID != "" && e.SessionID != "" && inWindow(e, o) {
			cs.note(ledger.Closed, e)
		}
	}
	return cs
}

// inWindow reports whether e is in the report's window: at or after Since, of Session.
func inWindow(e ledger.Entry, o Options) bool {
	if !o.Since.IsZero() && entryTime(e).Before(o.Since) {
		return false
	}
	return o.Session == "" || e.SessionID == o.Session
}

// build makes the token section from the calls gathered and the transcripts the caller read.
func (cs *costs) build(o Options) *Cost {
	out := &Cost{Servers: []*ServerCost{}, Sessions: map[string]*SessionCosts{}, LeftOut: o.CostsLeftOut}
	type toolKey struct{ server, tool string }
	tools := map[toolKey]*ToolCost{}
	names := map[string]string{} // server key → its name, the first the ledger gave
	for _, c := range cs.order {
		if names[c.server] == "" {
			names[c.server] = c.name
		}
	}
	for _, c := range cs.noID {
		if names[c.server] == "" {
			names[c.server] = c.name
		}
	}
	tool := func(server, name string) *ToolCost {
		k := toolKey{server, name}
		if tools[k] == nil {
			// A name the gate could not have written (a hand-edited ledger) is shown as data.
			tools[k] = &ToolCost{Tool: message.ShownKey(name)}
		}
		return tools[k]
	}
	// The sessions' failed calls that were costed, per tool and per server: the means the
	// estimate uses.
	type sum struct{ tokens, n int }
	toolSums := map[string]*sum{} // session, tool
	serverSums := map[string]*sum{}
	addSum := func(m map[string]*sum, k string, tokens int) {
		if m[k] == nil {
			m[k] = &sum{}
		}
		m[k].tokens += tokens
		m[k].n++
	}
	cost := func(c *costCall) (CallCost, bool) {
		sc := o.Costs[c.session]
		if sc == nil || sc.Missing != "" {
			return CallCost{}, false
		}
		cc, ok := sc.Calls[c.id]
		return cc, ok
	}
	for _, c := range cs.order {
		if sc := o.Costs[c.session]; sc != nil {
			out.Sessions[c.session] = sc
			if sc.Missing == "" {
				out.Available = true
			}
		} else {
			out.Sessions[c.session] = &SessionCosts{Transcripts: []string{}, Missing: "not read"}
		}
		cc, ok := cost(c)
		if k := ledger.Key(c.tool); ok && k.IsServer() && cc.Tool != "" && ledger.ValidToolName(cc.Tool) &&
			ledger.Key(cc.Tool).Server() == c.server && !ledger.Key(cc.Tool).IsServer() {
			c.tool = cc.Tool
		}
		t := tool(c.server, c.tool)
		switch {
		case c.failed:
			t.FailedCalls++
			if ok {
				t.FailedCosted++
				t.TokensFailed += cc.Tokens()
				addSum(toolSums, c.session+"\x00"+c.tool, cc.Tokens())
				addSum(serverSums, c.session+"\x00"+c.server, cc.Tokens())
			}
		case c.blocked:
			t.Blocked++
			if ok {
				t.BlockedCosted++
				t.TokensBlocked += cc.Tokens()
			}
		}
	}
	// The estimate, per session and tool: blocked × the mean of that session's failed calls to
	// the tool, else to its server; rounded once per session and tool, half up.
	blockedBy := map[string]map[toolKey]int{} // session → tool → blocked calls
	var sessions []string
	for _, c := range cs.order {
		if c.failed || !c.blocked {
			continue
		}
		if blockedBy[c.session] == nil {
			blockedBy[c.session] = map[toolKey]int{}
			sessions = append(sessions, c.session)
		}
		blockedBy[c.session][toolKey{c.server, c.tool}]++
	}
	for _, s := range sessions {
		if sc := o.Costs[s]; sc == nil || sc.Missing != "" {
			continue
		}
		for k, n := range blockedBy[s] {
			m := toolSums[s+"\x00"+k.tool]
			if m == nil {
				m = serverSums[s+"\x00"+k.server]
			}
			if m == nil {
				continue
			}
			t := tool(k.server, k.tool)
			t.BlockedEstimated += n
			t.TokensSaved += (2*n*m.tokens + m.n) / (2 * m.n)
		}
	}
	for _, c := range cs.noID {
		n := c.n
		t := tool(c.server, c.tool)
		if c.failed {
			t.FailedCalls += n
		} else {
			t.Blocked += n
		}
		out.NoSession += n
	}
	servers := map[string]*ServerCost{}
	for k, t := range tools {
		s := servers[k.server]
		if s == nil {
			s = &ServerCost{Server: message.ShownServer(names[k.server], "mcp__"+k.server+"__*"), key: k.server}
			servers[k.server] = s
			out.Servers = append(out.Servers, s)
		}
		s.Tools = append(s.Tools, t)
		s.add(t.Figures)
		out.add(t.Figures)
	}
	sort.Slice(out.Servers, func(i, j int) bool {
		a, b := out.Servers[i], out.Servers[j]
		if a.TokensFailed != b.TokensFailed {
			return a.TokensFailed > b.TokensFailed
		}
		return a.Server < b.Server
	})
	for _, s := range out.Servers {
		sort.Slice(s.Tools, func(i, j int) bool {
			a, b := s.Tools[i], s.Tools[j]
			if a.TokensFailed != b.TokensFailed {
				return a.TokensFailed > b.TokensFailed
			}
			return a.Tool < b.Tool
		})
	}
	out.Assumptions = costAssumptions(out)
	return out
}

// costAssumptions says how the figures were made and what they leave out, to be written under
// them.
func costAssumptions(c *Cost) []string {
	a := []string{
		"A call's tokens are its share of the output tokens of the model turn that made it (the turn's output_tokens as the agent's transcript records them, divided evenly among the turn's tool calls, the remainder one token each to the first) plus the tokens of the result the model read, estimated as one token per 4 characters of the result's text, rounded up (a rule of thumb for English and code; denser text has more tokens). The context the gate adds beside a result, and the later turns that read the result again as part of their input, are not counted.",
		fmt.Sprintf("Tokens saved are an estimate: each blocked call is taken to stand for one more call that would have failed, at that session's mean cost of a failed call to the same tool (to the same server's tools when the tool itself had no failed call costed in that session). What the blocked calls cost themselves (their turn's share and the deny's text: %d tokens) is not subtracted.", c.TokensBlocked),
	}
	if n := c.FailedCalls - c.FailedCosted; n > 0 {
		a = append(a, fmt.Sprintf("%d failed %s could not be costed (no session or call id in the ledger, no transcript, or a call its transcript does not record) and %s counted at 0.", n, plural(n, "call", "calls"), plural(n, "is", "are")))
	}
	if n := c.Blocked - c.BlockedEstimated; n > 0 {
		a = append(a, fmt.Sprintf("%d blocked %s no estimate: %s session had no costed failed call of the same tool or server.", n, plural(n, "call has", "calls have"), plural(n, "its", "their")))
	}
	if c.LeftOut > 0 {
		a = append(a, fmt.Sprintf("Only the most recent sessions' transcripts were read: %d older %s left out (narrow the window with --since or --session).", c.LeftOut, plural(c.LeftOut, "session was", "sessions were")))
	}
	return a
}

// missingSessions lists the sessions without figures, with why, for the text formats.
func (c *Cost) missingSessions() []string {
	var out []string
	for _, id := range sortedKeys(c.Sessions) {
		if s := c.Sessions[id]; s.Missing != "" {
			out = append(out, fmt.Sprintf("session %s: %s", shownSession(id), s.Missing))
		}
	}
	return out
}

// shownSession is a session id from the ledger as the text formats show it: as it is when it has
// a session id's shape, else quoted as data (a hand-edited ledger's id may hold a tag).
func shownSession(id string) string {
	plain := id != "" && len(id) <= 128 && strings.IndexFunc(id, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
	}) < 0
	if plain {
		return id
	}
	return redact.QuoteData(term.Escape(id), 80)
}

// readFrom names the transcripts the figures were read from, in one line.
func (c *Cost) readFrom() string {
	var files []string
	n := 0
	for _, id := range sortedKeys(c.Sessions) {
		if s := c.Sessions[id]; s.Missing == "" {
			n++
			files = append(files, s.Transcripts...)
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("From the transcripts of %d %s: %s", n, plural(n, "session", "sessions"), strings.Join(files, ", "))
}
