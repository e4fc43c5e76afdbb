package settings

import (
	"bytes"

	"github.com/rogpeppe/go-internal/diff"
)

// NoFile is the name a unified diff gives the missing side of a created or deleted file.
const NoFile = "/dev/null"

// Unified returns the unified diff (three lines of context) that turns a into b, with from and to
// as the file names of the --- and +++ lines. It is "" when a and b are equal. The diff is
// go-internal's anchored diff (O(n log n), unique lines anchor the matches); its leading
// "diff from to" line is dropped so that the output starts like diff -u.
func Unified(from, to string, a, b []byte) string {
	d := diff.Diff(from, a, to, b)
	_, rest, _ := bytes.Cut(d, []byte("\n"))
	return string(rest)
}
