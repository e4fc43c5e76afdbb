package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/agent"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/yamlfile"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

func demoCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:  "demo",
		Usage: "run a real local MCP server that fails on cue and drive the hook through failure → trip → block → half-open → close",
		Description: "Everything happens in a temporary project directory, with HOME pointed inside it: the\n" +
			"project's and the user's real files are never read or written. The demo starts an MCP server\n" +
			"(streamable HTTP on 127.0.0.1, random port), names it in DIR/.mcp.json, and plays Claude Code:\n" +
			"for each tool call it feeds the hook events Claude Code would send to the real `hook` command,\n" +
			"makes the real MCP call unless the hook denied it, and prints what the model would be told.\n" +
			"The clock (MCP_CIRCUIT_NOW) is moved forward by the demo, so the cooldown passes at once.\n" +
			"It ends with a real probe and the report, and exits 1 if any step did not behave as expected,\n" +
			"so it doubles as a self-check of the installed binary.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "keep", Usage: "keep the temporary project directory (ledger, .mcp.json) and print its path"},
		},
		Action: action(e, parseDemo, runDemo),
	}
}

// demoOptions are the options of demo.
type demoOptions struct {
	globalOptions
	// Keep keeps the temporary project directory.
	Keep bool
}

func parseDemo(c *cli.Context) (*demoOptions, error) {
	g, err := parseGlobal(c)
	if err != nil {
		return nil, err
	}
	return &demoOptions{globalOptions: g, Keep: c.Bool("keep")}, noArgs(c)
}

// demoServerName is the server's name in .mcp.json, hence the tools mcp__demo__search and
// mcp__demo__fetch.
const demoServerName = "demo"

// demo is one run of the demo command.
type demo struct {
	e      *Env
	out    io.Writer
	dir    string // the temporary project directory
	home   string // HOME of every command the demo runs, inside dir
	now    time.Time
	srv    *demoServer
	client *demoClient

	session   string
	denyLines int // lines of a deny reason to show
	stepN     int // the step being played
	calls     int // tool calls the model made (denied ones included)
	checks    int
	failed    []string
}

func runDemo(opts *demoOptions, e *Env) error {
	start, err := e.now()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "mcp-circuit-breaker-demo-")
	if err != nil {
		return fmt.Errorf("demo: make the temporary project directory: %w", err)
	}
	// Symlinks resolved, so the paths printed are the ones the commands see.
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	keep := opts.Keep
	defer func() {
		if keep {
			fmt.Fprintf(e.Stdout, "\nKept the project directory (--keep): %s\n  ledger: %s\n", dir, filepath.Join(dir, project.StateDirName, ledger.FileName))
			return
		}
		os.RemoveAll(dir)
	}()
	d := &demo{e: e, out: e.Stdout, dir: dir, home: filepath.Join(dir, "home"), now: start.Truncate(time.Second),
		session: fmt.Sprintf("demo-%d", start.Unix())}
	if err := d.setup(); err != nil {
		return err
	}
	d.srv, err = startDemoServer()
	if err != nil {
		return err
	}
	defer d.srv.stop()
	d.client = &demoClient{url: d.srv.URL}
	defer d.client.close()
	if err := d.writeMCPConfig(); err != nil {
		return err
	}
	if err := d.script(context.Background()); err != nil {
		return err
	}
	if len(d.failed) > 0 {
		fmt.Fprintf(d.out, "\n✗ %d of %d checks failed:\n", len(d.failed), d.checks)
		for _, f := range d.failed {
			fmt.Fprintf(d.out, "  - %s\n", f)
		}
		return withHint(fmt.Errorf("demo: %d of %d checks failed: the circuit breaker did not behave as specified", len(d.failed), d.checks),
			"run 'mcp-circuit-breaker demo --keep' and read the ledger it keeps; please report this with the output")
	}
	fmt.Fprintf(d.out, "\n✓ all %d checks passed: failure → trip → block → half-open → close.\n", d.checks)
	return nil
}

// setup makes the project: a .gitignore that ignores the state directory (as install writes it),
// and an empty home, so that no ~/.claude.json of the user is read.
func (d *demo) setup() error {
	if err := os.MkdirAll(d.home, 0o700); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if err := os.WriteFile(filepath.Join(d.dir, ".gitignore"), []byte(project.StateDirName+"/\n"), 0o600); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	return nil
}

