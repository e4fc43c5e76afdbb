package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// fakeAPI is a scripted Anthropic Messages API: the "model" answers the streamed requests of the
// conversation with one tool_use of tool per step, then a final text. It records the tool_result
// blocks Claude Code sends back, which is exactly the text the model would read.
//
// The step is not a request counter: it is the number of this script's tool_use ids already
// answered by a tool_result in the request, so a retried request, or an unrelated side request
// (a request whose tools do not include the scripted tool), cannot shift the script.
type fakeAPI struct {
	fakeModel // calls are tool_use ids (toolUseID); requests counts POST /v1/messages
	// firstBody is the body of the first request of the script: what the model reads at the
	// start of the session (SessionStart's context among it).
	firstBody string
	// usage gives the token usage the answer to the request after answered results reports;
	// nil reports the same small figures for every answer.
	usage func(answered int) apiUsage
	// finalServed is set once the script's final text was answered: the session's last turn.
	finalServed bool
}

// apiUsage is the token usage one answer reports: the input figures and the first output count in
// message_start, the final output count in message_delta, as the Messages API streams them.
type apiUsage struct {
	Input, CacheCreation, CacheRead int
	// StartOutput is message_start's output_tokens; Output the final one, in message_delta.
	StartOutput, Output int
}

// defaultUsage is what every answer reports when the script sets no usage.
var defaultUsage = apiUsage{Input: 100, StartOutput: 1, Output: 10}

// scriptCall is one tool_use of the script: the tool and its input, as JSON.
type scriptCall struct {
	tool, input string
}

type toolResult struct {
	Text    string
	IsError bool
	// Beside is the text of the other blocks of the same message (context attached by hooks).
	Beside string
}

// read is all the model reads of a result: its text and the context beside it.
func (r toolResult) read() string { return r.Text + "\n" + r.Beside }

// toolUseID is the id of the tool_use of step i (1-based).
func toolUseID(i int) string { return fmt.Sprintf("toolu_e2e_%02d", i) }

func newFakeAPI(t *testing.T, tool, input string, calls int, final string) (*fakeAPI, *httptest.Server) {
	turns := make([][]scriptCall, calls)
	for i := range turns {
		turns[i] = []scriptCall{{tool, input}}
	}
	return newScriptAPI(t, turns, final)
}

// newScriptAPI is a fake API whose model takes turns in order; the tool_uses of all turns are
// numbered 1, 2, … (toolUseID) across the script.
func newScriptAPI(t *testing.T, turns [][]scriptCall, final string) (*fakeAPI, *httptest.Server) {
	f := &fakeAPI{fakeModel: fakeModel{turns: turns, final: final, id: toolUseID, results: map[string]toolResult{}}}
	return f, serveFake(t, f)
}

// served reports whether the script's final text was answered.
func (f *fakeAPI) served() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.finalServed
}

// first returns the body of the first scripted request.
func (f *fakeAPI) first() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.firstBody
}

// messagesRequest is the part of a Messages API request the script reads.
type messagesRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"` // a string or an array of blocks
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

type contentBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ToolUseID string          `json:"tool_use_id"`
	IsError   bool            `json:"is_error"`
	Content   json.RawMessage `json:"content"` // tool_result: a string or an array of blocks
}

