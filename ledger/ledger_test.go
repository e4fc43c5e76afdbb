package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func sampleEntry(i int) Entry {
	at := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second)
	return Entry{Tool: fmt.Sprintf("mcp__s%d__t", i%7), State: Closed, FailureType: Timeout, FailureCount: i%3 + 1,
		Event: EventFailure, At: at, Server: fmt.Sprintf("s%d", i%7), Cause: "deadline",
		Error: "tool call timed out after 30s", Source: SourceCLI}
}

func TestAppendModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".claude", "mcp_circuit")
	l := &Ledger{Slow: testSlow, Dir: dir}
	made, err := l.EnsureDir()
	if err != nil || !made {
		t.Fatalf("EnsureDir: %v %v", made, err)
	}
	if made, err := l.EnsureDir(); err != nil || made {
		t.Fatalf("EnsureDir again: %v %v", made, err)
	}
	unlock, err := l.Lock()
	if err != nil {
		t.Fatal(err)
	}
	before, after, err := l.Append(sampleEntry(1), sampleEntry(2))
	unlock()
	if err != nil || before != 0 || after != int64(len(Encode(sampleEntry(1)))+len(Encode(sampleEntry(2)))) {
		t.Fatalf("Append: %d %d %v", before, after, err)
	}
	for name, want := range map[string]os.FileMode{dir: 0o700, l.Path(): 0o600, filepath.Join(dir, lockFileName): 0o600} {
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		// The umask can only remove bits; nothing may be group- or world-accessible.
		if fi.Mode().Perm()&^want != 0 {
			t.Errorf("%s: mode %o, want %o", name, fi.Mode().Perm(), want)
		}
	}
	entries, err := l.ReadAll()
	if err != nil || len(entries) != 2 || !sameEntry(entries[1], sampleEntry(2)) {
		t.Fatalf("ReadAll: %+v %v", entries, err)
	}
	// Appending nothing writes nothing and reports the size.
	if b, a, err := l.Append(); err != nil || b != after || a != after {
		t.Errorf("Append(): %d %d %v", b, a, err)
	}
}

func TestLockTimeout(t *testing.T) {
	l := &Ledger{Slow: testSlow, Dir: t.TempDir(), LockWait: 50 * time.Millisecond}
	unlock, err := l.Lock()
	if err != nil {
		t.Fatal(err)
	}
	// Another holder (a second open file description, as another process has) waits, then fails.
	start := time.Now()
	var wg sync.WaitGroup
	var err2 error
	wg.Go(func() {
		other := &Ledger{Slow: testSlow, Dir: l.Dir, LockWait: 50 * time.Millisecond}
		_, err2 = other.Lock()
	})
	wg.Wait()
	waited := time.Since(start)
	if !errors.Is(err2, ErrLockTimeout) {
		t.Fatalf("second Lock: %v, want ErrLockTimeout", err2)
	}
	if waited < 50*time.Millisecond || waited > 2*time.Second {
		t.Errorf("waited %s for a 50ms bound", waited)
	}
	if !strings.Contains(err2.Error(), l.Path()) {
		t.Errorf("the error does not name the ledger: %v", err2)
	}
	// Once released, the lock is free again.
	unlock()
	unlock2, err := (&Ledger{Slow: testSlow, Dir: l.Dir, LockWait: 50 * time.Millisecond}).Lock()
	if err != nil {
		t.Fatalf("Lock after unlock: %v", err)
	}
	unlock2()
}

// TestLockHeldByProcess holds the lock in another process (this test binary, re-run as a helper)
// and checks that the wait is bounded.
func TestLockHeldByProcess(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperHoldLock$")
	cmd.Env = append(os.Environ(), "LEDGER_TEST_HOLD_LOCK="+dir)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		cmd.Wait()
	}()
	buf := make([]byte, 6)
	if _, err := stdout.Read(buf); err != nil || string(buf) != "locked" {
		t.Fatalf("helper: %q %v", buf, err)
	}
	l := &Ledger{Slow: testSlow, Dir: dir, LockWait: 100 * time.Millisecond}
	if _, err := l.Lock(); !errors.Is(err, ErrLockTimeout) {
		t.Fatalf("Lock while another process holds it: %v, want ErrLockTimeout", err)
	}
	stdin.Close() // the helper exits; the kernel releases its lock
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper: %v", err)
	}
	l.LockWait = 5 * time.Second
	unlock, err := l.Lock()
	if err != nil {
		t.Fatalf("Lock after the holder exited: %v", err)
	}
	unlock()
}