// writeMCPConfig names the server in DIR/.mcp.json, as `claude mcp add --scope project` does, so
// that probe and the report find it the way they find a user's servers.
func (d *demo) writeMCPConfig() error {
	cfg := map[string]any{"mcpServers": map[string]any{
		demoServerName: map[string]any{"type": "http", "url": d.srv.URL},
	}}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(d.dir, ".mcp.json"), append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("demo: write .mcp.json: %w", err)
	}
	// Approve it in the demo's own ~/.claude.json, as accepting Claude Code's prompt does: a
	// repository's server that is not approved is never probed (docs/probes.md).
	approval, err := json.Marshal(map[string]any{"projects": map[string]any{
		d.dir: map[string]any{"enabledMcpjsonServers": []string{demoServerName}},
	}})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(d.home, ".claude.json"), append(approval, '\n'), 0o600); err != nil {
		return fmt.Errorf("demo: write .claude.json: %w", err)
	}
	return nil
}

// script is the demo itself.
func (d *demo) script(ctx context.Context) error {
	search := string(ledger.ToolKey(demoServerName, "search"))
	fetch := string(ledger.ToolKey(demoServerName, "fetch"))
	query := map[string]any{"query": "circuit breaker"}

	d.printf("mcp-circuit-breaker demo: a real MCP server that fails on cue, guarded by the hook\n\n")
	d.printf("  project   %s (temporary, with HOME inside it; removed at the end unless --keep)\n", d.dir)
	d.printf("  server    %q: streamable HTTP at %s, tools search and fetch, named in .mcp.json\n", demoServerName, d.srv.URL)
	d.printf("  hooks     each event is the JSON Claude Code would send, fed to `mcp-circuit-breaker hook`\n")
	d.printf("  clock     MCP_CIRCUIT_NOW, starting at %s; the demo moves it forward, so the\n", d.stamp())
	d.printf("            60 s cooldown passes at once instead of in a minute of real time\n")

	d.step(1, "the server drops the connection; the model calls %s", search)
	d.srv.set(serveDrop)
	t, err := d.turn(ctx, search, query)
	if err != nil {
		return err
	}
	d.check(t.called && t.outcome.Error == "Connection closed", "step 1: the call fails with Connection closed")
	d.check(strings.Contains(t.postContext, "MCP tool "+search+" failed once (TIMEOUT). Monitoring."),
		"step 1: PostToolUseFailure answers \"failed once (TIMEOUT). Monitoring.\"")

	d.advance(5 * time.Second)
	d.step(2, "the server answers a JSON-RPC error; the model retries %s", search)
	d.srv.set(serveRPCError)
	if t, err = d.turn(ctx, search, query); err != nil {
		return err
	}
	d.check(t.called && t.outcome.Error == demoRPCErrorText, "step 2: the call fails with the JSON-RPC error's message")
	d.check(strings.Contains(t.postContext, "failed twice in a row"), "step 2: PostToolUseFailure escalates (failed twice in a row)")

	d.advance(5 * time.Second)
	d.step(3, "the tool answers an error result; the model retries %s once more", search)
	d.srv.set(serveErrorResult)
	if t, err = d.turn(ctx, search, query); err != nil {
		return err
	}
	d.check(t.called && t.outcome.Error == demoErrorResultText, "step 3: the call fails with the error result's text")
	d.check(strings.Contains(t.postContext, "⚡ CIRCUIT OPEN — "+string(ledger.ServerKey(demoServerName))),
		"step 3: the third failure trips the server circuit (⚡ CIRCUIT OPEN notice)")

	d.advance(10 * time.Second)
	d.denyLines = 20
	d.step(4, "the model tries %s again (the server is still failing)", search)
	if t, err = d.turn(ctx, search, query); err != nil {
		return err
	}
	d.check(t.denied && !t.called, "step 4: PreToolUse denies the call and it is not made")
	d.check(strings.Contains(t.reason, "CIRCUIT OPEN") && strings.Contains(t.reason, "Do not retry this tool"),
		"step 4: the deny reason has the notice and says not to retry")
	d.checkBlocked(1, "step 4")

	d.advance(5 * time.Second)
	d.denyLines = 4
	d.step(5, "the model switches to %s, a tool that never failed", fetch)
	if t, err = d.turn(ctx, fetch, map[string]any{"path": "half-open.md"}); err != nil {
		return err
	}
	d.check(t.denied && !t.called, "step 5: the server circuit denies every tool of the server")
	d.check(strings.Contains(t.reason, "blocked because the server circuit"), "step 5: the deny reason names the server circuit")
	d.checkBlocked(2, "step 5")

	openUntil, trippedAt := d.status()

	d.srv.set(serveHealthy)
	if openUntil.IsZero() {
		d.check(false, "status --json gives open_until for the server circuit")
		openUntil = d.now.Add(60 * time.Second)
	}
	jump := openUntil.Add(time.Second)
	if trippedAt.IsZero() {
		trippedAt = openUntil.Add(-60 * time.Second)
	}
	d.printf("\n  clock     %s → %s (MCP_CIRCUIT_NOW): %s after the trip, so its %s cooldown is over\n",
		d.now.UTC().Format("15:04:05"), jump.UTC().Format("15:04:05"), secs(jump.Sub(trippedAt)), secs(openUntil.Sub(trippedAt)))
	d.printf("            without waiting; the server is switched back to healthy\n")
	d.now = jump
	d.step(6, "the model calls %s again", search)
	if t, err = d.turn(ctx, search, query); err != nil {
		return err
	}
	d.check(!t.denied && strings.Contains(t.preContext, "HALF-OPEN trial"), "step 6: PreToolUse grants the single HALF-OPEN trial")
	d.check(t.called && t.outcome.Error == "", "step 6: the trial call succeeds")
	d.check(strings.Contains(t.postContext, "CLOSED") && strings.Contains(t.postContext, "probe_success"),
		"step 6: PostToolUse closes the circuit (reset_method: probe_success)")
	d.checkClosed()

	d.advance(5 * time.Second)
	d.section("mcp-circuit-breaker probe --server " + demoServerName + "   (a real MCP handshake: initialize, tools/list)")
	out, errOut, code := d.cli(nil, "probe", "--server", demoServerName, "--dir", d.dir)
	d.block(errOut + out)
	d.check(code == 0 && strings.Contains(out, "healthy"), "probe: the handshake with the server succeeds (exit 0)")

	d.section("mcp-circuit-breaker report")
	out, errOut, code = d.cli(nil, "report", "--dir", d.dir)
	d.block(errOut + out)
	d.check(code == 0 && strings.Contains(out, "| Tool | State | Failures | Tripped | Reset |"), "report: prints the skill's table")

	d.printf("\n  %d tool calls by the model: %d reached the server, the gate kept the other %d from it.\n",
		d.calls, d.srv.calls.Load(), d.calls-int(d.srv.calls.Load()))
	return nil
}

