package safefile

import (
	"io/fs"
	"os"
	"path/filepath"
)

// WriteFileAtomic replaces name with data through a synced temporary file in the same directory and a
// rename, then syncs the directory, so that a reader, or a machine that crashes, sees the old content or
// the new one, never a mix or an empty file. The file gets exactly mode (not filtered by the umask). A
// failed write removes the temporary file and leaves name as it was.
func WriteFileAtomic(name string, data []byte, mode fs.FileMode) error {
	return writeFile(name, data, mode, true)
}

// ReplaceFile replaces name with data through a temporary file and a rename, as WriteFileAtomic
// does, but syncs neither: a reader sees the old content or the new one, and a machine that
// crashes may leave the old one, or an empty or partial file. It is for state a reader treats as
// damaged and starts afresh, written on a hot path where two syncs would cost more than the
// work (the gate's pairs of calls, written before every call an agent makes).
func ReplaceFile(name string, data []byte, mode fs.FileMode) error {
	return writeFile(name, data, mode, false)
}

func writeFile(name string, data []byte, mode fs.FileMode, sync bool) (err error) {
	dir := filepath.Dir(name)
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
	if err = f.Chmod(mode); err != nil {
		return err
	}
	if _, err = f.Write(data); err != nil {
		return err
	}
	// Sync before rename: otherwise a crash may leave a zero-length file under the final name.
	if sync {
		if err = f.Sync(); err != nil {
			return err
		}
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), name); err != nil {
		return err
	}
	if !sync {
		return nil
	}
	if d, derr := os.Open(dir); derr == nil {
		d.Sync() // make the rename durable; not every file system supports it
		d.Close()
	}
	return nil
}
