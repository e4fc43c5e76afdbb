package settings

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
func WriteFile(name string, data []byte, mode fs.FileMode) (err error) {
	dir := filepath.Dir(name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(name)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	// Chmod, not the umask-filtered create mode: an existing file keeps exactly its mode.
	if err = f.Chmod(mode); err != nil {
		return err
	}
	if _, err = f.Write(data); err != nil {
		return err
	}
	// Sync before rename: otherwise a crash may leave a zero-length file under the final name.
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), name); err != nil {
		return err
	}
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