// turnResult is what happened to one tool call of the model.
type turnResult struct {
	denied      bool
	reason      string // the deny reason
	preContext  string // PreToolUse additionalContext (the half-open trial)
	called      bool
	outcome     callOutcome
	postContext string // PostToolUse(Failure) additionalContext
}

// turn plays Claude Code for one tool call: PreToolUse; when it is not denied, the MCP call; then
// PostToolUse with the content array, or PostToolUseFailure with the error text.
func (d *demo) turn(ctx context.Context, tool string, input map[string]any) (turnResult, error) {
	var t turnResult
	d.calls++
	id := fmt.Sprintf("toolu_demo_%02d", d.calls)
	ev := d.event("PreToolUse", tool, input, id)
	a, ok := d.hook(ev)
	if !ok {
		return t, nil
	}
	if s := a.HookSpecificOutput; s != nil && s.PermissionDecision == "deny" {
		t.denied, t.reason = true, s.PermissionDecisionReason
		d.label("PreToolUse", "DENIED: the call is not made; a blocked entry is appended to the ledger")
		d.label("model sees", clipLines(t.reason, d.denyLines))
		return t, nil
	}
	if s := a.HookSpecificOutput; s != nil && s.AdditionalContext != "" {
		t.preContext = s.AdditionalContext
		d.label("PreToolUse", "allowed, with context")
		d.label("model sees", clipLines(t.preContext, 6))
	} else {
		d.label("PreToolUse", "allowed (nothing recorded for this tool: no output, nothing written)")
	}
	began := time.Now()
	o, err := d.client.call(ctx, ledger.Key(tool).Tool(), input)
	if err != nil {
		return t, err
	}
	t.called, t.outcome = true, o
	d.label("tools/call", clipLines(o.What, 1))
	ev["duration_ms"] = time.Since(began).Milliseconds()
	if o.Error == "" {
		ev["hook_event_name"] = "PostToolUse"
		ev["tool_response"] = o.Content
		d.label("PostToolUse", clipLines("tool_response: "+string(o.Content), 1))
	} else {
		ev["hook_event_name"] = "PostToolUseFailure"
		ev["error"], ev["is_interrupt"] = o.Error, false
		d.label("PostToolUseFailure", clipLines(fmt.Sprintf("error: %q", o.Error), 1))
	}
	if a, ok = d.hook(ev); !ok {
		return t, nil
	}
	if s := a.HookSpecificOutput; s != nil && s.AdditionalContext != "" {
		t.postContext = s.AdditionalContext
		d.label("model sees", clipLines(t.postContext, 13))
	} else {
		d.label("model sees", "(nothing: the hook had nothing to add)")
	}
	return t, nil
}

