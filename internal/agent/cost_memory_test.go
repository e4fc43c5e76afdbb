package agent

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// genTranscript writes a Claude Code transcript of at least size bytes to path, in the shape
// 2.1.332 writes: per turn one assistant line per tool_use (one turn in five makes two calls),
// a user line per result, and an api-request-blob line that repeats the conversation (40 KB
// here); every 50th result is 1 MB of text with non-ASCII characters in it. It returns what
// the calls it asked for (every 7th) cost, worked out as it writes them.
func genTranscript(t testing.TB, path string, size int64) map[string]CallCost {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	var written int64
	line := func(v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := w.Write(append(b, '\n'))
		written += int64(n)
	}
	want := map[string]CallCost{}
	blob := strings.Repeat(`{"type":"tool_use","id":"toolu_x","name":"mcp__s__t"},{"type":"tool_result","tool_use_id":"toolu_x","content":"ok"},`, 40<<10/110)
	call := 0
	for turn := 0; written < size; turn++ {
		ref := fmt.Sprintf("req-%06d", turn)
		out := 30 + turn%97
		calls := 1 + boolInt(turn%5 == 0)
		var ids []string
		for i := range calls {
			call++
			id := fmt.Sprintf("toolu_%08d", call)
			ids = append(ids, id)
			line(map[string]any{"parentUuid": "p", "isSidechain": false, "message": map[string]any{
				"content": []any{map[string]any{"id": id, "input": map[string]any{"query": strings.Repeat("q", 200)}, "name": "mcp__s__t", "type": "tool_use"}},
				"id":      "msg_" + ref, "model": "claude-sonnet-4-5", "role": "assistant", "stop_reason": "tool_use",
				"usage": map[string]any{"input_tokens": 1000, "output_tokens": out, "cache_read_input_tokens": 500}},
				"apiBlockIndex": i, "requestRef": ref, "type": "assistant", "uuid": id, "sessionId": "s"})
		}
		for i, id := range ids {
			text := strings.Repeat("result text ", 40)
			if (call-calls+i+1)%50 == 0 {
				text = strings.Repeat("é résultat — ", 1<<20/16)
			}
			line(map[string]any{"parentUuid": id, "isSidechain": false, "type": "user", "message": map[string]any{"role": "user",
				"content": []any{map[string]any{"type": "tool_result", "content": text, "is_error": true, "tool_use_id": id}}},
				"toolUseResult": "Error: " + text[:min(len(text), 100)], "sessionId": "s"})
			if (call-calls+i+1)%7 == 0 {
				chars := len([]rune(text))
				want[id] = CallCost{Tool: "mcp__s__t", TurnOutput: out, TurnCalls: calls, Share: out/calls + boolInt(i < out%calls),
					ResultChars: chars, ResultTokens: EstimateTokens(chars), HasTurn: true, HasResult: true}
			}
		}
		line(map[string]any{"type": "api-request-blob", "sessionId": "s", "hash": ref, "message": map[string]any{"role": "user", "content": blob}})
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return want
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// The costs in a generated transcript are the ones worked out as it was written, whatever its
// size: every call asked for is found with its turn's share and its result's characters.
func TestReadCostsGenerated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.jsonl")
	want := genTranscript(t, path, 4<<20)
	want["toolu_nowhere"] = CallCost{}
	ids := map[string]bool{}
	for id := range want {
		ids[id] = true
	}
	delete(want, "toolu_nowhere")
	scan, err := ReadCosts(Transcript{Agent: "claude", Path: path}, ids)
	if err != nil {
		t.Fatal(err)
	}
	if len(scan.Calls) != len(want) {
		t.Errorf("%d calls found, want %d", len(scan.Calls), len(want))
	}
	for id, w := range want {
		if got := scan.Calls[id]; got != w {
			t.Errorf("%s: %+v, want %+v", id, got, w)
		}
	}
}

// BenchmarkReadCosts reads a 100 MB generated transcript for the cost of its calls, beside the
// same file read and thrown away: the price of the markers and of decoding the marked lines.
func BenchmarkReadCosts(b *testing.B) {
	path := filepath.Join(b.TempDir(), "t.jsonl")
	want := genTranscript(b, path, 100<<20)
	ids := map[string]bool{}
	for id := range want {
		ids[id] = true
	}
	size := fileSize(b, path)
	b.Run("read-only", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, f)
			f.Close()
		}
	})
	b.Run("costs", func(b *testing.B) {
		b.SetBytes(size)
		b.ReportAllocs()
		for b.Loop() {
			scan, err := ReadCosts(Transcript{Agent: "claude", Path: path}, ids)
			if err != nil || len(scan.Calls) != len(want) {
				b.Fatalf("%v: %d calls, want %d", err, len(scan.Calls), len(want))
			}
		}
	})
}
