package agent

// Windsurf's codec (Cascade hooks), from its documentation only (docs.windsurf.com/windsurf/
// cascade/hooks): pre_mcp_tool_use names the server and the tool; a hook blocks the call by exiting
// with status 2, its stderr being the reason. post_mcp_tool_use carries the result but no flag
// saying whether the call failed, so it is not read: a failure there cannot be told from a success,
// and counting either would be a guess.

import (
	"io"
	"strings"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// Windsurf is Windsurf's codec.
var Windsurf Codec = windsurf{}

type windsurf struct{}

func (windsurf) Name() string { return "windsurf" }

func (windsurf) Title() string { return "Windsurf" }

func (windsurf) Setup() Setup {
	return Setup{
		Format: FormatWindsurfHooks,
		Hooks:  []Hook{{Event: "pre_mcp_tool_use"}},
		Scopes: []Scope{
			{Name: "project", Path: ".windsurf/hooks.json", Usage: "this workspace"},
			userScope("hooks.json"),
		},
		HomeDir:  ".codeium/windsurf",
		Binaries: []string{"windsurf"},
	}
}

// FormatWindsurfHooks is Windsurf's hooks.json: {"hooks": {event: [{command, show_output}]}}.
const FormatWindsurfHooks = "windsurf-hooks"

func (windsurf) Decode(r io.Reader, _ gate.Servers, seen func(gate.Event)) (gate.Event, error) {
	d := newDecoder(r)
	var action, server, tool, trajectory, execution, args string
	err := d.object(func(key string) error {
		switch key {
		case "agent_action_name":
			return d.stringInto(&action, maxName)
		case "trajectory_id":
			return d.stringInto(&trajectory, maxName)
		case "execution_id":
			return d.stringInto(&execution, maxName)
		case "tool_info":
			server, tool = "", ""
			return d.objectOrSkip(func(k string) error {
				switch k {
				case "mcp_server_name":
					return d.stringInto(&server, maxName)
				case "mcp_tool_name":
					return d.stringInto(&tool, maxName)
				case "mcp_tool_arguments":
					// Hashed, not kept. No failure event carries them back (see above), so the
					// loop guard never sees a Windsurf call repeat; the hash is there for when one does.
					return d.hashArgsInto(&args)
				}
				return d.skip() // mcp_result: of any size, not kept
			})
		}
		return d.skip()
	})
	ev := gate.Event{Agent: "windsurf", Hook: action, Tool: tool, Server: server, ArgsHash: args, SessionID: trajectory, ToolUseID: execution}
	if action == "pre_mcp_tool_use" {
		ev.Kind = gate.Before
		if server != "" && tool != "" {
			ev.Key = string(ledger.NameKey(server, tool))
		}
	}
	if err == nil && seen != nil {
		seen(ev)
	}
	return ev, err
}

func (windsurf) Encode(_ gate.Event, a gate.Answer) gate.Reply {
	switch {
	case a.Deny:
		msg := a.Reason
		if a.Notice != "" {
			msg += "\n" + a.Notice
		}
		return gate.Reply{Stderr: []byte(msg + "\n"), Exit: 2}
	case a.IsZero():
		return gate.Reply{}
	}
	// No channel reaches the model on an allowed call; the text goes to the hook's output.
	return gate.Reply{Stderr: []byte(strings.TrimSpace(a.Context+"\n"+a.Notice) + "\n")}
}