// event is a tool event as Claude Code sends it (docs/hook.md).
func (d *demo) event(name, tool string, input map[string]any, id string) map[string]any {
	return map[string]any{
		"session_id":      d.session,
		"transcript_path": filepath.Join(d.home, ".claude", "projects", "demo", d.session+".jsonl"),
		"cwd":             d.dir,
		"permission_mode": "default",
		"hook_event_name": name,
		"tool_name":       tool,
		"tool_input":      input,
		"tool_use_id":     id,
		"mcp_server":      map[string]any{"name": demoServerName, "source": "project"},
	}
}

// hook runs `mcp-circuit-breaker hook` with ev on stdin. A hook that exits non-zero, writes to
// stderr or prints something that is not an answer fails a check: Claude Code would let the call
// through silently.
func (d *demo) hook(ev map[string]any) (agent.ClaudeAnswer, bool) {
	var a agent.ClaudeAnswer
	in, err := json.Marshal(ev)
	if err != nil {
		d.check(false, "encode the hook event: "+err.Error())
		return a, false
	}
	out, errOut, code := d.cli(in, "hook", "--dir", d.dir)
	name := ev["hook_event_name"]
	if errOut != "" {
		d.label("hook stderr", strings.TrimSpace(errOut))
	}
	d.check(code == 0 && errOut == "", fmt.Sprintf("step %d: the %s hook exits 0 and writes nothing on stderr (got exit %d, stderr %q)",
		d.stepN, name, code, project.Clip(errOut, 200)))
	if strings.TrimSpace(out) == "" {
		return a, true
	}
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		d.check(false, fmt.Sprintf("step %d: the %s hook's answer is JSON (%v)", d.stepN, name, err))
		return a, false
	}
	return a, true
}

// cli runs one command of this binary in-process, in the demo's project, home and clock.
func (d *demo) cli(stdin []byte, args ...string) (stdout, stderr string, code int) {
	var out, errOut bytes.Buffer
	code = run(append([]string{"mcp-circuit-breaker"}, args...), bytes.NewReader(stdin), &out, &errOut, d.getenv)
	return out.String(), errOut.String(), code
}

// getenv is the environment of the commands the demo runs: only what it sets, so that nothing of
// the user's (a CLAUDE_CONFIG_DIR, shadow mode, another project directory) leaks in.
func (d *demo) getenv(k string) string {
	switch k {
	case "MCP_CIRCUIT_DIR", "CLAUDE_PROJECT_DIR":
		return d.dir
	case "HOME":
		return d.home
	case "MCP_CIRCUIT_NOW":
		return d.now.UTC().Format(time.RFC3339)
	case "NO_COLOR":
		return d.e.Getenv(k)
	}
	return ""
}

// status prints `status` as a person would see it and returns the server circuit's open_until
// and tripped_at from `status --json`.
func (d *demo) status() (openUntil, trippedAt time.Time) {
	d.section("mcp-circuit-breaker status   (what a person sees meanwhile)")
	out, errOut, code := d.cli(nil, "status", "--dir", d.dir)
	d.block(errOut + out)
	d.check(code == 0 && strings.Contains(out, "OPEN"), "status: lists the OPEN circuit")
	js, _, code := d.cli(nil, "status", "--json", "--dir", d.dir)
	var st struct {
		Circuits []struct {
			Tool      string  `json:"tool"`
			OpenUntil *string `json:"open_until"`
			TrippedAt *string `json:"tripped_at"`
		} `json:"circuits"`
	}
	if code != 0 || json.Unmarshal([]byte(js), &st) != nil {
		d.check(false, "status --json: prints the circuits as JSON")
		return
	}
	for _, c := range st.Circuits {
		if c.Tool != string(ledger.ServerKey(demoServerName)) {
			continue
		}
		if c.OpenUntil != nil {
			openUntil, _ = time.Parse(time.RFC3339Nano, *c.OpenUntil)
		}
		if c.TrippedAt != nil {
			trippedAt, _ = time.Parse(time.RFC3339Nano, *c.TrippedAt)
		}
	}
	return openUntil, trippedAt
}

