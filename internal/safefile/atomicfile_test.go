package safefile

import (
	"os"
	"path/filepath"
	"testing"
)

// Both writers replace the whole file, with exactly the mode asked for (0640, which the temporary
// file's 0600 is not), and leave no temporary file behind, on success or when the rename fails.
func TestWriteFileAtomicAndReplaceFile(t *testing.T) {
	for _, w := range []struct {
		name  string
		write func(string, []byte, os.FileMode) error
	}{
		{"WriteFileAtomic", WriteFileAtomic},
		{"ReplaceFile", ReplaceFile},
	} {
		t.Run(w.name, func(t *testing.T) {
			dir := t.TempDir()
			name := filepath.Join(dir, "state.json")
			if err := os.WriteFile(name, []byte("an older and longer content\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := w.write(name, []byte("new\n"), 0o640); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(name)
			if err != nil || string(got) != "new\n" {
				t.Errorf("the file holds %q (%v), want %q", got, err, "new\n")
			}
			fi, err := os.Stat(name)
			if err != nil {
				t.Fatal(err)
			}
			if fi.Mode().Perm() != 0o640 {
				t.Errorf("the file's mode is %v, want 0640", fi.Mode().Perm())
			}
			// A directory in the file's place: the rename fails, and the temporary file goes.
			blocked := filepath.Join(dir, "blocked")
			if err := os.MkdirAll(filepath.Join(blocked, "x"), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := w.write(blocked, []byte("x"), 0o600); err == nil {
				t.Error("writing over a directory that is not empty succeeded")
			}
			ents, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(ents) != 2 {
				var names []string
				for _, e := range ents {
					names = append(names, e.Name())
				}
				t.Errorf("the directory holds %q, want only state.json and blocked", names)
			}
		})
	}
}
