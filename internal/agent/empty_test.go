package agent

import (
	"strings"
	"testing"
)

// TestEmptyResult: which results of a call are empty (docs/circuits.md, "Empty results").
func TestEmptyResult(t *testing.T) {
	for _, tc := range []struct {
		response string
		empty    bool
	}{
		{`[]`, true},
		{`{}`, true},
		{`null`, true},
		{`""`, true},
		{`[{"type":"text","text":""}]`, true},
		{`[{"type":"text","text":"  \n"}]`, true},
		{`[{"type":"text","text":"[]"}]`, true},
		{`[{"type":"text","text":"{ }"}]`, true},
		{`[{"type":"text","text":"No results"}]`, true},
		{`[{"type":"text","text":"0 results"}]`, true},
		{`[{"type":"text","text":"Query returned no rows"}]`, true},
		{`[{"type":"text","text":"No results"},{"type":"text","text":""}]`, true},
		{`{"content":[],"isError":false}`, true},
		{`{"content":[{"type":"text","text":"[]"}]}`, true},
		{`[{"type":"text","text":"Refunds are issued within 14 days."}]`, false},
		{`[{"type":"text","text":"[1]"}]`, false},
		{`[{"type":"text","text":"0"}]`, false},
		{`[{"type":"image","data":"","mimeType":"image/png"}]`, false},
		{`[{"type":"text","text":"No results"},{"type":"text","text":"but see: x"}]`, false},
		{`{"content":[],"isError":true}`, false},
		{`{"content":[],"structuredContent":{"count":0}}`, false},
		{`0`, false},
		{`false`, false},
		{`[{"type":"text","text":"No results for the first query; the second matched: ` + strings.Repeat("x", 300) + `"}]`, false},
		{`[{"type":"text","text":"` + strings.Repeat(" ", 5000) + `"}]`, false}, // too long to look at: not empty
	} {
		ev, err := readAll(t, `{"hook_event_name":"PostToolUse","tool_name":"mcp__a__b","tool_input":{},"tool_response":`+tc.response+`}`)
		if err != nil {
			t.Fatalf("%s: %v", tc.response, err)
		}
		if ev.Empty != tc.empty {
			t.Errorf("%.80s: empty %v, want %v", tc.response, ev.Empty, tc.empty)
		}
	}
	// Only after a call: a failure's or a pre-call event's response is never read as empty.
	ev, err := readAll(t, `{"hook_event_name":"PostToolUseFailure","tool_name":"mcp__a__b","tool_response":[],"error":"x"}`)
	if err != nil || ev.Empty {
		t.Errorf("a failure: empty %v (%v)", ev.Empty, err)
	}
}