// blocksText joins the text of content that is either a JSON string or an array of blocks.
func blocksText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var bs []contentBlock
	if json.Unmarshal(raw, &bs) != nil {
		return string(raw)
	}
	var parts []string
	for _, b := range bs {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		f.messages(w, body)
	case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
		f.note(r, body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"data":[{"type":"model","id":"claude-sonnet-4-5","display_name":"Claude Sonnet 4.5","created_at":"2025-09-29T00:00:00Z"}],"has_more":false,"first_id":"claude-sonnet-4-5","last_id":"claude-sonnet-4-5"}`)
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages/count_tokens":
		f.note(r, body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"input_tokens":100}`)
	default:
		f.note(r, body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"type":"error","error":{"type":"not_found_error","message":"not served by the e2e fake API"}}`)
	}
}

func (f *fakeAPI) messages(w http.ResponseWriter, body []byte) {
	var req messagesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"type":"error","error":{"type":"invalid_request_error","message":%q}}`, err.Error())
		return
	}
	scripted := false
	for _, tl := range req.Tools {
		for _, turn := range f.turns {
			for _, c := range turn {
				scripted = scripted || tl.Name == c.tool
			}
		}
	}
	f.mu.Lock()
	f.requests++
	if scripted && f.firstBody == "" {
		f.firstBody = string(body)
	}
	answered := 0
	for _, m := range req.Messages {
		var blocks []contentBlock
		if m.Role != "user" || json.Unmarshal(m.Content, &blocks) != nil {
			continue
		}
		// Text blocks beside the tool_results of a message are context Claude Code attached to
		// them (hook additionalContext in <system-reminder>s): the model reads them with the result.
		var beside []string
		for _, b := range blocks {
			if b.Type == "text" {
				beside = append(beside, b.Text)
			}
		}
		for _, b := range blocks {
			if b.Type != "tool_result" || !strings.HasPrefix(b.ToolUseID, "toolu_e2e_") {
				continue
			}
			answered++
			f.results[b.ToolUseID] = toolResult{Text: blocksText(b.Content), IsError: b.IsError, Beside: strings.Join(beside, "\n")}
		}
	}
	f.mu.Unlock()

	var blocks []sseBlock
	stop := "end_turn"
	switch {
	case !scripted:
		// A side request (title, summary, …): not part of the script.
		blocks = []sseBlock{{text: "ok"}}
	case answered < f.calls():
		// The next turn is the one whose first tool_use is the first unanswered one.
		n := 0
		for _, turn := range f.turns {
			if n >= answered {
				for _, c := range turn {
					n++
					blocks = append(blocks, sseBlock{toolUseID: toolUseID(n), name: c.tool, input: c.input})
				}
				break
			}
			n += len(turn)
		}
		stop = "tool_use"
	default:
		blocks = []sseBlock{{text: f.final}}
		f.mu.Lock()
		f.finalServed = true
		f.mu.Unlock()
	}
	model := req.Model
	if model == "" {
		model = "claude-sonnet-4-5"
	}
	u := defaultUsage
	f.mu.Lock()
	usage := f.usage
	f.mu.Unlock()
	if usage != nil && scripted {
		u = usage(answered)
	}
	if !req.Stream {
		writeMessageJSON(w, model, blocks, stop, u)
		return
	}
	writeMessageSSE(w, model, blocks, stop, u)
}

// calls is the number of tool_uses in the script.
func (f *fakeAPI) calls() int {
	n := 0
	for _, turn := range f.turns {
		n += len(turn)
	}
	return n
}

// sseBlock is one content block of an answer: text, or a tool_use when toolUseID is set.
type sseBlock struct {
	text      string
	toolUseID string
	name      string
	input     string
}

func writeMessageJSON(w http.ResponseWriter, model string, blocks []sseBlock, stop string, u apiUsage) {
	var content []map[string]any
	for _, b := range blocks {
		if b.toolUseID != "" {
			content = append(content, map[string]any{"type": "tool_use", "id": b.toolUseID, "name": b.name, "input": json.RawMessage(b.input)})
		} else {
			content = append(content, map[string]any{"type": "text", "text": b.text})
		}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"id": "msg_e2e", "type": "message", "role": "assistant", "model": model, "content": content,
		"stop_reason": stop, "stop_sequence": nil, "usage": u.fields(u.Output),
	})
}

// writeMessageSSE streams the answer the way the Messages API does: message_start, then per block
// content_block_start, one delta and content_block_stop, then message_delta with the stop reason
// and message_stop.
func writeMessageSSE(w http.ResponseWriter, model string, blocks []sseBlock, stop string, u apiUsage) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	event := func(name string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": "msg_e2e", "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": u.fields(u.StartOutput),
	}})
	for i, b := range blocks {
		if b.toolUseID != "" {
			event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "tool_use", "id": b.toolUseID, "name": b.name, "input": map[string]any{}}})
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "input_json_delta", "partial_json": b.input}})
		} else {
			event("content_block_start", map[string]any{"type": "content_block_start", "index": i,
				"content_block": map[string]any{"type": "text", "text": ""}})
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": i,
				"delta": map[string]any{"type": "text_delta", "text": b.text}})
		}
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": u.Output}})
	event("message_stop", map[string]any{"type": "message_stop"})
}

// fields is the usage object of an answer with output output tokens.
func (u apiUsage) fields(output int) map[string]int {
	m := map[string]int{"input_tokens": u.Input, "output_tokens": output}
	if u.CacheCreation > 0 || u.CacheRead > 0 {
		m["cache_creation_input_tokens"], m["cache_read_input_tokens"] = u.CacheCreation, u.CacheRead
	}
	return m
}
