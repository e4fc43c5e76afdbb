package gate

import (
	"io"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/failure"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/mcpconfig"
)

// Kind is what happened, in every agent's terms.
type Kind int

// The kinds of event the gate handles. An agent's event that is none of them is Other: the gate
// reads no state for it and answers nothing.
const (
	Other        Kind = iota
	Before            // a tool is about to be called: the gate allows or denies it
	Success           // a call returned a result
	Failure           // a call failed; Error says how
	SessionStart      // a session started, resumed or was compacted
)

// String names the kind for messages and tests.
func (k Kind) String() string {
	switch k {
	case Before:
		return "before"
	case Success:
		return "success"
	case Failure:
		return "failure"
	case SessionStart:
		return "session-start"
	}
	return "other"
}

// Event is one agent event, in terms of no agent in particular. A codec (internal/agent) fills it
// from what the agent sends; the gate reads nothing else.
type Event struct {
	Kind Kind
	// Agent is the codec's name ("claude", …).
	Agent string
	// Hook is the agent's own name of the event (Claude Code's hook_event_name), kept for the
	// answer's shape.
	Hook string
	// Key is the canonical circuit key of the tool, mcp__<server>__<tool>, whatever the agent calls
	// it; "" when the tool is not an MCP tool (or could not be resolved to one): such a call is
	// allowed at once with no state read. A key that is not a valid tool name (blanks, control
	// characters) is ignored with a warning.
	Key string
	// Tool is the tool's name as the agent sent it.
	Tool string
	// Server is the server's real (unsanitized) name when the agent sends it.
	Server string
	// Readings are the other circuit keys the agent's name of the tool can stand for (Copilot
	// CLI's my-db-query is tool query of server my-db or tool db-query of server my when both are
	// configured): before a call the gate denies it, with a reason, when one of them is not CLOSED,
	// rather than guess which server the agent will call.
	Readings []string
	// ArgsHash identifies the call's arguments without keeping them; "" when the codec did not
	// compute it.
	ArgsHash string
	// Args are the values of the call's arguments (failure.ArgsFromJSON, bounded by
	// failure.MaxArgs and failure.MaxArgValue), kept for a Failure only: the classifier weighs a
	// text that names what the call asked for as the call's. nil when unknown.
	Args []failure.Arg
	// Error is the failure's text (Failure).
	Error string
	// Code is the JSON-RPC error code of a failure the proxy saw on the wire, 0 when unknown
	// (every hook event: agents pass the text alone).
	Code int
	// Recorder is who observed the call, written as the source of the entries it leads to: ""
	// for an agent's hook (ledger.SourceHook), ledger.SourceProxy for the MCP proxy.
	Recorder string
	// Interrupt is true when the user stopped the call (Failure): it never counts.
	Interrupt bool
	// Duration is how long the call took, 0 when the agent does not say.
	Duration time.Duration
	// SessionID and ToolUseID identify the session and the call, "" when the agent has none.
	SessionID string
	ToolUseID string
	// Cwd and TranscriptPath are the agent's working directory and session transcript.
	Cwd            string
	TranscriptPath string
	// Source is why a session started (SessionStart): startup, resume, clear, compact, …
	Source string
	// Empty is set on a Success whose result held nothing (no content, [], {}, "No results"): it
	// counts toward the tool's row of empty results (docs/circuits.md). Codecs that cannot tell
	// leave it false.
	Empty bool
	// Missed are failures of earlier calls that the agent sent no event for, found in what it does
	// provide (Codex CLI: its transcript, read at the next call). The gate counts each before it
	// handles this event, so the codec must report every failure once, and never our own deny.
	Missed []Event
}

// Answer is the gate's one answer to an event, which a codec encodes in the shape its agent
// honours. The zero Answer allows and says nothing.
type Answer struct {
	// Deny blocks the call (Before only); Reason is what the model reads about it.
	Deny   bool
	Reason string
	// Context is added to the model's context (a trial, a step-2 message, the circuits at start).
	Context string
	// Notice is shown to the user, not to the model: the gate's own troubles, shadow mode.
	Notice string
}

// IsZero reports whether the answer allows and says nothing.
func (a Answer) IsZero() bool { return a == (Answer{}) }

// Reply is an encoded answer: what the hook process prints and the status it exits with.
type Reply struct {
	Stdout []byte
	// Stderr is printed after the gate's own stderr lines, for agents that read a deny's reason
	// there (with Exit 2).
	Stderr []byte
	Exit   int
}

// Servers returns the MCP servers configured for the project, read only when a codec asks: an
// agent whose tool names do not say where the server name ends (<server>-<tool>, a URL) resolves
// them through it.
type Servers func() []mcpconfig.Server

// ServerFiles is implemented by a wire whose agent keeps its MCP servers in files of its own
// (Cursor's .cursor/mcp.json): the servers a codec resolves names through are read from those
// files first (mcpServers shape, no variable expanded), then from Claude Code's configuration.
type ServerFiles interface {
	// ServerFiles returns the agent's MCP configuration files for the project in dir, each with
	// whether it belongs to the project (a repository's file) rather than to the user.
	ServerFiles(dir, home string) []ServerFile
}

// ServerFile is one MCP configuration file of an agent.
type ServerFile struct {
	Path    string
	Project bool
	// Comments says the agent reads the file as JSON with comments (Qwen Code's settings.json).
	Comments bool
	// Member is the top-level member holding the servers, "" for "mcpServers" (Crush's "mcp").
	Member string
}

// Environ is implemented by a wire that reads files of its agent outside the project (Codex CLI's
// config.toml, Copilot CLI's mcp-config.json) in a directory the agent's own variables name
// (CODEX_HOME, COPILOT_HOME, else a directory under HOME). Run binds it to the environment the gate
// obeys (Config.Getenv: without what a project's settings set, HOME the user's own), so that a
// repository cannot point those reads at files of its choosing. An unbound wire reads none of them.
type Environ interface {
	// WithGetenv returns the wire reading its agent's variables through getenv.
	WithGetenv(getenv func(string) string) Wire
}

// Wire is an agent's wire format as the gate uses it; internal/agent holds one per agent.
type Wire interface {
	// Decode reads one event from r. It calls seen once, as soon as the event's Kind and Key are
	// known, with the fields read so far, so that the gate can decide while a large payload still
	// streams; it returns an error wrapping a malformed-input error when r holds no event.
	Decode(r io.Reader, servers Servers, seen func(Event)) (Event, error)
	// Encode writes the answer to ev in the agent's shape.
	Encode(ev Event, a Answer) Reply
}
