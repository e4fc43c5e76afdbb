package settings

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/safefile"
)

// Target resolves where a write to name lands. A symlink is followed on purpose to the file it
// names, so that a settings file kept in a dotfiles repository stays a link; a link to a missing
// file, or a path that is not a regular file, is refused. It returns the path to write, the mode
// to give it (the existing file's, else newMode) and whether the file exists.
func Target(name string, newMode fs.FileMode) (path string, mode fs.FileMode, exists bool, err error) {
	fi, err := os.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return name, newMode, false, nil
	}
	if err != nil {
		return "", 0, false, err
	}
	path = name
	if fi.Mode()&fs.ModeSymlink != 0 {
		path, err = filepath.EvalSymlinks(name)
		if err != nil {
			return "", 0, false, fmt.Errorf("%s is a symlink whose target cannot be resolved: %w", name, err)
		}
		if fi, err = os.Stat(path); err != nil {
			return "", 0, false, err
		}
	}
	if !fi.Mode().IsRegular() {
		return "", 0, false, fmt.Errorf("%s is not a regular file (%s)", path, fi.Mode().Type())
	}
	return path, fi.Mode().Perm(), true, nil
}

// WriteFile replaces name with data atomically: a synced temporary file in the same directory,
// given mode, renamed over name, then the directory synced. A crash leaves the old file or the new
// one, never a mix. Missing parent directories are created with mode 0755. name must already be
// resolved with [Target]: a rename over a symlink would replace the link itself.
func WriteFile(name string, data []byte, mode fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	return safefile.WriteFileAtomic(name, data, mode)
}
