package agent

// Antigravity CLI's codec (agy, Gemini CLI's successor), from what others found by running it,
// not from a running client here (websentry-ai/setup PR #104, agy 1.0.5;
// cisco-ai-defense.github.io/defenseclaw/docs/connectors/antigravity; tanaikech.github.io,
// 2026-06-26): hooks in ~/.gemini/config/hooks.json (the path agy --help prints is ignored),
// <workspace>/.antigravitycli/hooks.json and the legacy ~/.gemini/hooks.json, all merged, in Claude
// Code's {"hooks": {event: [{matcher, hooks: [{type, command}]}]}} layout; only PreToolUse and
// PostToolUse run. The payload is camelCase, {conversationId, stepIdx, toolCall: {name, args},
// transcriptPath, workspacePaths}, and does not name its event, so each handler is wired as
// antigravity:<event>; PostToolUse adds error, and its toolCall may be null. A PreToolUse hook
// denies with {"decision":"deny","reason":…} (it overrides --dangerously-skip-permissions), and
// prints nothing to allow: {"decision":"allow"} would approve the call past agy's own prompt.
// How agy names an MCP tool is not confirmed: Claude Code's mcp__<server>__<tool> and Gemini CLI's
// mcp_<server>_<tool> are both read; its own tools (run_command, view_file, …) are not ours.

import (
	"io"
	"strings"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// Antigravity is Antigravity CLI's codec.
var Antigravity Codec = antigravity{}

type antigravity struct {
	// event is the hook the handler was wired for ("" when not said).
	event string
}

func (antigravity) Name() string { return "antigravity" }

func (antigravity) Title() string { return "Antigravity CLI" }

// FormatAntigravityHooks is Antigravity CLI's hooks.json: Claude Code's "hooks" layout with each
// command a shell command line that names its event (… hook --agent antigravity:PreToolUse), and
// no timeout (none is documented).
const FormatAntigravityHooks = "antigravity-hooks"

func (antigravity) Setup() Setup {
	return Setup{
		Format: FormatAntigravityHooks,
		// Every tool: how agy names MCP tools is not confirmed, so no matcher narrows them.
		Hooks: []Hook{{Event: "PreToolUse"}, {Event: "PostToolUse"}},
		Scopes: []Scope{
			{Name: "project", Path: ".antigravitycli/hooks.json", Usage: "this workspace"},
			userScope("hooks.json"),
		},
		HomeDir:  ".gemini/config",
		Binaries: []string{"agy"},
	}
}

// ForEvent returns the codec bound to the event it was wired for.
func (c antigravity) ForEvent(event string) Codec {
	c.event = event
	return c
}

// antigravityEvent is the part of an agy payload the gate uses.
type antigravityEvent struct {
	ConversationID, Tool, TranscriptPath string
	ArgsHash, ArgsRaw                    string
	// HasError is set by an error member (PostToolUse only); Error is its text.
	HasError bool
	Error    string
}

func (c antigravity) Decode(r io.Reader, servers gate.Servers, seen func(gate.Event)) (gate.Event, error) {
	d := newDecoder(r)
	var ev antigravityEvent
	err := d.objectNotify(func(key string) error {
		switch key {
		case "conversationId":
			return d.stringInto(&ev.ConversationID, maxName)
		case "transcriptPath":
			return d.stringInto(&ev.TranscriptPath, 4*maxName)
		case "toolCall":
			ev.Tool = ""
			return d.objectOrSkip(func(k string) error {
				switch k {
				case "name":
					return d.stringInto(&ev.Tool, maxName)
				case "args":
					return d.argsInto(&ev.ArgsHash, &ev.ArgsRaw, c.event != "PreToolUse")
				}
				return d.skip()
			})
		case "error":
			ev.HasError, ev.Error = false, ""
			ch, err := d.nonSpace()
			if err != nil {
				return err
			}
			d.unread()
			switch ch {
			case '"':
				ev.HasError = true
				return d.stringInto(&ev.Error, maxError)
			case '{':
				ev.HasError = true
				return d.object(func(k string) error {
					if k == "message" {
						return d.stringInto(&ev.Error, maxError)
					}
					return d.skip()
				})
			}
			return d.skip() // null: no error
		}
		return d.skip()
	}, func() {
		if seen != nil && c.event == "PreToolUse" && ev.Tool != "" {
			seen(c.gateEvent(ev, servers))
			seen = nil
		}
	})
	out := c.gateEvent(ev, servers)
	if err == nil && seen != nil {
		seen(out)
	}
	return out, err
}

func (c antigravity) gateEvent(a antigravityEvent, servers gate.Servers) gate.Event {
	hook := c.event
	if hook == "" && a.HasError {
		hook = "PostToolUse"
	}
	ev := gate.Event{Agent: "antigravity", Hook: hook, Tool: a.Tool, ArgsHash: a.ArgsHash, SessionID: a.ConversationID, TranscriptPath: a.TranscriptPath}
	switch hook {
	case "PreToolUse":
		ev.Kind = gate.Before
	case "PostToolUse":
		ev.Kind = gate.Success
		if a.HasError {
			ev.Kind, ev.Error = gate.Failure, strings.TrimSpace(a.Error)
			if ev.Error == "" {
				ev.Error = "the tool call failed (the agent gave no error text)"
			}
			if ownDeny(ev.Error) {
				ev.Kind = gate.Other
			}
			ev.Args = failureArgs(gate.Failure, a.ArgsRaw)
		}
	default:
		return ev // an event the gate is not wired for: nothing to decide
	}
	switch {
	case ledger.Key(a.Tool).IsMCP():
		ev.Key = ambiguousServerKey(ledger.ClaudeKey(a.Tool, ""), servers)
	default:
		if rs, ok := CanonicalReadings(a.Tool, geminiNaming, servers); ok {
			applyReadings(&ev, rs, "")
		}
	}
	return ev
}

func (antigravity) Encode(_ gate.Event, a gate.Answer) gate.Reply {
	var reply gate.Reply
	if a.Deny {
		type deny struct {
			Decision string `json:"decision"`
			Reason   string `json:"reason"`
		}
		reply.Stdout = encodeJSON(deny{"deny", nonEmpty(a.Reason)})
	}
	// Nothing on stdout allows (an allow decision would skip agy's own permission prompt); no
	// channel that reaches the model on an allowed call is known, so the rest goes to stderr.
	if text := strings.TrimSpace(a.Context + "\n" + a.Notice); text != "" {
		reply.Stderr = []byte(text + "\n")
	}
	return reply
}
