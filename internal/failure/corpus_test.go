package failure

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/term"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// corpusRow is one line of testdata/corpus/*.jsonl: a text a real MCP server returns (what the
// hook sees in PostToolUseFailure's error), where it comes from, and whose fault it is.
type corpusRow struct {
	Server string `json:"server"`
	Source string `json:"source"`
	// Origin is where the text was read: source (a server's code), issue (pasted by a user into
	// a public issue) or observed (seen through an agent).
	Origin string `json:"origin"`
	// Tool and Args are the call that produced the text.
	Tool  string          `json:"tool"`
	Args  json.RawMessage `json:"args"`
	Text  string          `json:"text"`
	Fault string          `json:"fault"`
	Type  string          `json:"type"`
	Note  string          `json:"note"`
	// IsInterrupt and DurationMS are Claude Code's is_interrupt and duration_ms, for the rows of
	// calls the user gave up on.
	IsInterrupt bool  `json:"is_interrupt"`
	DurationMS  int64 `json:"duration_ms"`
}

// corpusFloor is what one part of the corpus must score: of the call errors, this share must
// leave the tool healthy (not counted); of the outages, this share must count, and this share
// must have the type it is labelled with.
type corpusFloor struct{ callHealthy, outageCounts, outageTyped float64 }

var (
	// heldoutTarget is the bar that counts, on texts of servers no rule was written from. It is
	// not met yet: the test prints it beside the score and holds the floor below.
	heldoutTarget = corpusFloor{callHealthy: 0.97, outageCounts: 0.95, outageTyped: 0.85}
	// heldoutFloor is what the rules reach on the held-out servers today (86.1 %, 91.2 %, 76.5 %
	// on 301 texts of 19 servers): a change may not lower it, and the held-out texts are never
	// read to raise it (they are scored, not tuned on).
	heldoutFloor = corpusFloor{callHealthy: 0.860, outageCounts: 0.911, outageTyped: 0.764}
	// trainingFloor keeps what the rules reach on the servers they were written from (96.6 %,
	// 95.1 %, 92.3 % on 1,607 texts of 184 servers): a change to the rules may not lower it. Its
	// misses are mostly ambiguous texts (a bare 403 of a read, a vendor's one-word verdict) that
	// only the pattern over calls can settle (docs/classification.md, "Evidence over calls").
	trainingFloor = corpusFloor{callHealthy: 0.965, outageCounts: 0.950, outageTyped: 0.922}
)

const corpusHangAfter = 30 * time.Second

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
			where := fmt.Sprintf("%s:%d", name, n)
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
			case row.Origin != "source" && row.Origin != "issue" && row.Origin != "observed":
				t.Errorf("%s: origin %q is not one of source, issue, observed", where, row.Origin)
			case !strings.HasPrefix(row.Tool, "mcp__") || !ledger.ValidToolName(row.Tool):
				t.Errorf("%s: tool %q is not an mcp__<server>__<tool> name", where, row.Tool)
			case !isJSONObject(row.Args):
				t.Errorf("%s: args is not a JSON object", where)
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

func isJSONObject(raw json.RawMessage) bool {
	var m map[string]any
	return json.Unmarshal(raw, &m) == nil && m != nil
}

func (row corpusRow) evidence() Evidence {
	return Evidence{Text: row.Text, Interrupt: row.IsInterrupt, Duration: time.Duration(row.DurationMS) * time.Millisecond,
		HangAfter: corpusHangAfter, Tool: row.Tool, Args: ArgsFromJSON(row.Args)}
}

// corpusScore is what the classifier got right on one part of the corpus.
type corpusScore struct {
	texts, calls, callsHealthy, outages, outagesCounted, outagesTyped, issues int
	servers                                                                   map[string]bool
}

func (sc corpusScore) share(n, of int) float64 {
	if of == 0 {
		return 1
	}
	return float64(n) / float64(of)
}

// scoreCorpus classifies every line and logs each one it gets wrong, as MISLABEL (counted the
// wrong way) or TYPE (an outage of another type), with its file and line.
func scoreCorpus(t *testing.T, lines []corpusLine) corpusScore {
	t.Helper()
	sc := corpusScore{servers: map[string]bool{}}
	for _, l := range lines {
		sc.texts++
		sc.servers[l.row.Server] = true
		if l.row.Origin == "issue" {
			sc.issues++
		}
		got := Classify(l.row.evidence(), testNow)
		counted := !got.Interrupt && got.Fault.Counts()
		if ledger.Fault(l.row.Fault) == ledger.FaultCall {
			sc.calls++
			if !counted {
				sc.callsHealthy++
			} else {
				t.Logf("MISLABEL %s: call error counted as %s %s (fault %s): %q", l.where, got.Type, got.Cause, got.Fault, clipForLog(l.row.Text))
			}
			continue
		}
		sc.outages++
		if counted {
			sc.outagesCounted++
		} else {
			t.Logf("MISLABEL %s: outage (%s) left healthy as %s %s (fault %s): %q", l.where, l.row.Fault, got.Type, got.Cause, got.Fault, clipForLog(l.row.Text))
		}
		if string(got.Type) == l.row.Type {
			sc.outagesTyped++
		} else {
			t.Logf("TYPE %s: outage labelled %s classified %s %s: %q", l.where, l.row.Type, got.Type, got.Cause, clipForLog(l.row.Text))
		}
	}
	return sc
}

