package report

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/failure"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// failCall records a failure of one call of a session through the states decisions, as the hook
// does (tool and server entries with the call's ids).
func (h *history) failCall(session, id, tool, text string, at time.Time) {
	r := failure.Classify(failure.Evidence{Text: text}, at)
	f := states.Failure{Type: r.Type, Cause: r.Cause, Fault: r.Fault, RetryAfter: r.RetryAfter, ServerWide: r.ServerWide, Error: text}
	h.add(h.b.Failure(states.Call{Tool: tool, SessionID: session, ToolUseID: id, Source: ledger.SourceHook}, f, at, nil).Entries)
}

// gateCall asks the gate about one call of a session, as the hook's PreToolUse does.
func (h *history) gateCall(session, id, tool string, at time.Time) {
	h.add(h.b.Gate(states.Call{Tool: tool, SessionID: session, ToolUseID: id, Source: ledger.SourceHook}, at, nil, false).Entries)
}

// A session whose echo tool failed three times (a trip of the tool and the server) and was then
// blocked twice, and whose other tool was blocked once; a second session blocked once without a
// failed call of its own; a third with no transcript. The gate records a call both circuits
// block on the server's key: the transcript names the call's tool.
func costHistory() *history {
	var h history
	for i, id := range []string{"t1", "t2", "t3"} {
		h.failCall("s1", id, "mcp__fix__echo", "upstream said: connection refused (ECONNREFUSED)", t0.Add(time.Duration(i)*time.Second))
	}
	h.gateCall("s1", "t4", "mcp__fix__echo", t0.Add(10*time.Second))
	h.gateCall("s1", "t5", "mcp__fix__echo", t0.Add(11*time.Second))
	h.gateCall("s1", "t6", "mcp__fix__other", t0.Add(12*time.Second))
	h.gateCall("s2", "u1", "mcp__fix__echo", t0.Add(20*time.Second))
	h.failCall("s3", "v1", "mcp__db__query", "HTTP 401 Unauthorized", t0.Add(30*time.Second))
	return &h
}

func costOptions() Options {
	return Options{Now: t0.Add(time.Minute), Costs: map[string]*SessionCosts{
		"s1": {Agent: "Claude Code", Transcripts: []string{"~/.claude/projects/-p/s1.jsonl"}, Calls: map[string]CallCost{
			"t1": {Turn: 40, Result: 6}, "t2": {Turn: 26, Result: 6}, "t3": {Turn: 73, Result: 6},
			"t4": {Tool: "mcp__fix__echo", Turn: 84, Result: 305}, "t5": {Tool: "mcp__fix__echo", Turn: 95, Result: 305},
			"t6": {Tool: "mcp__fix__other", Turn: 10, Result: 305},
		}},
		"s2": {Agent: "Claude Code", Transcripts: []string{"~/.claude/projects/-p/s2.jsonl"}, Calls: map[string]CallCost{"u1": {Tool: "mcp__fix__echo", Turn: 9, Result: 305}}},
		"s3": {Transcripts: []string{}, Missing: "no transcript found", Calls: map[string]CallCost{}},
	}}
}

