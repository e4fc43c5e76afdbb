package fallbacks

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

func ExampleMarkdown() {
	now := time.Date(2026, 11, 29, 14, 23, 0, 0, time.UTC)
	opts := Propose(Request{
		Tool:      "mcp__fetch__fetch",
		Type:      ledger.Timeout,
		Cause:     "connection_refused",
		Now:       now,
		OpenUntil: now.Add(time.Minute),
	})
	fmt.Print(Markdown("mcp__fetch__fetch", ledger.Timeout, opts))
	// Output:
	// ## Fallback Options for mcp__fetch__fetch
	//
	// Failure type: TIMEOUT — the server is slow, down or unreachable
	//
	// Option 1 — Substitute: Use WebFetch instead
	//   → Command: WebFetch(url: "<https://…>", prompt: "<what to extract>")
	//   → Gap: one public URL per call: no JavaScript, login, cookies, clicks or forms; the page is summarised by a small model, so ask for exact quotes
	//   → When: when the task cannot wait until 2026-11-29T14:24:00Z
	//
	// Option 2 — Degrade: Skip this step, continue without fetch on fetch
	//   → Command: skip the calls to mcp__fetch__fetch and write in the answer: "Not done: fetch on fetch, mcp__fetch__fetch unavailable (TIMEOUT)"
	//   → Impact: the result lacks what mcp__fetch__fetch would have provided; say so instead of guessing it
	//   → When: when the step is optional or no substitute fits; come back to it after 2026-11-29T14:24:00Z
	//
	// Option 3 — Retry after cooldown at 2026-11-29T14:24:00Z (in 1m0s)
	//   → Run: mcp-circuit-breaker probe mcp__fetch__fetch
	//   → Gap: the task waits; if the server is still down the trial fails and the cooldown doubles (up to 10 min) (cause: connection_refused)
	//   → When: not before 2026-11-29T14:24:00Z: the first call after that is let through as the trial, calls before it are denied, so do not retry earlier; the probe checks the server without spending a real call
}

func ExampleShort() {
	now := time.Date(2026, 11, 29, 14, 23, 0, 0, time.UTC)
	opts := Propose(Request{Tool: "mcp__github__search_issues", Type: ledger.RateLimit, Now: now, RetryAfter: 45 * time.Second})
	fmt.Println(Short(opts, 200))
	// Output:
	// 1) Use Bash(gh …) instead
	// 2) Skip this step, continue without search issues on github
	// 3) Retry after cooldown at 2026-11-29T14:23:45Z (in 45s) -> mcp-circuit-breaker probe mcp__github__search_issues
}

// shortCases are option lists for the Short properties: real proposals and hand-made extremes.
func shortCases() map[string][]Option {
	now := time.Date(2026, 11, 29, 14, 23, 0, 0, time.UTC)
	long := strings.Repeat("ünïcödé wörds ", 40)
	cat, _ := parseCatalog("f.yaml", []byte(`fallbacks:
  - match: "*"
    substitutes:
      - {tool: "mcp__alt__search", command: "`+long+`", gap: "`+long+`"}
      - {tool: "Bash(x)", command: "averyveryveryveryveryveryveryveryveryveryverylongsingleword", kind: lower_permission}
`))
	open := func(k string) bool { return k == "mcp__alt__*" }
	cases := map[string][]Option{}
	for _, typ := range ledger.FailureTypes {
		cases[string(typ)] = Propose(Request{
			Tool: "mcp__github__search_issues", Type: typ, Now: now, OpenUntil: now.Add(90 * time.Second),
			Catalog: cat, Tools: testCache(), IsOpen: open,
		})
	}
	cases["person only"] = Propose(Request{Tool: "mcp__s__t", Type: ledger.Unknown})
	cases["auth no time"] = Propose(Request{Tool: "mcp__s__t", Type: ledger.Auth})
	cases["retry first"] = []Option{
		{Rank: "3", Kind: KindRetry, Title: "Retry after cooldown at 2026-11-29T14:24:00Z (in 1m0s)", Command: "probe", Gap: "g", When: "w"},
		{Rank: "1", Kind: KindSubstitute, Title: long, Command: long, Gap: long, When: long},
	}
	cases["no retry"] = []Option{{Rank: "1", Kind: KindSubstitute, Title: long, Command: "c", Gap: "g", When: "w"}}
	return cases
}

func TestShortRespectsBudget(t *testing.T) {
	for name, opts := range shortCases() {
		t.Run(name, func(t *testing.T) {
			items := shortItems(opts)
			forms := map[string]bool{}
			for _, it := range items {
				for _, f := range it.forms {
					forms[f] = true
				}
			}
			ts := ""
			for _, o := range opts {
				if o.Kind == KindRetry {
					ts, _ = findTimestamp(o.Title)
				}
			}
			for max := -1; max <= 2500; max++ {
				s := Short(opts, max)
				if len(s) > max && !(max < 0 && s == "") {
					t.Fatalf("max %d: %d bytes: %q", max, len(s), s)
				}
				if !utf8.ValidString(s) {
					t.Fatalf("max %d: invalid UTF-8 %q", max, s)
				}
				if ts != "" && max >= len(ts) && !strings.Contains(s, ts) {
					t.Fatalf("max %d: the retry time %s is missing: %q", max, ts, s)
				}
				if max >= minTruncated && s == "" {
					t.Fatalf("max %d: nothing rendered", max)
				}
				for _, line := range strings.Split(s, "\n") {
					if line != "" && !forms[line] && !strings.HasSuffix(line, "…") {
						t.Fatalf("max %d: line cut without an ellipsis: %q", max, line)
					}
					if strings.HasSuffix(line, " …") {
						t.Fatalf("max %d: ellipsis after a space: %q", max, line)
					}
				}
			}
		})
	}
}

