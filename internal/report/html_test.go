package report

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/yamlfile"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// nightLedger is a session with every kind of lane: a tool that trips, fails its first trial and
// passes its second; a server that trips server-wide (its tool above it); a stretch of shadow mode.
func nightLedger() (*history, time.Time) {
	var h history
	at := t0
	step := func(d time.Duration) time.Time { at = at.Add(d); return at }
	for range 3 {
		h.fail("mcp__db__query", "MCP error -32001: Request timed out", step(time.Minute))
	}
	h.add(h.b.Gate(states.Call{Tool: "mcp__db__query"}, step(10*time.Second), nil, false).Entries) // blocked
	h.add(h.b.Gate(states.Call{Tool: "mcp__db__query"}, step(2*time.Minute), nil, false).Entries)  // trial
	h.fail("mcp__db__query", "MCP error -32001: Request timed out", step(5*time.Second))           // trial fails
	h.add(h.b.Gate(states.Call{Tool: "mcp__db__query"}, step(5*time.Minute), nil, false).Entries)  // trial
	h.add(h.b.Success(states.Call{Tool: "mcp__db__query"}, step(3*time.Second)).Entries)           // closes
	h.fail("mcp__github__search", "HTTP 401 Unauthorized: Bad credentials", step(time.Minute))
	for range 4 {
		h.add(h.b.Gate(states.Call{Tool: "mcp__github__get_file"}, step(30*time.Second), nil, true).Entries) // shadow
	}
	for _, f := range []string{"README.md", "docs/INSTALL.md"} { // calls at fault, never counted
		h.fail("mcp__github__get_file_contents", "failed to get file contents: GET https://api.github.com/repos/acme/web/contents/"+f+": 404 Not Found []", step(time.Minute))
	}
	return &h, step(10 * time.Minute)
}

func renderHTML(t testing.TB, entries []ledger.Entry, now time.Time) string {
	t.Helper()
	r := Build(entries, Options{Now: now, Timeline: true})
	var b bytes.Buffer
	if err := r.HTML(&b, nil); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

var (
	laneAttr = regexp.MustCompile(`data-lane="([^"]*)"`)
	openSpan = regexp.MustCompile(`<rect class="open" data-state="OPEN" data-from="([^"]+)" data-to="([^"]+)"`)
)

func TestHTMLLanesAndSpans(t *testing.T) {
	h, now := nightLedger()
	page := renderHTML(t, h.entries, now)
	r := Build(h.entries, Options{Now: now})
	var lanes []string
	for _, m := range laneAttr.FindAllStringSubmatch(page, -1) {
		lanes = append(lanes, m[1])
	}
	// One lane per circuit, and one for the tool whose calls only failed on their own terms.
	if len(lanes) != len(r.Circuits)+1 || !strings.Contains(page, `data-lane="mcp__github__get_file_contents" data-state="CLOSED"`) {
		t.Fatalf("%d lanes %v for %d circuits in the report and one tool with call errors only", len(lanes), lanes, len(r.Circuits))
	}
	if n := strings.Count(page, `<line class="call_error"`); n != 2 {
		t.Errorf("%d call-error marks, want the 2 calls that failed on their own terms", n)
	}
	// Server circuits sit above their tools.
	if i, j := strings.Index(page, `data-lane="mcp__github__*"`), strings.Index(page, `data-lane="mcp__github__search"`); i < 0 || j < 0 || i > j {
		t.Errorf("the server lane mcp__github__* is not above its tool's lane (at %d, tool at %d)", i, j)
	}
	// Every OPEN span starts at a trip the ledger recorded.
	trips := map[string]bool{}
	prev := map[string]ledger.State{}
	for _, e := range h.entries {
		if states.Opens(prev[e.Tool], e) {
			trips[e.At.UTC().Format(time.RFC3339)] = true
		}
		prev[e.Tool] = e.State
	}
	spans := openSpan.FindAllStringSubmatch(page, -1)
	if len(spans) < 3 {
		t.Fatalf("%d OPEN spans, want the db trip, its re-trip and the github trips", len(spans))
	}
	for _, m := range spans {
		if !trips[m[1]] {
			t.Errorf("an OPEN span starts at %s, where the ledger has no trip (trips: %v)", m[1], trips)
		}
	}
	for _, want := range []string{`<line class="trip"`, `<line class="trial"`, `<line class="blocked"`, `<line class="would_block"`, `<line class="close"`, `<line class="failure"`, `<title>`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page has no %s", want)
		}
	}
	for _, banned := range []string{"<script", "<link", "<img", "<iframe", "src=", "href=", "@import", "url("} {
		if strings.Contains(page, banned) {
			t.Errorf("the page is not self-contained: it holds %q", banned)
		}
	}
}

