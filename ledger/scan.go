package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// chunkSize is how much of the ledger a streaming read holds at once: memory stays flat whatever
// the ledger's size.
const chunkSize = 1 << 20

// isItemStart reports whether the line at the start of l starts a list item ("- " or a bare "-").
func isItemStart(l []byte) bool {
	return len(l) > 0 && l[0] == '-' && (len(l) == 1 || l[1] == ' ' || l[1] == '\n' || l[1] == '\r')
}

// Stream reads the items of the ledger from offset (an item boundary) to its end, a chunk of whole
// items at a time, calling fn with each chunk (atEnd for the one that runs to the file's end); it stops early, at an item boundary, when stop
// returns true (checked between chunks). It returns the offset it read to. The end is read like
// ReadSettled: an append in progress there is left out, and settled says whether the lock could
// be taken to tell; a locked caller passes locked, and then every byte is read.
func (l *Ledger) Stream(offset int64, locked bool, stop func() bool, fn func(chunk []byte, atEnd bool) error) (end int64, settled bool, err error) {
	f, err := l.Open()
	if errors.Is(err, os.ErrNotExist) {
		return 0, true, nil
	}
	if err != nil {
		return offset, false, fmt.Errorf("open ledger: %w", err)
	}
	defer f.Close()
	id, err := StatFile(f)
	if err != nil {
		return offset, false, err
	}
	pos := offset
	buf := make([]byte, chunkSize)
	for id.Size-pos > chunkSize {
		if stop != nil && stop() {
			return pos, true, nil
		}
		n, err := f.ReadAt(buf, pos)
		if err != nil && err != io.EOF {
			return pos, false, fmt.Errorf("read ledger: %w", err)
		}
		chunk := buf[:n]
		cut := lastItemStart(chunk)
		if cut == 0 {
			// One item longer than a chunk: read it whole.
			next, err := nextItemStart(f, pos+int64(n), id.Size)
			if err != nil {
				return pos, false, err
			}
			chunk = make([]byte, next-pos)
			if _, err := f.ReadAt(chunk, pos); err != nil && err != io.EOF {
				return pos, false, fmt.Errorf("read ledger: %w", err)
			}
			cut = len(chunk)
		}
		if err := fn(chunk[:cut], false); err != nil {
			return pos, false, err
		}
		pos += int64(cut)
	}
	var tail []byte
	settled = true
	// The end is read from f, the file streamed so far, not reopened by path.
	read := func(off int64) ([]byte, FileID, error) { return l.tailOf(f, off) }
	if locked {
		tail, _, err = read(pos)
	} else {
		tail, _, settled, err = l.settledTail(read, pos)
	}
	if err != nil {
		return pos, false, err
	}
	if len(tail) > 0 {
		if err := fn(tail, true); err != nil {
			return pos, false, err
		}
	}
	return pos + int64(len(tail)), settled, nil
}

// ScanForward calls fn with the raw bytes of each item of the ledger from offset (an item
// boundary) on, in file order, with the item's offset, until fn returns false or the end. Like
// ScanBack it holds a chunk at a time and parses nothing: it is for a reader that looks at few
// items (a key's first line) among many. The last item is passed as read, complete or not.
func (l *Ledger) ScanForward(offset int64, fn func(off int64, item []byte) bool) error {
	f, err := l.Open()
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("open ledger: %w", err)
	}
	defer f.Close()
	id, err := StatFile(f)
	if err != nil {
		return err
	}
	buf := make([]byte, chunkSize)
	for pos := offset; pos < id.Size; {
		n, err := f.ReadAt(buf[:min(int64(len(buf)), id.Size-pos)], pos)
		if err != nil && err != io.EOF {
			return fmt.Errorf("read ledger: %w", err)
		}
		if n == 0 {
			return nil
		}
		chunk := buf[:n]
		cut := len(chunk)
		if pos+int64(n) < id.Size {
			if cut = lastItemStart(chunk); cut == 0 {
				// One item longer than a chunk: read it whole.
				next, err := nextItemStart(f, pos+int64(n), id.Size)
				if err != nil {
					return err
				}
				chunk = make([]byte, next-pos)
				if _, err := f.ReadAt(chunk, pos); err != nil && err != io.EOF {
					return fmt.Errorf("read ledger: %w", err)
				}
				cut = len(chunk)
			}
		}
		base := pos
		if !ScanItems(chunk[:cut], func(off int, item []byte) bool { return fn(base+int64(off), item) }) {
			return nil
		}
		pos += int64(cut)
	}
	return nil
}

