package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// ringPolicy raises RATE_LIMIT's threshold to 4, one failure per agent of TestAgentRing.
const ringPolicy = "types:\n  RATE_LIMIT: {threshold: 4}\n"

// TestCodexTripsClaudeDenies runs two agents on one project: Codex CLI's calls to echo fail three
// times (the last failure read from its transcript by the Stop hook), which opens the circuits in
// the project's ledger; then a Claude Code session in the same project calls echo and is denied
// before the call reaches the server. One ledger, one canonical key, whichever agent met the
// failures.
func TestCodexTripsClaudeDenies(t *testing.T) {
	skipShort(t, "drives a real agent client end to end")
	codex := installAgent(t, "codex")
	claude := installClaude(t)
	h := buildOurs(t)
	h.claude = claude
	sp, p := claudeAndAgents(t, h, "")
	p.codexHooks(t)

	call := scriptCall{echoTool, cue(quotaError)}
	p.codexSession(t, codex, t0, [][]scriptCall{{call}, {call}, {call}})
	if out := p.cli(t, t0, "status"); !strings.Contains(out, serverKey) || !strings.Contains(out, "OPEN") {
		t.Fatalf("after Codex's three failures the circuits are not OPEN:\n%s", out)
	}

	api := sp.run(t, t0, [][]scriptCall{{{echoTool, `{}`}}})
	r := mustResult(t, api, 1)
	t.Logf("Claude Code's call: the model read:\n%s", r.Text)
	if !strings.HasPrefix(r.Text, "PreToolUse:"+echoTool+" hook error: ⚡ CIRCUIT OPEN — "+serverKey+"\n") {
		t.Errorf("Claude Code's call was not denied by the circuit Codex opened:\n%s", r.Text)
	}
	if calls := p.calls(t); len(calls) != 3 {
		t.Errorf("the MCP server received %d calls (%q), want Codex's 3 and not Claude Code's", len(calls), calls)
	}
}

// openIn returns the keys that status's table lists as OPEN.
func openIn(status string) []string {
	var keys []string
	for _, line := range strings.Split(status, "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[1] == "OPEN" {
			keys = append(keys, f[0])
		}
	}
	return keys
}

// claudeAndAgents makes one project with Claude Code's hooks installed in it (local scope) and
// policy, and the same project as the other agents see it, with a HOME of their own: both reach
// the cue fixture as server "fix" through one call log.
func claudeAndAgents(t *testing.T, h *harness, policy string) (*scenarioProject, *agentProject) {
	t.Helper()
	sp := h.newProject(t, policy, 0)
	p := &agentProject{h: h, root: sp.root, dir: sp.dir, home: filepath.Join(sp.root, "agents-home"),
		tmp: filepath.Join(sp.root, "tmp"), callLog: sp.callLog}
	if err := os.MkdirAll(p.home, 0o755); err != nil {
		t.Fatal(err)
	}
	p.env = []string{"HOME=" + p.home, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + p.tmp}
	return sp, p
}

// TestAgentRing: four agents in one project, each meeting one failure of echo (a rate limit, with
// arguments of its own so that the loop guard stays out of it): Claude Code, Codex CLI (read from
// its transcript), Kilo Code CLI (from its event bus, through opencode's plugin) and Factory Droid
// (from its transcript). With RATE_LIMIT's threshold at 4 the fourth, Droid's, opens the circuits;
// then Claude Code's next call of the server's other tool is denied before it reaches the server.
func TestAgentRing(t *testing.T) {
	skipShort(t, "drives real agent clients end to end")
	codex, kilo, droid := installAgent(t, "codex"), installAgent(t, "kilo"), installAgent(t, "droid")
	claude := installClaude(t)
	h := buildOurs(t)
	h.claude = claude
	sp, p := claudeAndAgents(t, h, ringPolicy)
	p.codexHooks(t)
	p.install(t, "kilo", "--scope", "user")
	p.install(t, "droid")

	fail := func(who string) string { return cue("upstream quota exceeded (" + who + ")") }
	sp.run(t, "2026-11-29T12:00:00Z", [][]scriptCall{{{echoTool, fail("claude")}}})
	p.codexSession(t, codex, "2026-11-29T12:00:05Z", [][]scriptCall{{{echoTool, fail("codex")}}})
	p.kiloSession(t, kilo, "2026-11-29T12:00:10Z", [][]scriptCall{{{"fix_echo", fail("kilo")}}})
	if out := p.cli(t, "2026-11-29T12:00:12Z", "status"); len(openIn(out)) > 0 {
		t.Fatalf("three failures opened a circuit of threshold 4:\n%s", out)
	}
	p.droidSession(t, droid, "2026-11-29T12:00:15Z", [][]scriptCall{{{"fix___echo", fail("droid")}}})
	if out := p.cli(t, "2026-11-29T12:00:17Z", "status"); !slices.Contains(openIn(out), serverKey) {
		t.Fatalf("after the four agents' failures the circuits are not OPEN:\n%s", out)
	}
	agents := map[string]bool{}
	for _, e := range p.ledger(t) {
		if e.Event == "failure" || e.Event == "trip" {
			agents[e.Error] = true
		}
	}
	for _, who := range []string{"claude", "codex", "kilo", "droid"} {
		if !agents["upstream quota exceeded ("+who+")"] {
			t.Errorf("the ledger has no failure of %s's call: %v", who, agents)
		}
	}

	api := sp.run(t, "2026-11-29T12:00:20Z", [][]scriptCall{{{otherTool, `{}`}}})
	r := mustResult(t, api, 1)
	t.Logf("Claude Code's call after the ring: the model read:\n%s", r.Text)
	if !strings.HasPrefix(r.Text, "PreToolUse:"+otherTool+" hook error: ⚡ CIRCUIT OPEN — "+serverKey+"\n") {
		t.Errorf("Claude Code's call was not denied by the circuit the four agents opened:\n%s", r.Text)
	}
	if calls := p.calls(t); len(calls) != 4 {
		t.Errorf("the MCP server received %d calls (%q), want the four agents' and not the denied one", len(calls), calls)
	}
}
