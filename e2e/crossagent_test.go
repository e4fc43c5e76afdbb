package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
	sp := h.newProject(t, "", 0) // Claude Code's hooks installed in the project (local scope)
	p := &agentProject{h: h, root: sp.root, dir: sp.dir, home: filepath.Join(sp.root, "codex-home"),
		tmp: filepath.Join(sp.root, "tmp"), callLog: sp.callLog}
	if err := os.MkdirAll(p.home, 0o755); err != nil {
		t.Fatal(err)
	}
	p.env = []string{"HOME=" + p.home, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + p.tmp}
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