// ScanItems calls fn with each item of data (which starts at an item boundary) and its offset in
// data, in order, until fn returns false; it reports whether it got to the end. Nothing is parsed.
func ScanItems(data []byte, fn func(off int, item []byte) bool) bool {
	start := 0
	for i := 0; ; {
		j := indexLineDash(data, i)
		if j < 0 {
			break
		}
		i = j + 1
		if isItemStart(data[i:]) {
			if i > start && !fn(start, data[start:i]) {
				return false
			}
			start = i
		}
	}
	return len(data) == start || fn(start, data[start:])
}

// nextItemStart returns the offset of the first item start at or after from, or size.
func nextItemStart(f *os.File, from, size int64) (int64, error) {
	buf := make([]byte, 64<<10)
	prev := byte('x')
	if from > 0 {
		var b [1]byte
		if _, err := f.ReadAt(b[:], from-1); err != nil {
			return 0, fmt.Errorf("read ledger: %w", err)
		}
		prev = b[0]
	}
	for pos := from; pos < size; {
		n, err := f.ReadAt(buf, pos)
		if err != nil && err != io.EOF {
			return 0, fmt.Errorf("read ledger: %w", err)
		}
		if n == 0 {
			break
		}
		for i := 0; i < n; i++ {
			if prev == '\n' && isItemStart(buf[i:n]) {
				return pos + int64(i), nil
			}
			prev = buf[i]
		}
		pos += int64(n)
	}
	return size, nil
}

// ScanBack calls fn with the raw bytes of each item of the ledger, from the last one back to the
// first one that starts at or after base (an item boundary), until fn returns false. It reads the
// file backwards a chunk at a time, so finding the newest entries of a key costs what lies after
// them, and memory stays flat. A last item that is incomplete (an append in progress, or torn) is
// passed like any other: the caller's parse decides.
func (l *Ledger) ScanBack(base int64, fn func(item []byte) bool) error {
	_, err := l.ScanBackAt(base, func(_ int64, item []byte) bool { return fn(item) })
	return err
}

// ScanBackAt is ScanBack that also passes each item's offset, and returns the identity of the file
// it read (its Size is where the scan started; zero when there is no ledger), so that what a caller
// derives from the items can be keyed to exactly those bytes.
func (l *Ledger) ScanBackAt(base int64, fn func(off int64, item []byte) bool) (FileID, error) {
	f, err := l.Open()
	if errors.Is(err, os.ErrNotExist) {
		return FileID{}, nil
	}
	if err != nil {
		return FileID{}, fmt.Errorf("open ledger: %w", err)
	}
	defer f.Close()
	id, err := StatFile(f)
	if err != nil {
		return FileID{}, err
	}
	return id, scanBack(f, id.Size, base, chunkSize, fn, l.Prefetch)
}

