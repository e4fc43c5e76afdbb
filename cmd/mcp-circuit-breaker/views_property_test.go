package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/fallbacks"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/message"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/report"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/timetext"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// TestViewsAgree drives random ledgers (failures, successes, checks, probes, resets and manual
// trips under a fake clock that moves by uneven steps) and asserts after every step that the views
// agree on every figure: status (its JSON struct and its table row), the report (JSON struct and
// Markdown table), SessionStart's lines, check's reason and fallbacks' option 3 (the time of the
// next call, with the same rounding), and the trip counts of the report and of compaction.
func TestViewsAgree(t *testing.T) {
	dir := t.TempDir()
	p := project.New(dir, func(string) string { return "" }, io.Discard, yamlDecoder())
	pol, err := p.Policy()
	if err != nil {
		t.Fatal(err)
	}
	tools := []string{"mcp__s__a", "mcp__s__b", "mcp__t__c"}
	types := []ledger.FailureType{ledger.Timeout, ledger.Auth, ledger.RateLimit, ledger.AdminGated, ledger.NotFound, ledger.Malformed}
	waitRE := regexp.MustCompile(`\((in [0-9hms.]+|now)\)`)
	for seed := uint64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
		var b states.Board
		var entries []ledger.Entry
		trips := map[string]int{} // what the decisions said they opened: the oracle
		apply := func(es []ledger.Entry) {
			for _, e := range es {
				b.Apply(e)
				entries = append(entries, e)
			}
		}
		for step := 0; step < 60; step++ {
			now = now.Add(time.Duration(rng.IntN(90_000)) * time.Millisecond)
			tool := tools[rng.IntN(len(tools))]
			call := states.Call{Tool: tool, Source: ledger.SourceCLI}
			var op string
			switch k := rng.IntN(10); {
			case k < 4:
				typ := types[rng.IntN(len(types))]
				r := states.Failure{Type: typ, Cause: "c", ServerWide: rng.IntN(2) == 0, Error: "boom"}
				if typ == ledger.RateLimit && rng.IntN(2) == 0 {
					r.RetryAfter = time.Duration(rng.IntN(200)) * time.Second
				}
				out := b.Failure(call, r, now, pol)
				op = fmt.Sprintf("failure %s %s", tool, typ)
				apply(out.Entries)
				for _, k := range out.Tripped {
					trips[k]++
				}
			case k < 6:
				op = "gate " + tool
				apply(b.Gate(call, now, pol, false).Entries)
			case k < 7:
				op = "success " + tool
				apply(b.Success(call, now).Entries)
			case k < 8:
				healthy := rng.IntN(2) == 0
				key := tool
				if rng.IntN(2) == 0 {
					key = string(ledger.Key(tool).ServerKey())
				}
				op = fmt.Sprintf("probe %s healthy=%v", key, healthy)
				out := b.Probe(states.Call{Tool: key, Source: ledger.SourceProbe}, healthy,
					states.Failure{Type: ledger.Timeout, Cause: "process_exited", ServerWide: true, Error: "exited"}, nil, now, pol)
				apply(out.Entries)
				for _, k := range out.Tripped {
					trips[k]++
				}
			case k < 9:
				op = "reset " + tool
				apply(b.Reset(call, now))
			default:
				op = "trip " + tool
				es := b.Trip(call, ledger.Timeout, now)
				apply(es)
				trips[tool]++
			}
			where := fmt.Sprintf("seed %d step %d (%s) at %s", seed, step, op, now.Format(time.RFC3339Nano))
			checkViews(t, where, &b, entries, trips, p, pol, now, waitRE)
			if t.Failed() {
				return
			}
		}
		checkCompactTrips(t, seed, &b, entries, trips, now)
	}
}

