package main

// Every agent's gate: the lean hook on each agent's own pre-call event of the target tool, for the
// CLOSED@100k and OPEN@100k projects, and a VS Code event of a tool that is not an MCP tool while
// the circuits are OPEN. Every answer of every run is checked.

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// benchSQL is the argument every agent's event carries.
const benchSQL = `select id, title from issues where state = 'open' order by updated desc limit 50`

// An agentBench is one agent's pre-call event of the target tool, as that agent sends it, and how
// its deny looks.
type agentBench struct {
	name string
	// flag is the --agent value, "" for none: what the agent's installed hook runs.
	flag  string
	event string
	// denyOut starts a deny on stdout, which also holds denyAlso; denyExit is a deny's exit
	// status (Windsurf's is 2, with the reason on stderr).
	denyOut  string
	denyExit int
	denyAlso string
}

// claudeDeny starts Claude Code's deny, which Codex, Qwen Code and VS Code read too.
const claudeDeny = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"`

// cursorURL is the target server's URL in Cursor's MCP configuration (a remote server: "url"
// alone, as Cursor writes it): beforeMCPExecution names the server only by it (or by its command).
const cursorURL = "https://bench.example.com/mcp"

// agentBenches are the events, each in its agent's own naming of the target tool (server "bench",
// tool "query"), from the fixtures of internal/agent's tests (captured from the real clients where
// there is one, from the agent's documentation otherwise). Claude Code's is preToolUse itself: its
// rows are CLOSED@100k and OPEN@100k. codexTranscript is replaced by the transcript's path.
func agentBenches() []agentBench {
	return []agentBench{
		{"claude", "", preToolUse, claudeDeny, 0, ""},
		{"codex", "codex", `{"session_id":"01a231fd-701e-7911-83c4-1881992a1f19","turn_id":"01a231fd-703a-7ee1-96d7-0dbbd9fac389","transcript_path":"` + codexTranscript +
			`","cwd":"/path/to/proj","hook_event_name":"PreToolUse","model":"gpt-5","permission_mode":"bypassPermissions","tool_name":"` +
			targetTool + `","tool_input":{"sql":"` + benchSQL + `"},"tool_use_id":"call_s1_0_575789"}`, claudeDeny, 0, ""},
		{"gemini", "gemini", `{"session_id":"170803b5-f255-4c18-a682-90105606c2b8","transcript_path":"/home/u/.gemini/tmp/proj/chats/session-2026-12-01T15-15-170803b5.jsonl","cwd":"/path/to/proj",` +
			`"hook_event_name":"BeforeTool","timestamp":"2026-12-01T15:15:27.723Z","tool_name":"mcp_` + targetServer + `_query","tool_input":{"sql":"` + benchSQL + `"},` +
			`"mcp_context":{"server_name":"` + targetServer + `","tool_name":"query","command":"/usr/local/bin/bench-server","args":["--stdio"]}}`, `{"decision":"deny","reason":"`, 0, ""},
		{"qwen", "qwen", `{"session_id":"d8c14226-38d6-44e5-8e7a-73be4fccf42b","transcript_path":"/home/u/.qwen/projects/-path-to-proj/chats/d8c14226.jsonl","cwd":"/path/to/proj",` +
			`"hook_event_name":"PreToolUse","timestamp":"2026-12-01T14:31:25.760Z","permission_mode":"yolo","tool_name":"` + targetTool +
			`","tool_input":{"sql":"` + benchSQL + `"},"tool_use_id":"toolu_1796135485760_znr6d1vqs","tool_call_id":"call_s1_0_0b54e1"}`, claudeDeny, 0, ""},
		{"copilot", "copilot:preToolUse", `{"sessionId":"854686f2-d67c-454d-81a5-4f7cd738da12","timestamp":1796135123113,"cwd":"/path/to/proj","toolName":"` +
			targetServer + `-query","toolArgs":{"sql":"` + benchSQL + `"}}`, `{"permissionDecision":"deny","permissionDecisionReason":"`, 0, ""},
		// What the gate's Cline and opencode plugins send our binary.
		{"cline", "cline", `{"hook":"beforeTool","cwd":"/path/to/proj","conversationId":"conv_1796135458170_0xaxh15","toolCall":{"toolCallId":"call_02_0_9de3d9","toolName":"` +
			targetServer + `__query"}}`, `{"skip":true,"reason":"`, 0, ""},
		{"opencode", "opencode", `{"hook":"tool.execute.before","tool":"` + targetServer + `_query","sessionID":"ses_dcdf94376ffeYO2v3CND6MapdQ","callID":"call_00_0_84f608","servers":["` +
			targetServer + `","other"],"directory":"/path/to/proj"}`, `{"reason":"`, 0, `"deny":true}`},
		{"cursor", "cursor", `{"conversation_id":"c1","generation_id":"g1","hook_event_name":"beforeMCPExecution","cursor_version":"1.7.0","workspace_roots":["/path/to/proj"],` +
			`"tool_name":"query","tool_input":"{\"sql\":\"` + benchSQL + `\"}","url":"` + cursorURL + `"}`, `{"permission":"deny","user_message":"`, 0, ""},
		// VS Code runs the PreToolUse hook of .claude/settings.json (so no --agent), with its
		// common fields in camelCase.
		{"vscode", "", `{"timestamp":"2026-12-01T12:00:00.000Z","hookEventName":"PreToolUse","sessionId":"s-1","transcript_path":"/home/u/.vscode/t.jsonl","cwd":"/path/to/proj",` +
			`"tool_name":"` + targetTool + `","tool_input":{"sql":"` + benchSQL + `"},"tool_use_id":"tool-123"}`, claudeDeny, 0, ""},
		{"windsurf", "windsurf", `{"agent_action_name":"pre_mcp_tool_use","trajectory_id":"traj-1","execution_id":"exec-1","timestamp":"2026-12-01T12:00:00Z",` +
			`"tool_info":{"mcp_server_name":"` + targetServer + `","mcp_tool_name":"query","mcp_tool_arguments":{"sql":"` + benchSQL + `"}}}`, "", 2, ""},
		{"goose", "goose", `{"hook_event_name":"PreToolUse","session_id":"g1","cwd":"/path/to/proj","tool_name":"` + targetServer + `__query","tool_input":{"sql":"` + benchSQL + `"}}`,
			`{"decision":"block","reason":"`, 0, ""},
	}
}

