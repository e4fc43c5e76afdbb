package agent

// OpenAI Codex CLI's codec. Its hook events are Claude Code's in shape (hook_event_name,
// tool_name mcp__<server>__<tool>, tool_use_id, transcript_path), its deny is Claude Code's, but it
// runs no hook after a failed MCP call: the failures are read from its session transcript
// (codex_transcript.go) by the gate, through [gate.Backlog].

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/safefile"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// Codex is OpenAI Codex CLI's codec.
var Codex Codec = codex{}

type codex struct {
	// getenv is the environment the gate obeys (gate.Environ); nil reads no user configuration.
	getenv func(string) string
}

// WithGetenv binds the codec to the gate's environment, for Codex's user config.toml.
func (codex) WithGetenv(getenv func(string) string) gate.Wire { return codex{getenv: getenv} }

func (codex) Name() string { return "codex" }

func (codex) Title() string { return "Codex CLI" }

// FormatCodexHooks is Codex's hooks.json: Claude Code's "hooks" → event → matcher groups →
// handlers, with command a shell command line, and each handler trusted by its hash in the user's
// config.toml.
const FormatCodexHooks = "codex-hooks"

func (codex) Setup() Setup {
	return Setup{
		Format: FormatCodexHooks,
		Hooks: []Hook{
			{"PreToolUse", claudeMCPMatcher},
			{"PostToolUse", claudeMCPMatcher},
			{"SessionStart", ""},
			{"Stop", ""},
		},
		Scopes: []Scope{
			{Name: "user", InConfigDir: true, Path: "hooks.json", Usage: "every project (trusted by hash in config.toml)"},
			{Name: "project", Path: ".codex/hooks.json", Usage: "this project, once Codex trusts it"},
		},
		ConfigDirEnv: "CODEX_HOME",
		HomeDir:      ".codex",
		Binaries:     []string{"codex"},
		Timeout:      hookTimeoutS,
		TimeoutUnit:  "s",
	}
}

// codexKinds maps Codex's hook_event_name to the gate's kinds. Stop has no tool: the gate reads
// the transcript's last failures on it and answers nothing.
var codexKinds = map[string]gate.Kind{
	"PreToolUse":   gate.Before,
	"PostToolUse":  gate.Success,
	"SessionStart": gate.SessionStart,
}

func (c codex) Decode(r io.Reader, servers gate.Servers, seen func(gate.Event)) (gate.Event, error) {
	_, out, err := decodeClaudeShaped(r, seen, func(ev claudeEvent) gate.Event { return c.event(ev, servers) })
	return out, err
}

func (c codex) event(ev claudeEvent, servers gate.Servers) gate.Event {
	out := gate.Event{
		Kind: codexKinds[ev.Name], Agent: "codex", Hook: ev.Name, Tool: ev.ToolName, ArgsHash: ev.InputHash,
		SessionID: ev.SessionID, ToolUseID: ev.ToolUseID, Cwd: ev.Cwd, TranscriptPath: ev.TranscriptPath,
		Source: ev.Source,
	}
	if srv, tool, ok := ledger.Key(ev.ToolName).Split(); ok {
		out.Key, out.Server = c.key(srv, tool, servers)
	} else {
		out.Key = ev.ToolName // not an MCP tool: let through at once
	}
	return out
}