// TestHelperHoldLock is the other process of TestLockHeldByProcess: it takes the lock, says
// "locked", and holds it until its stdin closes.
func TestHelperHoldLock(t *testing.T) {
	dir := os.Getenv("LEDGER_TEST_HOLD_LOCK")
	if dir == "" {
		t.Skip("helper process for TestLockHeldByProcess")
	}
	unlock, err := (&Ledger{Slow: testSlow, Dir: dir}).Lock()
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("locked")
	var b [1]byte
	os.Stdin.Read(b[:])
	unlock()
}

// TestFailedAppendKeepsLength makes a write fail part way, as a full disk does, with RLIMIT_FSIZE:
// the kernel writes what fits under the limit and then fails with EFBIG, so AppendRaw must cut the
// partial item back. (A full tmpfs is not available here; a read-only directory does not stop root,
// which these tests may run as, so the size limit is what works everywhere.)
func TestFailedAppendKeepsLength(t *testing.T) {
	l := newLedger(t, string(Encode(sampleEntry(1))))
	fi, _ := os.Stat(l.Path())
	size := fi.Size()

	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Skipf("skipping: getrlimit: %v", err)
	}
	signal.Ignore(syscall.SIGXFSZ) // else exceeding the limit kills the process
	defer signal.Reset(syscall.SIGXFSZ)
	lim := old
	lim.Cur = uint64(size) + 100
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		t.Skipf("skipping: setrlimit: %v", err)
	}
	buf := Encode(sampleEntry(2))
	buf = append(buf, Encode(sampleEntry(3))...)
	before, after, err := l.AppendRaw(buf)
	if rerr := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); rerr != nil {
		t.Fatalf("restore rlimit: %v", rerr)
	}
	if err == nil {
		t.Fatalf("AppendRaw past the size limit succeeded")
	}
	if !errors.Is(err, syscall.EFBIG) {
		t.Errorf("error %v, want EFBIG", err)
	}
	if before != size || after != size {
		t.Errorf("AppendRaw reported sizes %d→%d, want %d→%d", before, after, size, size)
	}
	fi, _ = os.Stat(l.Path())
	if fi.Size() != size {
		t.Fatalf("ledger is %d bytes after the failed append, want %d (a partial item was left)", fi.Size(), size)
	}
	if _, err := l.ReadAll(); err != nil {
		t.Errorf("ledger after the failed append: %v", err)
	}
}

// TestAppendReadOnlyDir appends where the ledger cannot be created. Root ignores directory
// permissions, so the test is skipped when running as root.
func TestAppendReadOnlyDir(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("skipping: running as root, which ignores a read-only directory's mode")
	}
	l := &Ledger{Slow: testSlow, Dir: t.TempDir()}
	if err := os.Chmod(l.Dir, 0o500); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(l.Dir, 0o700)
	if _, _, err := l.AppendRaw(Encode(sampleEntry(1))); err == nil {
		t.Fatal("AppendRaw in a read-only directory succeeded")
	}
	if _, err := os.Stat(l.Path()); !os.IsNotExist(err) {
		t.Errorf("a ledger was left behind: %v", err)
	}
}

func TestReadTailAndStat(t *testing.T) {
	first := string(Encode(sampleEntry(1)))
	l := newLedger(t, first)
	id, err := l.Stat()
	if err != nil || id.Size != int64(len(first)) || id.Ino == 0 {
		t.Fatalf("Stat: %+v %v", id, err)
	}
	l.AppendRaw(Encode(sampleEntry(2)))
	tail, id2, err := l.ReadTail(id.Size)
	if err != nil || string(tail) != string(Encode(sampleEntry(2))) || id2.Ino != id.Ino {
		t.Fatalf("ReadTail: %q %+v %v", tail, id2, err)
	}
	if tail, _, err := l.ReadTail(id2.Size + 10); err != nil || len(tail) != 0 {
		t.Errorf("ReadTail past the end: %q %v", tail, err)
	}
	missing := &Ledger{Slow: testSlow, Dir: t.TempDir()}
	if id, err := missing.Stat(); err != nil || id != (FileID{}) {
		t.Errorf("Stat of a missing ledger: %+v %v", id, err)
	}
	if entries, err := missing.ReadAll(); err != nil || entries != nil {
		t.Errorf("ReadAll of a missing ledger: %v %v", entries, err)
	}
}