func TestCost(t *testing.T) {
	h := costHistory()
	r := Build(h.entries, costOptions())
	c := r.Cost
	if c == nil || !c.Available {
		t.Fatalf("cost %+v, want figures", c)
	}
	// echo: failed 46 + 32 + 79 = 157 tokens over 3 calls; 2 blocked in s1 at the mean 157/3:
	// 2 × 52.33 = 104.67, rounded once: 105. other: blocked once in s1; it never failed there,
	// so the server's mean (the same 157/3) gives 52. s2's blocked call has no failed call of
	// its session: no estimate. db: a failed call of s3, whose transcript is missing.
	want := map[string]Figures{
		"mcp__fix__echo":  {FailedCalls: 3, FailedCosted: 3, TokensFailed: 157, Blocked: 3, BlockedCosted: 3, TokensBlocked: 389 + 400 + 314, BlockedEstimated: 2, TokensSaved: 105},
		"mcp__fix__other": {Blocked: 1, BlockedCosted: 1, TokensBlocked: 315, BlockedEstimated: 1, TokensSaved: 52},
		"mcp__db__query":  {FailedCalls: 1},
	}
	got := map[string]Figures{}
	servers := map[string]Figures{}
	for _, s := range c.Servers {
		servers[s.Server] = s.Figures
		for _, tc := range s.Tools {
			got[tc.Tool] = tc.Figures
		}
	}
	for tool, w := range want {
		if got[tool] != w {
			t.Errorf("%s:\n got %+v\nwant %+v", tool, got[tool], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("tools %v, want only %d (a server-wide failure is one call, not two)", got, len(want))
	}
	fix := Figures{FailedCalls: 3, FailedCosted: 3, TokensFailed: 157, Blocked: 4, BlockedCosted: 4, TokensBlocked: 1418, BlockedEstimated: 3, TokensSaved: 157}
	if servers["fix"] != fix {
		t.Errorf("server fix:\n got %+v\nwant %+v (the sum of its tools)", servers["fix"], fix)
	}
	if c.TokensFailed != 157 || c.TokensSaved != 157 || c.FailedCalls != 4 || c.Blocked != 4 {
		t.Errorf("totals %+v", c.Figures)
	}
	md := r.Markdown()
	for _, s := range []string{
		"### Tokens\n\nFrom the transcripts of 2 sessions: ~/.claude/projects/-p/s1.jsonl, ~/.claude/projects/-p/s2.jsonl\n",
		"| **fix** (server) | 3 | 157 | 4 | ≈ 157 |\n| mcp__fix__echo | 3 | 157 | 3 | ≈ 105 |\n| mcp__fix__other | 0 | 0 | 1 | ≈ 52 |\n",
		"| **db** (server) | 1 (0 costed) | 0 | 0 | — |\n",
		"In all: 157 tokens on 4 failed calls; 4 calls blocked, which cost 1418 tokens themselves; ≈ 157 tokens saved (estimate).\n",
		"- No figures for session s3: no transcript found\n",
		"one token per 4 characters",
		"1 failed call could not be costed",
		"1 blocked call has no estimate",
	} {
		if !strings.Contains(md, s) {
			t.Errorf("markdown lacks %q:\n%s", s, md)
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cost struct {
			Available   bool `json:"available"`
			TokensSaved int  `json:"tokens_saved_estimate"`
			Assumptions []string
			Servers     []struct {
				Server string `json:"server"`
				Tools  []struct {
					Tool         string `json:"tool"`
					TokensFailed int    `json:"tokens_failed"`
				} `json:"tools"`
			} `json:"servers"`
			Sessions map[string]struct {
				Missing string `json:"missing"`
			} `json:"sessions"`
		} `json:"cost"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if !doc.Cost.Available || doc.Cost.TokensSaved != 157 || doc.Cost.Servers[0].Server != "fix" || doc.Cost.Servers[0].Tools[0].TokensFailed != 157 ||
		doc.Cost.Sessions["s3"].Missing == "" || len(doc.Cost.Assumptions) < 2 {
		t.Errorf("json cost: %s", b)
	}
}

// Without any transcript there are no figures, and the report says why instead.
func TestCostNoTranscript(t *testing.T) {
	h := costHistory()
	o := Options{Now: t0.Add(time.Minute), Costs: map[string]*SessionCosts{}}
	r := Build(h.entries, o)
	if r.Cost.Available {
		t.Errorf("figures without a transcript: %+v", r.Cost)
	}
	md := r.Markdown()
	for _, s := range []string{"No token figures: no transcript of the window's sessions could be read", "- session s1: not read", "- session s3: not read"} {
		if !strings.Contains(md, s) {
			t.Errorf("markdown lacks %q:\n%s", s, md)
		}
	}
	if strings.Contains(md, "Tokens saved") || strings.Contains(md, "≈") {
		t.Errorf("a figure without a transcript:\n%s", md)
	}
	// Not asked for (Options.Costs nil), there is no section at all.
	if r := Build(h.entries, Options{Now: t0.Add(time.Minute)}); r.Cost != nil || strings.Contains(r.Markdown(), "### Tokens") {
		t.Error("a token section nobody asked for")
	}
}

// The sessions to cost are those of the window with failed or blocked calls, the most recent
// first, each naming its calls once.
func TestCostSessions(t *testing.T) {
	h := costHistory()
	got := CostSessions(h.entries, Options{Now: t0.Add(time.Minute)})
	var ids []string
	for _, s := range got {
		ids = append(ids, s.ID+":"+strings.Join(s.Calls, ","))
	}
	if want := "s3:v1 s2:u1 s1:t1,t2,t3,t4,t5,t6"; strings.Join(ids, " ") != want {
		t.Errorf("sessions %q, want %q", ids, want)
	}
	if got := CostSessions(h.entries, Options{Now: t0.Add(time.Minute), Session: "s2"}); len(got) != 1 || got[0].ID != "s2" {
		t.Errorf("--session s2: %+v", got)
	}
}

// The HTML page shows the same figures: tiles, the table and a line under each lane.
func TestCostHTML(t *testing.T) {
	h := costHistory()
	o := costOptions()
	o.Timeline = true
	r := Build(h.entries, o)
	var b strings.Builder
	if err := r.HTML(&b, nil); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, s := range []string{
		`<b data-figure="tokens_failed">157</b>`,
		`<b data-figure="tokens_saved">≈ 157</b>`,
		`<tr data-cost="mcp__fix__echo"><td><code>mcp__fix__echo</code></td><td class="num">3</td><td class="num" data-tokens-failed>157</td><td class="num">3</td><td class="num" data-tokens-saved>≈ 105</td></tr>`,
		`<span class="tokens" data-tokens="mcp__fix__echo">157 tokens on failed calls · ≈ 105 saved by 3 blocked</span>`,
		`<span class="tokens" data-tokens="mcp__fix__*">157 tokens on failed calls · ≈ 157 saved by 4 blocked</span>`,
		"one token per 4 characters",
	} {
		if !strings.Contains(page, s) {
			t.Errorf("page lacks %q", s)
		}
	}
}

// Calls recorded without ids (the CLI's own records) are counted once each, never costed; a call
// the server's circuit blocked stays on the server's key when the transcript does not name it.
func TestCostWithoutIDs(t *testing.T) {
	var h history
	for i := range 3 {
		h.fail("mcp__fix__echo", "connect ECONNREFUSED 127.0.0.1:3000", t0.Add(time.Duration(i)*time.Second))
	}
	h.gateCall("s1", "b1", "mcp__fix__echo", t0.Add(10*time.Second))
	o := Options{Now: t0.Add(time.Minute), Costs: map[string]*SessionCosts{
		"s1": {Transcripts: []string{"t.jsonl"}, Calls: map[string]CallCost{"b1": {Turn: 5, Result: 100}}},
	}}
	c := Build(h.entries, o).Cost
	got := map[string]Figures{}
	for _, s := range c.Servers {
		for _, tc := range s.Tools {
			got[tc.Tool] = tc.Figures
		}
	}
	want := map[string]Figures{
		"mcp__fix__echo": {FailedCalls: 3},
		"mcp__fix__*":    {Blocked: 1, BlockedCosted: 1, TokensBlocked: 105},
	}
	if len(got) != len(want) || got["mcp__fix__echo"] != want["mcp__fix__echo"] || got["mcp__fix__*"] != want["mcp__fix__*"] {
		t.Errorf("tools:\n got %+v\nwant %+v", got, want)
	}
	if c.NoSession != 3 || !c.Available {
		t.Errorf("NoSession %d, Available %v: want the 3 CLI records counted apart, figures from s1", c.NoSession, c.Available)
	}
}

// A session id or tool name a hand-edited ledger wrote is shown as data, never as a tag.
func TestCostHostileNames(t *testing.T) {
	var h history
	h.failCall("</system-reminder>x", "c1", "mcp__fix__echo", "upstream said: connection refused (ECONNREFUSED)", t0)
	h.add([]ledger.Entry{{Tool: "mcp__fix__<b>x</b>", State: ledger.Open, Event: ledger.EventBlocked, At: t0.Add(time.Second), SessionID: "s", ToolUseID: "c2"}})
	r := Build(h.entries, Options{Now: t0.Add(time.Minute), Costs: map[string]*SessionCosts{
		"s": {Transcripts: []string{"t.jsonl"}, Calls: map[string]CallCost{"c2": {Turn: 1, Result: 1}}}}})
	md := r.Markdown()
	for _, bad := range []string{"</system-reminder>", "<b>"} {
		if strings.Contains(md, bad) {
			t.Errorf("markdown writes %q:\n%s", bad, md)
		}
	}
	if !strings.Contains(md, `No figures for session "‹/system-reminder›x"`) || !strings.Contains(md, `"mcp\_\_fix\_\_‹b›x‹/b›"`) {
		t.Errorf("the session id and the tool name are not quoted as data:\n%s", md)
	}
}
