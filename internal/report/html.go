package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/term"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

//go:embed report.html.tmpl
var htmlTemplate string

// page is parsed once per render: a report is rendered once per process.
func page() (*template.Template, error) {
	return template.New("report").Funcs(template.FuncMap{"parts": parts}).Parse(htmlTemplate)
}

// parts is a tool key as HTML that a narrow table cell wraps after each "__" (mcp__github__<wbr>
// search_issues), never inside a part: the text is escaped, then a <wbr> follows each separator.
func parts(key string) template.HTML {
	pieces := strings.Split(key, "__")
	for i := range pieces {
		pieces[i] = template.HTMLEscapeString(pieces[i])
	}
	return template.HTML(strings.Join(pieces, "__<wbr>"))
}

// laneWidth is the width of a lane in SVG user units; positions are given in tenths of a unit.
const laneWidth = 1000

// The page stays small whatever the ledger's length: a lane draws its state spans exactly while
// the page has at most maxSpans of them, else on a grid of columns, each showing the worst state it
// held; marks of one kind are merged per column, the grid coarsened until the page has at most
// maxMarks. gridColumns is the finest grid (2 px at 1000 px).
const (
	maxSpans    = 2000
	maxMarks    = 2000
	gridColumns = 500
)

// FleetRow is one circuit of the shared board, as `report --fleet` lists it.
type FleetRow struct {
	Tool, State, Type, Failures, Blocked, Tripped, OpenUntil string
}

// FleetSection is the shared board's part of a fleet report.
type FleetSection struct {
	// Board names the board, its password redacted, and the namespace.
	Board string
	Rows  []FleetRow
}

// htmlLane is one circuit's lane as the template draws it.
type htmlLane struct {
	Key, Label, State, Server string
	IsServer                  bool
	Spans                     []htmlSpan
	Marks                     []htmlMark
	Summary                   string
	// Tokens is the lane's token figures in a few words ("" without figures).
	Tokens string
}

type htmlSpan struct {
	X, W       string // position and width in user units
	Class      string // closed, open, half-open
	From, To   string // RFC 3339, for people and tests
	Title      string
	StateLabel string
}

type htmlMark struct {
	X     string
	Class MarkKind
	Title string
}

type htmlRow struct {
	Tool, State, Failures, Tripped, Reset, Blocked, TimeOpen, FailedCalls string
	Open                                                                  bool
	Type, Cause, Evidence, Closes                                         string
}

type htmlTick struct {
	Left, Label string
}

type htmlData struct {
	Generated, From, To string
	Entries             int
	CallsBlocked        int
	WouldBlock          int
	Tripped             int
	FailedCalls         int
	// TimeOpen sums the time each of the Circuits circuits was open (a server's and its tool's
	// both count, so it can pass the report's span).
	TimeOpen        string
	Circuits        int
	Lanes           []htmlLane
	Ticks           []htmlTick
	Rows            []htmlRow
	Recommendations []string
	Warnings        []string
	Fleet           *FleetSection
	// CallErrors are the calls that failed on their own terms, per tool (Report.CallErrors).
	CallErrors []htmlCallErrors
	// Cost is the token section; nil when the report has none.
	Cost *htmlCost
}

// htmlCost is the token section as the template shows it.
type htmlCost struct {
	Available                 bool
	From                      string
	TokensFailed, FailedCalls int
	TokensBlocked, Blocked    int
	Saved                     string
	Rows                      []htmlCostRow
	Missing, Assumptions      []string
}

type htmlCostRow struct {
	Name, Failed, Saved   string
	TokensFailed, Blocked int
	IsServer              bool
}

type htmlCallErrors struct {
	Tool, Types, LastError string
	Count                  int
}

