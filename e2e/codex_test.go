package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/testservers"
)

// codexHome writes the project's CODEX_HOME: config.toml with the fake model provider (the
// Responses API at apiURL) and the cue fixture as MCP server "fix".
func (p *agentProject) codexHome(t *testing.T, apiURL string, toolTimeoutS int) string {
	t.Helper()
	home := filepath.Join(p.home, ".codex")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if toolTimeoutS == 0 {
		toolTimeoutS = p.timeoutMS(20000) / 1000
	}
	config := fmt.Sprintf(`model = "gpt-5"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "workspace-write"

[model_providers.fake]
name = "fake"
base_url = %q
wire_api = "responses"
env_key = "FAKE_OPENAI_KEY"
request_max_retries = 0
stream_max_retries = 0
`, apiURL+"/v1")
	for _, srv := range p.servers() {
		config += fmt.Sprintf(`
[mcp_servers.%q]
command = %q
args = ["cue"]
env = { %s = %q }
tool_timeout_sec = %d
startup_timeout_sec = 20
`, srv, p.h.fixture, testservers.CallLogEnv, p.callLogOf(srv), toolTimeoutS)
	}
	name := filepath.Join(home, "config.toml")
	config += codexConfigEnd
	if b, err := os.ReadFile(name); err == nil {
		// Keep what install wrote (hooks trust state) after ours; a session before this one wrote
		// ours already.
		old := string(b)
		if _, rest, ok := strings.Cut(old, codexConfigEnd); ok {
			old = rest
		}
		config += "\n" + old
	}
	if err := os.WriteFile(name, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	return home
}

// codexConfigEnd ends the part of config.toml that codexHome writes.
const codexConfigEnd = "# end of the e2e test's configuration\n"

// codexSession runs `codex exec` in the project against a fake Responses API that plays turns,
// with the hooks' clock at now.
func (p *agentProject) codexSession(t *testing.T, codex, now string, turns [][]scriptCall) (*fakeOpenAI, session) {
	t.Helper()
	const final = "Done."
	api, srv := newFakeOpenAI(t, turns, final)
	home := p.codexHome(t, srv.URL, 0)
	env := append(append([]string(nil), p.env...), "CODEX_HOME="+home, "FAKE_OPENAI_KEY=sk-fake", "MCP_CIRCUIT_NOW="+now)
	args := append([]string{"exec", "--json", "--skip-git-repo-check"}, p.codexFlags...)
	s := runAgent(t, p.dir, env, "codex exec --json", func() { t.Log(api.dump()) },
		codex, append(args, "use the fix tools")...)
	t.Logf("codex exec (%d turns, MCP_CIRCUIT_NOW=%s): %s", len(turns), now, s.took.Round(time.Millisecond))
	if !strings.Contains(s.stdout, final) {
		t.Errorf("the session did not end with the scripted answer %q", final)
	}
	return api, s
}

// codexHooks wires our hook for Codex with the real `mcp-circuit-breaker install --agent codex`:
// the user's hooks.json in the project's CODEX_HOME, and each handler trusted by its hash in
// config.toml (Codex skips an untrusted hook without a word, so a wrong hash fails the test).
func (p *agentProject) codexHooks(t *testing.T) {
	t.Helper()
	p.install(t, "codex", "--scope", "user")
}

const codexDenyPrefix = "Tool call blocked by PreToolUse hook: ⚡ CIRCUIT OPEN — "

// TestCodexGate drives the real Codex CLI (codex exec, pinned by scripts/install-test-deps codex)
// against a fake Responses API and the cue fixture: the model calls echo four times, each call
// fails with a rate limit. Codex runs no hook after a failed call, so the gate reads each failure
// from the session transcript at the next PreToolUse: the third trips the circuits there, and the
// fourth call is denied before it reaches the server, with our reason in what the model reads.
func TestCodexGate(t *testing.T) {
	skipShort(t, "drives a real agent client end to end")
	codex := installAgent(t, "codex")
	h := buildOurs(t)
	t.Run("server name with a dash", func(t *testing.T) {
		t.Parallel()
		codexServerNameWithDash(t, codex, h)
	})
	t.Run("parallel calls", func(t *testing.T) {
		t.Parallel()
		codexParallel(t, codex, h)
	})
	t.Run("project scope in a trusted project", func(t *testing.T) {
		t.Parallel()
		codexProjectScope(t, codex, h)
	})
	p := newAgentProject(t, h)
	p.codexHooks(t)
	call := scriptCall{echoTool, cue(quotaError)}
	api, _ := p.codexSession(t, codex, t0, [][]scriptCall{{call}, {call}, {call}, {call}})
	logResults(t, api, 4)

	for i, want := range map[int]string{2: "failed once (RATE_LIMIT)", 3: "failed twice in a row (RATE_LIMIT"} {
		r, ok := api.result(i)
		if !ok || !strings.Contains(r.Text, quotaError) || !strings.Contains(r.Beside, want) {
			t.Errorf("call %d: output %q with context %q; want the server's error, and our %q about the call before it", i, r.Text, r.Beside, want)
		}
	}
	r, ok := api.result(4)
	if !ok || !strings.HasPrefix(r.Text, codexDenyPrefix+serverKey+"\n") || !strings.Contains(r.Text, "Do not retry this tool") {
		t.Errorf("call 4 was not denied with our reason: %q", r.Text)
	}
	if calls := p.calls(t); len(calls) != 3 {
		t.Errorf("the MCP server received %d calls (%q), want 3", len(calls), calls)
	}
	var failures, blocked []string
	for _, e := range p.ledger(t) {
		switch e.Event {
		case "failure", "trip":
			if e.Tool == echoTool {
				failures = append(failures, e.ToolUseID)
			}
		case "blocked":
			blocked = append(blocked, e.ToolUseID)
		}
	}
	if !slices.Equal(failures, []string{callID(1), callID(2), callID(3)}) || !slices.Equal(blocked, []string{callID(4)}) {
		t.Errorf("the ledger has failures of %q and blocked calls %q; want each of the 3 failed calls once and the 4th blocked", failures, blocked)
	}
}

// logResults logs what the model read of calls 1…n.
func logResults(t *testing.T, api *fakeOpenAI, n int) {
	t.Helper()
	for i := 1; i <= n; i++ {
		r, _ := api.result(i)
		t.Logf("call %d: the model read:\n%s\n-- beside it:\n%s", i, r.Text, r.Beside)
	}
}

// codexServerNameWithDash: Codex writes server "fix-b" as fix_b in tool names (mcp__fix_b__echo),
// Claude Code as fix-b. The gate finds the real name in Codex's config.toml, so the failures it
// reads from the transcript and the deny of the fourth call are on mcp__fix-b__echo, the circuit
// Claude Code's calls to that tool meet.
func codexServerNameWithDash(t *testing.T, codex string, h *harness) {
	p := newAgentProject(t, h)
	p.server = "fix-b"
	p.codexHooks(t)
	call := scriptCall{"mcp__fix_b__echo", cue(quotaError)}
	api, _ := p.codexSession(t, codex, t0, [][]scriptCall{{call}, {call}, {call}, {call}})
	logResults(t, api, 4)
	if r, ok := api.result(4); !ok || !strings.HasPrefix(r.Text, codexDenyPrefix+"mcp__fix-b__*\n") {
		t.Errorf("call 4 was not denied by the circuit of fix-b: %q", r.Text)
	}
	keys := map[string]int{}
	for _, e := range p.ledger(t) {
		keys[e.Tool]++
	}
	if keys["mcp__fix-b__echo"] != 3 || keys["mcp__fix-b__*"] == 0 || len(keys) != 2 {
		t.Errorf("ledger entries by key: %v; want 3 of mcp__fix-b__echo and the server's mcp__fix-b__*", keys)
	}
	if calls := p.calls(t); len(calls) != 3 {
		t.Errorf("the MCP server received %d calls, want 3", len(calls))
	}
}

// codexParallel: three failing calls in one model turn run in parallel, with their PreToolUse
// hooks at the same time; the next turn's PreToolUse finds all three failures in the transcript,
// records each once, and the call is denied.
func codexParallel(t *testing.T, codex string, h *harness) {
	p := newAgentProject(t, h)
	p.codexHooks(t)
	call := scriptCall{echoTool, cue(quotaError)}
	api, _ := p.codexSession(t, codex, t0, [][]scriptCall{{call, call, call}, {call}})
	logResults(t, api, 4)
	if r, ok := api.result(4); !ok || !strings.HasPrefix(r.Text, codexDenyPrefix+serverKey+"\n") {
		t.Errorf("the call after three parallel failures was not denied: %q", r.Text)
	}
	var ids []string
	for _, e := range p.ledger(t) {
		if e.Tool == echoTool && (e.Event == "failure" || e.Event == "trip") {
			ids = append(ids, e.ToolUseID)
		}
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{callID(1), callID(2), callID(3)}) {
		t.Errorf("the tool's failures in the ledger are %q, want each of the three parallel calls once", ids)
	}
	if calls := p.calls(t); len(calls) != 3 {
		t.Errorf("the MCP server received %d calls, want 3", len(calls))
	}
}

// codexProjectScope: install --agent codex --scope project writes .codex/hooks.json and trusts its
// handlers by hash in the user's config.toml; once the user trusts the project in Codex, its hooks
// run and the fourth failing call is denied.
func codexProjectScope(t *testing.T, codex string, h *harness) {
	p := newAgentProject(t, h)
	_, msgs := p.install(t, "codex", "--scope", "project")
	if !strings.Contains(msgs, "only in a project it trusts") {
		t.Errorf("install did not say that Codex reads the project's hooks only in a trusted project:\n%s", msgs)
	}
	// The user's own step: trust the project.
	cfg := filepath.Join(p.home, ".codex", "config.toml")
	old, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, append(old, fmt.Sprintf("\n[projects.%q]\ntrust_level = \"trusted\"\n", p.dir)...), 0o600); err != nil {
		t.Fatal(err)
	}
	call := scriptCall{echoTool, cue(quotaError)}
	api, _ := p.codexSession(t, codex, t0, [][]scriptCall{{call}, {call}, {call}, {call}})
	if r, ok := api.result(4); !ok || !strings.HasPrefix(r.Text, codexDenyPrefix+serverKey+"\n") {
		t.Errorf("call 4 was not denied by the project's hooks: %q", r.Text)
	}
	if calls := p.calls(t); len(calls) != 3 {
		t.Errorf("the MCP server received %d calls, want 3", len(calls))
	}
}
