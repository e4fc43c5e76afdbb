package project

import (
	"os"
	"path/filepath"
	"testing"
)

// TestOutsideWorkTree: a file of the user's that lies in the project's git work tree (the nearest
// directory at or above the project that holds a .git) is refused, and so is the fleet-identity
// cache there; elsewhere both are used.
func TestOutsideWorkTree(t *testing.T) {
	root := t.TempDir()
	repo := filepath.Join(root, "work")
	proj := filepath.Join(repo, "svc")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	for path, refused := range map[string]bool{
		filepath.Join(repo, ".local", "state", "k"): true,
		filepath.Join(proj, "k"):                    true,
		filepath.Join(root, "home", "k"):            false,
		filepath.Join(root, "work2", "k"):           false, // a sibling whose name starts alike
	} {
		if err := OutsideWorkTree(path, proj); (err != nil) != refused {
			t.Errorf("OutsideWorkTree(%s): %v, want refused %v", path, err, refused)
		}
	}
	home := repo
	p := New(proj, func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}, nil, Decoder{})
	if got := p.derivedPath("fleet-ids"); got != "" {
		t.Errorf("HOME in the project's work tree: the fleet-identity cache is %s", got)
	}
	home = filepath.Join(root, "home")
	if got := p.derivedPath("fleet-ids"); got == "" {
		t.Error("HOME outside the work tree: no fleet-identity cache")
	}
}