// entries reads the demo's ledger.
func (d *demo) entries() []ledger.Entry {
	l := ledger.Ledger{Dir: filepath.Join(d.dir, project.StateDirName), Slow: yamlfile.Item}
	es, err := l.ReadAll()
	if err != nil {
		d.check(false, "the ledger parses: "+err.Error())
	}
	return es
}

// checkBlocked checks that the ledger holds n blocked entries.
func (d *demo) checkBlocked(n int, step string) {
	got := 0
	for _, en := range d.entries() {
		if en.Event == ledger.EventBlocked {
			got++
		}
	}
	d.label("ledger", fmt.Sprintf("blocked entries: %d (one per deny: the report counts them as calls saved)", got))
	d.check(got == n, fmt.Sprintf("%s: blocked entries in the ledger: want %d, got %d", step, n, got))
}

// checkClosed checks that the server circuit's last entry closed it after a trial.
func (d *demo) checkClosed() {
	key := string(ledger.ServerKey(demoServerName))
	var last *ledger.Entry
	es := d.entries()
	for i := range es {
		if es[i].Tool == key {
			last = &es[i]
		}
	}
	ok := last != nil && last.State == ledger.Closed && last.ResetMethod == ledger.ResetProbeSuccess
	if ok {
		d.label("ledger", fmt.Sprintf("%s CLOSED at %s, reset_method: %s", key, last.ResetAt.UTC().Format(time.RFC3339), last.ResetMethod))
	}
	d.check(ok, "step 6: the ledger's last entry for "+key+" is CLOSED with reset_method probe_success")
}

// check counts one expectation and remembers it when it failed.
func (d *demo) check(ok bool, what string) {
	d.checks++
	if !ok {
		d.failed = append(d.failed, what)
		d.label("✗ UNEXPECTED", what)
	}
}

func (d *demo) advance(by time.Duration) { d.now = d.now.Add(by) }

func (d *demo) stamp() string { return d.now.UTC().Format(time.RFC3339) }

func (d *demo) printf(format string, args ...any) { fmt.Fprintf(d.out, format, args...) }

func (d *demo) step(n int, format string, args ...any) {
	d.stepN = n
	d.printf("\nstep %d  %s  %s\n", n, d.now.UTC().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func (d *demo) section(title string) {
	d.printf("\n── %s\n", title)
}

// label prints one labelled line of a step; continuation lines are aligned under the text.
func (d *demo) label(name, text string) {
	for i, l := range strings.Split(text, "\n") {
		switch {
		case i == 0:
			d.printf("        %-19s %s\n", name, l)
		case l == "":
			d.printf("\n")
		default:
			d.printf("%28s%s\n", "", l)
		}
	}
}

// block prints a command's output, indented.
func (d *demo) block(s string) {
	s = strings.TrimRight(s, "\n")
	for _, l := range strings.Split(s, "\n") {
		if l == "" {
			d.printf("\n")
			continue
		}
		d.printf("   %s\n", l)
	}
}

// clipLines keeps the first n lines of s, saying how many were left out, and wraps long lines so
// that the output stays readable in a terminal.
func clipLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	more := len(lines) - n
	if more > 0 {
		lines = lines[:n]
	}
	var out []string
	for _, l := range lines {
		out = append(out, wrap(l, demoWidth)...)
	}
	if more > 0 {
		out = append(out, fmt.Sprintf("… (%d more lines)", more))
	}
	return strings.Join(out, "\n")
}

// demoWidth is the width of the text column of a step's lines.
const demoWidth = 90

// wrap breaks s at spaces into lines of at most width runes (a longer word stays whole).
func wrap(s string, width int) []string {
	var lines []string
	for len([]rune(s)) > width {
		r := []rune(s)
		cut := strings.LastIndex(string(r[:width+1]), " ")
		if cut <= 0 {
			cut = strings.Index(s, " ")
			if cut < 0 {
				break
			}
		}
		lines = append(lines, s[:cut])
		s = strings.TrimLeft(s[cut:], " ")
	}
	return append(lines, s)
}

// secs prints a duration in whole seconds, as "61 s".
func secs(d time.Duration) string { return fmt.Sprintf("%d s", int(d.Round(time.Second)/time.Second)) }