// scanBack is ScanBackAt on f of size bytes, reading chunk bytes at a time; prefetch, when set, is
// shown the items of each chunk before they are handed out.
func scanBack(f *os.File, size, base, chunk int64, fn func(off int64, item []byte) bool, prefetch func([]byte)) error {
	pos := size
	// buf[lo:hi] holds the bytes from pos to the start of the last item handed out: each chunk
	// is read in front of them, so an item longer than a chunk is read once, not copied again
	// for every chunk it spans (a buffer too small is doubled, which keeps that linear).
	buf := make([]byte, 2*chunk)
	lo, hi := len(buf), len(buf)
	var starts []int
	for pos > base {
		n := int(min(chunk, pos-base))
		pos -= int64(n)
		if lo < n {
			carried := hi - lo
			nb := buf
			if len(buf) < carried+n {
				nb = make([]byte, 2*(carried+n))
			}
			copy(nb[len(nb)-carried:], buf[lo:hi])
			buf, lo, hi = nb, len(nb)-carried, len(nb)
		}
		lo -= n
		if _, err := f.ReadAt(buf[lo:lo+n], pos); err != nil && err != io.EOF {
			return fmt.Errorf("read ledger: %w", err)
		}
		data := buf[lo:hi]
		// Find the item starts forwards, then hand the items out backwards. Only the new
		// chunk and the first byte after it can hold a start not yet handed out. The first
		// byte of data starts an item only at base: otherwise the byte before it is in the next
		// chunk back, and that item is completed there.
		starts = starts[:0]
		if pos == base && isItemStart(data) {
			starts = append(starts, 0)
		}
		search := data[:min(n+1, len(data))]
		for i := 0; ; {
			j := indexLineDash(search, i)
			if j < 0 {
				break
			}
			i = j + 1
			if isItemStart(data[i:]) {
				starts = append(starts, i)
			}
		}
		end := len(data)
		if prefetch != nil && len(starts) > 0 {
			prefetch(data[starts[0]:])
		}
		for k := len(starts) - 1; k >= 0; k-- {
			i := starts[k]
			if !fn(pos+int64(i), data[i:end]) {
				return nil
			}
			end = i
		}
		hi = lo + end
	}
	return nil
}

// indexLineDash returns the index of the first "\n-" in data at or after i, or -1. It searches 64
// bytes at a time: on a slice that short bytes.Index runs the vectorized search for the pair,
// where on a long one it stops at every newline (one every 27 bytes or so in a ledger), which
// made finding the items half the cost of reading a million-entry ledger backwards.
func indexLineDash(data []byte, i int) int {
	for i < len(data)-1 {
		end := min(i+64, len(data))
		if j := bytes.Index(data[i:end], []byte("\n-")); j >= 0 {
			return i + j
		}
		i = end - 1
	}
	return -1
}

// ItemTool returns the tool key of an item (a slice of item, not a copy: a scan compares it
// without allocating) written the way Encode writes it (first line
// "- tool: KEY" with a plain value), so that a scan can pass over other keys' items without
// parsing them; ok is false for any other shape, which must be parsed to be known.
func ItemTool(item []byte) (key []byte, ok bool) {
	rest, found := bytes.CutPrefix(item, []byte("- tool: "))
	if !found {
		return nil, false
	}
	if i := bytes.IndexByte(rest, '\n'); i >= 0 {
		rest = rest[:i]
	} else {
		return nil, false
	}
	rest = bytes.TrimRight(rest, " \t\r")
	if len(rest) == 0 || rest[0] == '"' || rest[0] == '\'' || bytes.Contains(rest, []byte(" #")) {
		return nil, false
	}
	return rest, true
}

// EndsInsideLine reports whether the ledger's last byte is not a newline (a hand edit without the
// final newline, a write cut short): then Seal would write. It reads one byte without the lock,
// so that a reader that only needs Seal in that rare case (the detached catch-up, which runs at a
// low priority) does not take the lock that every hook's append waits for.
func (l *Ledger) EndsInsideLine() (bool, error) {
	f, err := l.Open()
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("open ledger: %w", err)
	}
	defer f.Close()
	id, err := StatFile(f)
	if err != nil || id.Size == 0 {
		return false, err
	}
	var last [1]byte
	if _, err := f.ReadAt(last[:], id.Size-1); err != nil {
		return false, fmt.Errorf("read ledger end: %w", err)
	}
	return last[0] != '\n', nil
}
