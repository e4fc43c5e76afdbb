package agent

// Devin CLI's codec (Devin for Terminal), from its documentation only (docs.devin.ai/cli/
// extensibility/hooks/overview and …/lifecycle-hooks): hooks in .devin/hooks.v1.json, Claude
// Code's matcher groups with the event names at the file's top level (no "hooks" member); events
// PreToolUse, PostToolUse, SessionStart among others; MCP tools named mcp__<server>__<tool> as
// Claude Code names them; a command hook answers {"decision":"deny","reason":…} on stdout, the
// reason "shown to the agent". There is no failure event: PostToolUse carries tool_response
// {success, output, error}, and success false is the failure.

import (
	"io"
	"strings"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// Devin is Devin CLI's codec.
var Devin Codec = devin{}

type devin struct{}

func (devin) Name() string { return "devin" }

func (devin) Title() string { return "Devin CLI" }

// FormatDevinHooks is Devin CLI's hooks.v1.json: Claude Code's event → matcher groups → handlers
// at the top level of the file, each command a shell command line, its timeout in seconds.
const FormatDevinHooks = "devin-hooks"

func (devin) Setup() Setup {
	return Setup{
		Format: FormatDevinHooks,
		Hooks: []Hook{
			{"PreToolUse", claudeMCPMatcher},
			{"PostToolUse", claudeMCPMatcher},
			{"SessionStart", ""},
		},
		Scopes:      []Scope{projectScope(".devin/hooks.v1.json"), userScope("hooks.v1.json")},
		HomeDir:     ".devin",
		Binaries:    []string{"devin"},
		Timeout:     hookTimeoutS,
		TimeoutUnit: "s",
	}
}

// devinKinds maps Devin's event names to the gate's kinds; PostToolUse is a success or a failure
// by its tool_response.
var devinKinds = map[string]gate.Kind{
	"PreToolUse":   gate.Before,
	"PostToolUse":  gate.Success,
	"SessionStart": gate.SessionStart,
}

func (devin) Decode(r io.Reader, servers gate.Servers, seen func(gate.Event)) (gate.Event, error) {
	var notify func(respondedEvent)
	if seen != nil {
		notify = func(ev respondedEvent) { seen(devinEvent(ev, servers)) }
	}
	ev, err := readResponded(r, "PreToolUse", notify)
	return devinEvent(ev, servers), err
}

func devinEvent(c respondedEvent, servers gate.Servers) gate.Event {
	kind := devinKinds[c.Name]
	ev := gate.Event{
		Kind: kind, Agent: "devin", Hook: c.Name, Tool: c.ToolName, ArgsHash: c.InputHash,
		SessionID: c.SessionID, ToolUseID: c.ToolUseID, Cwd: c.Cwd, TranscriptPath: c.TranscriptPath,
	}
	if kind == gate.Success && c.Responded && !c.Success {
		ev.Kind, ev.Error = gate.Failure, c.failureText()
		if ownDeny(ev.Error) {
			ev.Kind = gate.Other
		}
		ev.Args = failureArgs(gate.Failure, c.InputArgs)
	}
	if kind != gate.SessionStart && ledger.Key(c.ToolName).IsMCP() {
		ev.Key = ambiguousServerKey(ledger.ClaudeKey(c.ToolName, ""), servers)
	}
	return ev
}

func (devin) Encode(_ gate.Event, a gate.Answer) gate.Reply {
	type answer struct {
		Decision string `json:"decision,omitempty"`
		Reason   string `json:"reason,omitempty"`
	}
	var reply gate.Reply
	if a.Deny {
		reply.Stdout = encodeJSON(answer{"deny", nonEmpty(a.Reason)})
	}
	// Devin's documents name no field that brings context to the model on an allowed call, nor a
	// message for the user: what the gate has to say goes to stderr, which Devin logs.
	if text := strings.TrimSpace(a.Context + "\n" + a.Notice); text != "" {
		reply.Stderr = []byte(text + "\n")
	}
	return reply
}
