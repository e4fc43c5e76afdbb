package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// kiloSession runs `kilo run` (Kilo Code CLI, opencode's fork) in the project against a fake Chat
// Completions API that plays turns, with the hooks' clock at now: the project's kilo.json has
// opencode's shape (provider "fake", the cue fixture as local MCP server "fix"), and the KILO_*
// variables turn off what opencode's OPENCODE_* ones turn off, and Kilo's own network features.
func (p *agentProject) kiloSession(t *testing.T, kilo, now string, turns [][]scriptCall) (*fakeOpenAI, session) {
	t.Helper()
	const final = "Done."
	api, srv := newFakeOpenAI(t, turns, final)
	p.opencodeConfig(t, "kilo.json", srv.URL)
	env := append(slices.Clip(p.env), "TERM=dumb", "KILO_DISABLE_MODELS_FETCH=1", "KILO_DISABLE_AUTOUPDATE=1",
		"KILO_DISABLE_SHARE=1", "KILO_TELEMETRY_LEVEL=off", "KILO_NO_DAEMON=1", "MCP_CIRCUIT_NOW="+now)
	s := runAgent(t, p.dir, env, "kilo run --format json", func() { t.Log(api.dump()) },
		kilo, "run", "--format", "json", "-m", "fake/fake-model", "use the fix tools")
	t.Logf("kilo run (%d turns, MCP_CIRCUIT_NOW=%s): %s", len(turns), now, s.took.Round(time.Millisecond))
	if !strings.Contains(s.stdout, `"text":"`+final+`"`) {
		t.Errorf("the run did not end with the scripted answer %q", final)
	}
	return api, s
}

// kiloDriver drives Kilo Code CLI through the scenarios: opencode's plugin, installed with
// --agent kilo, and opencode's tool names.
func kiloDriver(kilo string) agentDriver {
	d := opencodeDriver("", "")
	d.name = "kilo"
	d.builtin = func(path string) scriptCall { return scriptCall{"read", fmt.Sprintf(`{"filePath":%q}`, path)} }
	d.setup = func(t *testing.T, p *agentProject) { p.install(t, "kilo", "--scope", "user") }
	d.session = func(t *testing.T, p *agentProject, now string, turns [][]scriptCall) modelResults {
		api, _ := p.kiloSession(t, kilo, now, turns)
		return api
	}
	return d
}
