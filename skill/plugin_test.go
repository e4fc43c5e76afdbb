package skill

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPluginCopy keeps the Claude Code plugin's copy of the skill identical to the embedded one.
// The plugin ships a real file rather than a symlink because `claude plugin install` copies the
// plugin directory on its own, where a link out of it would dangle.
func TestPluginCopy(t *testing.T) {
	name := filepath.Join("..", "plugin", "skills", Binary, "SKILL.md")
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != Text() {
		t.Fatalf("%s differs from skill/SKILL.md: run 'cp skill/SKILL.md %s'", name, filepath.ToSlash(filepath.Join("plugin", "skills", Binary, "SKILL.md")))
	}
}
