// Package agent holds each agent's wire codec for the gate: it decodes what the agent sends a hook
// on stdin into a gate.Event, encodes the gate.Answer in the shape that agent honours (so that the
// model reads our reason), and describes where install, uninstall and doctor wire it. Claude Code is
// the first codec; every agent shares the gate, the ledger and the canonical circuit keys.
//
// # Adding an agent
//
//  1. Write <name>.go with an unexported type that implements [Codec] and an exported value of it
//     (like [Claude]). Decode reads stdin with the package's streaming decoder (decode.go: it
//     checks the whole object and skips arguments of any size without keeping them) and calls seen
//     as soon as the event's kind and tool are known. Map the agent's tool name with [Canonical]
//     (or [CanonicalURL] when the agent names only the server's URL or command). A call that is
//     not an MCP tool gets Key "" and is allowed at once. Never report our own deny as a failure.
//  2. Encode answers in the shape the agent honours: a deny whose reason the model reads, context
//     for the model, a notice for the user; say in Reply.Exit and Reply.Stderr what the agent reads
//     there. The zero gate.Answer must encode as the agent's "allow, nothing to say".
//  3. Describe its hook files, scopes and events in Setup, for install, uninstall and doctor. A
//     codec that reads the agent's own files outside the project (its user MCP configuration)
//     implements gate.Environ and finds them with userDir through the getenv it is bound to, never
//     through the process environment, which a repository's agent settings may have set.
//  4. Add the value to [codecs], fixtures to <name>_test.go (each saying where its payload comes
//     from) and a row to docs/agents.md.
package agent

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
)

// Codec is one agent's wire format and set-up.
type Codec interface {
	gate.Wire
	// Name is the agent's --agent value: lowercase, one word.
	Name() string
	// Title is the agent as people call it, for messages and docs.
	Title() string
	// Setup says where and how the agent's hooks are configured.
	Setup() Setup
}

// Setup describes how the gate is wired into an agent: what install writes, uninstall removes and
// doctor checks.
type Setup struct {
	// Format is how the hook configuration file is edited (FormatClaudeSettings, …).
	Format string
	// Hooks are the agent's events the gate is wired for, in the order they are written.
	Hooks []Hook
	// Scopes are the files the agent reads hooks from, the default scope first.
	Scopes []Scope
	// ConfigDir is the agent's user directory: $ConfigDirEnv when set, else HomeDir under $HOME.
	ConfigDirEnv string
	HomeDir      string
	// Binaries are the agent's programs: one on PATH, or ConfigDir present, means the agent is
	// installed (doctor then says whether it is protected).
	Binaries []string
	// Timeout is the handler timeout install writes, in TimeoutUnit ("s" or "ms", what the agent
	// reads); 0 writes none.
	Timeout     int
	TimeoutUnit string
	// Skill is set when install also writes the skill (Claude Code's .claude/skills).
	Skill bool
}

// The hook timeout install writes, in each agent's unit: the gate's own HookTimeout, within which
// it always answers.
var (
	hookTimeoutS  = int(gate.HookTimeout / time.Second)
	hookTimeoutMS = int(gate.HookTimeout / time.Millisecond)
)

// claudeHooks are Claude Code's hook events the gate is wired for, the MCP tools' events with
// claudeMCPMatcher; Qwen Code has the same events and matchers.
func claudeHooks() []Hook {
	return []Hook{
		{"PreToolUse", claudeMCPMatcher},
		{"PostToolUse", claudeMCPMatcher},
		{"PostToolUseFailure", claudeMCPMatcher},
		{"SessionStart", ""},
	}
}

// projectScope is an agent's hook file in the project, shared through the repository.
func projectScope(path string) Scope { return Scope{Name: "project", Path: path, Usage: "shared"} }

// userScope is an agent's hook file in its user directory, for every project.
func userScope(path string) Scope {
	return Scope{Name: "user", InConfigDir: true, Path: path, Usage: "every project"}
}

