package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// fakeModel is what the scripted fake model APIs (fakeAPI, fakeOpenAI, fakeGemini) share: the
// script they play, and what came back for each of its calls.
type fakeModel struct {
	turns [][]scriptCall   // the model's turns: each one or more calls (parallel calls)
	final string           // the final text answer
	id    func(int) string // the id of the call of step i (1-based) on this fake's wire

	mu       sync.Mutex
	results  map[string]toolResult // by call id
	requests int                   // scripted (or model) requests received
	other    []string              // requests to anything else
}

// result returns what the model read of call i (1-based) and whether it came back.
func (f *fakeModel) result(i int) (toolResult, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.results[f.id(i)]
	return r, ok
}

// note records a request the fake does not serve as part of the script.
func (f *fakeModel) note(r *http.Request, body []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.other = append(f.other, fmt.Sprintf("%s %s (%d bytes)", r.Method, r.URL, len(body)))
}

// serveFake serves a fake API on a local port for the length of the test.
func serveFake(t *testing.T, h http.Handler) *httptest.Server {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}