func TestShortDenyReasonBudget(t *testing.T) {
	for name, opts := range shortCases() {
		t.Run(name, func(t *testing.T) {
			s := Short(opts, 700)
			if len(s) > 700 {
				t.Errorf("%d bytes", len(s))
			}
			// With room to spare, every usable option is there in rank order.
			if !strings.HasPrefix(s, opts[0].Rank+") ") {
				t.Errorf("Short starts with %q", s)
			}
		})
	}
	for _, tc := range []struct {
		typ  ledger.FailureType
		want []string
	}{
		{ledger.Timeout, []string{"1) Use mcp__gitlab__search_issues instead -> ", "\n2) Skip this step", "\n3) Retry after cooldown at 2026-11-29T14:24:30Z (in 1m30s) -> mcp-circuit-breaker probe"}},
		{ledger.AdminGated, []string{"1) Use mcp__gitlab__search_issues instead", "\n1b) Use \"Bash(x)\" (from .claude/mcp_circuit/fallbacks.yaml) instead", "audit parity", "gating carries over", "\n2) Skip this step", "\n3) Retry after an admin acts"}},
	} {
		t.Run("content/"+string(tc.typ), func(t *testing.T) {
			s := Short(shortCases()[string(tc.typ)], 700)
			for _, want := range tc.want {
				if !strings.Contains(s, want) {
					t.Errorf("Short(700) lacks %q:\n%s", want, s)
				}
			}
			if i := strings.Index(s, "[blocked]"); i >= 0 && i < strings.Index(s, "3) ") {
				t.Errorf("a blocked option comes before option 3:\n%s", s)
			}
		})
	}
}

func TestShortTinyBudgets(t *testing.T) {
	opts := Propose(Request{Tool: "mcp__s__t", Type: ledger.Timeout, OpenUntil: time.Date(2026, 11, 29, 14, 24, 0, 0, time.UTC)})
	for _, tc := range []struct {
		max  int
		want string
	}{
		{0, ""},
		{2, ""},
		{3, ""},
		{15, ""},
		{16, "3) Retry…"},
		{20, "2026-11-29T14:24:00Z"},
		{30, "Retry at 2026-11-29T14:24:00Z"},
		{33, "3) Retry at 2026-11-29T14:24:00Z"},
		{50, "3) Retry after cooldown at 2026-11-29T14:24:00Z"},
	} {
		t.Run(fmt.Sprint(tc.max), func(t *testing.T) {
			if got := Short(opts, tc.max); got != tc.want {
				t.Errorf("Short(%d) = %q, want %q", tc.max, got, tc.want)
			}
		})
	}
}

func TestEllipsis(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"hello world", 11, "hello world"},
		{"hello world", 10, "hello…"},
		{"hello world", 9, "hello…"},
		{"hello world", 8, "hello…"},
		{"hello world", 7, "hell…"}, // the only space is too early: cut mid-word, with the ellipsis
		{"hello world", 3, "…"},
		{"hello world", 2, ""},
		{"héllo wörld", 9, "héllo…"},
		{"ééééé", 7, "éé…"},
	} {
		t.Run(fmt.Sprint(tc.s, tc.n), func(t *testing.T) {
			got := ellipsis(tc.s, tc.n)
			if got != tc.want || len(got) > tc.n || !utf8.ValidString(got) {
				t.Errorf("ellipsis(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
			}
		})
	}
}

func TestOptionJSON(t *testing.T) {
	b, err := json.Marshal([]Option{
		{Rank: "1b", Kind: KindLowerPermission, Title: "t", Command: "c", Gap: "g", When: "w"},
		{Rank: "1", Kind: KindSubstitute, Title: "t", Command: "c", Gap: "g", When: "w", Blocked: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"rank":"1b","kind":"lower_permission","title":"t","command":"c","gap":"g","when":"w"},` +
		`{"rank":"1","kind":"substitute","title":"t","command":"c","gap":"g","when":"w","blocked":true}]`
	if string(b) != want {
		t.Errorf("JSON %s\nwant %s", b, want)
	}
}

func TestMarkdownLabels(t *testing.T) {
	md := Markdown("mcp__s__t", "", []Option{
		{Rank: "1", Kind: KindSubstitute, Title: "Use X instead", Command: "X()", Gap: "g1", When: "w1"},
		{Rank: "1b", Kind: KindLowerPermission, Title: "Use Y", Command: "Y()", Gap: "g2", When: "w2", Blocked: true},
		{Rank: "2", Kind: KindDegrade, Title: "Skip", Command: "skip", Gap: "lost"},
		{Rank: "3", Kind: KindRetry, Title: "Retry at T", Command: "probe", Gap: "g4", When: "w4"},
	})
	want := `## Fallback Options for mcp__s__t

Option 1 — Substitute: Use X instead
  → Command: X()
  → Gap: g1
  → When: w1

Option 1b — Lower-permission substitute (blocked: its circuit is OPEN): Use Y
  → Command: Y()
  → Gap: g2
  → When: w2

Option 2 — Degrade: Skip
  → Command: skip
  → Impact: lost

Option 3 — Retry at T
  → Run: probe
  → Gap: g4
  → When: w4
`
	if md != want {
		t.Errorf("got:\n%s\nwant:\n%s", md, want)
	}
	if got := Markdown("x", ledger.Auth, nil); !strings.Contains(got, "No fallback options.") {
		t.Errorf("empty options:\n%s", got)
	}
}
