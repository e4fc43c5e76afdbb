// Package skill embeds the mcp-circuit-breaker SKILL.md that install writes to .claude/skills/mcp-circuit-breaker/.
//
// The file follows Claude Code's skill format: YAML frontmatter between two
// "---" lines, then a Markdown body. [Frontmatter] parses the first part and
// [Commands] lists the CLI commands the body tells the model to run, so the
// cmd package can check that each of them exists in the binary.
package skill

import (
	_ "embed"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

//go:embed SKILL.md
var text string

// Binary is the command name the skill invokes and the name its
// allowed-tools rule pre-approves.
const Binary = "mcp-circuit-breaker"

// ErrNoFrontmatter is returned when the skill text does not start with a
// "---" line followed by a closing "---" line.
var ErrNoFrontmatter = errors.New("no frontmatter")

// Text returns the embedded SKILL.md, byte for byte as install writes it.
func Text() string { return text }

// Meta is the skill's frontmatter. Keys are Claude Code's spelling.
type Meta struct {
	// Name is the display label; the command name is the directory name.
	Name string `yaml:"name"`
	// Description says what the skill does and when to use it.
	Description string `yaml:"description"`
	// ArgumentHint is shown after /name in the slash-command menu.
	ArgumentHint string `yaml:"argument-hint,omitempty"`
	// UserInvocable is nil when the key is absent (Claude Code's default is true).
	UserInvocable *bool `yaml:"user-invocable,omitempty"`
	// AllowedTools is a YAML list or a space- or comma-separated string, as
	// Claude Code accepts both; use [Meta.Tools] to read it.
	AllowedTools any `yaml:"allowed-tools,omitempty"`
}

// Tools returns the allowed-tools rules one per element, whichever form the
// frontmatter used. In the string form a separator inside parentheses is part
// of the rule, so "Bash(mcp-circuit-breaker *) Read" is two rules.
func (m Meta) Tools() []string {
	switch v := m.AllowedTools.(type) {
	case string:
		return splitRules(v)
	case []any:
		var out []string
		for _, e := range v {
			if s, ok := e.(string); ok && strings.TrimSpace(s) != "" {
				out = append(out, strings.TrimSpace(s))
			}
		}
		return out
	}
	return nil
}

// splitRules splits a permission-rule list on spaces and commas outside
// parentheses.
func splitRules(s string) []string {
	var out []string
	var cur strings.Builder
	depth := 0
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, cur.String())
			cur.Reset()
		}
	}
	for _, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case depth == 0 && (r == ' ' || r == ',' || r == '\t' || r == '\n'):
			flush()
			continue
		}
		cur.WriteRune(r)
	}
	flush()
	return out
}

// Frontmatter parses the embedded skill's YAML frontmatter.
func Frontmatter() (Meta, error) {
	front, _, err := split(text)
	if err != nil {
		return Meta{}, err
	}
	var m Meta
	if err := yaml.Unmarshal([]byte(front), &m); err != nil {
		return Meta{}, fmt.Errorf("parse skill frontmatter: %w", err)
	}
	return m, nil
}

// split separates the frontmatter (without its "---" lines) from the body.
func split(s string) (front, body string, err error) {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	rest, ok := strings.CutPrefix(s, "---\n")
	if !ok {
		return "", "", ErrNoFrontmatter
	}
	if end, ok := strings.CutPrefix(rest, "---\n"); ok {
		return "", end, nil
	}
	i := strings.Index(rest, "\n---\n")
	if i < 0 {
		return "", "", ErrNoFrontmatter
	}
	return rest[:i+1], rest[i+len("\n---\n"):], nil
}

var (
	// fence matches a fenced code block; group 1 is its content.
	fence = regexp.MustCompile("(?ms)^[ \t]*```[^\n]*\n(.*?)^[ \t]*```")
	// span matches an inline code span; group 1 is its content.
	span = regexp.MustCompile("`([^`\n]+)`")
	// invocation matches the binary name and the words that follow it on
	// the same line.
	invocation = regexp.MustCompile(`(?:^|[^\w.-])` + regexp.QuoteMeta(Binary) + `((?:[ \t]+[^\s;|&]+)*)`)
	// word is what a command name looks like.
	word = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
)

// groups are the commands whose first argument is a subcommand.
var groups = map[string]bool{"ledger": true, "policy": true}

// valueFlags are the global flags that take a value, so the value is not
// mistaken for the command when the flag precedes it.
var valueFlags = map[string]bool{"--dir": true}

// Commands returns every CLI command the skill's body tells the model to
// run, deduplicated and sorted: "record", "probe", and for the command
// groups "ledger verify" or "policy show". Only code (fenced blocks and
// inline spans) is read, so prose such as "the mcp-circuit-breaker skill"
// is not mistaken for a command.
func Commands() []string {
	_, body, err := split(text)
	if err != nil {
		body = text
	}
	var code []string
	for _, m := range fence.FindAllStringSubmatch(body, -1) {
		code = append(code, m[1])
	}
	for _, m := range span.FindAllStringSubmatch(fence.ReplaceAllString(body, ""), -1) {
		code = append(code, m[1])
	}
	seen := map[string]bool{}
	for _, c := range code {
		for _, m := range invocation.FindAllStringSubmatch(c, -1) {
			if cmd := command(strings.Fields(m[1])); cmd != "" {
				seen[cmd] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for c := range seen {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// command names the command in the arguments that follow the binary name,
// skipping leading global flags, or returns "" when there is none.
func command(args []string) string {
	for len(args) > 0 && strings.HasPrefix(args[0], "-") {
		if valueFlags[args[0]] && len(args) > 1 {
			args = args[1:]
		}
		args = args[1:]
	}
	if len(args) == 0 || !word.MatchString(args[0]) {
		return ""
	}
	if groups[args[0]] && len(args) > 1 && word.MatchString(args[1]) {
		return args[0] + " " + args[1]
	}
	return args[0]
}