func checkViews(t *testing.T, where string, b *states.Board, entries []ledger.Entry, trips map[string]int,
	p *project.Project, pol *states.Policy, now time.Time, waitRE *regexp.Regexp) {
	t.Helper()
	rep := report.Build(entries, report.Options{Now: now, Policy: pol})
	rows := map[string]*report.Circuit{}
	for _, r := range rep.Circuits {
		rows[r.Tool] = r
	}
	md := rep.Markdown()
	for _, key := range b.Keys() {
		c := b.Get(key)
		row := rows[key]
		if row != nil && row.Trips != trips[key] {
			t.Errorf("%s: %s: report counts %d trips, the decisions opened it %d times", where, key, row.Trips, trips[key])
		}
		if c.Idle() {
			continue
		}
		st := c.StandingAt(now, pol, "")
		sj := toCircuitJSON(c, st, pol)
		if row == nil {
			t.Errorf("%s: %s: status lists it, the report does not", where, key)
			continue
		}
		if string(sj.State) != row.State || string(sj.Phase) != row.Phase || sj.FailureCount != row.FailureCount {
			t.Errorf("%s: %s: status says %s/%s/%d, report JSON %s/%s/%d", where, key, sj.State, sj.Phase, sj.FailureCount, row.State, row.Phase, row.FailureCount)
		}
		if deref(sj.OpenUntil) != deref(row.OpenUntil) {
			t.Errorf("%s: %s: status open_until %q, report %q", where, key, deref(sj.OpenUntil), deref(row.OpenUntil))
		}
		// The tables: status's row and the report's Markdown row print the same state and count.
		if !strings.Contains(md, fmt.Sprintf("| %s | %s | %d |", key, st.Label(), st.FailureCount)) {
			t.Errorf("%s: %s: the report table lacks the row status prints (%s, %d):\n%s", where, key, st.Label(), st.FailureCount, md)
		}
		// SessionStart's line.
		if d := message.Describe(c, now, pol); !strings.HasPrefix(d, key+": "+st.Label()) ||
			(c.FailureType != "" && !strings.Contains(d, message.Failures(st.FailureCount)+")")) {
			t.Errorf("%s: %s: SessionStart says %q; status says %s with %d failures", where, key, d, st.Label(), st.FailureCount)
		}
	}
	// check and fallbacks name the same next call, rounded the same way.
	for _, tool := range []string{"mcp__s__a", "mcp__s__b", "mcp__t__c"} {
		d := b.Gate(states.Call{Tool: tool}, now, pol, false)
		at, person := b.NextCall(states.Call{Tool: tool}, now, pol)
		if d.Allowed || person {
			continue
		}
		reason := message.Notice(d.Circuit) + "\n" + message.TripDetail(d.Circuit, now, pol)
		want := "(" + timetext.WaitText(now, at) + ")"
		if m := waitRE.FindString(reason); (m != "" && m != want) || !strings.Contains(reason, timetext.CeilSecond(at).Format(time.RFC3339)) {
			t.Errorf("%s: %s: check's reason does not say %s %s:\n%s", where, tool, timetext.CeilSecond(at).Format(time.RFC3339), want, reason)
		}
		req, err := p.FallbackRequest(b, d.Circuit, pol, now)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range fallbacks.Propose(req) {
			if o.Rank != fallbacks.RankRetry {
				continue
			}
			if m := waitRE.FindString(o.Title); m != want || !strings.Contains(o.Title, timetext.CeilSecond(at).Format(time.RFC3339)) {
				t.Errorf("%s: %s: fallbacks option 3 %q, check says %s at %s", where, tool, o.Title, want, timetext.CeilSecond(at).Format(time.RFC3339))
			}
		}
	}
}

// checkCompactTrips compacts the ledger with every entry old and compares the trips its summary
// gives each key that ended idle (all of its entries are summarised) with the trips the decisions
// made.
func checkCompactTrips(t *testing.T, seed uint64, b *states.Board, entries []ledger.Entry, trips map[string]int, now time.Time) {
	t.Helper()
	dir := t.TempDir()
	s := states.NewStore(dir, time.Second)
	var buf []byte
	for _, e := range entries {
		buf = ledger.AppendEncoded(buf, e)
	}
	if err := os.WriteFile(filepath.Join(dir, ledger.FileName), buf, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Compact(now.Add(time.Hour), now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, ledger.FileName))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^# "([^"]+)": \d+ entries, (\d+) trips,`)
	for _, m := range re.FindAllStringSubmatch(string(data), -1) {
		if b.Get(m[1]).Idle() && m[2] != fmt.Sprint(trips[m[1]]) {
			t.Errorf("seed %d: compaction says %s had %s trips; the decisions opened it %d times", seed, m[1], m[2], trips[m[1]])
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}
