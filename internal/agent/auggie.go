package agent

// Augment's Auggie CLI codec, from its documentation (docs.augmentcode.com/cli/hooks) and the code
// of its npm package (@augmentcode/auggie 0.36.0, augment.mjs), read where the two disagree. The
// client cannot run offline: `auggie --print` stops with "No auth provided" unless it is logged in
// to Augment's service (auggie login, or AUGMENT_SESSION_AUTH), and it then speaks Augment's own
// API (/chat-stream, /get-models), which no fake model API here answers; so this codec is tested
// from the package's payloads, not from a running client (docs/agents.md).
//
// What the package does:
//   - hooks are the "hooks" member of ~/.augment/settings.json, .augment/settings.json and
//     .augment/settings.local.json (and /etc/augment/settings.json), Claude Code's event →
//     matcher groups → handlers {type "command", command, args, timeout}, the timeout in ms
//     (60000 by default); events PreToolUse, PostToolUse, Stop, SessionStart, SessionEnd,
//     Notification, PromptSubmit;
//   - the documents say a hook's command must be a .sh script; the code runs any program: on Linux
//     and macOS a handler with args is spawned as is, without a shell (a .sh only chooses bash.exe
//     on Windows), so install writes our binary and its arguments, with no wrapper script;
//   - an MCP tool is named <tool>_<server>, both sanitized ([^A-Za-z0-9_-] → _) and cut to 64
//     characters, and the payload says is_mcp_tool; the matcher "mcp:*" selects MCP tools only;
//   - the payload is {hook_event_name, conversation_id, workspace_roots, tool_name, tool_input,
//     tool_output, tool_error, is_mcp_tool}: no tool_use_id, no cwd, and tool_error is the
//     result's text when the MCP result is an error, else null;
//   - a PreToolUse hook blocks with exit 2 (its stderr goes to the model) or, with exit 0, with
//     hookSpecificOutput {permissionDecision "deny", permissionDecisionReason}, the reason going
//     to the model; additionalContext of PostToolUse and SessionStart goes to the model,
//     systemMessage and the stderr of exit 0 to the user. An allowed PreToolUse's messages to
//     the model are dropped.