// TestHTMLSameNumbersAsMarkdown: the figures beside the timeline are the Markdown report's.
func TestHTMLSameNumbersAsMarkdown(t *testing.T) {
	h, now := nightLedger()
	r := Build(h.entries, Options{Now: now, Timeline: true})
	var b bytes.Buffer
	if err := r.HTML(&b, nil); err != nil {
		t.Fatal(err)
	}
	page, md := b.String(), r.Markdown()
	for _, c := range r.Circuits {
		row := regexp.MustCompile(`<tr data-tool="` + regexp.QuoteMeta(c.Tool) + `"><td><code>(?:[^<]|<wbr>)*</code></td><td>([^<]*)</td><td class="num">(\d+)</td>`).FindStringSubmatch(page)
		if row == nil {
			t.Errorf("no table row for %s", c.Tool)
			continue
		}
		mdRow := "| " + cell(c.Tool) + " | " + row[1] + " | " + row[2] + " |"
		if !strings.Contains(md, mdRow) {
			t.Errorf("HTML row %s / %s / %s is not in the Markdown report:\n%s", c.Tool, row[1], row[2], md)
		}
	}
	if want := `data-figure="calls_blocked">` + strconv.Itoa(r.CallsBlocked) + `<`; !strings.Contains(page, want) {
		t.Errorf("calls blocked: the page lacks %s", want)
	}
}

// TestHTMLHostileNames: names and texts from a ledger render as text, never as markup, and bidi
// overrides are shown as escapes instead of reversing what follows.
func TestHTMLHostileNames(t *testing.T) {
	evil := "mcp__ev\u202eil\"'__<script>alert(1)</script>"
	entries := []ledger.Entry{{
		Tool: evil, Server: "ev\u202eil\"'<img src=x onerror=alert(1)>", State: ledger.Open, FailureType: ledger.Auth,
		FailureCount: 1, TrippedAt: t0, At: t0, Event: ledger.EventTrip, Cause: "<b>bold</b>",
		Error: "HTTP 401 \"quoted\" <iframe src=//x>\u202e",
	}}
	page := renderHTML(t, entries, t0.Add(time.Hour))
	for _, banned := range []string{"<script>", "<img", "<iframe", "<b>bold", "\u202e"} {
		if strings.Contains(page, banned) {
			t.Errorf("the page holds %q as is", banned)
		}
	}
	// A name no agent writes and the error text are data, as in the deny reason: quoted, their own
	// brackets ‹ ›, escapes shown.
	for _, want := range []string{"‹script›alert(1)‹/script›", `\u202e`, "‹iframe src=//x›"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page does not show %q as text", want)
		}
	}
}

// TestHTMLSize: a 100,000-entry ledger gives a page under 1 MB, however busy its lanes.
func TestHTMLSize(t *testing.T) {
	data := ledgerOf(100_000)
	entries, problems := ledger.Parse(data, 1, yamlfile.Item)
	if len(problems) > 0 {
		t.Fatal(problems[0])
	}
	page := renderHTML(t, entries, t0.Add(48*time.Hour))
	if len(page) >= 1<<20 {
		t.Errorf("the page is %d bytes for 100,000 entries, want under 1 MiB", len(page))
	}
	t.Logf("100,000 entries: %d bytes, %d lanes", len(page), len(laneAttr.FindAllString(page, -1)))
}

func TestOnGrid(t *testing.T) {
	from := t0
	to := t0.Add(gridColumns * time.Minute)
	var spans []Span
	at := from
	for i := 0; at.Before(to); i++ {
		st := ledger.Closed
		if i%2 == 1 {
			st = ledger.Open
		}
		spans = append(spans, Span{From: at, To: at.Add(10 * time.Second), State: st})
		at = at.Add(10 * time.Second)
	}
	got := onGrid(spans, from, to, gridColumns)
	if len(got) != 1 || got[0].State != ledger.Open || !got[0].From.Equal(from) || !got[0].To.Equal(to) {
		t.Errorf("a circuit that flapped every 10 s over the window: got %d spans (%v), want one OPEN span: each column shows the worst state it held", len(got), got)
	}
}