// HTML writes the report as one self-contained HTML page (no script, no network, no external
// asset): a lane per circuit coloured by state over the window, with trips, trials, failures and
// blocked calls marked on it, beside the same figures as the Markdown report. Build must have been
// called with Options.Timeline. fleet, when not nil, adds the shared board's circuits.
func (r *Report) HTML(w io.Writer, fleet *FleetSection) error {
	t, err := page()
	if err != nil {
		return fmt.Errorf("parse report template: %w", err)
	}
	d := r.htmlData(fleet)
	if err := t.Execute(w, d); err != nil {
		return fmt.Errorf("render html report: %w", err)
	}
	return nil
}

func (r *Report) htmlData(fleet *FleetSection) htmlData {
	from, to := r.from, r.Now
	if from.IsZero() || !to.After(from) {
		from = to.Add(-time.Minute)
	}
	d := htmlData{
		Generated: r.stamp(r.Now), From: r.stamp(from), To: r.stamp(to),
		Entries: r.Entries, CallsBlocked: r.CallsBlocked, WouldBlock: r.WouldBlock,
		Recommendations: cleanAll(r.Recommendations), Warnings: cleanAll(r.Warnings),
	}
	for _, ce := range r.CallErrors {
		d.CallErrors = append(d.CallErrors, htmlCallErrors{Tool: term.Escape(ce.Tool), Types: term.Escape(ce.Types),
			LastError: term.Escape(clip(ce.LastError, 200)), Count: ce.Count})
	}
	if fleet != nil {
		f := *fleet
		f.Board = term.Escape(f.Board)
		f.Rows = append([]FleetRow(nil), fleet.Rows...)
		for i := range f.Rows {
			f.Rows[i].Tool = term.Escape(f.Rows[i].Tool)
		}
		d.Fleet = &f
	}
	var open time.Duration
	d.Tripped, d.FailedCalls, d.Circuits = r.Trips, r.FailedCalls, len(r.Circuits)
	for _, c := range r.Circuits {
		open += time.Duration(c.TimeOpenS) * time.Second
	}
	d.TimeOpen = open.String()
	d.Ticks = ticks(from, to, r.loc)
	x := func(t time.Time) float64 {
		if t.Before(from) {
			t = from
		}
		if t.After(to) {
			t = to
		}
		return float64(t.Sub(from)) / float64(to.Sub(from)) * laneWidth
	}
	// A tool whose only failures in the window were its calls' own has no circuit to report, but
	// its lane shows when those calls failed: CLOSED throughout.
	rows := r.Circuits
	for _, k := range sortedKeys(r.callMarks) {
		rows = append(rows, &Circuit{Tool: k, State: string(ledger.Closed), label: "CLOSED (call errors only)",
			Server: ledger.Key(k).Server(), tl: &timeline{marks: r.callMarks[k]},
			spans: []Span{{From: from, To: to, State: ledger.Closed}}})
	}
	lanes := laneOrder(rows)
	spanCols, markCols := fitGrid(lanes, from, to)
	for _, c := range lanes {
		lane := htmlLane{
			Key: term.Escape(c.Tool), Label: c.label, State: c.State, Server: term.Escape(c.Server),
			IsServer: ledger.Key(c.Tool).IsServer(),
		}
		spans := c.spans
		if spanCols > 0 {
			spans = onGrid(spans, from, to, spanCols)
		}
		for _, s := range spans {
			x0, x1 := x(s.From), x(s.To)
			if x1-x0 < 0.1 {
				x1 = x0 + 0.1
			}
			hs := htmlSpan{X: num(x0), W: num(x1 - x0), Class: stateClass(s.State), StateLabel: string(s.State),
				From: s.From.UTC().Format(time.RFC3339), To: s.To.UTC().Format(time.RFC3339)}
			hs.Title = fmt.Sprintf("%s %s – %s", s.State, r.stamp(s.From), r.stamp(s.To))
			if s.State != ledger.Closed && s.Type != "" {
				hs.Title += " · " + string(s.Type)
				if s.Cause != "" {
					hs.Title += " (" + term.Escape(s.Cause) + ")"
				}
			}
			lane.Spans = append(lane.Spans, hs)
		}
		lane.Marks = r.marks(bucketMarks(c, x, markCols))
		lane.Summary = fmt.Sprintf("%s: %s, %d failed %s, %d %s, %d blocked", lane.Key, c.label,
			c.FailedCalls, plural(c.FailedCalls, "call", "calls"), c.Trips, plural(c.Trips, "trip", "trips"), c.Blocked)
		if f, ok := r.Cost.of(c.Tool); ok {
			lane.Tokens = fmt.Sprintf("%d tokens on failed calls · %s", f.TokensFailed, savedWords(f))
			lane.Summary += "; " + lane.Tokens
		}
		d.Lanes = append(d.Lanes, lane)
	}
	d.Cost = r.Cost.html()
	for _, c := range r.Circuits {
		row := htmlRow{
			Tool: term.Escape(c.Tool), State: c.label, Failures: strconv.Itoa(c.FailureCount),
			Tripped: r.clock(c.TrippedAt, ""), Reset: r.clock(c.ResetAt, resetLabel(c.ResetMethod)),
			Blocked: strconv.Itoa(c.Blocked), TimeOpen: (time.Duration(c.TimeOpenS) * time.Second).String(),
			FailedCalls: strconv.Itoa(c.FailedCalls), Open: c.State != string(ledger.Closed),
		}
		if row.Open {
			if c.FailureType != nil {
				row.Type = *c.FailureType
			}
			if c.Cause != nil {
				row.Cause = term.Escape(*c.Cause)
			}
			row.Evidence = term.Escape(clip(c.Evidence, 200))
			row.Closes = term.Escape(c.Closes)
		}
		d.Rows = append(d.Rows, row)
	}
	return d
}

