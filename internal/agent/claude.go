package agent

// Claude Code's codec: its hook events (docs/hook.md) and the JSON answers it reads back.

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// Claude is Claude Code's codec. Tool names are already canonical (mcp__<server>__<tool>, the
// server part sanitized) and mcp_server.name gives the real server name.
var Claude Codec = claude{}

type claude struct{}

func (claude) Name() string { return "claude" }

func (claude) Title() string { return "Claude Code" }

// claudeMCPMatcher matches every MCP tool name (a JavaScript RegExp tested unanchored).
const claudeMCPMatcher = "mcp__.*"

func (claude) Setup() Setup {
	return Setup{
		Format: FormatClaudeSettings,
		Hooks:  claudeHooks(),
		Scopes: []Scope{
			projectScope(".claude/settings.json"),
			{Name: "local", Path: ".claude/settings.local.json", Usage: "this machine"},
			userScope("settings.json"),
		},
		ConfigDirEnv: "CLAUDE_CONFIG_DIR",
		HomeDir:      ".claude",
		Binaries:     []string{"claude"},
		Timeout:      hookTimeoutS,
		TimeoutUnit:  "s",
		Skill:        true,
	}
}

// claudeKinds maps Claude Code's hook_event_name to the gate's kinds.
var claudeKinds = map[string]gate.Kind{
	"PreToolUse":         gate.Before,
	"PostToolUse":        gate.Success,
	"PostToolUseFailure": gate.Failure,
	"SessionStart":       gate.SessionStart,
}

// Skips is true for a whole event that names no MCP tool anywhere: no "mcp__" in its bytes (so neither
// its tool_name nor its mcp_server can make it one), no \u escape that could spell one, and no
// SessionStart, which is answered whatever it names. VS Code, which runs these hooks for every
// tool it calls, sends such events for all of its own tools.
func (claude) Skips(raw []byte) bool {
	// The substring tests first: an MCP tool's event, the one that goes on to the gate, is told
	// apart without scanning it for its end.
	return !bytes.Contains(raw, []byte("mcp__")) && !bytes.Contains(raw, []byte(`\u`)) && !bytes.Contains(raw, []byte("SessionStart")) && wholeObject(raw)
}

func (claude) Decode(r io.Reader, servers gate.Servers, seen func(gate.Event)) (gate.Event, error) {
	ev, out, err := decodeClaudeShaped(r, seen, claudeEvent.event)
	if err == nil && ev.MCPServer == "" {
		out.Key = ambiguousServerKey(out.Key, servers)
	}
	return out, err
}

// ambiguousServerKey is key with the server part of the configured server it names, when the event
// gave no mcp_server and key could be the tool of a server whose name holds "__" or ends in '_'
// (ledger.SanitizeServer): the longest such server wins. servers is read only for such a key: a
// tool name with a second "__" after its server part.
func ambiguousServerKey(key string, servers gate.Servers) string {
	if servers == nil {
		return key
	}
	_, tool, ok := ledger.Key(key).Split()
	if !ok || !strings.Contains(tool, "__") && !strings.HasPrefix(tool, "_") {
		return key
	}
	best, bestLen := "", 0
	for _, s := range servers() {
		name := ledger.Sanitize(s.Name)
		prefix := "mcp__" + name + "__"
		if ledger.ServerPart(name) == name || len(name) <= bestLen || len(key) <= len(prefix) || !strings.HasPrefix(key, prefix) {
			continue
		}
		best, bestLen = s.Name, len(name)
	}
	if best == "" {
		return key
	}
	return ledger.ClaudeKey(key, best)
}

func (claude) Encode(ev gate.Event, a gate.Answer) gate.Reply {
	var out ClaudeAnswer
	switch {
	case a.Deny:
		out.HookSpecificOutput = &ClaudeSpecific{HookEventName: "PreToolUse", PermissionDecision: "deny", PermissionDecisionReason: a.Reason}
	case a.Context != "":
		out.HookSpecificOutput = &ClaudeSpecific{HookEventName: claudeEventName(ev), AdditionalContext: a.Context}
	}
	out.SystemMessage = a.Notice
	return gate.Reply{Stdout: out.Encode()}
}

