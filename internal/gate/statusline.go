package gate

// The status line tells the human what the model is told: Claude Code runs a statusLine command
// after each message with a JSON description of the session on stdin and shows the first line it
// prints under the prompt (docs/hook.md, The status line). Ours prints the open circuits, each with
// its failure type and when its trial comes, or nothing when every circuit is CLOSED. It runs as
// often as the hook and in the same binary, on the same reads: the snapshot's lines, the ledger
// bytes after it, the policy through the decoder's cache; no YAML, no board, nothing written but
// what a SessionStart would write on a large ledger without a snapshot.

import (
	"encoding/json"
	"fmt"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/message"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/term"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/timetext"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/userenv"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// StatusConfig is one run of the status line.
type StatusConfig struct {
	// Dir is --dir ("" when not given).
	Dir    string
	Stdin  io.Reader
	Stdout io.Writer
	// Getenv is the environment as the gate obeys it (internal/userenv).
	Getenv func(string) string
	// Decoder reads what only the full CLI can (a ledger item in another YAML shape).
	Decoder project.Decoder
	// CatchUp brings a large ledger's snapshot up to date in the background (DetachedCatchUp);
	// nil reads what it needs from the ledger within the budget.
	CatchUp func(dir string) error
}

// statusBudget bounds a status line's read of a large ledger without a usable snapshot: Claude
// Code redraws the line often, and a late line is a stale line.
const statusBudget = 400 * time.Millisecond

// statusStdinWait bounds the wait for Claude Code's JSON: run by hand in a terminal, the command
// must not wait for a stdin nobody writes.
const statusStdinWait = 50 * time.Millisecond

// maxStatusLine bounds the line: a status line is one short line under the prompt.
const maxStatusLine = 160

// statusInput is the part of Claude Code's status-line JSON the line needs: where the session
// was started (the project) and where it is now.
type statusInput struct {
	Cwd       string `json:"cwd"`
	Workspace struct {
		ProjectDir string `json:"project_dir"`
		CurrentDir string `json:"current_dir"`
	} `json:"workspace"`
}

// StatusLine prints the status line of the project: one line naming the circuits that are not
// CLOSED, or nothing. It returns the exit status, 0 whatever happens: a status line that fails
// shows nothing, which reads as "all is well", so what cannot be read is said on the line itself.
func StatusLine(cfg StatusConfig) int {
	start := time.Now()
	var in statusInput
	if first, ok, _ := readFirst(cfg.Stdin, statusStdinWait); ok && len(first) > 0 {
		// Claude Code's JSON is a few KB: one read (of up to 16 KB) holds it; a longer one is not
		// decoded, and the environment and the current directory name the project.
		json.Unmarshal(first, &in)
	}
	dir := cfg.Dir
	if dir == "" && cfg.Getenv("MCP_CIRCUIT_DIR") == "" && cfg.Getenv("CLAUDE_PROJECT_DIR") == "" {
		// The directory the session was started in is the project, as CLAUDE_PROJECT_DIR is for
		// hooks; then where it is now.
		for _, d := range []string{in.Workspace.ProjectDir, in.Workspace.CurrentDir, in.Cwd} {
			if filepath.IsAbs(d) {
				dir = d
				break
			}
		}
	}
	d, err := project.ResolveDir(dir, cfg.Getenv)
	if err != nil || project.CheckDir(d) != nil {
		return 0 // no project: nothing is guarded here
	}
	line := statusText(cfg, d, start)
	if line != "" {
		fmt.Fprintln(cfg.Stdout, line)
	}
	return 0
}

// statusText is the line for the project in dir, "" when all is well.
func statusText(cfg StatusConfig, dir string, start time.Time) string {
	var warn []string
	if project.Shadow(cfg.Getenv) {
		warn = append(warn, "⚠ MCP breaker in shadow mode: blocks nothing")
	}
	p := project.New(dir, cfg.Getenv, io.Discard, cfg.Decoder)
	if _, err := os.Lstat(filepath.Join(p.StateDir(), ledger.FileName)); err != nil {
		return strings.Join(warn, " · ") // no ledger: nothing has failed here
	}
	now, err := project.Now(cfg.Getenv)
	if err != nil {
		return "⚠ MCP breaker: " + clipLine(err.Error())
	}
	s, err := p.Store(false)
	if err != nil {
		return "⚠ MCP breaker: cannot read the circuits (" + clipLine(err.Error()) + ")"
	}
	deadline := start.Add(statusBudget)
	s.Bound = &states.Bound{Deadline: deadline, IndexBy: deadline}
	if cfg.CatchUp != nil {
		s.Bound.CatchUp = func() { cfg.CatchUp(dir) }
	}
	board, err := s.View()
	if err != nil {
		return "⚠ MCP breaker: cannot read the circuits (" + clipLine(err.Error()) + ")"
	}
	if board.Partial {
		return "⚠ MCP breaker: large ledger, rebuilding its snapshot: run 'mcp-circuit-breaker status'"
	}
	pol, _ := p.UsablePolicy() // an invalid policy: its valid parts and the built-in values
	var servers, tools []*states.Circuit
	for _, k := range board.Keys() {
		c := board.Get(k)
		if c.State == ledger.Closed {
			continue
		}
		if ledger.Key(k).IsServer() {
			servers = append(servers, c)
		} else {
			tools = append(tools, c)
		}
	}
	openServer := map[string]int{}
	for _, c := range servers {
		openServer[ledger.Key(c.Key).Server()] = 0
	}
	var shown []*states.Circuit
	shown = append(shown, servers...)
	for _, c := range tools {
		if n, ok := openServer[ledger.Key(c.Key).Server()]; ok {
			openServer[ledger.Key(c.Key).Server()] = n + 1 // said with its server
			continue
		}
		shown = append(shown, c)
	}
	if len(shown) == 0 {
		return strings.Join(warn, " · ")
	}
	sort.SliceStable(shown, func(i, j int) bool { return shown[i].Key < shown[j].Key })
	var parts []string
	for _, c := range shown {
		st := p.StandingOf(c, now, pol)
		part := circuitName(c.Key)
		if c.FailureType != "" {
			part += " " + string(c.FailureType)
		}
		part += " · " + whenText(c, st, now)
		if n := openServer[ledger.Key(c.Key).Server()]; n > 0 && ledger.Key(c.Key).IsServer() {
			tools := "tools"
			if n == 1 {
				tools = "tool"
			}
			part += fmt.Sprintf(" (+%d %s)", n, tools)
		}
		parts = append(parts, part)
	}
	head := "⚡ MCP circuit open: "
	if len(shown) > 1 {
		head = fmt.Sprintf("⚡ %d MCP circuits open: ", len(shown))
	}
	line := head + strings.Join(parts, " | ")
	if len(warn) > 0 {
		line = strings.Join(warn, " · ") + " · " + line
	}
	return clipLine(line)
}

// circuitName is a circuit as the line names it: server/* for a server's circuit, server/tool
// for a tool's; a key that is no tool name (a hand-written ledger) is shown escaped.
func circuitName(key string) string {
	k := ledger.Key(key)
	if !ledger.ValidToolName(key) || k.Server() == "" || !message.PlainKey(key) {
		return clipLine(message.ShownKey(key)) // a hand-written ledger's name is data
	}
	if k.IsServer() {
		return k.Server() + "/*"
	}
	return k.Server() + "/" + strings.TrimPrefix(key, "mcp__"+k.Server()+"__")
}

// whenText says when the circuit can close without a person, in a few words.
func whenText(c *states.Circuit, st states.Standing, now time.Time) string {
	switch st.Phase {
	case states.PhaseCoolingDown:
		return "trial " + timetext.WaitText(now, st.Next)
	case states.PhaseTrialDue:
		return "trial due"
	case states.PhaseTrialInFlight:
		return "trial running"
	case states.PhaseAwaitingPerson:
		if c.FailureType == ledger.AdminGated {
			return "an admin must act"
		}
		return "reset by hand"
	}
	return string(st.State)
}

// clipLine keeps the line short and on one line, its control characters shown escaped.
func clipLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return term.Escape(term.Clip(s, maxStatusLine))
}

// StatusLineMain is `mcp-circuit-breaker-hook statusline [--dir DIR]`.
func StatusLineMain(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	dir := ""
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--dir" && i+1 < len(args):
			dir = args[i+1]
			i++
		case strings.HasPrefix(a, "--dir="):
			dir = strings.TrimPrefix(a, "--dir=")
		default:
			fmt.Fprintf(stderr, "mcp-circuit-breaker-hook: error: unknown argument %q\nmcp-circuit-breaker-hook: hint: statusline takes only [--dir DIR]\n", a)
			return 2
		}
	}
	user := userenv.New(getenv, dir)
	getenv = user.Getenv
	bin := func() (string, error) { return mainBinary(getenv("PATH")) }
	dec := fullDecoder{bin: bin, cache: projectDecoderCache(getenv, dir)}
	return StatusLine(StatusConfig{Dir: dir, Stdin: stdin, Stdout: stdout, Getenv: getenv, Decoder: dec.decoder(), CatchUp: DetachedCatchUp})
}
