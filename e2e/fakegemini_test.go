package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeGemini is a scripted Gemini API (generativelanguage v1beta, as Gemini CLI calls it when
// GOOGLE_GEMINI_BASE_URL points at it): the "model" answers each generateContent or
// streamGenerateContent request with the functionCalls of the next turn of its script, then a
// final text. It records the functionResponse parts Gemini CLI sends back: exactly what the model
// would read of each call.
//
// As in fakeOpenAI, the step is the number of the script's call ids already answered in the request
// (callID, nextTurn), not a request counter, so a retried request cannot shift the script.
type fakeGemini struct {
	t     *testing.T
	turns [][]scriptCall
	final string

	mu       sync.Mutex
	results  map[string]toolResult // by call id
	requests int                   // generateContent requests received
	other    []string              // requests to anything else
	bodies   []string              // the scripted requests' bodies, in order
}

func newFakeGemini(t *testing.T, turns [][]scriptCall, final string) (*fakeGemini, *httptest.Server) {
	f := &fakeGemini{t: t, turns: turns, final: final, results: map[string]toolResult{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

// result returns what the model read of call i (1-based) and whether it came back.
func (f *fakeGemini) result(i int) (toolResult, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.results[callID(i)]
	return r, ok
}

// first returns the body of the first scripted request: what the model reads at the start.
func (f *fakeGemini) first() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.bodies) == 0 {
		return ""
	}
	return f.bodies[0]
}

// log says what the fake received, for a failing test.
func (f *fakeGemini) log() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return fmt.Sprintf("fake Gemini API: %d generateContent requests; other requests: %q; last scripted body:\n%s",
		f.requests, f.other, tail(last(f.bodies), 8<<10))
}

// geminiRequest is the part of a generateContent request the script reads.
type geminiRequest struct {
	Contents []struct {
		Role  string       `json:"role"`
		Parts []geminiPart `json:"parts"`
	} `json:"contents"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
}

type geminiPart struct {
	Text             string `json:"text,omitempty"`
	FunctionResponse *struct {
		ID       string         `json:"id"`
		Name     string         `json:"name"`
		Response map[string]any `json:"response"`
	} `json:"functionResponse,omitempty"`
}

func (f *fakeGemini) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	_, method, _ := strings.Cut(r.URL.Path, ":")
	switch {
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v1beta/models/") &&
		(method == "generateContent" || method == "streamGenerateContent"):
		f.generate(w, body, method == "streamGenerateContent")
	case r.Method == http.MethodPost && method == "countTokens":
		f.note(r, body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"totalTokens":100}`)
	default:
		f.note(r, body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"error":{"code":404,"message":"not served by the e2e fake Gemini API","status":"NOT_FOUND"}}`)
	}
}

func (f *fakeGemini) note(r *http.Request, body []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.other = append(f.other, fmt.Sprintf("%s %s (%d bytes)", r.Method, r.URL, len(body)))
}

func (f *fakeGemini) generate(w http.ResponseWriter, body []byte, stream bool) {
	var req geminiRequest
	if err := json.Unmarshal(body, &req); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"code":400,"message":%q,"status":"INVALID_ARGUMENT"}}`, err.Error())
		return
	}
	// A request without function declarations is a side request (Gemini CLI sends none with -m
	// given, but a summary or a title would be one), outside the script.
	scripted := false
	for _, tl := range req.Tools {
		scripted = scripted || len(tl.FunctionDeclarations) > 0
	}
	f.mu.Lock()
	f.requests++
	answered := 0
	if scripted {
		f.bodies = append(f.bodies, string(body))
		for _, c := range req.Contents {
			// Text parts beside the functionResponses of a turn are what Gemini CLI attached to
			// them; the model reads them with the results.
			var beside []string
			for _, p := range c.Parts {
				if p.FunctionResponse == nil && p.Text != "" {
					beside = append(beside, p.Text)
				}
			}
			for _, p := range c.Parts {
				fr := p.FunctionResponse
				if fr == nil || !strings.HasPrefix(fr.ID, "call_e2e_") {
					continue
				}
				answered++
				f.results[fr.ID] = geminiResult(fr.Response, strings.Join(beside, "\n"))
			}
		}
	}
	f.mu.Unlock()

	var parts []map[string]any
	switch calls := nextTurn(f.turns, answered, callID); {
	case !scripted:
		parts = []map[string]any{{"text": "ok"}}
	case calls != nil:
		for _, c := range calls {
			parts = append(parts, map[string]any{"functionCall": map[string]any{"name": c.tool, "args": json.RawMessage(c.input), "id": c.id}})
		}
	default:
		parts = []map[string]any{{"text": f.final}}
	}
	b, _ := json.Marshal(map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]int{"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110},
		"modelVersion":  "gemini-2.5-flash",
	})
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, "data: %s\r\n\r\n", b)
}

// geminiResult is what the model reads of a functionResponse: Gemini CLI sends {"output": …} for
// a result and {"error": …} for a failure or a blocked call.
func geminiResult(resp map[string]any, beside string) toolResult {
	if e, ok := resp["error"]; ok {
		return toolResult{Text: textOf(e), IsError: true, Beside: beside}
	}
	if o, ok := resp["output"]; ok {
		return toolResult{Text: textOf(o), Beside: beside}
	}
	b, _ := json.Marshal(resp)
	return toolResult{Text: string(b), Beside: beside}
}

// textOf is v itself when it is a string, else its JSON.
func textOf(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func last(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[len(s)-1]
}
