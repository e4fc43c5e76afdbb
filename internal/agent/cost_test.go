package agent

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// testdata/claude-transcript.jsonl is the transcript Claude Code 2.1.332 wrote in an offline run
// (claude -p against a fake Messages API whose answers reported output_tokens 40 + 11 × the
// results answered so far, and a stdio MCP server failing on cue), its paths replaced and its
// lines over 6 KB (the environment and prompt snapshots) left out: calls 1, 2 and 4 failed with
// "upstream quota exceeded", call 3 (in the same turn as call 2) and call 6 answered "ok", call 5
// was denied by our PreToolUse hook. It keeps Claude Code's api-request-blob lines, which repeat
// every tool_use and tool_result of the conversation and must not count.
//
// testdata/codex-cost-rollout.jsonl is the rollout Codex CLI 0.169.0 wrote for the same script
// (the fake Responses API reported output_tokens 10 for every response), its lines over 6 KB
// (the instructions) left out.

// The figures below were worked out by hand from the files: the turn's output_tokens, shared
// among its tool_use blocks (the remainder to the first), plus ⌈characters of the result / 4⌉.
func TestReadCostsClaude(t *testing.T) {
	ids := []string{"toolu_e2e_01", "toolu_e2e_02", "toolu_e2e_03", "toolu_e2e_04", "toolu_e2e_05", "toolu_e2e_06"}
	scan := readCosts(t, "claude", "testdata/claude-transcript.jsonl", ids...)
	want := map[string]CallCost{
		"toolu_e2e_01": {Tool: "mcp__fix__echo", TurnOutput: 40, TurnCalls: 1, Share: 40, ResultChars: 23, ResultTokens: 6, HasTurn: true, HasResult: true},
		"toolu_e2e_02": {Tool: "mcp__fix__echo", TurnOutput: 51, TurnCalls: 2, Share: 26, ResultChars: 23, ResultTokens: 6, HasTurn: true, HasResult: true},
		"toolu_e2e_03": {Tool: "mcp__fix__other", TurnOutput: 51, TurnCalls: 2, Share: 25, ResultChars: 2, ResultTokens: 1, HasTurn: true, HasResult: true},
		"toolu_e2e_04": {Tool: "mcp__fix__echo", TurnOutput: 73, TurnCalls: 1, Share: 73, ResultChars: 23, ResultTokens: 6, HasTurn: true, HasResult: true},
		// The deny's text is what the model read of the blocked call.
		"toolu_e2e_05": {Tool: "mcp__fix__echo", TurnOutput: 84, TurnCalls: 1, Share: 84, ResultChars: 1220, ResultTokens: 305, HasTurn: true, HasResult: true},
		"toolu_e2e_06": {Tool: "mcp__fix__other", TurnOutput: 95, TurnCalls: 1, Share: 95, ResultChars: 2, ResultTokens: 1, HasTurn: true, HasResult: true},
	}
	if !maps.Equal(scan.Calls, want) {
		t.Errorf("costs:\n got %v\nwant %v", scan.Calls, want)
	}
	if got := scan.Calls["toolu_e2e_02"].Tokens(); got != 32 {
		t.Errorf("call 2 cost %d tokens, want 26 + 6", got)
	}
	if scan.Skipped != 0 || scan.Bytes != fileSize(t, "testdata/claude-transcript.jsonl") {
		t.Errorf("Skipped %d, Bytes %d: want 0 and the whole file", scan.Skipped, scan.Bytes)
	}
}

