package skill

import (
	"errors"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// specCommands are the commands of docs/cli.md: the only names the skill may
// tell the model to run.
var specCommands = []string{
	"check", "classify", "demo", "doctor", "fallbacks", "hook", "install",
	"ledger compact", "ledger repair", "ledger verify", "policy show", "probe",
	"record", "report", "reset", "servers", "status", "success", "trip",
	"uninstall",
}

// specFlags are the flags docs/cli.md gives those commands.
var specFlags = []string{
	"--all", "--code", "--dir", "--dry-run", "--error", "--format", "--help",
	"--include-project", "--json", "--mcp-config", "--output", "--retry-after", "--scope",
	"--server", "--session", "--since", "--status", "--type", "--version",
}

// claudeCodeKeys are the SKILL.md frontmatter keys Claude Code accepts
// (docs/hook.md).
var claudeCodeKeys = []string{
	"name", "description", "when_to_use", "argument-hint", "arguments",
	"disable-model-invocation", "user-invocable", "allowed-tools",
	"disallowed-tools", "model", "effort", "context", "agent", "background",
	"hooks", "paths", "shell", "metadata", "license", "compatibility",
}

func TestFrontmatter(t *testing.T) {
	m, err := Frontmatter()
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "mcp-circuit-breaker" {
		t.Errorf("name = %q, want mcp-circuit-breaker", m.Name)
	}
	if d := strings.TrimSpace(m.Description); d == "" || len(d) >= 1024 {
		t.Errorf("description is %d bytes, want 1..1023", len(d))
	}
	for _, phrase := range []string{"MCP failing", "circuit-breaker", "MCP timeout", "CIRCUIT OPEN"} {
		if !strings.Contains(m.Description, phrase) {
			t.Errorf("description lacks trigger phrase %q", phrase)
		}
	}
	if !slices.Contains(m.Tools(), "Bash(mcp-circuit-breaker *)") {
		t.Errorf("allowed-tools = %q, want it to contain Bash(mcp-circuit-breaker *)", m.Tools())
	}
	if m.UserInvocable == nil || !*m.UserInvocable {
		t.Error("user-invocable is not true")
	}
}

func TestFrontmatterKeys(t *testing.T) {
	front, _, err := split(Text())
	if err != nil {
		t.Fatal(err)
	}
	var keys map[string]any
	if err := yaml.Unmarshal([]byte(front), &keys); err != nil {
		t.Fatal(err)
	}
	for k := range keys {
		if !slices.Contains(claudeCodeKeys, k) {
			t.Errorf("frontmatter key %q is not one Claude Code accepts", k)
		}
	}
}

func TestLength(t *testing.T) {
	if n := strings.Count(Text(), "\n"); n >= 500 {
		t.Errorf("SKILL.md has %d lines, want under 500", n)
	}
}

func TestCommands(t *testing.T) {
	got := Commands()
	if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
		t.Errorf("Commands() = %q, want sorted and deduplicated", got)
	}
	for _, c := range got {
		if !slices.Contains(specCommands, c) {
			t.Errorf("skill names command %q, which docs/cli.md does not have", c)
		}
	}
	for _, want := range []string{
		"check", "classify", "doctor", "fallbacks", "install", "ledger repair",
		"ledger verify", "probe", "record", "report", "reset", "servers",
		"status", "success",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("Commands() = %q, missing %q", got, want)
		}
	}
}

func TestFlags(t *testing.T) {
	_, body, err := split(Text())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range regexp.MustCompile(`(?:^|\s|\x60)(--[a-z][a-z-]*)`).FindAllStringSubmatch(body, -1) {
		seen[f[1]] = true
	}
	for f := range seen {
		if !slices.Contains(specFlags, f) {
			t.Errorf("skill uses flag %s, which docs/cli.md does not have", f)
		}
	}
}

// TestContent pins what the rewrite must keep from the seed skill.
func TestContent(t *testing.T) {
	notice := "⚡ CIRCUIT OPEN — {tool}\n" +
		"Failure type: {TYPE}  |  Consecutive failures: {N}\n" +
		"Further calls to this tool are blocked until circuit resets.\n"
	for _, want := range []string{
		notice,
		"no project/user-scope config found",
		"never \"no MCP mounted\"",
		"`ADMIN_GATED` is not a retry case",
		".claude/mcp_circuit/circuit_log.yaml",
		"Never hand-append",
		"MCP_CIRCUIT_FAIL_OPEN=1",
		"PreToolUse",
		"discipline",
		"credential scope", "audit parity", "behaviour gap",
		"Gating carries over",
		"CLOSED", "OPEN", "HALF-OPEN",
		"60 s", "10 min",
		"## Done when",
	} {
		if !strings.Contains(Text(), want) {
			t.Errorf("SKILL.md lacks %q", want)
		}
	}
	for _, typ := range []string{"TIMEOUT", "AUTH", "NOT_FOUND", "MALFORMED", "RATE_LIMIT", "ADMIN_GATED", "UNKNOWN"} {
		if !strings.Contains(Text(), "| `"+typ+"` |") {
			t.Errorf("failure types table lacks %s", typ)
		}
	}
	for _, step := range []string{"Step 1.", "Step 2.", "Step 3.", "Step 4.", "Step 5.", "Step 6."} {
		if !strings.Contains(Text(), "## "+step) {
			t.Errorf("SKILL.md lacks section %q", step)
		}
	}
}

func TestTools(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   any
		want []string
	}{
		{"list", []any{"Bash(mcp-circuit-breaker *)", "Read"}, []string{"Bash(mcp-circuit-breaker *)", "Read"}},
		{"space string", "Bash(mcp-circuit-breaker *) Read", []string{"Bash(mcp-circuit-breaker *)", "Read"}},
		{"comma string", "Bash(mcp-circuit-breaker *), Read", []string{"Bash(mcp-circuit-breaker *)", "Read"}},
		{"absent", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := (Meta{AllowedTools: tc.in}).Tools(); !slices.Equal(got, tc.want) {
				t.Errorf("Tools() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCommand(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
	}{
		{"record mcp__s__t --error x", "record"},
		{"--dir /tmp status", "status"},
		{"--json ledger verify", "ledger verify"},
		{"policy show", "policy show"},
		{"ledger", "ledger"},
		{"*)", ""},
		{"", ""},
	} {
		if got := command(strings.Fields(tc.in)); got != tc.want {
			t.Errorf("command(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		in, front, body string
		err             error
	}{
		{"---\nname: x\n---\nbody\n", "name: x\n", "body\n", nil},
		{"---\r\nname: x\r\n---\r\nbody\r\n", "name: x\n", "body\n", nil},
		{"---\n---\nbody\n", "", "body\n", nil},
		{"# no frontmatter\n", "", "", ErrNoFrontmatter},
		{"---\nname: x\n", "", "", ErrNoFrontmatter},
	} {
		front, body, err := split(tc.in)
		if front != tc.front || body != tc.body || !errors.Is(err, tc.err) {
			t.Errorf("split(%q) = %q, %q, %v; want %q, %q, %v", tc.in, front, body, err, tc.front, tc.body, tc.err)
		}
	}
}
