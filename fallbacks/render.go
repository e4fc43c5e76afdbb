package fallbacks

import (
	"strings"
	"unicode/utf8"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// Markdown renders opts in the skill's Step 4 output format:
//
//	## Fallback Options for {tool}
//
//	Failure type: {TYPE} — {what it means}
//
//	Option 1 — Substitute: Use {alternative} instead
//	  → Command: …
//	  → Gap: …
//	  → When: …
//
// Option 2 shows its gap as "Impact" and option 3 its command as "Run", as the skill does; the
// title of option 3 carries the exact time. Text is rendered as is, without control characters.
func Markdown(tool string, t ledger.FailureType, opts []Option) string {
	var b strings.Builder
	b.WriteString("## Fallback Options for " + Clean(tool) + "\n")
	if ts := Clean(string(t)); ts != "" {
		b.WriteString("\nFailure type: " + ts)
		if what := typeWhat[t]; what != "" {
			b.WriteString(" — " + what)
		}
		b.WriteString("\n")
	}
	if len(opts) == 0 {
		b.WriteString("\nNo fallback options.\n")
	}
	for _, o := range opts {
		o = cleanOption(o)
		b.WriteString("\nOption " + o.Rank + " — " + heading(o) + "\n")
		cmd, gap := "Command", "Gap"
		switch o.Kind {
		case KindRetry:
			cmd = "Run"
		case KindDegrade:
			gap = "Impact"
		}
		for _, f := range [...]struct{ label, text string }{{cmd, o.Command}, {gap, o.Gap}, {"When", o.When}} {
			if f.text != "" {
				b.WriteString("  → " + f.label + ": " + f.text + "\n")
			}
		}
	}
	return b.String()
}

// heading is the title line of an option after "Option N — ".
func heading(o Option) string {
	switch o.Kind {
	case KindSubstitute:
		if o.Blocked {
			return "Substitute (blocked: its circuit is OPEN): " + o.Title
		}
		return "Substitute: " + o.Title
	case KindLowerPermission:
		if o.Blocked {
			return "Lower-permission substitute (blocked: its circuit is OPEN): " + o.Title
		}
		return "Lower-permission substitute: " + o.Title
	case KindDegrade:
		return "Degrade: " + o.Title
	}
	if o.Blocked {
		return "(blocked) " + o.Title
	}
	return o.Title
}

// cleanOption strips control characters from every field of o.
func cleanOption(o Option) Option {
	o.Rank, o.Kind, o.Title = Clean(o.Rank), Clean(o.Kind), Clean(o.Title)
	o.Command, o.Gap, o.When = Clean(o.Command), Clean(o.Gap), Clean(o.When)
	return o
}

// shortChecks is option 1b's reminder in Short, where its gap rarely fits.
const shortChecks = "[confirm credential scope, audit parity, behaviour gap; gating carries over: writes stay ask]"

// minTruncated is the least room worth filling with a truncated option.
const minTruncated = 16

// Short renders the top options compactly, one line each, in at most max bytes (so also in at
// most max characters, however they are counted): for the gate's deny reason. Each option takes
// one of the forms
//
//	{rank}) {title}
//	{rank}) {title} -> {command}
//	{rank}) {title} -> {command} (gap: {gap})
//
// and option 1b's command form ends with a bracketed reminder of its three checks and that
// gating carries over (its gap form has them in full).
//
// The retry option (option 3) is placed first so that its time always survives: when its whole
// title does not fit, it shrinks to the title up to its time ("3) Retry after cooldown at
// {time}"), then for a cooldown to "3) Retry at {time}" and "Retry at {time}", and finally to the
// bare RFC 3339 time. Then the other usable options get their titles in rank order (a title
// that does not fit is skipped, a shorter later one may still fit), then commands, then blocked
// options, then gaps, each only as far as the budget allows. Last, the room left, if at least 16
// bytes, shows the first missing usable title cut to fit. Text is cut only there (or when not even
// the time fits), always with an ellipsis, at a word boundary when one is near. It returns ""
// when max is too small for anything useful.
func Short(opts []Option, max int) string {
	if max <= 0 || len(opts) == 0 {
		return ""
	}
	items := shortItems(opts)
	s := &shortLayout{items: items, max: max}
	ri := -1
	for i, it := range items {
		if it.retry {
			ri = i
			break
		}
	}
	if ri >= 0 {
		if !s.place(ri, 0) {
			if max < minTruncated {
				return ""
			}
			return ellipsis(items[ri].forms[items[ri].title], max)
		}
		s.upgrade(ri, items[ri].title-1)
	}
	for i, it := range items {
		if i != ri && !it.blocked {
			s.place(i, it.title)
		}
	}
	if ri >= 0 {
		s.upgrade(ri, items[ri].title)
	}
	s.upgradeAll(1)
	if ri >= 0 {
		s.upgrade(ri, items[ri].title+1)
	}
	for i, it := range items {
		if it.blocked && i != ri {
			s.place(i, it.title)
		}
	}
	s.upgradeAll(2)
	if ri >= 0 {
		s.upgrade(ri, items[ri].title+2)
	}
	// Whatever room is left goes to the first usable option still missing, cut to fit.
	for i, it := range items {
		if it.level < 0 && !it.blocked {
			s.placeTruncated(i)
			break
		}
	}
	return s.String()
}

// shortItem is one option's forms for Short, shortest first.
type shortItem struct {
	forms   []string
	title   int  // index of the "{rank}) {title}" form
	retry   bool // the option whose time must survive
	blocked bool
	level   int    // index of the chosen form; -1 when left out
	text    string // the chosen text (a truncated form when cut)
}

// shortItems builds the forms of every option.
func shortItems(opts []Option) []shortItem {
	items := make([]shortItem, len(opts))
	seenRetry := false
	for i, o := range opts {
		o = cleanOption(o)
		head := o.Rank + ") "
		if o.Blocked {
			head += "[blocked] "
		}
		l1 := head + o.Title
		l2 := l1
		if o.Command != "" {
			l2 += " -> " + o.Command
		}
		l3 := l2
		if o.Gap != "" {
			l3 += " (gap: " + o.Gap + ")"
		}
		if o.Kind == KindLowerPermission {
			l2 += " " + shortChecks // the gap form has the checks in full
			if len(l3) < len(l2) {
				l3 = l2
			}
		}
		it := shortItem{forms: []string{l1, l2, l3}, level: -1, blocked: o.Blocked}
		if !seenRetry && (o.Kind == KindRetry || o.Rank == RankRetry) {
			seenRetry, it.retry = true, true
			if ts, i := findTimestamp(o.Title); ts != "" {
				// Shorter forms that keep the time: the title up to its time, then for a
				// cooldown "Retry at {time}", then the bare time.
				compact := []string{ts}
				prefix := head + o.Title[:i+len(ts)]
				if strings.HasSuffix(prefix, "Retry after cooldown at "+ts) {
					compact = append(compact, "Retry at "+ts, head+"Retry at "+ts)
				}
				if prefix != l1 {
					compact = append(compact, prefix)
				}
				it.forms = append(compact, it.forms...)
				it.title = len(compact)
			}
		}
		items[i] = it
	}
	return items
}

// shortLayout is the state of Short's greedy packing.
type shortLayout struct {
	items []shortItem
	max   int
}

// size is the length of the rendering with item i at text t (i < 0: as is).
func (s *shortLayout) size(i int, t string) int {
	n, lines := 0, 0
	for j, it := range s.items {
		x, in := it.text, it.level >= 0
		if j == i {
			x, in = t, true
		}
		if in {
			n += len(x)
			lines++
		}
	}
	if lines > 1 {
		n += lines - 1
	}
	return n
}

// place puts item i at form lvl if the result fits.
func (s *shortLayout) place(i, lvl int) bool {
	it := &s.items[i]
	if lvl < 0 || lvl >= len(it.forms) || s.size(i, it.forms[lvl]) > s.max {
		return false
	}
	it.level, it.text = lvl, it.forms[lvl]
	return true
}

// upgrade raises a placed item i to the longest form up to lvl that fits.
func (s *shortLayout) upgrade(i, lvl int) {
	it := &s.items[i]
	if it.level < 0 {
		return
	}
	for l := min(lvl, len(it.forms)-1); l > it.level; l-- {
		if s.place(i, l) {
			return
		}
	}
}

// upgradeAll raises every placed non-retry item to its title form plus extra, in order.
func (s *shortLayout) upgradeAll(extra int) {
	for i, it := range s.items {
		if !it.retry && it.level >= 0 {
			s.upgrade(i, it.title+extra)
		}
	}
}

// placeTruncated puts item i's title form, cut with an ellipsis, into the room left.
func (s *shortLayout) placeTruncated(i int) {
	it := &s.items[i]
	room := s.max - s.size(i, "")
	if room < minTruncated {
		return
	}
	it.level, it.text = it.title, ellipsis(it.forms[it.title], room)
}

// String joins the placed items in their original order.
func (s *shortLayout) String() string {
	var lines []string
	for _, it := range s.items {
		if it.level >= 0 {
			lines = append(lines, it.text)
		}
	}
	return strings.Join(lines, "\n")
}

// findTimestamp returns the first RFC 3339 UTC time (2006-01-02T15:04:05Z) in s and its index,
// or "" when there is none.
func findTimestamp(s string) (string, int) {
	const n = len("2006-01-02T15:04:05Z")
	for i := 0; i+n <= len(s); i++ {
		if isTimestamp(s[i : i+n]) {
			return s[i : i+n], i
		}
	}
	return "", -1
}

// isTimestamp reports whether s has the shape 2006-01-02T15:04:05Z.
func isTimestamp(s string) bool {
	const shape = "dddd-dd-ddTdd:dd:ddZ"
	for i := 0; i < len(shape); i++ {
		c := s[i]
		if shape[i] == 'd' {
			if c < '0' || c > '9' {
				return false
			}
		} else if c != shape[i] {
			return false
		}
	}
	return true
}

// ellipsis shortens s to at most n bytes, ending in "…": at a word boundary when one is in the
// second half of the room, else mid-word (the ellipsis shows the cut). Returns "" when n cannot
// hold the ellipsis.
func ellipsis(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const dots = "…"
	cut := n - len(dots)
	if cut < 0 {
		return ""
	}
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if s[cut] != ' ' {
		if sp := strings.LastIndexByte(s[:cut], ' '); sp >= cut/2 {
			cut = sp
		}
	}
	return strings.TrimRight(s[:cut], " ") + dots
}
