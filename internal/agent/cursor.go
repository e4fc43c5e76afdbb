package agent

// Cursor's codec, from its documentation only (cursor.com/docs/hooks): beforeMCPExecution names
// the server by its URL or stdio command, never by name, so the key is resolved through the MCP
// servers configured for the project; postToolUseFailure also reports the calls a hook denied, as
// failure_type "permission_denied", which must never count.

import (
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// Cursor is Cursor's codec (agent, CLI; not its cloud agents, which skip beforeMCPExecution).
var Cursor Codec = cursor{}

type cursor struct{}

func (cursor) Name() string { return "cursor" }

func (cursor) Title() string { return "Cursor" }

func (cursor) Setup() Setup {
	return Setup{
		Format: FormatCursorHooks,
		Hooks: []Hook{
			{Event: "beforeMCPExecution"}, {Event: "afterMCPExecution"},
			{Event: "postToolUseFailure"}, {Event: "sessionStart"},
		},
		Scopes: []Scope{
			{Name: "project", Path: ".cursor/hooks.json", Usage: "this repository, trusted workspaces only"},
			userScope("hooks.json"),
		},
		HomeDir:     ".cursor",
		Binaries:    []string{"cursor", "cursor-agent"},
		Timeout:     hookTimeoutS,
		TimeoutUnit: "s",
	}
}

// ServerFiles are Cursor's MCP configurations: the project's .cursor/mcp.json, then ~/.cursor/mcp.json.
func (cursor) ServerFiles(dir, home string) []gate.ServerFile {
	files := []gate.ServerFile{{Path: filepath.Join(dir, ".cursor", "mcp.json"), Project: true}}
	if home != "" {
		files = append(files, gate.ServerFile{Path: filepath.Join(home, ".cursor", "mcp.json")})
	}
	return files
}

// FormatCursorHooks is Cursor's hooks.json: {"version": 1, "hooks": {event: [{command, timeout}]}}.
const FormatCursorHooks = "cursor-hooks"

var cursorKinds = map[string]gate.Kind{
	"beforeMCPExecution": gate.Before,
	"afterMCPExecution":  gate.Success,
	"postToolUseFailure": gate.Failure,
	"sessionStart":       gate.SessionStart,
}

// cursorMCPPrefix starts the name of an MCP tool in Cursor's generic tool events.
const cursorMCPPrefix = "MCP:"

func (cursor) Decode(r io.Reader, servers gate.Servers, seen func(gate.Event)) (gate.Event, error) {
	d := newDecoder(r)
	var name, tool, url, command, errText, failureType, session, id, cwd, transcript, args string
	var argsRaw string
	var interrupt bool
	var duration float64
	err := d.object(func(key string) error {
		switch key {
		case "hook_event_name":
			return d.stringInto(&name, maxName)
		case "tool_name":
			return d.stringInto(&tool, maxName)
		case "tool_input":
			// A JSON string on beforeMCPExecution, an object on postToolUseFailure: hashArgs
			// hashes both alike. Kept only on an event that may be a failure.
			return d.argsInto(&args, &argsRaw, cursorKinds[name] != gate.Before && cursorKinds[name] != gate.Success)
		case "url":
			return d.stringInto(&url, 4*maxName)
		case "command":
			return d.stringInto(&command, 4*maxName)
		case "error_message":
			return d.stringInto(&errText, maxError)
		case "failure_type":
			return d.stringInto(&failureType, maxName)
		case "is_interrupt":
			return d.boolInto(&interrupt)
		case "duration":
			return d.numberInto(&duration)
		case "conversation_id":
			return d.stringInto(&session, maxName)
		case "tool_use_id":
			return d.stringInto(&id, maxName)
		case "cwd":
			return d.stringInto(&cwd, 4*maxName)
		case "transcript_path":
			return d.stringInto(&transcript, 4*maxName)
		}
		return d.skip()
	})
	ev := gate.Event{Kind: cursorKinds[name], Agent: "cursor", Hook: name, Tool: tool, Error: errText, Interrupt: interrupt, ArgsHash: args,
		Duration: time.Duration(duration * float64(time.Millisecond)), SessionID: session, ToolUseID: id, Cwd: cwd, TranscriptPath: transcript}
	if err != nil {
		return ev, err
	}
	switch {
	case ev.Kind == gate.SessionStart:
	case ev.Kind == gate.Failure && failureType == "permission_denied":
		// Our own deny (or another hook's, or the user's): the tool never ran.
		ev.Kind = gate.Other
	case ev.Kind == gate.Failure:
		ev.Args = failureArgs(gate.Failure, argsRaw)
		if failureType == "timeout" && ev.Error == "" {
			ev.Error = "the MCP tool call timed out"
		}
		// The generic event names the tool MCP:<tool>, without its server: only a server that is
		// the one configured one, or a name that carries it (MCP:<server>:<tool>), gives the key.
		ev.Key, ev.Server = cursorFailureKey(tool, servers)
	case url != "" || command != "":
		ev.Key, ev.Server, _ = CanonicalURL(strings.TrimPrefix(tool, cursorMCPPrefix), Endpoint{URL: url, Command: command}, servers)
	}
	if seen != nil {
		seen(ev)
	}
	return ev, nil
}

// cursorFailureKey resolves the MCP:<tool> name of a generic tool event.
func cursorFailureKey(tool string, servers gate.Servers) (key, server string) {
	rest, ok := strings.CutPrefix(tool, cursorMCPPrefix)
	if !ok || rest == "" {
		return "", ""
	}
	if srv, t, ok := strings.Cut(rest, ":"); ok && srv != "" && t != "" {
		return string(ledger.NameKey(srv, t)), srv
	}
	if servers == nil {
		return "", ""
	}
	var names []string
	for _, s := range servers() {
		if !slices.Contains(names, s.Name) {
			names = append(names, s.Name)
		}
	}
	if len(names) == 1 {
		return string(ledger.NameKey(names[0], rest)), names[0]
	}
	return "", ""
}

func (cursor) Encode(ev gate.Event, a gate.Answer) gate.Reply {
	if a.IsZero() {
		return gate.Reply{}
	}
	type out struct {
		Permission   string `json:"permission,omitempty"`
		UserMessage  string `json:"user_message,omitempty"`
		AgentMessage string `json:"agent_message,omitempty"`
	}
	var o out
	switch {
	case a.Deny:
		// agent_message reaches the model; user_message the person.
		o = out{Permission: "deny", AgentMessage: a.Reason, UserMessage: a.Notice}
		if o.UserMessage == "" {
			o.UserMessage = firstLine(a.Reason)
		}
	case ev.Kind == gate.Before:
		o = out{Permission: "allow", AgentMessage: a.Context, UserMessage: a.Notice}
	default:
		// Cursor reads no answer from its other events: what they say goes to stderr, for the
		// hook log.
		return gate.Reply{Stderr: []byte(strings.TrimSpace(a.Context+"\n"+a.Notice) + "\n")}
	}
	return gate.Reply{Stdout: encodeJSON(o)}
}

// firstLine is the first line of s.
func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
