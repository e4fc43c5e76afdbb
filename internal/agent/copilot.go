package agent

// GitHub Copilot CLI's codec, for its camelCase hooks (preToolUse, postToolUse,
// postToolUseFailure, sessionStart), whose payloads carry no event name: the hook is wired as
// --agent copilot:<event>, and without the event it is told by the payload's fields. Tool names are
// <server>-<tool> for MCP tools and plain names for Copilot's own; a name is an MCP tool only when
// it starts with a configured server's name and "-" (Copilot's mcp-config.json, the project's
// .github/mcp.json and .mcp.json, and the servers the gate knows). There is no tool-call id. The
// answer is flat JSON: {"permissionDecision":"deny","permissionDecisionReason":…} or
// {"additionalContext":…}.

import (
	"encoding/json"
	"io"
	"path/filepath"
	"strings"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/safefile"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// Copilot is GitHub Copilot CLI's codec.
var Copilot Codec = copilot{}

type copilot struct {
	// event is the camelCase hook the handler was wired for ("" when not said).
	event string
	// getenv is the environment the gate obeys (gate.Environ); nil reads no user configuration.
	getenv func(string) string
}

// WithGetenv binds the codec to the gate's environment, for Copilot's user mcp-config.json.
func (c copilot) WithGetenv(getenv func(string) string) gate.Wire {
	c.getenv = getenv
	return c
}

func (copilot) Name() string { return "copilot" }

func (copilot) Title() string { return "Copilot CLI" }

// FormatCopilotHooks is a Copilot CLI hooks file: {"version":1,"hooks":{"<camelEvent>":[{"type":
// "command","bash":…,"timeoutSec":…}]}}.
const FormatCopilotHooks = "copilot-hooks"

func (copilot) Setup() Setup {
	return Setup{
		Format: FormatCopilotHooks,
		Hooks: []Hook{
			{"preToolUse", ""},
			{"postToolUse", ""},
			{"postToolUseFailure", ""},
			{"sessionStart", ""},
		},
		Scopes: []Scope{
			userScope("hooks/mcp-circuit-breaker.json"),
			{Name: "project", Path: ".github/hooks/mcp-circuit-breaker.json", Usage: "this repository, once Copilot trusts the folder"},
		},
		ConfigDirEnv: "COPILOT_HOME",
		HomeDir:      ".copilot",
		Binaries:     []string{"copilot"},
		Timeout:      hookTimeoutS,
		TimeoutUnit:  "s",
	}
}

// ForEvent returns the codec bound to the camelCase hook event it was wired for.
func (c copilot) ForEvent(event string) Codec {
	c.event = event
	return c
}

var copilotKinds = map[string]gate.Kind{
	"preToolUse":         gate.Before,
	"postToolUse":        gate.Success,
	"postToolUseFailure": gate.Failure,
	"sessionStart":       gate.SessionStart,
}

// copilotEvent is the part of a Copilot CLI camelCase payload the gate uses.
type copilotEvent struct {
	SessionID, Cwd, ToolName, Error, Source, HookName string
	// ArgsHash identifies toolArgs (an object, or a string holding one, as Copilot's own docs
	// describe it), which preToolUse and postToolUseFailure both carry; ArgsRaw keeps it when
	// the event may be a failure.
	ArgsHash string
	ArgsRaw  string
	// HasResult and HasError tell the event when the hook was not wired with its name.
	HasResult, HasError, HasSource bool
}

func (c copilot) Decode(r io.Reader, servers gate.Servers, seen func(gate.Event)) (gate.Event, error) {
	d := newDecoder(r)
	var ev copilotEvent
	err := d.objectNotify(func(key string) error {
		switch key {
		case "sessionId":
			return d.stringInto(&ev.SessionID, maxName)
		case "cwd":
			return d.stringInto(&ev.Cwd, 4*maxName)
		case "toolName":
			return d.stringInto(&ev.ToolName, maxName)
		case "toolArgs":
			return d.argsInto(&ev.ArgsHash, &ev.ArgsRaw, c.event == "" || c.event == "postToolUseFailure")
		case "error":
			ev.HasError = true
			return d.stringInto(&ev.Error, maxError)
		case "toolResult":
			ev.HasResult = true
		case "source":
			ev.HasSource = true
			return d.stringInto(&ev.Source, maxName)
		case "hookName":
			return d.stringInto(&ev.HookName, maxName)
		}
		return d.skip()
	}, func() {
		// Bound to its event, a tool event is known once toolName is read.
		if seen != nil && c.event != "" && ev.ToolName != "" && ev.Cwd != "" {
			seen(c.toEvent(ev, servers))
			seen = nil
		}
	})
	return c.toEvent(ev, servers), err
}

// kind is the event's kind: the one it was wired for, else what its fields say.
func (c copilot) kind(ev copilotEvent) (gate.Kind, string) {
	if c.event != "" {
		return copilotKinds[c.event], c.event
	}
	switch {
	case ev.HookName != "":
		return gate.Other, ev.HookName // permissionRequest names itself
	case ev.ToolName != "" && ev.HasError:
		return gate.Failure, "postToolUseFailure"
	case ev.ToolName != "" && ev.HasResult:
		return gate.Success, "postToolUse"
	case ev.ToolName != "":
		return gate.Before, "preToolUse"
	case ev.HasSource:
		return gate.SessionStart, "sessionStart"
	}
	return gate.Other, ""
}

func (c copilot) toEvent(ev copilotEvent, servers gate.Servers) gate.Event {
	kind, hook := c.kind(ev)
	out := gate.Event{Kind: kind, Agent: "copilot", Hook: hook, Tool: ev.ToolName, Error: ev.Error, ArgsHash: ev.ArgsHash,
		Args:      failureArgs(kind, ev.ArgsRaw),
		SessionID: ev.SessionID, Cwd: ev.Cwd, Source: ev.Source}
	if ev.ToolName != "" {
		if rs := c.readings(ev.ToolName, ev.Cwd, servers); len(rs) > 0 {
			// "MCP server 'fix': upstream quota exceeded": Copilot names the server that answered.
			answered := ""
			if rest, ok := strings.CutPrefix(out.Error, "MCP server '"); ok {
				answered, _, _ = strings.Cut(rest, "': ")
			}
			applyReadings(&out, rs, answered)
		}
	}
	if out.Server != "" {
		// The ledger keeps what the server said.
		out.Error = strings.TrimPrefix(out.Error, "MCP server '"+out.Server+"': ")
	}
	return out
}

// readings are the ways Copilot's <server>-<tool> splits into a server and its tool (best first,
// Reading.better): through Copilot's own servers, whose name (or its name as Copilot writes it in
// tool names) starts name; only when none does, through the servers the gate knows (Claude Code's
// configuration): a server "github-create" that Copilot does not run must not take
// "github-create-issue" from Copilot's "github". Of Copilot's servers, those of its user
// mcp-config.json come first, so that a repository's .mcp.json server "context7-resolve" cannot
// take "context7-resolve-library-id" from your "context7". A name no configured server starts is
// Copilot's own tool (no reading).
func (c copilot) readings(name, cwd string, servers gate.Servers) []Reading {
	if !strings.Contains(name, "-") {
		// Every MCP tool's name has the "-" after its server's; Copilot's own tools (bash, view,
		// read_bash, …) have none, and their hooks read no configuration.
		return nil
	}
	// of returns the readings of name through servers.
	of := func(servers []copilotServer) []Reading {
		var rs []Reading
		for _, s := range servers {
			for _, cand := range []string{s.name, copilotSanitize(s.name)} {
				if cand != "" && len(name) > len(cand)+1 && strings.HasPrefix(name, cand+"-") {
					rs = append(rs, Reading{Key: string(ledger.NameKey(s.name, name[len(cand)+1:])), Server: s.name,
						User: s.user, Exact: cand == s.name, n: len(cand)})
				}
			}
		}
		return sortReadings(rs)
	}
	if rs := of(copilotServers(c.getenv, cwd)); len(rs) > 0 {
		return rs
	}
	var known []copilotServer
	if servers != nil {
		for _, s := range servers() {
			known = append(known, copilotServer{s.Name, userOwned(s)})
		}
	}
	return of(known)
}

// copilotServer is one MCP server Copilot CLI reads: its name, and whether it is in the user's own
// configuration rather than in a repository's file.
type copilotServer struct {
	name string
	user bool
}

// copilotSanitize is a server's name as Copilot CLI writes it in its tools' names: every character
// but letters, digits, '_' and '-' becomes '-' (server "fix.v2" has the tool "fix-v2-echo").
func copilotSanitize(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '-'
	}, name)
}

