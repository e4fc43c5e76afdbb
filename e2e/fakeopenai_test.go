package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
)

// fakeOpenAI is a scripted model behind the two OpenAI wire protocols the other agents speak: the
// Responses API (POST /v1/responses, Codex) and Chat Completions (POST /v1/chat/completions, Qwen
// Code and Copilot CLI), both streamed as server-sent events. Like fakeAPI, the "model" answers
// with the script's turns of tool calls, then a final text, and records what came back for each
// call: the tool output and the context the agent put beside it, which is exactly what the model
// would read.
//
// The step is the number of this script's call ids already answered in the request (the request
// carries the whole conversation), so a retried request cannot shift the script, and a request
// that offers no tools at all (a title or summary) is answered with text outside the script.
type fakeOpenAI struct {
	fakeModel          // calls are callID ids; requests counts scripted requests
	bodies    []string // every request body, for the failure dump
}

// callID is the id of the tool call of step i (1-based) in the OpenAI fakes.
func callID(i int) string { return fmt.Sprintf("call_e2e_%02d", i) }

func newFakeOpenAI(t *testing.T, turns [][]scriptCall, final string) (*fakeOpenAI, *httptest.Server) {
	f := &fakeOpenAI{fakeModel: fakeModel{turns: turns, final: final, id: callID, results: map[string]toolResult{}}}
	return f, serveFake(t, f)
}

// requestBodies returns the bodies of the requests received so far, in order.
func (f *fakeOpenAI) requestBodies() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.bodies)
}

// first returns the body of the first scripted request: what the model reads at the start.
func (f *fakeOpenAI) first() string {
	if b := f.requestBodies(); len(b) > 0 {
		return b[0]
	}
	return ""
}

// dump is what the fake received, for a failing test's log.
func (f *fakeOpenAI) dump() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "fake model API: %d scripted requests; other requests: %q\n", f.requests, f.other)
	for i, body := range f.bodies {
		// The conversation only: the tools and instructions are the same every time, and long.
		var req map[string]json.RawMessage
		if json.Unmarshal([]byte(body), &req) == nil {
			delete(req, "tools")
			delete(req, "instructions")
			if short, err := json.Marshal(req); err == nil {
				body = string(short)
			}
		}
		fmt.Fprintf(&b, "--- request %d (last 6 KB, without tools):\n%s\n", i+1, tail(body, 6<<10))
	}
	return b.String()
}

func (f *fakeOpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	switch {
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/responses"):
		f.serveResponses(w, body)
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/chat/completions"):
		f.serveChat(w, r, body)
	case r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models"):
		f.note(r, body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[{"id":"gpt-5","object":"model","created":1700000000,"owned_by":"e2e"},{"id":"gpt-4.1","object":"model","created":1700000000,"owned_by":"e2e"},{"id":"fake-model","object":"model","created":1700000000,"owned_by":"e2e"}]}`)
	default:
		f.note(r, body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"error":{"type":"not_found_error","message":"not served by the e2e fake model API"}}`)
	}
}

// step records a scripted request's answered calls and returns the calls of the next turn, or
// nil when the script is done and the final text is due.
func (f *fakeOpenAI) step(body []byte, answered map[string]toolResult) []numberedCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests++
	f.bodies = append(f.bodies, string(body))
	n := 0
	for id, r := range answered {
		if strings.HasPrefix(id, "call_e2e_") {
			f.results[id] = r
			n++
		}
	}
	return nextTurn(f.turns, n, callID)
}

// numberedCall is a call of the script with its id.
type numberedCall struct {
	id string
	scriptCall
}

// nextTurn returns the turn whose first call is the first of the script not yet answered
// (answered calls so far), its calls numbered 1, 2, … across the script by id; nil when every call
// has been answered.
func nextTurn(turns [][]scriptCall, answered int, id func(int) string) []numberedCall {
	n := 0
	for _, turn := range turns {
		if n >= answered {
			var calls []numberedCall
			for _, c := range turn {
				n++
				calls = append(calls, numberedCall{id(n), c})
			}
			return calls
		}
		n += len(turn)
	}
	return nil
}

// addBeside adds text to what the model reads beside each call of turn (context the agent put
// after the calls' outputs), a line of its own after what is there already.
func addBeside(answered map[string]toolResult, turn []string, text string) {
	for _, id := range turn {
		r := answered[id]
		r.Beside = strings.TrimPrefix(r.Beside+"\n"+text, "\n")
		answered[id] = r
	}
}

// --- Responses API (Codex) ---

// responsesItem is the part of a Responses API input item the fake reads.
type responsesItem struct {
	Type    string          `json:"type"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"` // a string or an array of {type, text}
	CallID  string          `json:"call_id"`
	Output  json.RawMessage `json:"output"` // a string or an array of {type, text}
}

