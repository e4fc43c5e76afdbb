package agent

// Goose's codec, from its documentation, issues and source only (aaif-goose/goose #8742, #9304,
// #11449; crates/goose/src/hooks/mod.rs): plugin hooks (a plugin's hooks/hooks.json in Claude
// Code's layout, each command run by sh -c) for Claude Code's event names, a blocking PreToolUse
// that denies with {"decision":"block","reason":…} (the reason returns to the model),
// PostToolUseFailure since 1.48.0. Every Goose extension is an MCP server and its tools are named
// <extension>__<tool>. Goose's source names the payload's fields its own way (event, tool_call_id,
// working_dir, and message for a failure's text); the issues describe Claude Code's names. Both are
// read, until a real payload settles it.

import (
	"io"
	"strings"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
)

// Goose is Goose's codec.
var Goose Codec = goose{}

type goose struct{}

func (goose) Name() string { return "goose" }

func (goose) Title() string { return "Goose" }

func (goose) Setup() Setup {
	return Setup{
		Format: FormatGoosePlugin,
		Hooks: []Hook{
			{Event: "PreToolUse"}, {Event: "PostToolUse"}, {Event: "PostToolUseFailure"}, {Event: "SessionStart"},
		},
		// Goose runs the hooks of every plugin directory under ~/.agents/plugins/ and the project's
		// .agents/plugins/ that no plugin settings disable; a plugin it finds there needs no manifest.
		Scopes: []Scope{
			userScope("plugins/mcp-circuit-breaker/hooks/hooks.json"),
			projectScope(".agents/plugins/mcp-circuit-breaker/hooks/hooks.json"),
		},
		HomeDir:     ".agents",
		Binaries:    []string{"goose"},
		Timeout:     hookTimeoutS,
		TimeoutUnit: "s",
	}
}

// FormatGoosePlugin is an Open Plugins plugin of ours whose hooks/hooks.json has Claude Code's
// layout, with each command a shell command line and its timeout in seconds.
const FormatGoosePlugin = "goose-plugin"

// gooseFields are Goose's names of Claude Code's payload fields, as its source writes them.
var gooseFields = map[string]string{
	"event":        "hook_event_name",
	"tool_call_id": "tool_use_id",
	"working_dir":  "cwd",
	"message":      "error",
}

// gooseNaming is how Goose names an extension's tool.
var gooseNaming = Naming{Sep: "__"}

func (goose) Decode(r io.Reader, servers gate.Servers, seen func(gate.Event)) (gate.Event, error) {
	_, out, err := decodeClaudeAliased(r, seen, func(ev claudeEvent) gate.Event { return gooseEvent(ev, servers) }, gooseFields)
	return out, err
}

func gooseEvent(c claudeEvent, servers gate.Servers) gate.Event {
	ev := c.event()
	ev.Agent = "goose"
	ev.Key = ""
	if rs, ok := CanonicalReadings(c.ToolName, gooseNaming, servers); ok {
		server := ev.Server
		applyReadings(&ev, rs, "")
		if server != "" {
			ev.Server = server
		}
	}
	return ev
}

func (goose) Encode(_ gate.Event, a gate.Answer) gate.Reply {
	if a.Deny {
		type block struct {
			Decision string `json:"decision"`
			Reason   string `json:"reason"`
		}
		reply := gate.Reply{Stdout: encodeJSON(block{"block", nonEmpty(a.Reason)})}
		if a.Notice != "" {
			reply.Stderr = []byte(a.Notice + "\n")
		}
		return reply
	}
	// Goose reads a PreToolUse hook's stdout as its decision: nothing allows, and anything else
	// that is not {"decision":"allow"} is a failing hook (logged, and a deny under on_failure:
	// block); what other events print is discarded. No channel reaches the model or the user on
	// an allowed call (Goose logs a hook's stderr only when it fails), so what the gate has to
	// say goes to stderr, for whoever runs the hook by hand.
	var reply gate.Reply
	if text := strings.TrimSpace(a.Context + "\n" + a.Notice); text != "" {
		reply.Stderr = []byte(text + "\n")
	}
	return reply
}
