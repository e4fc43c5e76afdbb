package agent

// Kilo Code CLI's codec: Kilo Code's CLI (`kilo`, npm @kilocode/cli) is a fork of opencode and runs
// opencode's plugins unchanged, so the gate's opencode plugin serves it too; only its directories
// differ (docs/agents.md).

import (
	"io"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
)

// Kilo is Kilo Code CLI's codec. Kilo Code 7.7.9 loads plugins from {plugin,plugins}/*.{ts,js} in
// ~/.config/kilo/, ~/.kilo/, the project's .kilo/ (and the legacy .kilocode/), and $KILO_CONFIG_DIR;
// never from .opencode/. It fires opencode's plugin hooks and bus events and names MCP tools
// <server>_<tool> as opencode does, so its events are the opencode plugin's, sent with --agent kilo.
var Kilo Codec = kilo{}

type kilo struct{ opencode }

func (kilo) Name() string { return "kilo" }

func (kilo) Title() string { return "Kilo Code CLI" }

func (kilo) Setup() Setup {
	set := opencode{}.Setup()
	set.Scopes = []Scope{userScope("plugin/mcp-circuit-breaker.js"), projectScope(".kilo/plugin/mcp-circuit-breaker.js")}
	set.ConfigDirEnv, set.HomeDir = "KILO_CONFIG_DIR", ".config/kilo"
	set.Binaries = []string{"kilo", "kilocode"}
	return set
}

func (kilo) Decode(r io.Reader, _ gate.Servers, _ func(gate.Event)) (gate.Event, error) {
	return decodeOpencode("kilo", r)
}