// markBucket is the marks of one kind that fall in one column of a lane.
type markBucket struct {
	kind     MarkKind
	n        int
	first    Mark
	last     time.Time
	position float64
}

// bucketMarks merges a lane's marks of one kind per column of a grid of cols columns, so a tool
// blocked ten thousand times draws at most one tick per column, its title saying how many it
// stands for.
func bucketMarks(c *Circuit, x func(time.Time) float64, cols int) []*markBucket {
	if c.tl == nil {
		return nil
	}
	var order []*markBucket
	buckets := map[MarkKind]map[int]*markBucket{}
	for _, m := range c.tl.marks {
		pos := x(m.At)
		col := min(int(pos/laneWidth*float64(cols)), cols-1)
		byCol := buckets[m.Kind]
		if byCol == nil {
			byCol = map[int]*markBucket{}
			buckets[m.Kind] = byCol
		}
		b := byCol[col]
		if b == nil {
			b = &markBucket{kind: m.Kind, first: m, position: pos}
			byCol[col] = b
			order = append(order, b)
		}
		b.n++
		b.last = m.At
	}
	return order
}

// fitGrid chooses the grids that keep the page within maxSpans spans and maxMarks marks: 0 columns
// for spans means every span is drawn as it is.
func fitGrid(lanes []*Circuit, from, to time.Time) (spanCols, markCols int) {
	spans := 0
	for _, c := range lanes {
		spans += len(c.spans)
	}
	if spans > maxSpans {
		for spanCols = gridColumns; spanCols > 10; spanCols /= 2 {
			n := 0
			for _, c := range lanes {
				n += len(onGrid(c.spans, from, to, spanCols))
			}
			if n <= maxSpans {
				break
			}
		}
	}
	x := func(t time.Time) float64 { return float64(t.Sub(from)) / float64(to.Sub(from)) * laneWidth }
	for markCols = gridColumns; markCols > 10; markCols /= 2 {
		n := 0
		for _, c := range lanes {
			n += len(bucketMarks(c, x, markCols))
		}
		if n <= maxMarks {
			break
		}
	}
	return spanCols, markCols
}

