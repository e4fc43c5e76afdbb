package agent

// Kiro CLI's codec (AWS, once Amazon Q Developer CLI), from its documentation only (kiro.dev/docs/
// cli/hooks; its source repository's docs/hooks.md, aws/amazon-q-developer-cli): hooks are the
// "hooks" member of an agent's configuration, .kiro/agents/<agent>.json or ~/.kiro/agents/
// <agent>.json, event → [{matcher, command, timeout_ms}]; events agentSpawn, userPromptSubmit,
// preToolUse, postToolUse, stop; an MCP tool is named @<server>/<tool> in the payload's tool_name
// (the documents' "MCP Example"); a preToolUse hook blocks the call by exiting with status 2, and
// its stderr "is returned to the LLM". There is no failure event: postToolUse carries
// tool_response {success, result}, and success false is the failure. agentSpawn's stdout is
// added to the agent's context.

import (
	"io"
	"strings"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// Kiro is Kiro CLI's codec.
var Kiro Codec = kiro{}

type kiro struct{}

func (kiro) Name() string { return "kiro" }

func (kiro) Title() string { return "Kiro CLI" }

// FormatKiroAgent is a Kiro CLI agent configuration: its "hooks" member is event → [handler], each
// handler {matcher, command, timeout_ms} with command a shell command line. An agent file is a
// whole agent of the user's, and which one a session runs is theirs to choose (kiro-cli chat
// --agent NAME, or their default), so install does not pick one: the hooks are wired by hand
// (docs/agents.md), and doctor reads every agent file.
const FormatKiroAgent = "kiro-agent"

func (kiro) Setup() Setup {
	return Setup{
		Format: FormatKiroAgent,
		Hooks:  []Hook{{Event: "preToolUse"}, {Event: "postToolUse"}, {Event: "agentSpawn"}},
		Scopes: []Scope{
			projectScope(".kiro/agents/*.json"),
			userScope("agents/*.json"),
		},
		HomeDir:     ".kiro",
		Binaries:    []string{"kiro-cli"},
		Timeout:     hookTimeoutMS,
		TimeoutUnit: "ms",
	}
}

var kiroKinds = map[string]gate.Kind{
	"preToolUse":  gate.Before,
	"postToolUse": gate.Success,
	"agentSpawn":  gate.SessionStart,
}

// kiroTool splits an MCP tool's name, @<server>/<tool>, at its first slash; ok is false for a
// built-in tool (fs_read, execute_bash, …).
func kiroTool(name string) (server, tool string, ok bool) {
	rest, ok := strings.CutPrefix(name, "@")
	if !ok {
		return "", "", false
	}
	server, tool, ok = strings.Cut(rest, "/")
	return server, tool, ok && server != "" && tool != ""
}

func (kiro) Decode(r io.Reader, _ gate.Servers, seen func(gate.Event)) (gate.Event, error) {
	var notify func(respondedEvent)
	if seen != nil {
		notify = func(ev respondedEvent) { seen(kiroEvent(ev)) }
	}
	ev, err := readResponded(r, "preToolUse", notify)
	return kiroEvent(ev), err
}

func kiroEvent(c respondedEvent) gate.Event {
	kind := kiroKinds[c.Name]
	ev := gate.Event{Kind: kind, Agent: "kiro", Hook: c.Name, Tool: c.ToolName, ArgsHash: c.InputHash, SessionID: c.SessionID, Cwd: c.Cwd}
	if kind == gate.Success && c.Responded && !c.Success {
		ev.Kind, ev.Error = gate.Failure, c.failureText()
		if ownDeny(ev.Error) {
			ev.Kind = gate.Other
		}
		ev.Args = failureArgs(gate.Failure, c.InputArgs)
	}
	if server, tool, ok := kiroTool(c.ToolName); ok && kind != gate.SessionStart {
		ev.Key, ev.Server = string(ledger.NameKey(server, tool)), server
	}
	return ev
}

func (kiro) Encode(ev gate.Event, a gate.Answer) gate.Reply {
	if a.Deny {
		msg := nonEmpty(a.Reason)
		if a.Notice != "" {
			msg += "\n" + a.Notice
		}
		return gate.Reply{Stderr: []byte(msg + "\n"), Exit: 2}
	}
	var reply gate.Reply
	if ev.Kind == gate.SessionStart && a.Context != "" {
		// agentSpawn's stdout is added to the agent's context.
		reply.Stdout = []byte(a.Context + "\n")
		if a.Notice != "" {
			reply.Stderr = []byte(a.Notice + "\n")
		}
		return reply
	}
	// Other events' stdout is captured but not shown; what the gate has to say goes to stderr.
	if text := strings.TrimSpace(a.Context + "\n" + a.Notice); text != "" {
		reply.Stderr = []byte(text + "\n")
	}
	return reply
}
