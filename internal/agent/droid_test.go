package agent

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/mcpconfig"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// The hook payloads below are what Factory Droid 0.225.2 sent a logging hook in an offline
// `droid exec` (a fake Chat Completions API behind a custom model, the cue fixture as MCP server
// "fix"), 2026-12-02, paths shortened to /w. Droid sends no tool_use_id, and no hook at all after
// a failed call.
const (
	droidPre     = `{"session_id":"247dca45","transcript_path":"/w/home/.factory/sessions/-w-proj/247dca45.jsonl","cwd":"/w/proj","permission_mode":"auto-high","hook_event_name":"PreToolUse","tool_name":"fix___echo","tool_input":{"fail":"upstream quota exceeded"}}`
	droidPost    = `{"session_id":"247dca45","transcript_path":"/w/home/.factory/sessions/-w-proj/247dca45.jsonl","cwd":"/w/proj","permission_mode":"auto-high","hook_event_name":"PostToolUse","tool_name":"fix___echo","tool_input":{},"tool_response":"ok"}`
	droidStart   = `{"session_id":"247dca45","transcript_path":"/w/home/.factory/sessions/-w-proj/247dca45.jsonl","cwd":"/w/proj","permission_mode":"off","hook_event_name":"SessionStart","source":"startup","CLAUDE_ENV_FILE":"/w/home/.factory/temp/env/droid-env.sh"}`
	droidStop    = `{"session_id":"247dca45","transcript_path":"/w/home/.factory/sessions/-w-proj/247dca45.jsonl","cwd":"/w/proj","permission_mode":"auto-high","hook_event_name":"Stop","message_id":"afa98a1d","stop_hook_active":false,"tool_execution_count":0,"elapsed_time":661}`
	droidBuiltin = `{"session_id":"247dca45","cwd":"/w/proj","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/w/proj/a.txt"}}`
)