// copilotServers returns the MCP servers Copilot CLI reads: its user mcp-config.json
// ($COPILOT_HOME, else ~/.copilot, as getenv says) and the workspace's .github/mcp.json and
// .mcp.json under cwd. Each file is read up to 1 MiB; one that cannot be read is passed over.
func copilotServers(getenv func(string) string, cwd string) []copilotServer {
	type file struct {
		path string
		user bool
	}
	var files []file
	if home := userDir(getenv, Copilot.Setup()); home != "" {
		files = append(files, file{filepath.Join(home, "mcp-config.json"), true})
	}
	if filepath.IsAbs(cwd) {
		files = append(files, file{filepath.Join(cwd, ".github", "mcp.json"), false}, file{filepath.Join(cwd, ".mcp.json"), false})
	}
	var out []copilotServer
	for _, f := range files {
		data, err := safefile.ReadBounded(f.path, 1<<20)
		if err != nil {
			continue
		}
		var doc struct {
			MCPServers map[string]json.RawMessage `json:"mcpServers"`
		}
		if json.Unmarshal(data, &doc) != nil {
			continue
		}
		for name := range doc.MCPServers {
			out = append(out, copilotServer{name, f.user})
		}
	}
	return out
}

// copilotAnswer is what a camelCase Copilot hook prints: flat keys, no hookSpecificOutput (which
// Copilot ignores in that dialect, letting the call run).
type copilotAnswer struct {
	PermissionDecision       string `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
	AdditionalContext        string `json:"additionalContext,omitempty"`
}

func (copilot) Encode(ev gate.Event, a gate.Answer) gate.Reply {
	var out copilotAnswer
	switch {
	case a.Deny:
		out.PermissionDecision, out.PermissionDecisionReason = "deny", nonEmpty(a.Reason)
	case a.Context != "":
		out.AdditionalContext = a.Context
	}
	var reply gate.Reply
	if out != (copilotAnswer{}) {
		reply.Stdout = encodeJSON(out)
	}
	if a.Notice != "" {
		// Copilot has no field for a notice to the user that is known to work: stderr, which it logs.
		reply.Stderr = []byte(a.Notice + "\n")
	}
	return reply
}

// SilentHangs is true: Copilot CLI runs no post hook for a call that was rejected or denied, nor
// (by its SDK's account) for a result of type timeout, so the gate pairs its calls with their post
// events to see one that hung (gate.SilentHangs). Its own MCP timeout does reach
// postToolUseFailure (seen with 1.0.102: e2e TestHungServer), which closes the call's pair.
func (copilot) SilentHangs(gate.Event) (paired, turnEnd bool) { return true, false }
