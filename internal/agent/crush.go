package agent

// Crush's codec (Charm, npm @charmland/crush), from its source only: its npm package holds no
// binary, and its postinstall script downloads one from GitHub, which an offline machine cannot
// reach. Followed: charmbracelet/crush at 37f36e9 (main, 2026-08-21), internal/hooks/input.go,
// internal/hooks/runner.go, internal/agent/hooked_tool.go, internal/agent/tools/mcp-tools.go,
// internal/config/load.go, and docs/hooks/README.md and the crush-hooks skill of that commit.
//
// There, one event fires: PreToolUse, before the top-level agent's tool calls (sub-agents' are not
// hooked). Hooks are the "hooks" member of crush.json (or .crush.json) in the project, or of
// crush.json in $CRUSH_GLOBAL_CONFIG, else $XDG_CONFIG_HOME/crush or ~/.config/crush: event →
// [{name, matcher, command, timeout}], matcher a regular expression on the tool's name, timeout in
// seconds. stdin is {event, session_id, cwd, tool_name, tool_input}; an MCP tool is named
// mcp_<server>_<tool> with both names as configured (the "mcp" member of the same files). A hook
// denies with {"decision":"deny","reason":…} on stdout (or exit 2, stderr the reason); the model
// reads "Tool call blocked by hook. Reason: …". "context" on an allowed call is appended to the
// tool's result, which the model reads; "decision":"allow" would skip Crush's permission prompt,
// so the gate never sends it. No event reports a call's outcome (the skill listing PostToolUse
// and PostToolUseFailure is on a contributor's branch, 545fdb3, not in main), so Crush's own
// failures go uncounted: it meets the circuits other agents and the probes open.

import (
	"io"
	"path/filepath"
	"strings"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
)

// Crush is Crush's codec.
var Crush Codec = crush{}

type crush struct{}

func (crush) Name() string { return "crush" }

func (crush) Title() string { return "Crush" }

// FormatCrushHooks is the "hooks" member of Crush's crush.json: event → [{matcher, command,
// timeout}], each command a shell command line (Crush runs it in its embedded POSIX shell).
const FormatCrushHooks = "crush-hooks"

// crushMCPMatcher selects Crush's MCP tools (mcp_<server>_<tool>); Crush reads it as a regular
// expression.
const crushMCPMatcher = "^mcp_"

// crushNaming is how Crush names an MCP tool (fmt.Sprintf("mcp_%s_%s", server, tool)).
var crushNaming = Naming{Prefix: "mcp_", Sep: "_"}

func (crush) Setup() Setup {
	return Setup{
		Format:       FormatCrushHooks,
		Hooks:        []Hook{{"PreToolUse", crushMCPMatcher}},
		Scopes:       []Scope{projectScope("crush.json"), userScope("crush.json")},
		ConfigDirEnv: "CRUSH_GLOBAL_CONFIG",
		HomeDir:      ".config/crush",
		Binaries:     []string{"crush"},
		Timeout:      hookTimeoutS,
		TimeoutUnit:  "s",
	}
}

// ServerFiles are the files Crush reads its "mcp" servers from, as it looks them up: the
// project's .crush.json and crush.json, and the user's ~/.config/crush/crush.json.
func (crush) ServerFiles(dir, home string) []gate.ServerFile {
	files := []gate.ServerFile{
		{Path: filepath.Join(dir, ".crush.json"), Project: true, Member: "mcp"},
		{Path: filepath.Join(dir, "crush.json"), Project: true, Member: "mcp"},
	}
	if filepath.IsAbs(home) {
		files = append(files, gate.ServerFile{Path: filepath.Join(home, ".config", "crush", "crush.json"), Member: "mcp"})
	}
	return files
}

func (crush) Decode(r io.Reader, servers gate.Servers, seen func(gate.Event)) (gate.Event, error) {
	var notify func(respondedEvent)
	if seen != nil {
		notify = func(ev respondedEvent) { seen(crushEvent(ev, servers)) }
	}
	ev, err := readResponded(r, "PreToolUse", notify)
	return crushEvent(ev, servers), err
}

func crushEvent(c respondedEvent, servers gate.Servers) gate.Event {
	ev := gate.Event{Agent: "crush", Hook: c.Name, Tool: c.ToolName, ArgsHash: c.InputHash, SessionID: c.SessionID, Cwd: c.Cwd}
	if c.Name != "PreToolUse" {
		return ev // no other event is wired: nothing to decide
	}
	ev.Kind = gate.Before
	if rs, ok := CanonicalReadings(c.ToolName, crushNaming, servers); ok {
		applyReadings(&ev, rs, "")
	}
	return ev
}

func (crush) Encode(_ gate.Event, a gate.Answer) gate.Reply {
	type answer struct {
		Decision string `json:"decision,omitempty"`
		Reason   string `json:"reason,omitempty"`
		Context  string `json:"context,omitempty"`
	}
	var reply gate.Reply
	switch {
	case a.Deny:
		// The reason is what the model reads, and what Crush's hook indicator shows the user: the
		// notice, for the user, goes with it (as Kiro's stderr does).
		msg := nonEmpty(a.Reason)
		if n := strings.TrimSpace(a.Notice); n != "" {
			msg += "\n" + n
		}
		reply.Stdout = encodeJSON(answer{Decision: "deny", Reason: msg})
		return reply
	case a.Context != "":
		// No decision: Crush's own permission prompt still runs; the context reaches the model
		// with the tool's result.
		reply.Stdout = encodeJSON(answer{Context: a.Context})
	}
	// On exit 0 Crush reads stdout only: an allowed call's notice goes to stderr, for a log.
	if n := strings.TrimSpace(a.Notice); n != "" {
		reply.Stderr = []byte(n + "\n")
	}
	return reply
}