// userDir is the agent's user directory as getenv says (set.ConfigDirEnv when set, else
// set.HomeDir under HOME), "" when getenv is nil or names no absolute directory: a relative one
// would name whatever the current directory (a repository) holds.
func userDir(getenv func(string) string, set Setup) string {
	if getenv == nil {
		return ""
	}
	if set.ConfigDirEnv != "" {
		if d := getenv(set.ConfigDirEnv); d != "" {
			if filepath.IsAbs(d) {
				return d
			}
			return ""
		}
	}
	if h := getenv("HOME"); h != "" && set.HomeDir != "" && filepath.IsAbs(h) {
		return filepath.Join(h, set.HomeDir)
	}
	return ""
}

// HookArgs are the arguments a hook handler passes to our binary for the agent: ["hook"] for
// Claude Code (the default agent, and what earlier installs wrote), else ["hook", "--agent", name].
func HookArgs(name string) []string {
	if name == Claude.Name() {
		return []string{"hook"}
	}
	return []string{"hook", "--agent", name}
}

// FormatClaudeSettings is Claude Code's settings.json shape: "hooks" → event → matcher groups →
// handlers {type, command, args, timeout}. Codex CLI, Gemini CLI and Qwen Code read the same shape
// (with their own event names and timeout units), so install edits their files the same way.
const FormatClaudeSettings = "claude-settings"

// Hook is one agent event the gate handles.
type Hook struct {
	Event string
	// Matcher selects the tools ("" for every tool, or for an event without tools).
	Matcher string
}

// Scope is one hook configuration file of an agent.
type Scope struct {
	// Name is the --scope value: project, local, user, …
	Name string
	// InConfigDir places Path under the agent's user directory (Setup.ConfigDir), else under the
	// project directory.
	InConfigDir bool
	// Path is the file, slash-separated, relative to its base.
	Path string
	// Usage says who the scope is for, in the --scope help.
	Usage string
}

// codecs are the agents the gate serves, by --agent name. Add a new agent's codec here.
var codecs = []Codec{Claude, Cursor, Windsurf, Goose, Codex, Qwen, Copilot, Gemini, Cline, Opencode, Kilo, Droid, Kiro, Devin, Antigravity, Crush, Auggie}

// All returns the codecs, in a stable order (Claude Code first).
func All() []Codec { return append([]Codec(nil), codecs...) }

// Names returns the --agent names, in the order of All.
func Names() []string {
	names := make([]string, len(codecs))
	for i, c := range codecs {
		names[i] = c.Name()
	}
	return names
}

// Lookup returns the codec of the agent called name.
func Lookup(name string) (Codec, error) {
	for _, c := range codecs {
		if c.Name() == name {
			return c, nil
		}
	}
	if aliasOfClaude[strings.ToLower(name)] {
		return nil, fmt.Errorf("%q is not an agent of its own: VS Code (Copilot's agent hooks) runs the hooks of Claude Code's settings files, so --agent claude, the default, wires it: run 'mcp-circuit-breaker install' without --agent (docs/agents.md)", name)
	}
	return nil, fmt.Errorf("unknown agent %q (known: %s)", name, strings.Join(Names(), ", "))
}

// aliasOfClaude are names a user may give VS Code, which reads Claude Code's hooks.
var aliasOfClaude = map[string]bool{"vscode": true, "vs-code": true, "code": true, "copilot-vscode": true}

// Wire is Lookup for the gate (gate.Main). An agent whose hook payloads do not name their event
// (Copilot CLI's camelCase hooks) is wired as NAME:EVENT, and gets its codec bound to that event.
func Wire(name string) (gate.Wire, error) {
	base, event, bound := strings.Cut(name, ":")
	c, err := Lookup(base)
	if err != nil {
		return nil, err
	}
	if bound {
		b, ok := c.(eventBound)
		if !ok || event == "" {
			return nil, fmt.Errorf("agent %q: %s hooks name their own event, so --agent takes no :EVENT", name, c.Title())
		}
		return b.ForEvent(event), nil
	}
	return c, nil
}

// eventBound is a codec of an agent whose payloads do not say which event they are.
type eventBound interface {
	ForEvent(event string) Codec
}
