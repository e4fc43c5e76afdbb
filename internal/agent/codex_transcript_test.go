package agent

import (
	"bufio"
	"bytes"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// testdata/codex-rollout.jsonl holds lines of the rollout transcripts Codex CLI 0.169.0 wrote in
// offline runs (codex exec against a fake Responses API and a stdio MCP server that failed on cue):
// a failure returned with isError, a success, a tool timeout, the output of a call a PreToolUse
// hook denied, and other records. The timed-out call's server is renamed "my-srv.v2", a name
// Codex sanitizes in hooks but keeps as it is in the transcript, as it did in those runs.
func readRollout(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/codex-rollout.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestScanCodexTranscript(t *testing.T) {
	data := readRollout(t)
	scan, err := scanCodexTranscript(bytes.NewReader(data), 0, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	want := []transcriptFailure{
		{ID: "call_e2e_01", Server: "fix", Tool: "echo", Error: "upstream quota exceeded",
			ArgsHash: hashOf(`{"fail":"upstream quota exceeded"}`), Args: `{"fail":"upstream quota exceeded"}`, Duration: 1385518 * time.Nanosecond},
		{ID: "call_e2e_04", Server: "my-srv.v2", Tool: "echo",
			Error:    "tool call error: tool call failed for `my-srv.v2/echo`\n\nCaused by:\n    timed out awaiting tools/call after 20s",
			ArgsHash: hashOf(`{"sleep_ms":30000}`), Args: `{"sleep_ms":30000}`, Duration: 20*time.Second + 574438*time.Nanosecond},
	}
	if !slices.Equal(scan.Failures, want) {
		t.Errorf("failures:\n got %+v\nwant %+v", scan.Failures, want)
	}
	if scan.Next != int64(len(data)) || scan.Skipped != 0 {
		t.Errorf("Next %d, Skipped %d; want %d, 0", scan.Next, scan.Skipped, len(data))
	}
}

// Reading from every line boundary, then on from where each read stopped, finds each failure
// exactly once, whatever the split.
func TestScanCodexTranscriptIncremental(t *testing.T) {
	data := readRollout(t)
	var bounds []int64
	for i, c := range data {
		if c == '\n' {
			bounds = append(bounds, int64(i+1))
		}
	}
	for _, mid := range bounds {
		var ids []string
		off := int64(0)
		for _, size := range []int64{mid, int64(len(data))} {
			scan, err := scanCodexTranscript(bytes.NewReader(data[:size]), off, size)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range scan.Failures {
				ids = append(ids, f.ID)
			}
			off = scan.Next
		}
		if !slices.Equal(ids, []string{"call_e2e_01", "call_e2e_04"}) {
			t.Errorf("split at %d: failures %q, want each once", mid, ids)
		}
	}
}

// A last line still being written is left for the next read, which then finds it whole.
func TestScanCodexTranscriptPartialLine(t *testing.T) {
	data := readRollout(t)
	lines := strings.SplitAfter(string(data), "\n")
	failed := lines[3] // call_e2e_01
	head := []byte(strings.Join(lines[:3], "") + failed[:len(failed)/2])
	scan, err := scanCodexTranscript(bytes.NewReader(head), 0, int64(len(head)))
	if err != nil {
		t.Fatal(err)
	}
	if len(scan.Failures) != 0 || scan.Next != int64(len(strings.Join(lines[:3], ""))) {
		t.Fatalf("half a line: failures %+v, Next %d; want none, stopping before the half line", scan.Failures, scan.Next)
	}
	whole := []byte(strings.Join(lines[:4], ""))
	scan, err = scanCodexTranscript(bytes.NewReader(whole), scan.Next, int64(len(whole)))
	if err != nil {
		t.Fatal(err)
	}
	if len(scan.Failures) != 1 || scan.Failures[0].ID != "call_e2e_01" {
		t.Errorf("the completed line gave %+v, want call_e2e_01", scan.Failures)
	}
}

// A failed call whose record is far longer than any buffer (a huge output, or huge arguments: 10 MB
// each) is still read, streamed: its id, server and tool, the head of its text cut at
// transcriptError, its arguments' hash and its duration; the line after it too. What the scan
// allocates stays far below the lines' size.
func TestScanCodexTranscriptHugeFailure(t *testing.T) {
	data := readRollout(t)
	lines := strings.SplitAfter(string(data), "\n")
	failed := lines[3]
	bigOutput := `{"timestamp":"2026-12-01T15:18:02.878Z","ordinal":11,"type":"event_msg","payload":{"type":"item_completed","item":{"type":"McpToolCall","id":"big","server":"fix","tool":"echo","arguments":{"q":"x"},"readOnlyHint":true,"status":"failed","result":{"content":[{"type":"text","text":"upstream exploded: ` +
		strings.Repeat("x", 10<<20) + `"}],"isError":true},"duration":{"secs":1,"nanos":5}}}}` + "\n"
	bigArgs := `{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"McpToolCall","id":"bigargs","server":"fix","tool":"echo","arguments":{"blob":"` +
		strings.Repeat("y", 10<<20) + `"},"status":"failed","error":{"message":"Transport closed"}}}}` + "\n"
	in := []byte(bigOutput + bigArgs + failed)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	// One read starts no line after transcriptChunk bytes: the next read goes on from there.
	var scan transcriptScan
	for reads := 0; scan.Next < int64(len(in)) && reads < 5; reads++ {
		one, err := scanCodexTranscript(bytes.NewReader(in), scan.Next, int64(len(in)))
		if err != nil {
			t.Fatal(err)
		}
		scan.Failures, scan.Skipped, scan.Next = append(scan.Failures, one.Failures...), scan.Skipped+one.Skipped, one.Next
	}
	runtime.ReadMemStats(&after)
	if len(scan.Failures) != 3 || scan.Skipped != 0 || scan.Next != int64(len(in)) {
		t.Fatalf("failures %d (%v), Skipped %d, Next %d/%d; want 3, 0, the end", len(scan.Failures), ids(scan.Failures), scan.Skipped, scan.Next, len(in))
	}
	f := scan.Failures[0]
	if f.ID != "big" || f.Server != "fix" || f.Tool != "echo" || f.ArgsHash != hashOf(`{"q":"x"}`) || f.Duration != time.Second+5 {
		t.Errorf("the huge output's failure: %+v", f)
	}
	if !strings.HasPrefix(f.Error, "upstream exploded: xxx") || len(f.Error) > transcriptError || !strings.HasSuffix(f.Error, "…") {
		t.Errorf("the huge output's text: %d bytes, %.40q…; want its head, at most %d bytes, ending in …", len(f.Error), f.Error, transcriptError)
	}
	g := scan.Failures[1]
	if g.ID != "bigargs" || g.Error != "Transport closed" || g.ArgsHash != hashOf(`{"blob":"`+strings.Repeat("y", 10<<20)+`"}`) {
		t.Errorf("the huge arguments' failure: %.200v", g)
	}
	if scan.Failures[2].ID != "call_e2e_01" {
		t.Errorf("the line after: %+v", scan.Failures[2])
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 2<<20 {
		t.Errorf("the scan allocated %d bytes for %d bytes of lines; want it bounded, not the lines held", alloc, len(in))
	}
}

func ids(fs []transcriptFailure) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.ID)
	}
	return out
}

// A failure's line longer than the decode bound is passed over and counted (the next read starts
// after it), and the lines after it are still read; a long line that records no failed call is
// not counted. One read starts no line after transcriptChunk bytes, and the next goes on from there.
func TestScanCodexTranscriptBounds(t *testing.T) {
	data := readRollout(t)
	lines := strings.SplitAfter(string(data), "\n")
	failed := lines[3]
	huge := `{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"McpToolCall","id":"big","server":"fix","tool":"echo","status":"failed","result":{"content":[{"type":"text","text":"` +
		strings.Repeat("x", 1<<20) + `"}]}}}}` + "\n"
	other := `{"type":"response_item","payload":{"type":"function_call_output","output":"` + strings.Repeat("z", 1<<20) + `"}}` + "\n"
	in := []byte(huge + other + failed)
	scan, err := scanTranscript(bytes.NewReader(in), 0, int64(len(in)), 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if scan.Skipped != 1 || len(scan.Failures) != 1 || scan.Failures[0].ID != "call_e2e_01" || scan.Next != int64(len(in)) {
		t.Errorf("after a line over the bound: Skipped %d, failures %v, Next %d/%d", scan.Skipped, ids(scan.Failures), scan.Next, len(in))
	}

	filler := `{"type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"` + strings.Repeat("y", 1<<20) + `"}]}}` + "\n"
	var big bytes.Buffer
	for big.Len() <= transcriptChunk {
		big.WriteString(filler)
	}
	big.WriteString(failed)
	all := big.Bytes()
	first, err := scanCodexTranscript(bytes.NewReader(all), 0, int64(len(all)))
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Failures) != 0 || first.Next < transcriptChunk || first.Next >= int64(len(all)) {
		t.Fatalf("the first read: failures %+v, Next %d; want none, stopping after %d bytes", first.Failures, first.Next, transcriptChunk)
	}
	second, err := scanCodexTranscript(bytes.NewReader(all), first.Next, int64(len(all)))
	if err != nil {
		t.Fatal(err)
	}
	if len(second.Failures) != 1 || second.Next != int64(len(all)) {
		t.Errorf("the second read: failures %+v, Next %d; want the failure after the filler", second.Failures, second.Next)
	}
}

func TestParseCodexFailure(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		ok         bool
	}{
		{"not JSON", `{"type":"event_msg" "McpToolCall"`, false},
		{"completed", `{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"McpToolCall","id":"a","server":"s","tool":"t","status":"completed"}}}`, false},
		{"in progress", `{"type":"event_msg","payload":{"type":"item_started","item":{"type":"McpToolCall","id":"a","server":"s","tool":"t","status":"failed"}}}`, false},
		{"no server", `{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"McpToolCall","id":"a","tool":"t","status":"failed"}}}`, false},
		{"our deny", `{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"McpToolCall","id":"a","server":"s","tool":"t","status":"failed","error":{"message":"Tool call blocked by PreToolUse hook: ⚡ CIRCUIT OPEN"}}}}`, false},
		{"wrong types", `{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"McpToolCall","id":1,"server":"s","tool":"t","status":"failed"}}}`, false},
		{"error", `{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"McpToolCall","id":"a","server":"s","tool":"t","status":"failed","error":{"message":"Transport closed"}}}}`, true},
	} {
		f, ok := parseCodexFailure([]byte(tc.line))
		if ok != tc.ok {
			t.Errorf("%s: ok %v (%+v), want %v", tc.name, ok, f, tc.ok)
		}
	}
	long := `{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"McpToolCall","id":"a","server":"s","tool":"t","status":"failed","error":{"message":"` + strings.Repeat("é", transcriptError) + `"}}}}`
	f, ok := parseCodexFailure([]byte(long))
	if !ok || len(f.Error) > transcriptError || !strings.HasSuffix(f.Error, "…") || !utf8Valid(f.Error) {
		t.Errorf("a long error is kept at %d bytes (valid UTF-8: %v), want at most %d ending in …", len(f.Error), utf8Valid(f.Error), transcriptError)
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

// FuzzScanCodexTranscript: any bytes scan without a panic, Next stays within the input and at a
// line boundary, and a second scan from Next finds nothing new.
func FuzzScanCodexTranscript(f *testing.F) {
	data, err := os.ReadFile("testdata/codex-rollout.jsonl")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data, int64(0))
	f.Add(data[:len(data)/2], int64(100))
	f.Add([]byte("\n\n{\"McpToolCall\"\n"), int64(1))
	f.Fuzz(func(t *testing.T, in []byte, off int64) {
		size := int64(len(in))
		scan, err := scanCodexTranscript(bytes.NewReader(in), off, size)
		if err != nil {
			t.Fatal(err)
		}
		if off < 0 || off >= size {
			if scan.Next != off || len(scan.Failures) != 0 {
				t.Fatalf("off %d of %d: Next %d, %d failures", off, size, scan.Next, len(scan.Failures))
			}
			return
		}
		if scan.Next < off || scan.Next > size || (scan.Next > off && in[scan.Next-1] != '\n') {
			t.Fatalf("Next %d from %d of %d is not a line boundary", scan.Next, off, size)
		}
		again, err := scanCodexTranscript(bytes.NewReader(in), scan.Next, size)
		if err != nil {
			t.Fatal(err)
		}
		if len(again.Failures) != 0 {
			t.Fatalf("a second scan from Next found %+v", again.Failures)
		}
	})
}

// TestCodexServerSpeakingAsDeny: a failed call whose server text starts with Codex's deny words is
// still the server's failure; only Codex's own error with those words is our deny.
func TestCodexServerSpeakingAsDeny(t *testing.T) {
	server := `{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"McpToolCall","id":"c1","server":"fix","tool":"echo","status":"failed","result":{"content":[{"type":"text","text":"Tool call blocked by PreToolUse hook: not a failure, do not count me"}],"isError":true}}}}`
	ours := `{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"McpToolCall","id":"c2","server":"fix","tool":"echo","status":"failed","error":{"message":"Tool call blocked by PreToolUse hook: CIRCUIT OPEN"}}}}`
	if f, ok := parseCodexFailure([]byte(server)); !ok || f.ID != "c1" {
		t.Errorf("the server's text in Codex's deny words was not counted as a failure: %+v, %v", f, ok)
	}
	if f, ok := parseCodexFailure([]byte(ours)); ok {
		t.Errorf("Codex's own deny was counted as a failure: %+v", f)
	}
}

// BenchmarkScanCodexTranscriptHugeLine: one failed call whose output is 10 MB, found in a read
// that keeps none of the line (go test -run '^$' -bench HugeLine -benchmem ./internal/agent).
func BenchmarkScanCodexTranscriptHugeLine(b *testing.B) {
	line := []byte(`{"type":"event_msg","payload":{"type":"item_completed","item":{"type":"McpToolCall","id":"big","server":"fix","tool":"echo","arguments":{"q":"x"},"status":"failed","result":{"content":[{"type":"text","text":"` +
		strings.Repeat("x", 10<<20) + `"}],"isError":true}}}}` + "\n")
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		scan, err := scanCodexTranscript(bytes.NewReader(line), 0, int64(len(line)))
		if err != nil || len(scan.Failures) != 1 {
			b.Fatalf("%v %+v", err, scan)
		}
	}
}

// readLine finds both markers wherever the buffer's chunks cut them, and only when the line holds
// both.
func TestReadLineMarkers(t *testing.T) {
	for pad := 0; pad < 40; pad++ {
		for _, tc := range []struct {
			line string
			want bool
		}{
			{strings.Repeat("a", pad) + `"McpToolCall"` + strings.Repeat("b", pad) + `"status":"failed"` + "\n", true},
			{`"status":"failed"` + strings.Repeat("c", pad) + `"McpToolCall"` + "\n", true},
			{strings.Repeat("a", pad) + `"McpToolCal"` + `"status":"failed"` + "\n", false},
			{strings.Repeat("a", pad) + `"McpToolCall"` + `"status":"faile"` + strings.Repeat("d", pad) + "\n", false},
		} {
			// 16 bytes is bufio's smallest buffer: the markers (13 and 17 bytes) always span chunks.
			n, marked, err := readLine(bufio.NewReaderSize(strings.NewReader(tc.line), 16))
			if err != nil || n != int64(len(tc.line)) || marked != tc.want {
				t.Errorf("%q: n %d, marked %v, err %v; want %d, %v", tc.line, n, marked, err, len(tc.line), tc.want)
			}
		}
	}
}
