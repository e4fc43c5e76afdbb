package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/skill"
)

// TestSkillCommandsExist reads the embedded SKILL.md, parses its frontmatter, and checks that every
// command it tells the model to run is listed in the binary's help: a skill that names a command
// the binary lacks sends the model into an error loop of its own.
func TestSkillCommandsExist(t *testing.T) {
	meta, err := skill.Frontmatter()
	if err != nil {
		t.Fatalf("skill frontmatter: %v", err)
	}
	if meta.Name != "mcp-circuit-breaker" {
		t.Errorf("skill name = %q", meta.Name)
	}
	cmds := skill.Commands()
	if len(cmds) < 10 {
		t.Fatalf("skill names only %d commands: %v", len(cmds), cmds)
	}
	dir := t.TempDir()
	help := map[string]string{}
	helpOf := func(parent string) string {
		if h, ok := help[parent]; ok {
			return h
		}
		args := []string{"help"}
		if parent != "" {
			args = []string{parent, "--help"}
		}
		out, code := runCLI(t, dir, nil, args...)
		if code != 0 {
			t.Fatalf("help %q exited %d", parent, code)
		}
		help[parent] = out
		return out
	}
	for _, c := range cmds {
		parts := strings.Fields(c)
		parent, name := "", parts[0]
		if len(parts) > 1 {
			if h := helpOf(""); !regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(parts[0]) + `\b`).MatchString(h) {
				t.Errorf("skill names %q but the binary's help lists no %q command", c, parts[0])
				continue
			}
			parent, name = parts[0], parts[1]
		}
		if !regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(name) + `\b`).MatchString(helpOf(parent)) {
			t.Errorf("skill names %q, which the binary's help does not list", c)
		}
	}
}
