package agent

// Factory Droid's codec, from the real client (droid 0.225.2, `droid exec` offline against a fake
// Chat Completions API through a bring-your-own-key custom model; e2e/droid_test.go): hooks in
// Claude Code's layout under "hooks" of .factory/settings.json (project) or ~/.factory/settings.json
// (user), each handler a shell command line; events PreToolUse, PostToolUse, SessionStart, Stop
// among others, with Claude Code's snake_case fields but no tool_use_id; MCP tools named
// <server>___<tool> (three underscores); a PreToolUse deny is Claude Code's hookSpecificOutput,
// whose reason the model reads as the tool's result. A failed call (an isError result, an MCP
// error) runs no hook at all: PostToolUse comes only after a success. The failures are read from
// the session transcript (droid_transcript.go) through gate.Backlog, as Codex's are.

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// Droid is Factory Droid's codec.
var Droid Codec = droid{}

type droid struct{}

func (droid) Name() string { return "droid" }

func (droid) Title() string { return "Factory Droid" }

// FormatDroidSettings is Droid's settings.json: Claude Code's "hooks" → event → matcher groups →
// handlers, each command a shell command line, its timeout in seconds.
const FormatDroidSettings = "droid-settings"

// droidMCPMatcher selects Droid's MCP tools, <server>___<tool>, and none of its own (Read, Execute, …).
const droidMCPMatcher = ".*___.*"

func (droid) Setup() Setup {
	return Setup{
		Format: FormatDroidSettings,
		Hooks: []Hook{
			{"PreToolUse", droidMCPMatcher},
			{"PostToolUse", droidMCPMatcher},
			{"SessionStart", ""},
			// Stop reads the turn's last failures from the transcript (no hook follows them).
			{"Stop", ""},
		},
		Scopes:      []Scope{projectScope(".factory/settings.json"), userScope("settings.json")},
		HomeDir:     ".factory",
		Binaries:    []string{"droid"},
		Timeout:     hookTimeoutS,
		TimeoutUnit: "s",
	}
}

// ServerFiles are Droid's MCP configurations: the project's .factory/mcp.json, then
// ~/.factory/mcp.json.
func (droid) ServerFiles(dir, home string) []gate.ServerFile {
	files := []gate.ServerFile{{Path: filepath.Join(dir, ".factory", "mcp.json"), Project: true}}
	if home != "" {
		files = append(files, gate.ServerFile{Path: filepath.Join(home, ".factory", "mcp.json")})
	}
	return files
}

var droidKinds = map[string]gate.Kind{
	"PreToolUse":   gate.Before,
	"PostToolUse":  gate.Success,
	"SessionStart": gate.SessionStart,
	"Stop":         gate.Other,
}

func (droid) Decode(r io.Reader, servers gate.Servers, seen func(gate.Event)) (gate.Event, error) {
	var notify func(respondedEvent)
	if seen != nil {
		notify = func(ev respondedEvent) { seen(droidEvent(ev, servers)) }
	}
	ev, err := readResponded(r, "PreToolUse", notify)
	return droidEvent(ev, servers), err
}

func droidEvent(c respondedEvent, servers gate.Servers) gate.Event {
	kind, ok := droidKinds[c.Name]
	if !ok {
		kind = gate.Other
	}
	ev := gate.Event{
		Kind: kind, Agent: "droid", Hook: c.Name, Tool: c.ToolName, ArgsHash: c.InputHash,
		SessionID: c.SessionID, ToolUseID: c.ToolUseID, Cwd: c.Cwd, TranscriptPath: c.TranscriptPath,
	}
	if kind == gate.Before || kind == gate.Success {
		ev.Key, ev.Server = droidKey(c.ToolName, servers)
	}
	return ev
}

// droidKey is the canonical key of tool, named <server>___<tool> by Droid, and its server: the
// longest configured server whose name, then "___", starts tool, else the part before the first
// "___"; "" when tool is not an MCP tool's name.
func droidKey(tool string, servers gate.Servers) (key, server string) {
	i := strings.Index(tool, "___")
	if i <= 0 || i+3 >= len(tool) {
		return "", ""
	}
	server, rest := tool[:i], tool[i+3:]
	if servers != nil && strings.Count(tool, "___") > 1 {
		for _, s := range servers() {
			if len(s.Name) > len(server) && strings.HasPrefix(tool, s.Name+"___") && len(tool) > len(s.Name)+3 {
				server, rest = s.Name, tool[len(s.Name)+3:]
			}
		}
	}
	return string(ledger.NameKey(server, rest)), server
}

func (droid) Encode(ev gate.Event, a gate.Answer) gate.Reply {
	// Droid reads Claude Code's answer: hookSpecificOutput's permissionDecision (the reason is the
	// tool's result the model reads), additionalContext (added for the model only), systemMessage.
	return Claude.Encode(ev, a)
}

// Backlog reads the failed MCP calls Droid recorded in the session transcript after cursor and
// returns them as Failure events with the cursor to keep (droidCursor). A transcript that is not a
// regular file, or is missing, gives none.
func (droid) Backlog(ev gate.Event, cursor string, servers gate.Servers) (gate.BacklogScan, error) {
	scan := gate.BacklogScan{Cursor: cursor}
	if ev.TranscriptPath == "" || !filepath.IsAbs(ev.TranscriptPath) {
		return scan, nil
	}
	cur, err := parseDroidCursor(cursor)
	if err != nil {
		return scan, err
	}
	f, size, err := openTranscript(ev.TranscriptPath)
	if err != nil || f == nil {
		return scan, err
	}
	defer f.Close()
	scan.Size, scan.End = size, droidCursor{From: size, Seen: size}.String()
	if size < cur.Seen {
		scan.Cursor, scan.Replaced = scan.End, true
		return scan, nil
	}
	ts, next, err := scanDroidTranscript(f, cur, size, transcriptDecode)
	if err != nil {
		return scan, fmt.Errorf("read transcript %s: %w", ev.TranscriptPath, err)
	}
	scan.Cursor = next.String()
	scan.Advanced = next.Seen - cur.Seen
	scan.Skipped = ts.Skipped
	for _, tf := range ts.Failures {
		key, server := droidKey(tf.Tool, servers)
		if key == "" {
			continue
		}
		scan.Failures = append(scan.Failures, gate.Event{
			Kind: gate.Failure, Agent: "droid", Hook: "transcript", Key: key, Tool: tf.Tool, Server: server,
			Error: tf.Error, ArgsHash: tf.ArgsHash, Args: failureArgs(gate.Failure, tf.Args), SessionID: ev.SessionID,
			ToolUseID: tf.ID, Cwd: ev.Cwd, TranscriptPath: ev.TranscriptPath,
		})
	}
	return scan, nil
}
