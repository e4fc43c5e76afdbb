package failure

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// corpusRow is one line of testdata/corpus/*.jsonl: a text a real MCP server returns (what the
// hook sees in PostToolUseFailure's error), where it comes from, and whose fault it is.
type corpusRow struct {
	Server string `json:"server"`
	Source string `json:"source"`
	Text   string `json:"text"`
	Fault  string `json:"fault"`
	Type   string `json:"type"`
	Note   string `json:"note"`
	// IsInterrupt and DurationMS are Claude Code's is_interrupt and duration_ms, for the rows of
	// calls the user gave up on.
	IsInterrupt bool  `json:"is_interrupt"`
	DurationMS  int64 `json:"duration_ms"`
}

// Thresholds of the corpus: of the call errors, this share must leave the tool healthy (not
// counted); of the outages, this share must count.
const (
	corpusCallHealthy  = 0.97
	corpusOutageCounts = 0.90
	corpusHangAfter    = 30 * time.Second
)

type corpusLine struct {
	where string // file:line
	row   corpusRow
}

// readCorpus reads every *.jsonl file of dir. A line that is not a complete row fails the test
// with its file and line: no line is skipped silently.
func readCorpus(t *testing.T, dir string) []corpusLine {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no *.jsonl files in %s", dir)
	}
	sort.Strings(files)
	var lines []corpusLine
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
		n := 0
		for sc.Scan() {
			n++
			line := bytes.TrimSpace(sc.Bytes())
			where := fmt.Sprintf("%s:%d", filepath.Join("testdata", "corpus", filepath.Base(name)), n)
			if len(line) == 0 {
				continue
			}
			var row corpusRow
			if err := json.Unmarshal(line, &row); err != nil {
				t.Errorf("%s: not a JSON object: %v", where, err)
				continue
			}
			switch {
			case row.Server == "":
				t.Errorf("%s: no server", where)
			case row.Text == "" && !row.IsInterrupt:
				t.Errorf("%s: no text", where)
			case !ledger.Fault(row.Fault).Valid():
				t.Errorf("%s: fault %q is not one of call, tool, server, credential, quota, admin", where, row.Fault)
			case !ledger.FailureType(row.Type).Valid():
				t.Errorf("%s: type %q is not a failure type", where, row.Type)
			default:
				lines = append(lines, corpusLine{where, row})
			}
		}
		if err := sc.Err(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	return lines
}

func (row corpusRow) evidence() Evidence {
	return Evidence{Text: row.Text, Interrupt: row.IsInterrupt, Duration: time.Duration(row.DurationMS) * time.Millisecond,
		HangAfter: corpusHangAfter}
}

// TestCorpus classifies every text of the corpus and checks that call errors leave their tool
// healthy and outages count, at the shares above. Mislabels are logged for diagnosis.
func TestCorpus(t *testing.T) {
	lines := readCorpus(t, filepath.Join("testdata", "corpus"))
	var calls, callsHealthy, outages, outagesCounted, typeMismatch int
	servers := map[string]bool{}
	for _, l := range lines {
		servers[l.row.Server] = true
		got := Classify(l.row.evidence(), testNow)
		counted := !got.Interrupt && got.Fault.Counts()
		wantCall := ledger.Fault(l.row.Fault) == ledger.FaultCall
		if wantCall {
			calls++
			if !counted {
				callsHealthy++
			} else {
				t.Logf("MISLABEL %s: call error counted as %s %s (fault %s): %q", l.where, got.Type, got.Cause, got.Fault, clipForLog(l.row.Text))
			}
		} else {
			outages++
			if counted {
				outagesCounted++
			} else {
				t.Logf("MISLABEL %s: outage (%s) left healthy as %s %s (fault %s): %q", l.where, l.row.Fault, got.Type, got.Cause, got.Fault, clipForLog(l.row.Text))
			}
		}
		if string(got.Type) != l.row.Type {
			typeMismatch++
			if testing.Verbose() {
				t.Logf("type %s: %s, labelled %s: %q", l.where, got.Type, l.row.Type, clipForLog(l.row.Text))
			}
		}
	}
	share := func(n, of int) float64 {
		if of == 0 {
			return 1
		}
		return float64(n) / float64(of)
	}
	fmt.Printf("corpus: %d texts from %d servers; types as labelled: %d/%d\n", len(lines), len(servers), len(lines)-typeMismatch, len(lines))
	fmt.Printf("call errors left healthy: %.1f%% (%d/%d)\n", 100*share(callsHealthy, calls), callsHealthy, calls)
	fmt.Printf("outages counted: %.1f%% (%d/%d)\n", 100*share(outagesCounted, outages), outagesCounted, outages)
	if calls == 0 || outages == 0 {
		t.Fatalf("the corpus needs call errors and outages: %d and %d", calls, outages)
	}
	if s := share(callsHealthy, calls); s < corpusCallHealthy {
		t.Errorf("call errors left healthy: %.1f%% (%d/%d), want at least %.0f%%", 100*s, callsHealthy, calls, 100*corpusCallHealthy)
	}
	if s := share(outagesCounted, outages); s < corpusOutageCounts {
		t.Errorf("outages counted: %.1f%% (%d/%d), want at least %.0f%%", 100*s, outagesCounted, outages, 100*corpusOutageCounts)
	}
}

func clipForLog(s string) string { return ClipRunes(s, 160) }
