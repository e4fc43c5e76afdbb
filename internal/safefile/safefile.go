// Package safefile owns how the state directory's files are opened, read and replaced safely:
// never through a symbolic link, never a FIFO or a device, every read bounded by a size cap, every
// replacement atomic and synced. A cloned repository may plant any of these in .claude/.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Size caps for the files we read. A file past its cap is refused with [ErrTooLarge] rather than
// read into memory: a cloned repository may hold any file, and a gate that reads until memory runs
// out is a gate that never answers. The README's "Security model" section lists them.
const (
	// MaxStateBytes bounds derived state files: the snapshot state.json and the tools cache.
	MaxStateBytes = 16 << 20
	// MaxConfigBytes bounds small configuration files: policy.yaml, fallbacks.yaml, .mcp.json,
	// settings files, .gitignore and --mcp-config files.
	MaxConfigBytes = 4 << 20
	// MaxClaudeJSONBytes bounds ~/.claude.json, which Claude Code grows with per-project history.
	MaxClaudeJSONBytes = 64 << 20
)

// ErrUnsafeFile is returned (wrapped in an [*UnsafeFileError]) when a path that must be a regular
// file or a real directory is a symbolic link, a FIFO, a device, a socket or the wrong kind.
var ErrUnsafeFile = errors.New("not a regular file")

// ErrTooLarge is returned (wrapped in an [*UnsafeFileError]) when a file is larger than the cap
// its reader allows.
var ErrTooLarge = errors.New("file too large")

// UnsafeFileError names a path that was refused and why.
type UnsafeFileError struct {
	Path string
	// What describes the file found ("a symbolic link", "a FIFO", "larger than 4 MiB").
	What string
	// Want is what was expected: "a regular file" or "a directory".
	Want string
	Err  error
}

// Error says which path was refused, what it is and what it must be.
func (e *UnsafeFileError) Error() string {
	if errors.Is(e.Err, ErrTooLarge) {
		return fmt.Sprintf("%s is %s; refusing to read it (move it away or shrink it)", e.Path, e.What)
	}
	return fmt.Sprintf("%s is %s, not %s; refusing to use it (remove it: mcp-circuit-breaker never follows links or reads special files here)", e.Path, e.What, e.Want)
}

// Unwrap returns ErrUnsafeFile or ErrTooLarge.
func (e *UnsafeFileError) Unwrap() error { return e.Err }

// describe names the kind of file mode m is.
func describe(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	case m.IsRegular():
		return "a regular file"
	}
	return "a special file"
}

func unsafeFile(path string, m fs.FileMode, want string) error {
	return &UnsafeFileError{Path: path, What: describe(m), Want: want, Err: ErrUnsafeFile}
}

// OpenRegular opens name without following a symbolic link in its last component and without
// blocking on a FIFO or a device, and returns it only when it is a regular file; anything else is
// an [*UnsafeFileError] naming the path. flag and perm are as for os.OpenFile (O_CREATE creates a
// regular file; it never creates one through a link).
func OpenRegular(name string, flag int, perm fs.FileMode) (*os.File, error) {
	return openRegular(name, flag, perm, false)
}

func openRegular(name string, flag int, perm fs.FileMode, follow bool) (*os.File, error) {
	if err := preOpenCheck(name, follow); err != nil {
		return nil, err
	}
	extra := oNonblock
	if !follow {
		extra |= oNoFollow
	}
	f, err := os.OpenFile(name, flag|extra, perm)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, err // the common case of a missing optional file: no second look
	}
	if err != nil {
		// ELOOP (a link), ENXIO (a FIFO opened for writing without a reader), EISDIR: say what
		// the path is rather than the errno.
		stat := os.Lstat
		if follow && !isLinkLoop(err) {
			stat = os.Stat
		}
		if fi, serr := stat(name); serr == nil && !fi.Mode().IsRegular() {
			return nil, unsafeFile(name, fi.Mode(), "a regular file")
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, unsafeFile(name, fi.Mode(), "a regular file")
	}
	return f, nil
}

// ReadRegular reads a whole state file through [OpenRegular] (no link followed, no special file),
// refusing one larger than max bytes.
func ReadRegular(name string, max int64) ([]byte, error) {
	f, err := openRegular(name, os.O_RDONLY, 0, false)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readBounded(f, name, max)
}

// ReadBounded reads a whole file we do not own (a configuration file of Claude Code or of the
// repository). A symbolic link is followed, as Claude Code follows it, but what it reaches must be
// a regular file no larger than max bytes; a FIFO or a device is refused without blocking.
func ReadBounded(name string, max int64) ([]byte, error) {
	f, err := openRegular(name, os.O_RDONLY, 0, true)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readBounded(f, name, max)
}

func readBounded(f *os.File, name string, max int64) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > max {
		return nil, TooLarge(name, max)
	}
	// Read one byte past the cap: a file that grows while we read is still bounded. The buffer
	// holds the size stat gave and one byte more, so a file read whole takes two reads (its bytes,
	// then the end) and no copy: the hook reads its snapshot this way on every call.
	lr := io.LimitReader(f, max+1)
	data := make([]byte, 0, min(fi.Size(), max)+1)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)] // it grew since the stat
		}
		n, err := lr.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if int64(len(data)) > max {
		return nil, TooLarge(name, max)
	}
	return data, nil
}

// TooLarge is the error of a file name larger than max bytes.
func TooLarge(name string, max int64) error {
	return &UnsafeFileError{Path: name, What: "larger than " + sizeString(max), Err: ErrTooLarge}
}

func sizeString(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// CheckStateDir checks that dir and its parent (DIR/.claude/mcp_circuit and DIR/.claude), where
// they exist, are real directories and not symbolic links, so that nothing we create or append in
// dir lands outside the project. A missing directory is not an error.
func CheckStateDir(dir string) error {
	for _, d := range []string{filepath.Dir(dir), dir} {
		fi, err := os.Lstat(d)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			return unsafeFile(d, fi.Mode(), "a directory")
		}
	}
	return nil
}

// MakeStateDir creates dir (mode 0700) and its parent (0755) when missing, after [CheckStateDir];
// the directory above them (the project) must exist.
// Unlike os.MkdirAll it never creates through a symbolic link. It reports whether it created dir.
func MakeStateDir(dir string) (bool, error) {
	if err := CheckStateDir(dir); err != nil {
		return false, err
	}
	if _, err := os.Lstat(dir); err == nil {
		return false, nil
	}
	parent := filepath.Dir(dir)
	if _, err := os.Lstat(parent); errors.Is(err, fs.ErrNotExist) {
		// One level only: the project directory itself must exist. A mistyped --dir or a
		// planted CLAUDE_PROJECT_DIR must never make a tree (os.MkdirAll would).
		if err := os.Mkdir(parent, 0o755); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return false, fmt.Errorf("create state directory: the project directory %s does not exist: %w", filepath.Dir(parent), err)
			}
			if !errors.Is(err, fs.ErrExist) {
				return false, fmt.Errorf("create state directory: %w", err)
			}
		}
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return false, fmt.Errorf("create state directory: %w", err)
	}
	// A link planted between the check and the Mkdir makes Mkdir fail with EEXIST; check again.
	if err := CheckStateDir(dir); err != nil {
		return false, err
	}
	return true, nil
}

// LstatRegular returns the file info of name without following a link; a name that exists and is
// not a regular file is an [*UnsafeFileError].
func LstatRegular(name string) (fs.FileInfo, error) {
	fi, err := os.Lstat(name)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, unsafeFile(name, fi.Mode(), "a regular file")
	}
	return fi, nil
}