// check prints the part's scores and fails the test where one is under its threshold.
func (sc corpusScore) check(t *testing.T, part string, floor corpusFloor) {
	t.Helper()
	fmt.Printf("%s: %d texts from %d servers (%d pasted by users into issues)\n", part, sc.texts, len(sc.servers), sc.issues)
	fmt.Printf("%s: call errors left healthy: %.1f%% (%d/%d)\n", part, 100*sc.share(sc.callsHealthy, sc.calls), sc.callsHealthy, sc.calls)
	fmt.Printf("%s: outages counted: %.1f%% (%d/%d)\n", part, 100*sc.share(sc.outagesCounted, sc.outages), sc.outagesCounted, sc.outages)
	fmt.Printf("%s: outages of the expected type: %.1f%% (%d/%d)\n", part, 100*sc.share(sc.outagesTyped, sc.outages), sc.outagesTyped, sc.outages)
	if sc.calls == 0 || sc.outages == 0 {
		t.Fatalf("%s: the corpus needs call errors and outages: %d and %d", part, sc.calls, sc.outages)
	}
	if s := sc.share(sc.callsHealthy, sc.calls); s < floor.callHealthy {
		t.Errorf("%s: call errors left healthy: %.1f%% (%d/%d), want at least %.1f%%", part, 100*s, sc.callsHealthy, sc.calls, 100*floor.callHealthy)
	}
	if s := sc.share(sc.outagesCounted, sc.outages); s < floor.outageCounts {
		t.Errorf("%s: outages counted: %.1f%% (%d/%d), want at least %.1f%%", part, 100*s, sc.outagesCounted, sc.outages, 100*floor.outageCounts)
	}
	if s := sc.share(sc.outagesTyped, sc.outages); s < floor.outageTyped {
		t.Errorf("%s: outages of the expected type: %.1f%% (%d/%d), want at least %.1f%%", part, 100*s, sc.outagesTyped, sc.outages, 100*floor.outageTyped)
	}
}

// meets says whether the part reaches floor, and where it does not.
func (sc corpusScore) meets(floor corpusFloor) string {
	var short []string
	if sc.share(sc.callsHealthy, sc.calls) < floor.callHealthy {
		short = append(short, "call errors left healthy")
	}
	if sc.share(sc.outagesCounted, sc.outages) < floor.outageCounts {
		short = append(short, "outages counted")
	}
	if sc.share(sc.outagesTyped, sc.outages) < floor.outageTyped {
		short = append(short, "outages of the expected type")
	}
	if len(short) == 0 {
		return "met"
	}
	return "not met (" + strings.Join(short, ", ") + ")"
}

// TestCorpus scores the classifier on the training servers (testdata/corpus), the only texts its
// rules are written from, and on the held-out servers (testdata/corpus/heldout), read only to
// score: the held-out score is the one that counts. A server is in one part only.
func TestCorpus(t *testing.T) {
	train := readCorpus(t, filepath.Join("testdata", "corpus"))
	heldout := readCorpus(t, filepath.Join("testdata", "corpus", "heldout"))
	trainServers := map[string]bool{}
	for _, l := range train {
		trainServers[l.row.Server] = true
	}
	for _, l := range heldout {
		if trainServers[l.row.Server] {
			t.Errorf("%s: server %q is in the training part too: a server is held out whole or not at all", l.where, l.row.Server)
		}
	}
	scoreCorpus(t, train).check(t, "training", trainingFloor)
	held := scoreCorpus(t, heldout)
	held.check(t, "held-out", heldoutFloor)
	fmt.Printf("held-out: target %.0f%% / %.0f%% / %.0f%%: %s\n", 100*heldoutTarget.callHealthy, 100*heldoutTarget.outageCounts,
		100*heldoutTarget.outageTyped, held.meets(heldoutTarget))
	if n := len(train) + len(heldout); n < 1000 {
		t.Errorf("the corpus has %d texts, want at least 1000", n)
	}
}

func clipForLog(s string) string { return term.Clip(s, 160) }