func TestDroidDecode(t *testing.T) {
	tp := "/w/home/.factory/sessions/-w-proj/247dca45.jsonl"
	servers := func() []mcpconfig.Server { return []mcpconfig.Server{{Name: "fix"}, {Name: "my___db"}} }
	for _, tc := range []struct {
		name, in string
		want     gate.Event
	}{
		{"before", droidPre, gate.Event{Kind: gate.Before, Agent: "droid", Hook: "PreToolUse", Key: "mcp__fix__echo", Server: "fix", Tool: "fix___echo",
			ArgsHash: hashOf(`{"fail":"upstream quota exceeded"}`), SessionID: "247dca45", Cwd: "/w/proj", TranscriptPath: tp}},
		{"a success", droidPost, gate.Event{Kind: gate.Success, Agent: "droid", Hook: "PostToolUse", Key: "mcp__fix__echo", Server: "fix", Tool: "fix___echo",
			ArgsHash: hashOf(`{}`), SessionID: "247dca45", Cwd: "/w/proj", TranscriptPath: tp}},
		{"session start", droidStart, gate.Event{Kind: gate.SessionStart, Agent: "droid", Hook: "SessionStart", SessionID: "247dca45", Cwd: "/w/proj", TranscriptPath: tp}},
		{"stop reads the transcript only", droidStop, gate.Event{Kind: gate.Other, Agent: "droid", Hook: "Stop", SessionID: "247dca45", Cwd: "/w/proj", TranscriptPath: tp}},
		{"a built-in tool is not ours", droidBuiltin, gate.Event{Kind: gate.Before, Agent: "droid", Hook: "PreToolUse", Tool: "Read",
			ArgsHash: hashOf(`{"file_path":"/w/proj/a.txt"}`), SessionID: "247dca45", Cwd: "/w/proj"}},
		{"a server whose name holds ___: the configured one wins",
			`{"hook_event_name":"PreToolUse","tool_name":"my___db___query","tool_input":{}}`,
			gate.Event{Kind: gate.Before, Agent: "droid", Hook: "PreToolUse", Key: string(ledger.NameKey("my___db", "query")), Server: "my___db", Tool: "my___db___query", ArgsHash: hashOf(`{}`)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Droid.Decode(strings.NewReader(tc.in), servers, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got.Key != tc.want.Key || got.Server != tc.want.Server || got.Kind != tc.want.Kind || got.Tool != tc.want.Tool ||
				got.ArgsHash != tc.want.ArgsHash || got.SessionID != tc.want.SessionID || got.TranscriptPath != tc.want.TranscriptPath || got.Hook != tc.want.Hook {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestDroidEncode(t *testing.T) {
	deny := Droid.Encode(gate.Event{Kind: gate.Before, Hook: "PreToolUse"}, gate.Answer{Deny: true, Reason: "R"})
	if string(deny.Stdout) != `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"R"}}`+"\n" {
		t.Errorf("deny: %s", deny.Stdout)
	}
	if r := Droid.Encode(gate.Event{Kind: gate.Before}, gate.Answer{}); len(r.Stdout) != 0 || r.Exit != 0 {
		t.Errorf("the zero answer encodes as %q, exit %d", r.Stdout, r.Exit)
	}
}

// testdata/droid-transcript.jsonl is the session transcript Droid 0.225.2 wrote in the run above
// (a success, an isError failure, a call of a tool that does not exist; the deferred-tools
// reminder cut short), with two lines added by hand after it: a call the gate denied and its
// result, whose text is what the model read of such a call in the e2e scenarios.
func readDroidTranscript(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "droid-transcript.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestScanDroidTranscript(t *testing.T) {
	data := readDroidTranscript(t)
	scan, next, err := scanDroidTranscript(bytes.NewReader(data), droidCursor{}, int64(len(data)), transcriptDecode)
	if err != nil {
		t.Fatal(err)
	}
	want := []transcriptFailure{
		{ID: "call_e2e_02", Tool: "fix___echo", Error: "upstream quota exceeded",
			ArgsHash: hashOf(`{"fail":"upstream quota exceeded"}`), Args: `{"fail":"upstream quota exceeded"}`},
		{ID: "call_e2e_03", Tool: "fix___nosuch", Error: "Not found: fix___nosuch. Only request exact tool names from the Deferred tools list in the latest system reminder. If the needed tool is not listed and is not already available, it is unavailable in this session; do not retry ToolSearch for this name.",
			ArgsHash: hashOf(`{}`), Args: `{}`},
	}
	if !slices.Equal(scan.Failures, want) {
		t.Errorf("failures (the gate's own deny is none of them):\n got %+v\nwant %+v", scan.Failures, want)
	}
	if next != (droidCursor{int64(len(data)), int64(len(data))}) {
		t.Errorf("next cursor %v, want the end twice (no call waits for its result)", next)
	}
}

// Reading up to every line boundary, then on from the cursor each read returned, finds each
// failure exactly once: a failure whose call was read before the cut still gets its tool's name.
func TestScanDroidTranscriptIncremental(t *testing.T) {
	data := readDroidTranscript(t)
	for i, c := range data {
		if c != '\n' {
			continue
		}
		var ids []string
		cur := droidCursor{}
		for _, size := range []int64{int64(i + 1), int64(len(data))} {
			scan, next, err := scanDroidTranscript(bytes.NewReader(data[:size]), cur, size, transcriptDecode)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range scan.Failures {
				ids = append(ids, f.ID+" "+f.Tool)
			}
			back, err := parseDroidCursor(next.String())
			if err != nil || back != next {
				t.Fatalf("cursor %v does not read back: %v, %v", next, back, err)
			}
			cur = next
		}
		if !slices.Equal(ids, []string{"call_e2e_02 fix___echo", "call_e2e_03 fix___nosuch"}) {
			t.Errorf("cut at %d: failures %q", i+1, ids)
		}
	}
}

func TestDroidBacklog(t *testing.T) {
	dir := t.TempDir()
	tp := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(tp, readDroidTranscript(t), 0o600); err != nil {
		t.Fatal(err)
	}
	ev := gate.Event{Agent: "droid", SessionID: "s", TranscriptPath: tp}
	scan, err := Droid.(gate.Backlog).Backlog(ev, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(scan.Failures) != 2 || scan.Failures[0].Key != "mcp__fix__echo" || scan.Failures[0].Kind != gate.Failure || scan.Failures[0].ToolUseID != "call_e2e_02" {
		t.Errorf("failures %+v", scan.Failures)
	}
	again, err := Droid.(gate.Backlog).Backlog(ev, scan.Cursor, nil)
	if err != nil || len(again.Failures) != 0 {
		t.Errorf("from the cursor: %+v, %v", again.Failures, err)
	}
	if _, err := Droid.(gate.Backlog).Backlog(ev, "12", nil); err == nil {
		t.Error("a cursor that is not FROM:SEEN gives no error")
	}
	// A transcript shorter than the cursor was replaced: read from its end, nothing counted again.
	if r, err := Droid.(gate.Backlog).Backlog(ev, "1:999999", nil); err != nil || !r.Replaced || len(r.Failures) != 0 {
		t.Errorf("replaced transcript: %+v, %v", r, err)
	}
}

func FuzzScanDroidTranscript(f *testing.F) {
	data := readDroidTranscript(f)
	f.Add(data, int64(0), int64(0))
	f.Add(data[:len(data)/2], int64(100), int64(900))
	f.Add([]byte(`{"message":{"content":[{"type":"tool_use","id":"a","name":"s___t"}]}}`+"\n"+`{"message":{"content":[{"type":"tool_result","tool_use_id":"a","is_error":true,"content":[{"type":"text","text":"x"}]}]}}`+"\n"), int64(0), int64(0))
	f.Fuzz(func(t *testing.T, in []byte, from, seen int64) {
		size := int64(len(in))
		if from < 0 || from > seen {
			return
		}
		cur := droidCursor{from, seen}
		scan, next, err := scanDroidTranscript(bytes.NewReader(in), cur, size, 1<<16)
		if err != nil {
			t.Fatal(err)
		}
		if next.From > next.Seen || next.Seen < min(seen, size) && seen < size {
			t.Fatalf("cursor %v from %v of %d", next, cur, size)
		}
		for _, fl := range scan.Failures {
			if fl.ID == "" || fl.Tool == "" || ownDeny(fl.Error) {
				t.Fatalf("failure %+v", fl)
			}
		}
		if next.Seen <= size {
			again, _, err := scanDroidTranscript(bytes.NewReader(in), next, size, 1<<16)
			if err != nil {
				t.Fatal(err)
			}
			if len(again.Failures) != 0 {
				t.Fatalf("a second scan from %v found %+v", next, again.Failures)
			}
		}
	})
}
