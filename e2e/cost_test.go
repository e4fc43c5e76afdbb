package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/testservers"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// costUsage is what the fake model reports for the answer after answered results: every answer
// its own figures, so that a call charged another turn's tokens shows.
func costUsage(answered int) apiUsage {
	return apiUsage{Input: 1000 + answered, CacheRead: 50 + answered, CacheCreation: 7, StartOutput: 3, Output: 40 + 11*answered}
}

// TestClaudeCodeCost drives the real Claude Code client offline through a session whose echo tool
// fails three times (the third trips it) and is then denied twice, with a fake model API that
// reports different usage figures for every answer, and checks the report's token figures against
// the session's own transcript, worked out here independently of the report's reader: each
// call's share of its turn's output_tokens plus ⌈characters of its result / 4⌉.
func TestClaudeCodeCost(t *testing.T) {
	skipShort(t, "drives real processes end to end")
	claude := installClaude(t)
	bin := filepath.Join(t.TempDir(), "bin")
	goBuild(t, bin, module+"/cmd/mcp-circuit-breaker", module+"/cmd/mcp-circuit-breaker-hook", testservers.FixturePackage)
	h := &harness{claude: claude, cli: filepath.Join(bin, "mcp-circuit-breaker"),
		hookBin: filepath.Join(bin, "mcp-circuit-breaker-hook"), fixture: filepath.Join(bin, "mcpfixture")}
	p := h.newProject(t, "", 0)
	fail := cue(quotaError)
	// Turn 2 makes two calls: echo's share of its output is half of it (the remainder to the
	// first). Turns 4 and 5 are denied.
	api := p.runUsage(t, t0, [][]scriptCall{{{echoTool, fail}}, {{echoTool, fail}, {otherTool, `{}`}}, {{echoTool, fail}}, {{echoTool, fail}}, {{echoTool, fail}}}, costUsage)
	for i, want := range map[int]string{4: "⚡ CIRCUIT OPEN", 5: "PreToolUse:" + echoTool + " hook error: ⚡ CIRCUIT OPEN", 6: "PreToolUse:" + echoTool + " hook error: ⚡ CIRCUIT OPEN"} {
		if r := mustResult(t, api, i); !strings.Contains(r.read(), want) {
			t.Fatalf("result %d lacks %q: the session is not the one costed below:\n%s", i, want, r.read())
		}
	}

	// The ledger's failed and blocked calls, by tool_use_id, and the session.
	var session string
	failed, blocked := map[string]bool{}, map[string]bool{}
	for _, e := range p.ledger(t) {
		if e.Tool != echoTool || e.ToolUseID == "" {
			continue
		}
		session = e.SessionID
		switch e.Event {
		case ledger.EventFailure, ledger.EventTrip:
			failed[e.ToolUseID] = true
		case ledger.EventBlocked:
			blocked[e.ToolUseID] = true
		}
	}
	if len(failed) != 3 || len(blocked) != 2 || session == "" {
		t.Fatalf("ledger: failed %v, blocked %v, session %q; want 3 failed and 2 blocked calls of one session", failed, blocked, session)
	}
	transcript := filepath.Join(p.root, "home", ".claude", "projects", claudeKey(p.dir), session+".jsonl")
	byHand := handCosts(t, transcript)
	var tokensFailed, tokensBlocked int
	var lines []string
	for _, id := range sortedIDs(failed, blocked) {
		c, ok := byHand[id]
		if !ok {
			t.Fatalf("call %s is not in the transcript %s", id, transcript)
		}
		kind := "failed"
		if blocked[id] {
			kind, tokensBlocked = "blocked", tokensBlocked+c.tokens()
		} else {
			tokensFailed += c.tokens()
		}
		lines = append(lines, fmt.Sprintf("%s %-7s turn %d output tokens / %d calls → %d; result %d characters → %d tokens; %d in all",
			id, kind, c.turnOutput, c.turnCalls, c.share, c.resultChars, c.resultTokens(), c.tokens()))
	}
	saved := (2*len(blocked)*tokensFailed + len(failed)) / (2 * len(failed))
	t.Logf("worked out from %s:\n%s\nfailed %d tokens, blocked %d tokens, saved ≈ %d × %d / %d = %d",
		transcript, strings.Join(lines, "\n"), tokensFailed, tokensBlocked, len(blocked), tokensFailed, len(failed), saved)
	// The fake's figures: echo's failures cost 40 + 6, 51/2 → 26 + 6 and 73 + 6 (each result
	// "upstream quota exceeded", 23 characters); that is what the transcript must say too.
	if tokensFailed != 157 || saved != 105 {
		t.Errorf("by hand from the transcript: failed %d, saved %d; want 157 and 105 from the fake model's usage figures", tokensFailed, saved)
	}

	out := p.cli(t, t0, "report", "--json")
	var rep struct {
		Cost struct {
			Available    bool `json:"available"`
			FailedCalls  int  `json:"failed_calls"`
			Costed       int  `json:"failed_calls_costed"`
			TokensFailed int  `json:"tokens_failed"`
			Blocked      int  `json:"blocked"`
			Blocked2     int  `json:"tokens_blocked"`
			Saved        int  `json:"tokens_saved_estimate"`
			Servers      []struct {
				Server string `json:"server"`
				Tools  []struct {
					Tool         string `json:"tool"`
					TokensFailed int    `json:"tokens_failed"`
					Blocked      int    `json:"blocked"`
					Saved        int    `json:"tokens_saved_estimate"`
				} `json:"tools"`
			} `json:"servers"`
		} `json:"cost"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report --json: %v\n%s", err, out)
	}
	c := rep.Cost
	if !c.Available || c.FailedCalls != 3 || c.Costed != 3 || c.TokensFailed != tokensFailed || c.Blocked != 2 || c.Blocked2 != tokensBlocked || c.Saved != saved {
		t.Errorf("report cost %+v; want 3 failed calls, all costed, %d tokens; 2 blocked costing %d; saved %d", c, tokensFailed, tokensBlocked, saved)
	}
	if len(c.Servers) != 1 || c.Servers[0].Server != "fix" || len(c.Servers[0].Tools) != 1 || c.Servers[0].Tools[0].Tool != echoTool ||
		c.Servers[0].Tools[0].TokensFailed != tokensFailed || c.Servers[0].Tools[0].Saved != saved {
		t.Errorf("per server and tool: %+v; want fix → %s with %d tokens, saved %d", c.Servers, echoTool, tokensFailed, saved)
	}
	md := p.cli(t, t0, "report")
	for _, want := range []string{
		fmt.Sprintf("| **fix** (server) | 3 | %d | 2 | ≈ %d |", tokensFailed, saved),
		fmt.Sprintf("| %s | 3 | %d | 2 | ≈ %d |", echoTool, tokensFailed, saved),
		"How these are counted:", "one token per 4 characters",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the report lacks %q:\n%s", want, md)
		}
	}
	page := p.cli(t, t0, "report", "--format", "html")
	if want := fmt.Sprintf(`<b data-figure="tokens_failed">%d</b>`, tokensFailed); !strings.Contains(page, want) {
		t.Errorf("the HTML report lacks %s", want)
	}
}

// handCost is one call's cost as worked out from the transcript by handCosts.
type handCost struct {
	turnOutput, turnCalls, share, resultChars int
}

func (c handCost) resultTokens() int { return (c.resultChars + 3) / 4 }
func (c handCost) tokens() int       { return c.share + c.resultTokens() }

// handCosts works out every tool call's cost from a Claude Code transcript the plain way: decode
// each assistant and user line whole, group the assistant lines of one response by requestRef,
// give each tool_use its share of the response's output_tokens in block order, and count the
// characters of each tool_result's text.
func handCosts(t *testing.T, path string) map[string]handCost {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("transcript: %v", err)
	}
	defer f.Close()
	type turn struct {
		output int
		ids    []string
	}
	turns := map[string]*turn{}
	var order []string
	results := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var line struct {
			Type       string `json:"type"`
			RequestRef string `json:"requestRef"`
			Message    struct {
				Content json.RawMessage `json:"content"`
				Usage   struct {
					Output int `json:"output_tokens"`
				} `json:"usage"`
			} `json:"message"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		var blocks []struct {
			Type      string          `json:"type"`
			ID        string          `json:"id"`
			ToolUseID string          `json:"tool_use_id"`
			Content   json.RawMessage `json:"content"`
		}
		if json.Unmarshal(line.Message.Content, &blocks) != nil {
			continue
		}
		for _, b := range blocks {
			switch {
			case line.Type == "assistant" && b.Type == "tool_use":
				tr := turns[line.RequestRef]
				if tr == nil {
					tr = &turn{}
					turns[line.RequestRef] = tr
					order = append(order, line.RequestRef)
				}
				tr.output = max(tr.output, line.Message.Usage.Output)
				tr.ids = append(tr.ids, b.ID)
			case line.Type == "user" && b.Type == "tool_result":
				if _, seen := results[b.ToolUseID]; !seen {
					results[b.ToolUseID] = utf8.RuneCountInString(blocksText(b.Content))
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	out := map[string]handCost{}
	for _, ref := range order {
		tr := turns[ref]
		n := len(tr.ids)
		for i, id := range tr.ids {
			share := tr.output / n
			if i < tr.output%n {
				share++
			}
			out[id] = handCost{turnOutput: tr.output, turnCalls: n, share: share, resultChars: results[id]}
		}
	}
	return out
}

// claudeKey is the name Claude Code 2.1.332 gave a working directory's folder of transcripts
// (observed): every character but ASCII letters and digits a '-'.
func claudeKey(dir string) string {
	var b strings.Builder
	for _, r := range dir {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

func sortedIDs(sets ...map[string]bool) []string {
	var ids []string
	for _, s := range sets {
		for id := range s {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// TestCodexCost drives the real Codex CLI offline through three failing calls and a denied one
// and checks the report's token figures against its rollout, worked out here the plain way: the
// function calls of each response share the output_tokens of the token_usage_record that follows
// them, and a call's result is its function_call_output's text, "Wall time: …" included.
func TestCodexCost(t *testing.T) {
	skipShort(t, "drives a real agent client end to end")
	codex := installAgent(t, "codex")
	h := buildOurs(t)
	p := newAgentProject(t, h)
	p.codexHooks(t)
	call := scriptCall{echoTool, cue(quotaError)}
	p.codexSession(t, codex, t0, [][]scriptCall{{call}, {call}, {call}, {call}})
	var session string
	failed, blocked := map[string]bool{}, map[string]bool{}
	for _, e := range p.ledger(t) {
		if e.ToolUseID == "" {
			continue
		}
		session = e.SessionID
		switch {
		case e.Tool == echoTool && (e.Event == ledger.EventFailure || e.Event == ledger.EventTrip):
			failed[e.ToolUseID] = true
		case e.Event == ledger.EventBlocked:
			// The call both circuits deny is recorded on the server's key.
			blocked[e.ToolUseID] = true
		}
	}
	if len(failed) != 3 || len(blocked) != 1 {
		t.Fatalf("ledger: failed %v, blocked %v; want 3 and 1", failed, blocked)
	}
	rollouts, _ := filepath.Glob(filepath.Join(p.home, ".codex", "sessions", "*", "*", "*", "rollout-*-"+session+".jsonl"))
	if len(rollouts) != 1 {
		t.Fatalf("rollouts of session %s: %q", session, rollouts)
	}
	byHand := codexHandCosts(t, rollouts[0])
	var tokensFailed, tokensBlocked int
	for id := range failed {
		tokensFailed += byHand[id]
	}
	for id := range blocked {
		tokensBlocked += byHand[id]
	}
	saved := (2*len(blocked)*tokensFailed + len(failed)) / (2 * len(failed))
	t.Logf("worked out from %s: %v; failed %d tokens, blocked %d, saved ≈ %d", rollouts[0], byHand, tokensFailed, tokensBlocked, saved)
	var rep struct {
		Cost struct {
			Available     bool `json:"available"`
			TokensFailed  int  `json:"tokens_failed"`
			TokensBlocked int  `json:"tokens_blocked"`
			Saved         int  `json:"tokens_saved_estimate"`
			Sessions      map[string]struct {
				Agent string `json:"agent"`
			} `json:"sessions"`
		} `json:"cost"`
	}
	out := p.cli(t, t0, "report", "--json")
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report --json: %v\n%s", err, out)
	}
	if c := rep.Cost; !c.Available || c.TokensFailed != tokensFailed || c.TokensBlocked != tokensBlocked || c.Saved != saved || c.Sessions[session].Agent != "Codex CLI" {
		t.Errorf("report cost %+v; want %d failed, %d blocked, saved %d, from Codex CLI's rollout", c, tokensFailed, tokensBlocked, saved)
	}
}

// codexHandCosts is what each call of a Codex rollout cost: its share of the output tokens of
// its response plus ⌈characters of its output / 4⌉, by call id.
func codexHandCosts(t *testing.T, path string) map[string]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	share, chars := map[string]int{}, map[string]int{}
	var pending []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var line struct {
			Type    string `json:"type"`
			Payload struct {
				Type   string          `json:"type"`
				CallID string          `json:"call_id"`
				Output json.RawMessage `json:"output"`
				Usage  struct {
					Output int `json:"output_tokens"`
				} `json:"usage"`
			} `json:"payload"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		switch {
		case line.Type == "response_item" && line.Payload.Type == "function_call":
			pending = append(pending, line.Payload.CallID)
		case line.Type == "token_usage_record":
			for i, id := range pending {
				share[id] = line.Payload.Usage.Output / len(pending)
				if i < line.Payload.Usage.Output%len(pending) {
					share[id]++
				}
			}
			pending = nil
		case line.Type == "response_item" && line.Payload.Type == "function_call_output":
			var s string
			if json.Unmarshal(line.Payload.Output, &s) != nil {
				var blocks []struct {
					Text string `json:"text"`
				}
				json.Unmarshal(line.Payload.Output, &blocks)
				for _, b := range blocks {
					s += b.Text
				}
			}
			chars[line.Payload.CallID] = utf8.RuneCountInString(s)
		}
	}
	out := map[string]int{}
	for id, n := range share {
		out[id] = n + (chars[id]+3)/4
	}
	return out
}