func TestReadCostsCodex(t *testing.T) {
	scan := readCosts(t, "codex", "testdata/codex-cost-rollout.jsonl", "call_e2e_01", "call_e2e_02", "call_e2e_03", "call_e2e_05")
	want := map[string]CallCost{
		// The output Codex gives the model starts with its own "Wall time: … seconds\nOutput:".
		"call_e2e_01": {Tool: "mcp__fix__echo", TurnOutput: 10, TurnCalls: 1, Share: 10, ResultChars: 56, ResultTokens: 14, HasTurn: true, HasResult: true},
		"call_e2e_02": {Tool: "mcp__fix__echo", TurnOutput: 10, TurnCalls: 2, Share: 5, ResultChars: 56, ResultTokens: 14, HasTurn: true, HasResult: true},
		"call_e2e_03": {Tool: "mcp__fix__other", TurnOutput: 10, TurnCalls: 2, Share: 5, ResultChars: 35, ResultTokens: 9, HasTurn: true, HasResult: true},
		"call_e2e_05": {Tool: "mcp__fix__echo", TurnOutput: 10, TurnCalls: 1, Share: 10, ResultChars: 1286, ResultTokens: 322, HasTurn: true, HasResult: true},
	}
	if !maps.Equal(scan.Calls, want) {
		t.Errorf("costs:\n got %v\nwant %v", scan.Calls, want)
	}
}

// Only the calls asked for are kept: memory follows the ledger's calls, not the transcript's.
func TestReadCostsOnlyWanted(t *testing.T) {
	scan := readCosts(t, "claude", "testdata/claude-transcript.jsonl", "toolu_e2e_03", "toolu_nowhere")
	if got := slices.Sorted(maps.Keys(scan.Calls)); !slices.Equal(got, []string{"toolu_e2e_03"}) {
		t.Errorf("calls %q, want only toolu_e2e_03 (toolu_nowhere is in no record)", got)
	}
	// Its share is still of the two calls of its turn.
	if c := scan.Calls["toolu_e2e_03"]; c.TurnCalls != 2 || c.Share != 25 {
		t.Errorf("%+v: want 25 of the turn's 51 output tokens, shared by 2 calls", c)
	}
}