func TestReadAllCorrupt(t *testing.T) {
	l := newLedger(t, tripItem+"- tool: x\n  state: OP")
	entries, err := l.ReadAll()
	var ce *CorruptError
	if !errors.As(err, &ce) || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("ReadAll: %v, want a *CorruptError", err)
	}
	if len(entries) != 1 || len(ce.Problems) != 1 || ce.Problems[0].Line != 7 || ce.Path != l.Path() {
		t.Errorf("entries %d, problems %+v", len(entries), ce.Problems)
	}
	if !strings.Contains(err.Error(), "line 7: ") {
		t.Errorf("message %q does not name the line", err)
	}
}

func TestReplaceKeepsBackup(t *testing.T) {
	l := newLedger(t, tripItem)
	backup, err := l.Replace([]byte(authItem), repairNow)
	if err != nil {
		t.Fatal(err)
	}
	if readString(t, backup) != tripItem || readString(t, l.Path()) != authItem {
		t.Errorf("backup or replacement wrong")
	}
	for _, name := range []string{backup, l.Path()} {
		if fi, _ := os.Stat(name); fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %o", name, fi.Mode().Perm())
		}
	}
	for _, n := range dirNames(t, l.Dir) {
		if strings.HasSuffix(n, ".tmp") {
			t.Errorf("temporary file left: %s", n)
		}
	}
}

// BenchmarkAppend is one locked, fsynced append of one entry.
func BenchmarkAppend(b *testing.B) {
	l := &Ledger{Slow: testSlow, Dir: b.TempDir()}
	e := sampleEntry(1)
	b.ReportAllocs()
	for b.Loop() {
		unlock, err := l.Lock()
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := l.Append(e); err != nil {
			b.Fatal(err)
		}
		unlock()
	}
}