// codexSanitize is a server or tool name as Codex writes it in a hook's tool_name: every character
// outside [A-Za-z0-9_] becomes '_' ("my-srv.v2" is "my_srv_v2").
func codexSanitize(name string) string {
	var b strings.Builder
	for _, r := range name {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// key is the canonical key of tool of the server Codex calls srv (sanitized its own way),
// and the server's real name when known. Codex turns '-' and '.' into '_', which Claude Code keeps
// or turns into '_' only for '.': a server "my-srv" is mcp__my_srv__… to Codex and mcp__my-srv__…
// to Claude Code. So a name with '_' is looked up among the configured servers for the one Codex
// names so: Codex's own config.toml first (the call is to one of its servers), then the project's;
// in each, a server named exactly srv wins over one whose name only sanitizes to it ("my_srv" is
// not "my-srv" when both exist). Without a match, or without '_', the name is the key as it is.
func (c codex) key(srv, tool string, servers gate.Servers) (key, server string) {
	if !strings.Contains(srv, "_") {
		return string(ledger.NameKey(srv, tool)), ""
	}
	lists := []func() []string{func() []string { return codexConfigServers(c.getenv) }, func() []string { return serverNames(servers) }}
	for _, list := range lists {
		names := list()
		if slices.Contains(names, srv) {
			return string(ledger.NameKey(srv, tool)), srv
		}
		for _, name := range names {
			if codexSanitize(name) == srv {
				return string(ledger.NameKey(name, tool)), name
			}
		}
	}
	return string(ledger.NameKey(srv, tool)), ""
}

// codexConfigServers returns the names of the MCP servers in Codex's user config.toml
// ($CODEX_HOME/config.toml, else ~/.codex/config.toml, as getenv says): the [mcp_servers.NAME]
// table headers, the only part of that file read. It reads at most 1 MiB and returns nothing on
// any error.
func codexConfigServers(getenv func(string) string) []string {
	home := userDir(getenv, Codex.Setup())
	if home == "" {
		return nil
	}
	data, err := safefile.ReadBounded(filepath.Join(home, "config.toml"), 1<<20)
	if err != nil {
		return nil
	}
	var names []string
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if name, ok := tomlServerHeader(sc.Text()); ok {
			names = append(names, name)
		}
	}
	return names
}

// tomlServerHeader returns NAME of a TOML table header line [mcp_servers.NAME] (NAME bare or a
// basic or literal string); sub-tables ([mcp_servers.NAME.env]) are not servers.
func tomlServerHeader(line string) (string, bool) {
	s := strings.TrimSpace(line)
	if i := strings.LastIndex(s, "]"); i >= 0 {
		// A comment may follow the header.
		if rest := strings.TrimSpace(s[i+1:]); rest == "" || strings.HasPrefix(rest, "#") {
			s = s[:i+1]
		}
	}
	s, ok := strings.CutPrefix(s, "[")
	if !ok || strings.HasPrefix(s, "[") {
		return "", false
	}
	s, ok = strings.CutSuffix(s, "]")
	if !ok {
		return "", false
	}
	s = strings.TrimSpace(s)
	s, ok = strings.CutPrefix(s, "mcp_servers")
	if !ok {
		return "", false
	}
	s = strings.TrimSpace(s)
	s, ok = strings.CutPrefix(s, ".")
	if !ok {
		return "", false
	}
	s = strings.TrimSpace(s)
	var name string
	switch {
	case strings.HasPrefix(s, `"`):
		end := strings.Index(s[1:], `"`)
		if end < 0 {
			return "", false
		}
		unq, err := strconv.Unquote(s[:end+2])
		if err != nil {
			return "", false
		}
		name, s = unq, s[end+2:]
	case strings.HasPrefix(s, "'"):
		end := strings.Index(s[1:], "'")
		if end < 0 {
			return "", false
		}
		name, s = s[1:end+1], s[end+2:]
	default:
		end := strings.IndexAny(s, ". \t")
		if end < 0 {
			end = len(s)
		}
		name, s = s[:end], s[end:]
	}
	if strings.TrimSpace(s) != "" || name == "" {
		return "", false // a sub-table, or not a header we understand
	}
	return name, true
}

func (codex) Encode(ev gate.Event, a gate.Answer) gate.Reply {
	var out ClaudeAnswer
	switch {
	case a.Deny:
		// Codex rejects a deny without a reason, and an output it does not support is treated as
		// no answer: the deny carries nothing else.
		out.HookSpecificOutput = &ClaudeSpecific{HookEventName: "PreToolUse", PermissionDecision: "deny", PermissionDecisionReason: nonEmpty(a.Reason)}
	case a.Context != "" && (ev.Hook == "PreToolUse" || ev.Hook == "PostToolUse" || ev.Hook == "SessionStart"):
		out.HookSpecificOutput = &ClaudeSpecific{HookEventName: ev.Hook, AdditionalContext: a.Context}
	}
	reply := gate.Reply{Stdout: out.Encode()}
	if a.Notice != "" {
		// Whether Codex honours systemMessage is not known; a notice for the user goes to stderr,
		// which Codex logs, rather than risk the answer.
		reply.Stderr = []byte(a.Notice + "\n")
	}
	return reply
}

// nonEmpty is reason, or a generic one: an agent that drops a deny without a reason must still
// deny.
func nonEmpty(reason string) string {
	if strings.TrimSpace(reason) == "" {
		return "mcp-circuit-breaker: this MCP tool's circuit is OPEN; do not retry it."
	}
	return reason
}

// Backlog reads the failed MCP calls Codex recorded in the session transcript after cursor (a
// byte offset; "" for the start) and returns them as Failure events with the cursor to keep. A
// transcript that is not a regular file, or is missing, gives none. A transcript shorter than the
// cursor was replaced: its start is skipped to its end rather than counted again.
func (c codex) Backlog(ev gate.Event, cursor string, servers gate.Servers) (gate.BacklogScan, error) {
	scan := gate.BacklogScan{Cursor: cursor}
	if ev.TranscriptPath == "" || !filepath.IsAbs(ev.TranscriptPath) {
		return scan, nil
	}
	var off int64
	if cursor != "" {
		n, err := strconv.ParseInt(cursor, 10, 64)
		if err != nil || n < 0 {
			return scan, fmt.Errorf("read transcript cursor %q: not a byte offset", cursor)
		}
		off = n
	}
	f, size, err := openTranscript(ev.TranscriptPath)
	if err != nil || f == nil {
		return scan, err
	}
	defer f.Close()
	scan.Size, scan.End = size, strconv.FormatInt(size, 10)
	if size < off {
		scan.Cursor = strconv.FormatInt(size, 10)
		scan.Replaced = true
		return scan, nil
	}
	ts, err := scanCodexTranscript(f, off, size)
	if err != nil {
		return scan, fmt.Errorf("read transcript %s: %w", ev.TranscriptPath, err)
	}
	scan.Cursor = strconv.FormatInt(ts.Next, 10)
	scan.Advanced = ts.Next - off
	scan.Skipped = ts.Skipped
	for _, tf := range ts.Failures {
		// The key the PreToolUse of this tool gets (key of Codex's spelling), so that the failure
		// counts on the circuit the next call meets.
		key, server := c.key(codexSanitize(tf.Server), tf.Tool, servers)
		if server == "" {
			server = tf.Server
		}
		scan.Failures = append(scan.Failures, gate.Event{
			Kind: gate.Failure, Agent: "codex", Hook: "transcript", Key: key, Tool: "mcp__" + codexSanitize(tf.Server) + "__" + tf.Tool,
			Server: server, Error: tf.Error, ArgsHash: tf.ArgsHash, Args: failureArgs(gate.Failure, tf.Args), Duration: tf.Duration, SessionID: ev.SessionID,
			ToolUseID: tf.ID, Cwd: ev.Cwd, TranscriptPath: ev.TranscriptPath,
		})
	}
	return scan, nil
}

// SilentHangs is true: Codex runs no hook after a failed call, and a call that never returns leaves
// nothing in its transcript until Codex's own timeout (and nothing at all under exec --ephemeral,
// which writes no transcript), so the gate pairs its calls with their PostToolUse (or the
// transcript's failure) to see one that hung (gate.SilentHangs). Its Stop ends the turn.
func (codex) SilentHangs(ev gate.Event) (paired, turnEnd bool) { return true, ev.Hook == "Stop" }

// openTranscript opens an agent's session transcript (Codex's, Droid's) for reading and gives its
// size; f is nil, and err too, when there is no transcript yet: nothing has been said.
func openTranscript(path string) (f *os.File, size int64, err error) {
	f, err = safefile.OpenRegular(path, os.O_RDONLY, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("read transcript: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("read transcript: %w", err)
	}
	return f, fi.Size(), nil
}