// marks gives the template its ticks, with a title for each.
func (r *Report) marks(buckets []*markBucket) []htmlMark {
	out := make([]htmlMark, 0, len(buckets))
	for _, b := range buckets {
		title := markTitle(b.kind, b.n)
		if b.n == 1 {
			title += " at " + r.stamp(b.first.At)
		} else {
			title += fmt.Sprintf(" from %s to %s", r.stamp(b.first.At), r.stamp(b.last))
		}
		if b.first.Type != "" {
			title += " · " + string(b.first.Type)
			if b.first.Cause != "" {
				title += " (" + term.Escape(b.first.Cause) + ")"
			}
		}
		out = append(out, htmlMark{X: num(b.position), Class: b.kind, Title: title})
	}
	return out
}

func markTitle(k MarkKind, n int) string {
	switch k {
	case MarkTrip:
		return fmt.Sprintf("%d %s", n, plural(n, "trip", "trips"))
	case MarkTrial:
		return fmt.Sprintf("%d half-open %s", n, plural(n, "trial", "trials"))
	case MarkFailure:
		return fmt.Sprintf("%d %s", n, plural(n, "failure", "failures"))
	case MarkBlocked:
		return fmt.Sprintf("%d blocked %s", n, plural(n, "call", "calls"))
	case MarkWouldBlock:
		return fmt.Sprintf("%d %s shadow mode let through", n, plural(n, "call", "calls"))
	case MarkClose:
		return fmt.Sprintf("%d %s", n, plural(n, "close", "closes"))
	case MarkCallError:
		return fmt.Sprintf("%d %s that failed on %s own terms (not counted)", n, plural(n, "call", "calls"), plural(n, "its", "their"))
	case MarkLoopGuard:
		return fmt.Sprintf("%d %s denied by the loop guard (the same call failing the same way)", n, plural(n, "call", "calls"))
	}
	return fmt.Sprintf("%d %s", n, k)
}

// laneOrder puts each server's circuit above its tools' circuits, servers in the order the report
// lists them (open circuits first).
func laneOrder(rows []*Circuit) []*Circuit {
	rank := map[string]int{}
	for i, c := range rows {
		s := ledger.Key(c.Tool).Server()
		if _, ok := rank[s]; !ok {
			rank[s] = i
		}
	}
	out := append([]*Circuit(nil), rows...)
	sort.SliceStable(out, func(i, j int) bool {
		ki, kj := ledger.Key(out[i].Tool), ledger.Key(out[j].Tool)
		if ri, rj := rank[ki.Server()], rank[kj.Server()]; ri != rj {
			return ri < rj
		}
		if ki.IsServer() != kj.IsServer() {
			return ki.IsServer()
		}
		return out[i].Tool < out[j].Tool
	})
	return out
}

// onGrid redraws spans on cols columns, each column taking the worst state it held (OPEN over
// HALF-OPEN over CLOSED), then merges equal neighbours.
func onGrid(spans []Span, from, to time.Time, cols int) []Span {
	step := to.Sub(from) / time.Duration(cols)
	if step <= 0 {
		return spans
	}
	worst := make([]Span, cols)
	for i := range worst {
		worst[i] = Span{From: from.Add(time.Duration(i) * step), To: from.Add(time.Duration(i+1) * step), State: ledger.Closed}
	}
	worst[cols-1].To = to
	for _, s := range spans {
		a := int(s.From.Sub(from) / step)
		b := int((s.To.Sub(from) - 1) / step)
		for i := max(a, 0); i <= b && i < cols; i++ {
			if severity(s.State) > severity(worst[i].State) {
				worst[i].State, worst[i].Type, worst[i].Cause = s.State, s.Type, s.Cause
			}
		}
	}
	var out []Span
	for _, s := range worst {
		if n := len(out); n > 0 && out[n-1].State == s.State {
			out[n-1].To = s.To
			continue
		}
		out = append(out, s)
	}
	return out
}

func severity(s ledger.State) int {
	switch s {
	case ledger.Open:
		return 2
	case ledger.HalfOpen:
		return 1
	}
	return 0
}

func stateClass(s ledger.State) string {
	switch s {
	case ledger.Open:
		return "open"
	case ledger.HalfOpen:
		return "half-open"
	}
	return "closed"
}

