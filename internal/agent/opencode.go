package agent

// opencode's codec: the events of the gate's opencode plugin (plugin/opencode/mcp-circuit-breaker.js),
// which runs inside opencode and hands its hooks and bus events to the hook binary (docs/agents.md).

import (
	"io"
	"strings"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// Opencode is opencode's codec. opencode has no command hooks: the gate runs as an opencode plugin
// whose tool.execute.before throws the deny reason (the model reads it as the tool's result). A
// failed call fires no hook at all, only the bus event message.part.updated with state.status
// "error": the plugin forwards that as "tool.failed", never for a call it denied itself. MCP tools
// are named <server>_<tool>, and "_" is common inside server names, so the plugin sends the
// configured MCP servers' names and a tool is an MCP tool only when its name starts with one of
// them and "_"; every other tool is allowed at once. "session.created" is asked at a session's first
// model request.
//
// The plugin's event:
//
//	{"hook": "tool.execute.before" | "tool.execute.after" | "tool.failed" | "session.created",
//	 "directory": DIR, "sessionID": ID, "callID": ID, "tool": NAME, "servers": [NAME, …],
//	 "error": TEXT}
var Opencode Codec = opencode{}

type opencode struct{}

func (opencode) Name() string { return "opencode" }

func (opencode) Title() string { return "opencode" }

// FormatOpencodePlugin is an opencode plugin file: install copies the gate's plugin into a plugin
// directory.
const FormatOpencodePlugin = "opencode-plugin"

func (opencode) Setup() Setup {
	return Setup{
		Format: FormatOpencodePlugin,
		Hooks: []Hook{{"tool.execute.before", ""}, {"tool.execute.after", ""}, {"tool.failed", ""},
			{"session.created", ""}},
		Scopes:       []Scope{userScope("plugin/mcp-circuit-breaker.js"), projectScope(".opencode/plugin/mcp-circuit-breaker.js")},
		ConfigDirEnv: "OPENCODE_CONFIG_DIR",
		HomeDir:      ".config/opencode",
		Binaries:     []string{"opencode"},
		// The plugin's own limit on the hook process.
		Timeout:     hookTimeoutMS,
		TimeoutUnit: "ms",
	}
}

// opencodeEvent is the part of the plugin's event the gate uses.
type opencodeEvent struct {
	Hook, Dir, Session, CallID, Tool, Error string
	Servers                                 []string
	// ArgsHash identifies args: output.args before the call, the bus event's state.input after a
	// failure, which the plugin sends alike; ArgsRaw keeps them on an event that may be a failure.
	ArgsHash   string
	ArgsRaw    string
	DurationMS float64
}

func (opencode) Decode(r io.Reader, _ gate.Servers, seen func(gate.Event)) (gate.Event, error) {
	return decodeOpencode("opencode", r)
}

// decodeOpencode decodes one event of the gate's opencode plugin, sent for the agent called name
// (opencode, or its fork Kilo Code, which runs the same plugin).
func decodeOpencode(name string, r io.Reader) (gate.Event, error) {
	d := newDecoder(r)
	var ev opencodeEvent
	err := d.object(func(key string) error {
		switch key {
		case "hook":
			return d.stringInto(&ev.Hook, maxName)
		case "directory":
			return d.stringInto(&ev.Dir, 4*maxName)
		case "sessionID":
			return d.stringInto(&ev.Session, maxName)
		case "callID":
			return d.stringInto(&ev.CallID, maxName)
		case "tool":
			return d.stringInto(&ev.Tool, maxName)
		case "error":
			return d.stringInto(&ev.Error, maxError)
		case "args":
			return d.argsInto(&ev.ArgsHash, &ev.ArgsRaw, ev.Hook == "" || ev.Hook == "tool.failed")
		case "durationMs":
			return d.numberInto(&ev.DurationMS)
		case "servers":
			ev.Servers = nil
			return d.arrayOrSkip(func() error {
				var s string
				if err := d.stringInto(&s, maxName); err != nil {
					return err
				}
				if s != "" && len(ev.Servers) < 1000 {
					ev.Servers = append(ev.Servers, s)
				}
				return nil
			})
		}
		return d.skip()
	})
	return ev.event(name), err
}

// event is ev in the gate's terms, an event of the agent called name.
func (ev opencodeEvent) event(name string) gate.Event {
	out := gate.Event{Agent: name, Hook: ev.Hook, Tool: ev.Tool, ToolUseID: ev.CallID, ArgsHash: ev.ArgsHash,
		SessionID: ev.Session, Cwd: ev.Dir}
	if ev.DurationMS > 0 && ev.DurationMS < 1e12 {
		out.Duration = time.Duration(ev.DurationMS * float64(time.Millisecond))
	}
	switch ev.Hook {
	case "session.created":
		out.Kind, out.Source = gate.SessionStart, "startup"
		return out
	case "tool.execute.before":
		out.Kind = gate.Before
	case "tool.execute.after":
		out.Kind = gate.Success
	case "tool.failed":
		out.Kind, out.Error = gate.Failure, ev.Error
		out.Args = failureArgs(gate.Failure, ev.ArgsRaw)
		if out.Error == "" {
			out.Error = "the tool call failed (opencode gave no message)"
		}
	default:
		return out
	}
	out.Key, out.Server = opencodeKey(ev.Tool, ev.Servers)
	return out
}

// opencodeKey is the canonical key of tool, named <server>_<tool> by opencode, for the longest
// server of servers (or its name with every character opencode does not keep in a tool name made
// "_") that tool starts with, followed by "_"; "" when none does.
func opencodeKey(tool string, servers []string) (key, server string) {
	best := -1
	for _, s := range servers {
		for _, cand := range []string{s, opencodeSanitize(s)} {
			if len(cand) > best {
				if rest, ok := strings.CutPrefix(tool, cand+"_"); ok && rest != "" {
					best, server, key = len(cand), s, string(ledger.NameKey(s, rest))
				}
			}
		}
	}
	return key, server
}

// opencodeSanitize is name with every character but letters, digits, "_" and "-" made "_".
func opencodeSanitize(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, name)
}

func (opencode) Encode(ev gate.Event, a gate.Answer) gate.Reply {
	var out pluginAnswer
	switch {
	case a.Deny:
		out.Deny, out.Reason = true, a.Reason
	case a.Context != "":
		// The plugin appends it to a successful MCP result; after a failure (no hook can change what
		// the model reads of it) and at session start it puts it into the next request's system
		// prompt, once.
		out.Context = a.Context
	}
	out.Notice = a.Notice
	return out.reply()
}