// claudeEventName is the hookEventName an answer to ev carries: the event's own name.
func claudeEventName(ev gate.Event) string {
	if ev.Hook != "" {
		return ev.Hook
	}
	for name, k := range claudeKinds {
		if k == ev.Kind {
			return name
		}
	}
	return "PreToolUse"
}

// claudeEvent is the part of a Claude Code hook event the gate uses, as Claude Code names it.
type claudeEvent struct {
	Name           string // hook_event_name
	SessionID      string
	Cwd            string
	TranscriptPath string
	ToolName       string
	ToolUseID      string
	Error          string // PostToolUseFailure
	IsInterrupt    bool   // PostToolUseFailure
	Source         string // SessionStart: startup, resume, clear, compact, fork
	// MCPServer is mcp_server.name, the server's real (unsanitized) name, when Claude Code sends it.
	MCPServer string
	// InputHash identifies tool_input (decoder.hashArgs), "" when the event has none.
	InputHash string
	// InputArgs is tool_input as decoder.argsInto keeps it, for an event that may be a failure.
	InputArgs string
	// DurationMS is duration_ms (PostToolUse, PostToolUseFailure), 0 when absent.
	DurationMS int64
	// Empty is set when tool_response (PostToolUse) holds nothing (emptyInto).
	Empty bool
}

// event is ev in the gate's terms. Claude Code's MCP tool names are the canonical keys, except that
// a server whose name would read as another's (github__evil, github.) gets its own server part
// (ledger.ClaudeKey); a tool that is not an MCP tool (Bash, or any of VS Code's tools) has no key,
// and the gate lets it through at once.
func (ev claudeEvent) event() gate.Event {
	key := ""
	if ledger.Key(ev.ToolName).IsMCP() {
		key = ledger.ClaudeKey(ev.ToolName, ev.MCPServer)
	}
	return gate.Event{
		Kind: claudeKinds[ev.Name], Agent: "claude", Hook: ev.Name,
		Key: key, Tool: ev.ToolName, Server: ev.MCPServer,
		Error: ev.Error, Interrupt: ev.IsInterrupt, ArgsHash: ev.InputHash, Args: failureArgs(claudeKinds[ev.Name], ev.InputArgs),
		Duration:  time.Duration(ev.DurationMS) * time.Millisecond,
		SessionID: ev.SessionID, ToolUseID: ev.ToolUseID, Cwd: ev.Cwd, TranscriptPath: ev.TranscriptPath,
		Source: ev.Source, Empty: ev.Empty && claudeKinds[ev.Name] == gate.Success,
	}
}

// decodeClaudeShaped reads an event in Claude Code's shape with readClaude and returns it, and
// what conv, the agent's own mapping, makes of it; seen, when not nil, gets conv of the event's
// head as soon as its tool is known.
func decodeClaudeShaped(r io.Reader, seen func(gate.Event), conv func(claudeEvent) gate.Event) (claudeEvent, gate.Event, error) {
	return decodeClaudeAliased(r, seen, conv, nil)
}

// decodeClaudeAliased is decodeClaudeShaped for an agent that spells some of Claude Code's fields
// its own way: alias maps its key to Claude Code's.
func decodeClaudeAliased(r io.Reader, seen func(gate.Event), conv func(claudeEvent) gate.Event, alias map[string]string) (claudeEvent, gate.Event, error) {
	var notify func(claudeEvent)
	if seen != nil {
		notify = func(ev claudeEvent) { seen(conv(ev)) }
	}
	ev, err := readClaudeAliased(r, notify, alias)
	return ev, conv(ev), err
}