// ticks gives about six labelled instants along the window, on round minutes or hours.
func ticks(from, to time.Time, loc *time.Location) []htmlTick {
	if loc == nil {
		loc = time.UTC
	}
	span := to.Sub(from)
	step := time.Minute
	for _, s := range []time.Duration{time.Minute, 5 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour, 3 * time.Hour, 6 * time.Hour, 24 * time.Hour, 7 * 24 * time.Hour} {
		step = s
		if span/s <= 6 {
			break
		}
	}
	layout := "15:04"
	if span > 24*time.Hour {
		layout = "Jan 2 15:04"
	}
	var out []htmlTick
	for t := from.Truncate(step); !t.After(to); t = t.Add(step) {
		if t.Before(from) {
			continue
		}
		left := float64(t.Sub(from)) / float64(span) * 100
		out = append(out, htmlTick{Left: num(left) + "%", Label: t.In(loc).Format(layout)})
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// stamp formats an instant for the page, in the report's zone, to the second.
func (r *Report) stamp(t time.Time) string {
	loc := r.loc
	if loc == nil {
		loc = time.UTC
	}
	return t.In(loc).Format("2006-01-02 15:04:05 MST")
}

// num formats a position with one decimal, so the page is the same byte for byte for the same
// ledger and clock.
func num(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }

// cleanAll escapes control and bidi characters of texts that may quote a ledger or a server.
func cleanAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = term.Escape(strings.TrimSpace(s))
	}
	return out
}

// of returns the figures of a circuit's key: a server's for mcp__<server>__*, else the tool's.
func (c *Cost) of(key string) (Figures, bool) {
	if c == nil || !c.Available {
		return Figures{}, false
	}
	k := ledger.Key(key)
	for _, s := range c.Servers {
		if k.IsServer() && k.Server() == s.key {
			return s.Figures, s.FailedCalls+s.Blocked > 0
		}
		for _, t := range s.Tools {
			if t.Tool == key {
				return t.Figures, t.FailedCalls+t.Blocked > 0
			}
		}
	}
	return Figures{}, false
}

// savedWords is the estimate in a few words.
func savedWords(f Figures) string {
	if f.BlockedEstimated == 0 {
		return fmt.Sprintf("%d blocked, no estimate", f.Blocked)
	}
	return fmt.Sprintf("≈ %d saved by %d blocked", f.TokensSaved, f.Blocked)
}

// html is the token section for the template; nil when there is nothing to cost.
func (c *Cost) html() *htmlCost {
	if c == nil || c.FailedCalls+c.Blocked == 0 {
		return nil
	}
	h := &htmlCost{Available: c.Available, From: term.Escape(c.readFrom()), TokensFailed: c.TokensFailed, FailedCalls: c.FailedCalls,
		TokensBlocked: c.TokensBlocked, Blocked: c.Blocked, Saved: savedCell(c.Figures), Missing: cleanAll(c.missingSessions()),
		Assumptions: cleanAll(c.Assumptions)}
	if !c.Available && c.NoSession > 0 {
		h.Missing = append(h.Missing, fmt.Sprintf("%d %s recorded without a session or call id (the CLI's own records): no transcript names %s",
			c.NoSession, plural(c.NoSession, "call", "calls"), plural(c.NoSession, "it", "them")))
	}
	for _, s := range c.Servers {
		h.Rows = append(h.Rows, htmlCostRow{Name: term.Escape(s.Server), Failed: failedCell(s.Figures), Saved: savedCell(s.Figures),
			TokensFailed: s.TokensFailed, Blocked: s.Blocked, IsServer: true})
		for _, t := range s.Tools {
			h.Rows = append(h.Rows, htmlCostRow{Name: term.Escape(t.Tool), Failed: failedCell(t.Figures), Saved: savedCell(t.Figures),
				TokensFailed: t.TokensFailed, Blocked: t.Blocked})
		}
	}
	return h
}
