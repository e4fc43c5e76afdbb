package agent

// Goose's codec, from its documentation and issues only (aaif-goose/goose #8742, #9304, #11449):
// plugin hooks in Claude Code's event shape, a blocking PreToolUse that denies with
// {"decision":"block","reason":…} (the reason returns to the model), PostToolUseFailure since
// 1.48.0. Every Goose extension is an MCP server and its tools are named <extension>__<tool>.
// The payload's field names are taken to be Claude Code's, as the issues describe; that is to be
// checked against a real payload.

import (
	"io"

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
		Scopes:   []Scope{userScope("plugins/mcp-circuit-breaker/hooks/hooks.json")},
		HomeDir:  ".agents",
		Binaries: []string{"goose"},
	}
}

// FormatGoosePlugin is an Open Plugins plugin whose hooks/hooks.json has Claude Code's shape.
const FormatGoosePlugin = "goose-plugin"

// gooseNaming is how Goose names an extension's tool.
var gooseNaming = Naming{Sep: "__"}

func (goose) Decode(r io.Reader, servers gate.Servers, seen func(gate.Event)) (gate.Event, error) {
	_, out, err := decodeClaudeShaped(r, seen, func(ev claudeEvent) gate.Event { return gooseEvent(ev, servers) })
	return out, err
}

func gooseEvent(c claudeEvent, servers gate.Servers) gate.Event {
	ev := c.event()
	ev.Agent = "goose"
	ev.Key = ""
	if key, server, ok := Canonical(c.ToolName, gooseNaming, servers); ok {
		ev.Key = key
		if ev.Server == "" {
			ev.Server = server
		}
	}
	return ev
}

func (goose) Encode(ev gate.Event, a gate.Answer) gate.Reply {
	if a.Deny {
		type block struct {
			Decision      string `json:"decision"`
			Reason        string `json:"reason"`
			SystemMessage string `json:"systemMessage,omitempty"`
		}
		return gate.Reply{Stdout: encodeJSON(block{"block", a.Reason, a.Notice})}
	}
	// Goose discards what a hook prints for a non-blocking event; Claude Code's shape is what its
	// PreToolUse reads.
	return Claude.Encode(ev, a)
}
