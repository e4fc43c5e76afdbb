package userenv

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkLoad is what the hook pays for the environment's files on every MCP event: a project
// four folders deep with no dotenv file, the settings files and every agent's walk to the root.
func BenchmarkLoad(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "src", "proj")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	env := map[string]string{"CLAUDE_PROJECT_DIR": dir, "HOME": "/no-home", "PATH": "/usr/bin"}
	for b.Loop() {
		e := New(func(k string) string { return env[k] })
		_ = e.Notice()
	}
}