// codexTranscript stands for the path of the session transcript in Codex's event.
const codexTranscript = "@TRANSCRIPT@"

// vscodeNonMCP is the tool of the timed VS Code event that is not an MCP tool, and vscodeOthers are
// more names VS Code may send, each checked once while the target's circuit is OPEN: VS Code's own
// tools and the names other agents give the target tool (Gemini's, Copilot's, Goose's and Cline's,
// opencode's), which in a Claude Code hook are not MCP tools.
const vscodeNonMCP = "runInTerminal"

var vscodeOthers = []string{"Read", "editFiles", "runInTerminal", "mcp_" + targetServer + "_query", targetServer + "-query",
	targetServer + "__query", targetServer + "_query", "mcp__", "mcp_", "MCP:query"}

// vscodeEvent is VS Code's PreToolUse for tool.
func vscodeEvent(tool string) string {
	return `{"timestamp":"2026-12-01T12:00:00.000Z","hookEventName":"PreToolUse","sessionId":"s-1","transcript_path":"/home/u/.vscode/t.jsonl","cwd":"/path/to/proj",` +
		`"tool_name":"` + tool + `","tool_input":{"command":"ls -la"},"tool_use_id":"tool-124"}` + "\n"
}

// selectAgents returns the agents named in list (comma-separated), in the order of agentBenches.
func selectAgents(list string) ([]agentBench, error) {
	all := agentBenches()
	var names []string
	for _, a := range all {
		names = append(names, a.name)
	}
	want := map[string]bool{}
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		if !slices.Contains(names, n) {
			return nil, fmt.Errorf("-agents: unknown agent %q (known: %s)", n, strings.Join(names, ","))
		}
		want[n] = true
	}
	var out []agentBench
	for _, a := range all {
		if want[a.name] {
			out = append(out, a)
		}
	}
	return out, nil
}

// agentFiles writes what the agents' gates read besides the ledger: Codex's session transcript (48
// KB the gate reads for the failures Codex reports in no event), Copilot CLI's mcp-config.json
// (which makes bench-query the bench server's tool) and Cursor's ~/.cursor/mcp.json (which names
// the server of cursorURL). It returns the transcript's path.
func agentFiles(work, home string) (string, error) {
	transcript := filepath.Join(work, "codex-rollout.jsonl")
	var tr bytes.Buffer
	for tr.Len() < 48<<10 {
		tr.WriteString(`{"type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"` +
			strings.Repeat("instructions ", 60) + `"}]}}` + "\n")
		tr.WriteString(`{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"McpToolCall","id":"call_x","server":"` +
			targetServer + `","tool":"list","status":"completed","result":{"content":[{"type":"text","text":"ok"}]}}}}` + "\n")
	}
	files := map[string]string{
		transcript: tr.String(),
		filepath.Join(home, ".copilot", "mcp-config.json"): `{"mcpServers":{"` + targetServer + `":{"type":"local","command":"bench-server"}}}`,
		filepath.Join(home, ".cursor", "mcp.json"):         `{"mcpServers":{"` + targetServer + `":{"url":"` + cursorURL + `"}}}`,
	}
	for name, data := range files {
		if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
			return "", err
		}
		if err := os.WriteFile(name, []byte(data), 0o600); err != nil {
			return "", err
		}
	}
	return transcript, nil
}

// allows checks an answer that lets the call through with nothing to say: exit 0, no output.
func allows(out, errOut []byte, exit int) error {
	if exit != 0 || len(out) > 0 || len(errOut) > 0 {
		return fmt.Errorf("want the call allowed silently, got exit %d, stdout %.300q, stderr %.300q", exit, out, errOut)
	}
	return nil
}

// denies checks an answer that denies the call in a's shape, with the reason the model reads.
func (a agentBench) denies(out, errOut []byte, exit int) error {
	reason := out
	if a.denyOut == "" {
		reason = errOut
	}
	if exit != a.denyExit || !bytes.HasPrefix(out, []byte(a.denyOut)) || !bytes.Contains(out, []byte(a.denyAlso)) || (a.denyOut == "") != (len(out) == 0) ||
		!bytes.Contains(reason, []byte("CIRCUIT OPEN")) {
		return fmt.Errorf("want %s's deny (exit %d, stdout starting %q and holding %q, the reason naming CIRCUIT OPEN), got exit %d, stdout %.300q, stderr %.300q",
			a.name, a.denyExit, a.denyOut, a.denyAlso, exit, out, errOut)
	}
	return nil
}