// partsText joins the text of content that is a JSON string or an array of {type, text} parts.
func partsText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return string(raw)
	}
	var texts []string
	for _, p := range parts {
		if p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

func (f *fakeOpenAI) serveResponses(w http.ResponseWriter, body []byte) {
	var req struct {
		Model string            `json:"model"`
		Input []responsesItem   `json:"input"`
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"type":"invalid_request_error","message":%q}}`, err.Error())
		return
	}
	// Context the agent adds about a call (hook additionalContext) arrives as developer or user
	// messages around the call's output, before the model's next item: it belongs to the calls
	// of the latest assistant turn.
	answered := map[string]toolResult{}
	var turn []string // call ids of the latest model turn
	last := ""        // type of the previous item
	for _, it := range req.Input {
		switch {
		case it.Type == "function_call":
			if last != "function_call" {
				turn = nil
			}
			turn = append(turn, it.CallID)
		case it.Type == "function_call_output":
			r := answered[it.CallID]
			r.Text = partsText(it.Output)
			answered[it.CallID] = r
		case it.Type == "message" && (it.Role == "developer" || it.Role == "user"):
			addBeside(answered, turn, partsText(it.Content))
		default: // the model's own text or reasoning: a new turn begins
			turn = nil
		}
		last = it.Type
	}
	calls := f.step(body, answered)

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	event := func(data map[string]any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", data["type"], b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	respID := fmt.Sprintf("resp_e2e_%d", f.requestCount())
	event(map[string]any{"type": "response.created", "response": map[string]any{"id": respID}})
	var items []map[string]any
	if len(calls) == 0 {
		items = append(items, map[string]any{"type": "message", "role": "assistant", "id": "msg_" + respID,
			"content": []map[string]any{{"type": "output_text", "text": f.final}}})
	}
	for _, c := range calls {
		ns, name := c.tool, c.tool
		if i := strings.LastIndex(c.tool, "__"); i > 0 {
			ns, name = c.tool[:i], c.tool[i+2:]
		}
		items = append(items, map[string]any{"type": "function_call", "id": "fc_" + c.id, "call_id": c.id,
			"namespace": ns, "name": name, "arguments": c.input})
	}
	for i, it := range items {
		event(map[string]any{"type": "response.output_item.added", "output_index": i, "item": it})
		event(map[string]any{"type": "response.output_item.done", "output_index": i, "item": it})
	}
	event(map[string]any{"type": "response.completed", "response": map[string]any{"id": respID,
		"usage": map[string]any{"input_tokens": 100, "input_tokens_details": nil, "output_tokens": 10,
			"output_tokens_details": nil, "total_tokens": 110}}})
}

func (f *fakeOpenAI) requestCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests
}

// --- Chat Completions (Qwen Code, Copilot CLI) ---

// chatMessage is the part of a Chat Completions message the fake reads.
type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"` // a string, null or an array of {type, text}
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []struct {
		ID string `json:"id"`
	} `json:"tool_calls"`
}

func (f *fakeOpenAI) serveChat(w http.ResponseWriter, r *http.Request, body []byte) {
	var req struct {
		Model    string            `json:"model"`
		Stream   bool              `json:"stream"`
		Messages []chatMessage     `json:"messages"`
		Tools    []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"type":"invalid_request_error","message":%q}}`, err.Error())
		return
	}
	model := req.Model
	if model == "" {
		model = "fake-model"
	}
	if len(req.Tools) == 0 {
		// A side request (a title, a summary): not part of the script.
		f.note(r, body)
		writeChat(w, req.Stream, model, "ok", nil)
		return
	}
	// The tool messages answer the calls of the latest assistant message; user or system
	// messages after them, before the next assistant message, are context the agent attached.
	answered := map[string]toolResult{}
	var turn []string
	for _, m := range req.Messages {
		switch m.Role {
		case "assistant":
			turn = nil
			for _, c := range m.ToolCalls {
				turn = append(turn, c.ID)
			}
		case "tool":
			res := answered[m.ToolCallID]
			res.Text = partsText(m.Content)
			answered[m.ToolCallID] = res
		case "user", "system":
			addBeside(answered, turn, partsText(m.Content))
		}
	}
	calls := f.step(body, answered)
	if len(calls) == 0 {
		writeChat(w, req.Stream, model, f.final, nil)
		return
	}
	writeChat(w, req.Stream, model, "", calls)
}

// writeChat answers a Chat Completions request with text, or with tool calls when calls is not
// empty: streamed as chat.completion.chunk deltas ending in data: [DONE], or as one
// chat.completion object.
func writeChat(w http.ResponseWriter, stream bool, model, text string, calls []numberedCall) {
	finish := "stop"
	var toolCalls []map[string]any
	for i, c := range calls {
		toolCalls = append(toolCalls, map[string]any{"index": i, "id": c.id, "type": "function",
			"function": map[string]any{"name": c.tool, "arguments": c.input}})
		finish = "tool_calls"
	}
	usage := map[string]int{"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
	if !stream {
		msg := map[string]any{"role": "assistant", "content": text}
		if len(toolCalls) > 0 {
			msg["content"] = nil
			msg["tool_calls"] = toolCalls
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": "chatcmpl-e2e", "object": "chat.completion", "created": 1700000000,
			"model": model, "choices": []map[string]any{{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	chunk := func(delta map[string]any, finish any, usage any) {
		b, _ := json.Marshal(map[string]any{"id": "chatcmpl-e2e", "object": "chat.completion.chunk", "created": 1700000000,
			"model": model, "choices": []map[string]any{{"index": 0, "delta": delta, "finish_reason": finish}}, "usage": usage})
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	chunk(map[string]any{"role": "assistant", "content": ""}, nil, nil)
	if len(toolCalls) > 0 {
		chunk(map[string]any{"tool_calls": toolCalls}, nil, nil)
	} else {
		chunk(map[string]any{"content": text}, nil, nil)
	}
	chunk(map[string]any{}, finish, usage)
	io.WriteString(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}