// Records written by hand or torn are passed over; the same words inside a string never count.
func TestReadCostsHostileLines(t *testing.T) {
	lines := []string{
		// A result whose text holds what a turn's line holds, escaped: a result, not a turn.
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"tool_use\",\"id\":\"b\"}]}}"}]}}`,
		// A turn whose usage is not a number: counted with 0 output tokens.
		`{"type":"assistant","requestRef":"r1","message":{"id":"m1","content":[{"type":"tool_use","id":"c","name":"mcp__s__t","input":{}}],"usage":{"output_tokens":"many"}}}`,
		// Not one JSON object: passed over.
		`{"type":"assistant","requestRef":"r2","message":{"id":"m2","content":[{"type":"tool_use","id":"d","name":"mcp__s__t"}],"usage":{"output_tokens":9}}} {}`,
		// A field of another type than Claude Code writes: passed over.
		`{"type":"assistant","requestRef":"r3","message":{"id":"m3","content":[{"type":"tool_use","id":["e"],"name":"mcp__s__t"}],"usage":{"output_tokens":9}}}`,
		// A last line not yet whole: left for the agent to finish.
		`{"type":"assistant","requestRef":"r4","message":{"id":"m4","content":[{"type":"tool_use","id":"f","name":"mcp__s__t"}],"usage":{"output_tokens":9}}}`,
	}
	data := strings.Join(lines, "\n")
	scan, err := scanCosts(strings.NewReader(data), int64(len(data)), "claude", set("a", "b", "c", "d", "e", "f"), transcriptDecode)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]CallCost{
		"a": {ResultChars: 73, ResultTokens: 19, HasResult: true},
		"c": {Tool: "mcp__s__t", TurnCalls: 1, HasTurn: true},
	}
	if !maps.Equal(scan.Calls, want) {
		t.Errorf("costs:\n got %v\nwant %v", scan.Calls, want)
	}
	if last := int64(len(data) - len(lines[len(lines)-1])); scan.Bytes != last {
		t.Errorf("read %d bytes, want %d (up to the line not yet whole)", scan.Bytes, last)
	}
}

// Characters are counted as the model reads them: escapes and surrogate pairs once each, a
// UTF-8 character once whatever its length, the texts of an array of blocks added up and its
// images not at all.
func TestReadCostsCharacters(t *testing.T) {
	for _, tc := range []struct {
		content string
		chars   int
	}{
		{`"abc"`, 3},
		{`"a\nb\"c\\"`, 6},
		{`"\u00e9\ud83d\ude00x"`, 3},
		{`"é😀x"`, 3},
		{`[{"type":"text","text":"abcd"},{"type":"image","source":{"data":"AAAA"}},{"type":"text","text":"ef"}]`, 6},
		{`[]`, 0},
		{`""`, 0},
	} {
		line := `{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"x","content":` + tc.content + `}]}}` + "\n"
		scan, err := scanCosts(strings.NewReader(line), int64(len(line)), "claude", set("x"), transcriptDecode)
		if err != nil {
			t.Fatal(err)
		}
		if c := scan.Calls["x"]; !c.HasResult || c.ResultChars != tc.chars || c.ResultTokens != EstimateTokens(tc.chars) {
			t.Errorf("%s: %+v, want %d characters", tc.content, c, tc.chars)
		}
	}
}

// A line past the decode bound is counted as skipped, and the lines after it are still read.
func TestReadCostsSkipsHugeLines(t *testing.T) {
	big := `{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"big","content":"` + strings.Repeat("x", 4000) + `"}]}}` + "\n"
	small := `{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"small","content":"ok"}]}}` + "\n"
	data := big + small
	scan, err := scanCosts(strings.NewReader(data), int64(len(data)), "claude", set("big", "small"), 1024)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := scan.Calls["big"]; ok || !scan.Calls["small"].HasResult || scan.Skipped != 1 {
		t.Errorf("calls %v, skipped %d: want only small, one line skipped", scan.Calls, scan.Skipped)
	}
}

// The turns of a Claude Code transcript are told apart by their API request, whatever their
// message ids: the share of each call is of its own turn's output.
func TestReadCostsTurns(t *testing.T) {
	turn := func(ref, id string, out int) string {
		return fmt.Sprintf(`{"type":"assistant","requestRef":%q,"message":{"id":"msg_same","content":[{"type":"tool_use","id":%q,"name":"mcp__s__t","input":{}}],"usage":{"output_tokens":%d}}}`, ref, id, out) + "\n"
	}
	// Three blocks of one response (10 tokens), a result in between, then another response.
	data := turn("r1", "a", 10) + turn("r1", "b", 10) +
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"a","content":"x"}]}}` + "\n" +
		turn("r1", "c", 10) + turn("r2", "d", 7)
	// Past maxOpenTurns responses later, a block of r1 again is a turn of its own.
	for i := range maxOpenTurns {
		data += turn(fmt.Sprintf("q%d", i), fmt.Sprintf("q%d", i), 1)
	}
	scan, err := scanCosts(strings.NewReader(data), int64(len(data)), "claude", set("a", "b", "c", "d"), transcriptDecode)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, id := range []string{"a", "b", "c", "d"} {
		c := scan.Calls[id]
		got = append(got, fmt.Sprintf("%s %d/%d=%d", id, c.TurnOutput, c.TurnCalls, c.Share))
	}
	if want := []string{"a 10/3=4", "b 10/3=3", "c 10/3=3", "d 7/1=7"}; !slices.Equal(got, want) {
		t.Errorf("shares %q, want %q", got, want)
	}
}

