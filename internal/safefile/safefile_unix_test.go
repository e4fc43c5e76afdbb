//go:build unix

package safefile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOpenRegularRefuses checks that every kind of file other than a regular one is refused
// without following it or blocking on it, with an error naming the path and the kind.
func TestOpenRegularRefuses(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(dir, "outside.txt")
	os.WriteFile(outside, []byte("secret"), 0o600)
	tests := []struct {
		name string
		make func(p string) error
		want string // the kind named in the error
	}{
		{"link to a file", func(p string) error { return os.Symlink(outside, p) }, "a symbolic link"},
		{"dangling link", func(p string) error { return os.Symlink(filepath.Join(dir, "nowhere"), p) }, "a symbolic link"},
		{"link to /dev/zero", func(p string) error { return os.Symlink("/dev/zero", p) }, "a symbolic link"},
		{"fifo", func(p string) error { return syscall.Mkfifo(p, 0o600) }, "a FIFO"},
		{"directory", func(p string) error { return os.Mkdir(p, 0o700) }, "a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.NewReplacer(" ", "_", "/", "_").Replace(tt.name))
			if err := tt.make(p); err != nil {
				t.Fatal(err)
			}
			for _, flag := range []int{os.O_RDONLY, os.O_WRONLY | os.O_APPEND | os.O_CREATE, os.O_RDWR | os.O_CREATE} {
				f, err := OpenRegular(p, flag, 0o600)
				if err == nil {
					f.Close()
					t.Fatalf("flag %#x: opened", flag)
				}
				var ue *UnsafeFileError
				if !errors.As(err, &ue) || !errors.Is(err, ErrUnsafeFile) || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("flag %#x: error %v, want an UnsafeFileError naming %s as %s", flag, err, p, tt.want)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "nowhere")); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a link's target was created")
			}
			if b, _ := os.ReadFile(outside); string(b) != "secret" {
				t.Errorf("the link's target was written: %q", b)
			}
		})
	}
}

// TestReadBounded checks the size cap and that a followed link must still reach a regular file.
func TestReadBounded(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "small.json")
	os.WriteFile(small, []byte("{}"), 0o600)
	link := filepath.Join(dir, "link.json")
	os.Symlink(small, link)
	zero := filepath.Join(dir, "zero.json")
	os.Symlink("/dev/zero", zero)
	if b, err := ReadBounded(link, 10); err != nil || string(b) != "{}" {
		t.Errorf("ReadBounded(link to a small file) = %q, %v", b, err)
	}
	if _, err := ReadRegular(link, 10); !errors.Is(err, ErrUnsafeFile) {
		t.Errorf("ReadRegular follows a link: %v", err)
	}
	if _, err := ReadBounded(zero, 10); !errors.Is(err, ErrUnsafeFile) || !strings.Contains(err.Error(), "a device") {
		t.Errorf("ReadBounded(/dev/zero) = %v, want a device refused", err)
	}
	if _, err := ReadBounded(small, 1); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), small) {
		t.Errorf("ReadBounded past the cap = %v, want ErrTooLarge naming the file", err)
	}
	if _, err := ReadBounded(filepath.Join(dir, "missing"), 10); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v, want fs.ErrNotExist", err)
	}
}

// TestStateDir checks that the state directory and .claude are never created or used through a
// link, and that a missing directory is made with mode 0700.
func TestStateDir(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	// .claude is a link: nothing may be created beneath its target.
	os.Symlink(outside, filepath.Join(root, ".claude"))
	sd := filepath.Join(root, ".claude", "mcp_circuit")
	if _, err := MakeStateDir(sd); !errors.Is(err, ErrUnsafeFile) {
		t.Fatalf("MakeStateDir through a linked .claude: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "mcp_circuit")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("created beneath the link's target")
	}
	os.Remove(filepath.Join(root, ".claude"))
	made, err := MakeStateDir(sd)
	if err != nil || !made {
		t.Fatalf("MakeStateDir = %v, %v", made, err)
	}
	if fi, _ := os.Stat(sd); fi.Mode().Perm() != 0o700 {
		t.Errorf("mode %o, want 0700", fi.Mode().Perm())
	}
	if made, err := MakeStateDir(sd); err != nil || made {
		t.Errorf("second MakeStateDir = %v, %v", made, err)
	}
	// The state directory itself replaced by a link.
	os.Remove(sd)
	os.Symlink(outside, sd)
	if err := CheckStateDir(sd); !errors.Is(err, ErrUnsafeFile) {
		t.Errorf("CheckStateDir(link) = %v", err)
	}
}

// TestMakeStateDirNeedsTheProject: the state directory and .claude are made, never the project
// directory above them: a mistyped --dir must not make a tree out of nothing.
func TestMakeStateDirNeedsTheProject(t *testing.T) {
	root := t.TempDir()
	sd := filepath.Join(root, "no", "such", "dir", ".claude", "mcp_circuit")
	if made, err := MakeStateDir(sd); err == nil || made || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("MakeStateDir under a missing project = %v, %v", made, err)
	}
	if _, err := os.Stat(filepath.Join(root, "no")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the missing project directory was created")
	}
	if made, err := MakeStateDir(filepath.Join(root, ".claude", "mcp_circuit")); err != nil || !made {
		t.Fatalf("MakeStateDir in an existing project = %v, %v", made, err)
	}
}
