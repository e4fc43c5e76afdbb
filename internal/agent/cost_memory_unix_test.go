//go:build linux || darwin

package agent

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
)

// costsChildEnv names the transcript TestReadCostsChild reads when it runs as the child of
// TestCostsMemory.
const costsChildEnv = "MCB_COSTS_CHILD"

// TestCostsMemory reads a generated transcript of 100 MB (8 MB under -short) in a process of its
// own and bounds that process's peak resident memory: the reader holds no line and no result,
// so the peak is the test binary's own plus a few buffers, whatever the file's size. A reader
// that kept the file, a line or a 1 MB result would be over the bound.
func TestCostsMemory(t *testing.T) {
	size := int64(100 << 20)
	if testing.Short() {
		size = 8 << 20
	}
	dir := t.TempDir()
	big := filepath.Join(dir, "big.jsonl")
	want := genTranscript(t, big, size)
	writeIDs(t, big, want)
	small := filepath.Join(dir, "small.jsonl")
	writeIDs(t, small, genTranscript(t, small, 64<<10))
	// The same process reading a 64 KB transcript is the baseline: the binary and the runtime.
	base, _ := costsChild(t, small)
	peak, found := costsChild(t, big)
	t.Logf("peak RSS reading %d MB: %.1f MB (%.1f MB reading 64 KB); %d of %d calls found",
		fileSize(t, big)>>20, float64(peak)/(1<<20), float64(base)/(1<<20), found, len(want))
	if found != len(want) {
		t.Errorf("%d calls found, want %d", found, len(want))
	}
	if peak > base+24<<20 {
		t.Errorf("peak RSS %.1f MB, more than 24 MB over the %.1f MB of a 64 KB transcript: the reader holds what it reads",
			float64(peak)/(1<<20), float64(base)/(1<<20))
	}
}

// costsChild runs TestReadCostsChild on path in a new process and returns its peak resident
// memory in bytes and how many calls it found.
func costsChild(t *testing.T, path string) (int64, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestReadCostsChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), costsChildEnv+"="+path)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var res struct{ Found int }
	for _, l := range splitLines(out) {
		if json.Unmarshal(l, &res) == nil {
			break
		}
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	peak := int64(ru.Maxrss)
	if runtime.GOOS == "linux" {
		peak <<= 10 // kilobytes there, bytes on macOS
	}
	return peak, res.Found
}

// TestReadCostsChild is the child process of TestCostsMemory: it reads the transcript costsChildEnv
// names, asking for the calls listed in the file beside it (path.ids), and prints how many it
// found.
func TestReadCostsChild(t *testing.T) {
	path := os.Getenv(costsChildEnv)
	if path == "" {
		t.Skip("run by TestCostsMemory")
	}
	ids := map[string]bool{}
	list, err := os.ReadFile(path + ".ids")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range splitLines(list) {
		ids[string(id)] = true
	}
	scan, err := ReadCosts(Transcript{Agent: "claude", Path: path}, ids)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(map[string]int{"Found": len(scan.Calls)})
	os.Stdout.Write(append(append([]byte{'\n'}, b...), '\n'))
}

// writeIDs lists the ids of want in path.ids, for the child.
func writeIDs(t *testing.T, path string, want map[string]CallCost) {
	t.Helper()
	var b []byte
	for id := range want {
		b = append(append(b, id...), '\n')
	}
	if err := os.WriteFile(path+".ids", b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func splitLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := 0
		for i < len(b) && b[i] != '\n' {
			i++
		}
		out = append(out, b[:i])
		if i < len(b) {
			i++
		}
		b = b[i:]
	}
	return out
}