// Codex versions without token_usage_record close a response at its token_count event.
func TestReadCostsCodexTokenCount(t *testing.T) {
	data := `{"type":"response_item","payload":{"type":"function_call","name":"echo","namespace":"mcp__fix","arguments":"{}","call_id":"c1"}}
{"type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{}","call_id":"c2"}}
{"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"boom"}}
{"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"output_tokens":99},"last_token_usage":{"output_tokens":9}}}}
{"type":"event_msg","payload":{"type":"token_count","info":{"last_token_usage":{"output_tokens":5}}}}
`
	scan, err := scanCosts(strings.NewReader(data), int64(len(data)), "codex", set("c1"), transcriptDecode)
	if err != nil {
		t.Fatal(err)
	}
	want := CallCost{Tool: "mcp__fix__echo", TurnOutput: 9, TurnCalls: 2, Share: 5, ResultChars: 4, ResultTokens: 1, HasTurn: true, HasResult: true}
	if c := scan.Calls["c1"]; c != want {
		t.Errorf("%+v, want %+v", c, want)
	}
}

func TestFindTranscripts(t *testing.T) {
	root := t.TempDir()
	proj := filepath.Join(root, "work", "my.proj")
	home := filepath.Join(root, "home")
	cfg := filepath.Join(root, "claude[cfg]") // glob characters in the user's directory
	codex := filepath.Join(home, ".codex")
	key := claudeProjectKey(proj)
	const sid = "0b5e7c1e-1111-4222-8333-944445555666"
	write := func(path, data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	main := filepath.Join(cfg, "projects", key, sid+".jsonl")
	sub := filepath.Join(cfg, "projects", key+"-sub", sid+".jsonl")
	agentFile := filepath.Join(cfg, "projects", key, sid, "subagents", "agent-1.jsonl")
	write(main, "")
	write(sub, "")
	write(agentFile, "")
	write(filepath.Join(cfg, "projects", key+"2", sid+".jsonl"), "")      // another project, named alike
	write(filepath.Join(cfg, "projects", "-elsewhere", sid+".jsonl"), "") // a session of another project
	meta := func(cwd string) string {
		return fmt.Sprintf(`{"timestamp":"2026-12-01T00:00:00Z","type":"session_meta","payload":{"id":%q,"cwd":%q}}`+"\n", sid, cwd)
	}
	rollout := filepath.Join(codex, "sessions", "2026", "12", "01", "rollout-2026-12-01T14-23-42-"+sid+".jsonl")
	write(rollout, meta(filepath.Join(proj, "src")))
	write(filepath.Join(codex, "sessions", "2026", "12", "02", "rollout-2026-12-02T01-00-00-"+sid+".jsonl"), meta("/elsewhere"))
	getenv := func(name string) string {
		return map[string]string{"HOME": home, "CLAUDE_CONFIG_DIR": cfg}[name]
	}
	got := FindTranscripts(sid, proj, getenv)
	want := []Transcript{{"claude", main}, {"claude", agentFile}, {"claude", sub}, {"codex", rollout}}
	if !slices.Equal(got, want) {
		t.Errorf("transcripts:\n got %v\nwant %v", got, want)
	}
	// A session id that is not one never becomes part of a path.
	for _, bad := range []string{"", "../" + sid, sid + "/x", "*", "-x", strings.Repeat("a", 129), "a b"} {
		if got := FindTranscripts(bad, proj, getenv); got != nil {
			t.Errorf("FindTranscripts(%q) = %v, want nothing", bad, got)
		}
	}
}

// A transcript that is a link is not read (the ledger's session id selects a file; it must be
// the agent's own).
func TestReadCostsRefusesLinks(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target.jsonl")
	if err := os.WriteFile(target, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(target, link); err != nil {
		t.Skip(err)
	}
	if _, err := ReadCosts(Transcript{Agent: "claude", Path: link}, set("x")); err == nil {
		t.Error("a link was read as a transcript")
	}
}

func readCosts(t *testing.T, agent, path string, ids ...string) CostScan {
	t.Helper()
	scan, err := ReadCosts(Transcript{Agent: agent, Path: path}, set(ids...))
	if err != nil {
		t.Fatal(err)
	}
	return scan
}

func set(ids ...string) map[string]bool {
	m := map[string]bool{}
	for _, id := range ids {
		m[id] = true
	}
	return m
}

func fileSize(t testing.TB, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