// TestReadSettled: while another holder has the lock, an append may be part way through its write,
// so an unlocked reader leaves the last item out as not yet written instead of calling it torn;
// once the lock is free, the same bytes are read whole (and a strict parse calls a torn item torn).
func TestReadSettled(t *testing.T) {
	l := newLedger(t, string(Encode(sampleEntry(1))))
	whole := Encode(sampleEntry(2))
	part := whole[:len(whole)/2]
	unlock, err := (&Ledger{Slow: testSlow, Dir: l.Dir}).Lock()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(l.Path(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(part); err != nil {
		t.Fatal(err)
	}
	data, _, settled, err := l.ReadSettled(0)
	if err != nil {
		t.Fatal(err)
	}
	if settled {
		t.Error("read during an append says it is settled")
	}
	if es, ps := Parse(data, 1, testSlow); len(ps) != 0 || len(es) != 1 {
		t.Fatalf("read during an append: %d entries, problems %v; want the 1 entry written before it", len(es), ps)
	}
	if _, err := f.Write(whole[len(part):]); err != nil {
		t.Fatal(err)
	}
	unlock()
	data, _, settled, err = l.ReadSettled(0)
	if err != nil {
		t.Fatal(err)
	}
	if !settled {
		t.Error("a read after the append finished is not settled")
	}
	if es, ps := Parse(data, 1, testSlow); len(ps) != 0 || len(es) != 2 {
		t.Fatalf("read after the append: %d entries, problems %v; want 2", len(es), ps)
	}
	// A torn item with the lock free is damage, and the strict parse says so.
	f.Write(part)
	data, _, _, _ = l.ReadSettled(0)
	if _, ps := Parse(data, 1, testSlow); len(ps) != 1 || ps[0].Kind != Torn {
		t.Fatalf("torn item with the lock free: problems %v, want one torn item", ps)
	}
}

// TestReadSettledDuringAnotherSync: while another holder has the lock after writing whole items
// (it syncs them, and many hooks queue behind it), an unlocked reader reads them at once, without
// waiting SettleWait for the lock: a tail that ends at a line end and does not change a moment
// later is written. Not settled: such a read is never saved as the snapshot.
func TestReadSettledDuringAnotherSync(t *testing.T) {
	l := newLedger(t, string(Encode(sampleEntry(1))))
	unlock, err := (&Ledger{Slow: testSlow, Dir: l.Dir}).Lock()
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	f, err := os.OpenFile(l.Path(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(Encode(sampleEntry(2))); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	data, _, settled, err := l.ReadSettled(0)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took >= SettleWait {
		t.Errorf("the read waited %s for a lock held only to sync whole items", took)
	}
	if es, ps := Parse(data, 1, testSlow); settled || len(ps) != 0 || len(es) != 2 {
		t.Fatalf("settled %v, %d entries, problems %v; want both entries, not settled", settled, len(es), ps)
	}
}

func TestLastItemStart(t *testing.T) {
	for _, c := range []struct {
		data string
		want int
	}{
		{"", 0},
		{"- a: 1\n", 0},
		{"- a: 1\n- b: 2\n", 7},
		{"- a: 1\n  c: 3\n- b", 14},
		{"- a: 1\n  c: 3\n-\n  b: 2\n", 14},
		{"- a: 1\n# note\n  x\n", 0},
		{"  x: 1\n", 0},
	} {
		if got := lastItemStart([]byte(c.data)); got != c.want {
			t.Errorf("lastItemStart(%q) = %d, want %d", c.data, got, c.want)
		}
	}
}

// TestLockWaitIsQueued: a waiter blocks in the kernel and gets the lock as soon as it is released
// (no polling interval), and a waiter that timed out does not keep the lock it gets late.
func TestLockWaitIsQueued(t *testing.T) {
	dir := t.TempDir()
	unlock, err := (&Ledger{Slow: testSlow, Dir: dir}).Lock()
	if err != nil {
		t.Fatal(err)
	}
	var waited []time.Duration
	late := &Ledger{Slow: testSlow, Dir: dir, LockWait: 20 * time.Millisecond, Waiting: func(d time.Duration) { waited = append(waited, d) }}
	if _, err := late.Lock(); !errors.Is(err, ErrLockTimeout) {
		t.Fatalf("Lock while held: %v, want ErrLockTimeout", err)
	}
	if len(waited) != 1 || waited[0] != 20*time.Millisecond {
		t.Errorf("Waiting called with %v, want once with 20ms", waited)
	}
	got := make(chan error, 1)
	go func() {
		u, err := (&Ledger{Slow: testSlow, Dir: dir, LockWait: time.Minute}).Lock()
		if err == nil {
			u()
		}
		got <- err
	}()
	unlock()
	// The timed-out waiter's late acquisition is released at once, so the queued waiter gets the
	// lock: a late acquisition that was kept would make this wait a minute.
	if err := <-got; err != nil {
		t.Fatalf("queued Lock: %v", err)
	}
}

// TestScanBackAndStream: reading backwards item by item and forwards chunk by chunk both give the
// items of the file exactly, across chunk boundaries, with comments and hand-written items.
func TestScanBackAndStream(t *testing.T) {
	var data []byte
	data = append(data, "# a comment before the first item\n"...)
	for i := range 30000 {
		e := sampleEntry(i)
		e.Error = strings.Repeat("x", i%300)
		data = AppendEncoded(data, e)
		if i%1000 == 0 {
			data = append(data, "- tool: \"mcp__hand__written\"\n  state: CLOSED\n  failure_type: null\n  failure_count: 0\n  tripped_at: null\n  reset_at: null\n"...)
		}
	}
	l := newLedger(t, string(data))
	want, problems := Parse(data, 1, testSlow)
	if len(problems) > 0 || len(data) < 3*chunkSize {
		t.Fatalf("fixture: %d bytes, problems %v", len(data), problems)
	}
	var back []Entry
	if err := l.ScanBack(0, func(item []byte) bool {
		es, ps := Parse(item, 1, testSlow)
		if len(ps) > 0 || len(es) != 1 {
			t.Fatalf("item %q: %v", item, ps)
		}
		if k, ok := ItemTool(item); ok && string(k) != es[0].Tool {
			t.Fatalf("ItemTool %q, parsed tool %q", k, es[0].Tool)
		}
		back = append(back, es[0])
		return true
	}); err != nil {
		t.Fatal(err)
	}
	var fwd []Entry
	end, settled, err := l.Stream(0, false, nil, func(chunk []byte, _ bool) error {
		es, ps := Parse(chunk, 1, testSlow)
		if len(ps) > 0 {
			t.Fatalf("chunk problems %v", ps)
		}
		fwd = append(fwd, es...)
		return nil
	})
	if err != nil || !settled || end != int64(len(data)) {
		t.Fatalf("Stream: end %d of %d, settled %v, %v", end, len(data), settled, err)
	}
	if len(back) != len(want) || len(fwd) != len(want) {
		t.Fatalf("%d items backwards, %d forwards, want %d", len(back), len(fwd), len(want))
	}
	for i := range want {
		w := want[i].Tool + want[i].Error
		if b := back[len(back)-1-i]; b.Tool+b.Error != w {
			t.Fatalf("backwards item %d: %s", i, b.Tool)
		}
		if f := fwd[i]; f.Tool+f.Error != w {
			t.Fatalf("forwards item %d: %s", i, f.Tool)
		}
	}
	// ScanBackAt hands each item with its offset: the items tile the file from the first item to
	// the end, and the identity is the file's.
	next := int64(len(data))
	id, err := l.ScanBackAt(0, func(off int64, item []byte) bool {
		if off+int64(len(item)) != next || string(data[off:next]) != string(item) {
			t.Fatalf("item at %d (%d bytes) does not end where the next starts (%d)", off, len(item), next)
		}
		next = off
		return true
	})
	if err != nil || id.Size != int64(len(data)) || string(data[:next]) != "# a comment before the first item\n" {
		t.Fatalf("ScanBackAt: size %d of %d, first item at %d, %v", id.Size, len(data), next, err)
	}
}

// TestSealClosesOffTheLastLine: a ledger that ends inside a line gets the newline, once; a
// missing ledger is not created.
func TestSealClosesOffTheLastLine(t *testing.T) {
	l := &Ledger{Slow: testSlow, Dir: filepath.Join(t.TempDir(), ".claude", "mcp_circuit")}
	if wrote, err := l.Seal(); wrote || err != nil {
		t.Fatalf("Seal of a missing ledger: %v %v", wrote, err)
	}
	if _, err := os.Stat(l.Path()); err == nil {
		t.Fatal("Seal created the ledger")
	}
	l.EnsureDir()
	os.WriteFile(l.Path(), []byte("- tool: mcp__a__b\n  state: OPEN"), 0o600)
	for i, want := range []bool{true, false} {
		if wrote, err := l.Seal(); wrote != want || err != nil {
			t.Fatalf("Seal %d: %v %v, want %v", i, wrote, err, want)
		}
	}
	if data, _ := os.ReadFile(l.Path()); string(data) != "- tool: mcp__a__b\n  state: OPEN\n" {
		t.Fatalf("after Seal: %q", data)
	}
}

// TestIndexLineDash: the windowed search finds what bytes.Index finds, wherever the pair falls
// across its 64-byte windows.
func TestIndexLineDash(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		data := make([]byte, r.IntN(300))
		for i := range data {
			data[i] = "\n-ab"[r.IntN(4)]
			if r.IntN(3) > 0 {
				data[i] = 'x'
			}
		}
		from := 0
		if len(data) > 0 {
			from = r.IntN(len(data) + 1)
		}
		want := bytes.Index(data[from:], []byte("\n-"))
		if want >= 0 {
			want += from
		}
		if got := indexLineDash(data, from); got != want {
			t.Fatalf("indexLineDash(%q, %d) = %d, want %d", data, from, got, want)
		}
	}
}

// TestScanBackLongItem: an item longer than several chunks (a hand-written entry with a huge
// value) is handed out whole, between its neighbours.
func TestScanBackLongItem(t *testing.T) {
	long := "- tool: mcp__big__t\n  state: CLOSED\n  error: " + strings.Repeat("x", 5*chunkSize+123) + "\n"
	data := string(AppendEncoded(nil, sampleEntry(1))) + long + string(AppendEncoded(nil, sampleEntry(2)))
	l := newLedger(t, data)
	var items []string
	if _, err := l.ScanBackAt(0, func(_ int64, item []byte) bool {
		items = append(items, string(item))
		return true
	}); err != nil {
		t.Fatal(err)
	}
	if len(items) != 3 || items[1] != long || items[0]+items[1]+items[2] != string(AppendEncoded(nil, sampleEntry(2)))+long+string(AppendEncoded(nil, sampleEntry(1))) {
		t.Fatalf("%d items; the long one whole: %v", len(items), len(items) == 3 && items[1] == long)
	}
}