// readClaude decodes one event: the first JSON object of r, whose syntax it checks in full, reading
// no further than its closing brace (Claude Code may keep stdin open). Values of fields it does not
// need (tool_input, tool_response, which can hold whole files) are checked and skipped without being
// stored. A null, or a value of another type than expected, leaves the field empty; when a key
// repeats, the last value wins, as in JSON.parse. Strings longer than the field's limit are cut at a
// character boundary and end in "…". Input that is not a JSON object gives an error wrapping
// ErrMalformed that names the byte offset.
//
// seen, when not nil, is called once, as soon as hook_event_name and tool_name are both known at
// the top level, with the fields read so far: the gate decides from them while the rest of the
// payload (a tool_input of any size, arriving at any speed) is still being read.
func readClaude(r io.Reader, seen func(claudeEvent)) (claudeEvent, error) {
	return readClaudeAliased(r, seen, nil)
}

// readClaudeAliased is readClaude reading a key alias names as the Claude Code key it maps to.
func readClaudeAliased(r io.Reader, seen func(claudeEvent), alias map[string]string) (claudeEvent, error) {
	d := newDecoder(r)
	var ev claudeEvent
	field := func(key string) error {
		if k, ok := alias[key]; ok {
			key = k
		}
		switch key {
		// VS Code runs the hooks of .claude/settings.json and names two common fields in camelCase
		// (its hooks reference): both spellings are read.
		case "hook_event_name", "hookEventName":
			return d.stringInto(&ev.Name, maxName)
		case "session_id", "sessionId":
			return d.stringInto(&ev.SessionID, maxName)
		case "cwd":
			return d.stringInto(&ev.Cwd, 4*maxName)
		case "transcript_path":
			return d.stringInto(&ev.TranscriptPath, 4*maxName)
		case "tool_name":
			return d.stringInto(&ev.ToolName, maxName)
		case "tool_use_id":
			return d.stringInto(&ev.ToolUseID, maxName)
		case "error":
			return d.stringInto(&ev.Error, maxError)
		case "source":
			return d.stringInto(&ev.Source, maxName)
		case "is_interrupt":
			return d.boolInto(&ev.IsInterrupt)
		case "tool_input":
			// Kept only when the event may be a failure: PreToolUse, which runs before every
			// MCP call, hashes the arguments and keeps nothing.
			return d.argsInto(&ev.InputHash, &ev.InputArgs, ev.Name == "" || ev.Name == "PostToolUseFailure")
		case "duration_ms":
			return d.intInto(&ev.DurationMS)
		case "tool_response":
			// Looked at only after a call (a few KB at most): whether it came back empty.
			if ev.Name == "" || ev.Name == "PostToolUse" {
				return d.emptyInto(&ev.Empty)
			}
		case "mcp_server":
			ev.MCPServer = ""
			return d.objectOrSkip(func(k string) error {
				if k == "name" {
					return d.stringInto(&ev.MCPServer, maxName)
				}
				return d.skip()
			})
		}
		return d.skip()
	}
	err := d.objectNotify(field, func() {
		if seen != nil && ev.Name != "" && ev.ToolName != "" {
			seen(ev)
			seen = nil
		}
	})
	return ev, err
}

// ClaudeAnswer is the JSON a Claude Code hook prints on stdout (docs/hook.md). Fields are in the
// order Claude Code documents them, so the output is stable byte for byte.
type ClaudeAnswer struct {
	HookSpecificOutput *ClaudeSpecific `json:"hookSpecificOutput,omitempty"`
	// SystemMessage is shown to the user, not to the model.
	SystemMessage string `json:"systemMessage,omitempty"`
}

// ClaudeSpecific is the event-specific part of a Claude Code answer.
type ClaudeSpecific struct {
	HookEventName            string `json:"hookEventName"`
	PermissionDecision       string `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
	AdditionalContext        string `json:"additionalContext,omitempty"`
}

// Encode returns the answer as one line of JSON with a newline; an empty answer encodes as nothing,
// because an allowed call with nothing to say prints nothing.
func (a ClaudeAnswer) Encode() []byte {
	if a.HookSpecificOutput == nil && a.SystemMessage == "" {
		return nil
	}
	return encodeJSON(a)
}

// encodeJSON is v as one line of JSON with a newline, nil if it cannot be encoded.
func encodeJSON(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	// The reason is read by a model, not a browser: keep <, > and & readable.
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return nil
	}
	return b.Bytes()
}