import (
	"io"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// Auggie is Augment's Auggie CLI codec.
var Auggie Codec = auggie{}

type auggie struct{}

func (auggie) Name() string { return "auggie" }

func (auggie) Title() string { return "Augment Auggie" }

// auggieMCPMatcher is Auggie's matcher of every MCP tool (and of none of its own).
const auggieMCPMatcher = "mcp:*"

func (auggie) Setup() Setup {
	return Setup{
		// Claude Code's layout and handler shape, with args: Auggie spawns the program itself.
		Format: FormatClaudeSettings,
		Hooks: []Hook{
			{"PreToolUse", auggieMCPMatcher},
			{"PostToolUse", auggieMCPMatcher},
			{"SessionStart", ""},
		},
		Scopes: []Scope{
			projectScope(".augment/settings.json"),
			{Name: "local", Path: ".augment/settings.local.json", Usage: "yours, in this project"},
			userScope("settings.json"),
		},
		HomeDir:     ".augment",
		Binaries:    []string{"auggie"},
		Timeout:     hookTimeoutMS,
		TimeoutUnit: "ms",
	}
}

// ServerFiles are Auggie's MCP servers, the "mcpServers" of its settings files: the project's
// local and shared ones, then the user's.
func (auggie) ServerFiles(dir, home string) []gate.ServerFile {
	files := []gate.ServerFile{
		{Path: filepath.Join(dir, ".augment", "settings.local.json"), Project: true, Comments: true},
		{Path: filepath.Join(dir, ".augment", "settings.json"), Project: true, Comments: true},
	}
	if home != "" {
		files = append(files, gate.ServerFile{Path: filepath.Join(home, ".augment", "settings.json"), Comments: true})
	}
	return files
}

var auggieKinds = map[string]gate.Kind{
	"PreToolUse":   gate.Before,
	"PostToolUse":  gate.Success,
	"SessionStart": gate.SessionStart,
}

// auggieEvent is Auggie's payload, the fields the gate needs.
type auggieEvent struct {
	Name, ConversationID, Root, ToolName string
	InputHash, InputArgs                 string
	// Error is tool_error: the result's text when the call failed, "" (null) when it did not.
	Error string
	// NotMCP is set when is_mcp_tool is false.
	NotMCP bool
}

func (auggie) Decode(r io.Reader, servers gate.Servers, seen func(gate.Event)) (gate.Event, error) {
	d := newDecoder(r)
	var c auggieEvent
	err := d.object(func(key string) error {
		switch key {
		case "hook_event_name":
			return d.stringInto(&c.Name, maxName)
		case "conversation_id":
			return d.stringInto(&c.ConversationID, maxName)
		case "workspace_roots":
			return d.arrayOrSkip(func() error {
				var s string
				err := d.stringInto(&s, 4*maxName)
				if c.Root == "" {
					c.Root = s
				}
				return err
			})
		case "tool_name":
			return d.stringInto(&c.ToolName, maxName)
		case "tool_input":
			return d.argsInto(&c.InputHash, &c.InputArgs, c.Name != "PreToolUse")
		case "tool_error":
			return d.stringInto(&c.Error, maxError)
		case "is_mcp_tool":
			mcp := true
			err := d.boolInto(&mcp)
			c.NotMCP = !mcp
			return err
		}
		return d.skip()
	})
	// Auggie writes is_mcp_tool after tool_input and tool_output, so the event is known only
	// when the object ends.
	ev := auggieGateEvent(c, servers)
	if seen != nil {
		seen(ev)
	}
	return ev, err
}

func auggieGateEvent(c auggieEvent, servers gate.Servers) gate.Event {
	kind := auggieKinds[c.Name]
	ev := gate.Event{Kind: kind, Agent: "auggie", Hook: c.Name, Tool: c.ToolName, ArgsHash: c.InputHash, SessionID: c.ConversationID, Cwd: c.Root}
	if kind == gate.Success && strings.TrimSpace(c.Error) != "" {
		ev.Kind, ev.Error = gate.Failure, strings.TrimSpace(c.Error)
		if ownDeny(ev.Error) {
			ev.Kind = gate.Other
		}
		ev.Args = failureArgs(gate.Failure, c.InputArgs)
	}
	if kind == gate.Before || kind == gate.Success {
		if rs, ok := auggieReadings(c.ToolName, c.NotMCP, servers); ok {
			applyReadings(&ev, rs, "")
		}
	}
	return ev
}

// auggieUnsafe is what Auggie replaces with "_" in a server's and a tool's name.
var auggieUnsafe = regexp.MustCompile(`[^a-zA-Z0-9_-]`)

// auggieReadings splits name, <tool>_<server> as Auggie writes it, into each configured server
// whose sanitized name ends it, best first; without one, it is cut at its last "_", which is right
// whenever the server's name holds no "_". ok is false for a tool that is not an MCP tool.
func auggieReadings(name string, notMCP bool, servers gate.Servers) ([]Reading, bool) {
	if notMCP || name == "" {
		return nil, false
	}
	if servers != nil {
		var rs []Reading
		for _, s := range servers() {
			cand := auggieUnsafe.ReplaceAllString(s.Name, "_")
			if tool, found := strings.CutSuffix(name, "_"+cand); cand != "" && found && tool != "" {
				rs = append(rs, Reading{Key: string(ledger.NameKey(s.Name, tool)), Server: s.Name,
					User: userOwned(s), Exact: cand == s.Name, n: len(cand)})
			}
		}
		if rs = sortReadings(rs); len(rs) > 0 {
			return rs, true
		}
	}
	i := strings.LastIndex(name, "_")
	if i <= 0 || i == len(name)-1 {
		return nil, false
	}
	return []Reading{{Key: string(ledger.NameKey(name[i+1:], name[:i]))}}, true
}

func (auggie) Encode(ev gate.Event, a gate.Answer) gate.Reply {
	type specific struct {
		HookEventName            string `json:"hookEventName"`
		PermissionDecision       string `json:"permissionDecision,omitempty"`
		PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
		AdditionalContext        string `json:"additionalContext,omitempty"`
	}
	type answer struct {
		HookSpecificOutput *specific `json:"hookSpecificOutput,omitempty"`
		SystemMessage      string    `json:"systemMessage,omitempty"`
	}
	switch {
	case a.Deny:
		return gate.Reply{Stdout: encodeJSON(answer{&specific{HookEventName: "PreToolUse", PermissionDecision: "deny",
			PermissionDecisionReason: nonEmpty(a.Reason)}, a.Notice})}
	case a.Context != "" && (ev.Kind == gate.SessionStart || ev.Kind == gate.Success || ev.Kind == gate.Failure || ev.Kind == gate.Other):
		name := "PostToolUse"
		if ev.Kind == gate.SessionStart {
			name = "SessionStart"
		}
		return gate.Reply{Stdout: encodeJSON(answer{&specific{HookEventName: name, AdditionalContext: a.Context}, a.Notice})}
	case a.Context != "" || a.Notice != "":
		// An allowed PreToolUse's messages to the model are dropped: the user reads them.
		return gate.Reply{Stdout: encodeJSON(answer{SystemMessage: strings.TrimSpace(a.Context + "\n" + a.Notice)})}
	}
	return gate.Reply{}
}
