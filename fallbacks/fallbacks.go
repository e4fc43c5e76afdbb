package fallbacks

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/redact"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/timetext"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// Kinds of options, as spelled in the --json output (docs/cli.md).
const (
	KindSubstitute      = "substitute"
	KindLowerPermission = "lower_permission"
	KindDegrade         = "degrade"
	KindRetry           = "retry"
)

// Ranks of options, as the skill's Step 4 numbers them.
const (
	RankSubstitute      = "1"
	RankLowerPermission = "1b"
	RankDegrade         = "2"
	RankRetry           = "3"
)

// Request is what Propose needs to know about one open circuit. Propose reads no clock, file
// or ledger: everything comes in here.
type Request struct {
	// Tool is the circuit key: mcp__<server>__<tool>, or mcp__<server>__* for a server-wide
	// circuit.
	Tool string
	// Server is the MCP server's name, the real one when known; empty means "take it from Tool".
	Server string
	// Type is the failure type that opened the circuit; an invalid type is treated as UNKNOWN.
	Type ledger.FailureType
	// Cause is the finer cause (http_401, connection_refused, …); may be empty.
	Cause string
	// OpenUntil is when a trial call becomes allowed; zero when only a person can close it.
	OpenUntil time.Time
	// RetryAfter is the upstream retry hint, used when OpenUntil is zero.
	RetryAfter time.Duration
	// Now is the current time, for "in 1m0s" and for Now+RetryAfter; may be zero.
	Now time.Time
	// Catalog is the user's fallbacks.yaml; nil when there is none.
	Catalog *Catalog
	// Tools is the tools/list cache: server name → its tools.
	Tools map[string][]Tool
	// IsOpen reports whether the circuit of a tool key or server key is OPEN; nil means none is.
	IsOpen func(key string) bool
	// ConfigFile is where the failing server is configured, for hints; may be empty.
	ConfigFile string
	// NoToolSearch is set for an agent that has no ToolSearch tool (every agent but Claude Code):
	// option 1 then tells the model to look through the tools it was given, rather than name a
	// tool it cannot call.
	NoToolSearch bool
}

// Tool is one tool of the tools/list cache.
type Tool struct {
	// Name is the tool's name as the server lists it, or a full mcp__<server>__<tool> key.
	Name string `json:"name" yaml:"name"`
	// Description is the tool's description from tools/list; may be empty.
	Description string `json:"description,omitempty" yaml:"description,omitempty"`
}

// Option is one ranked fallback option; its JSON form is the fallbacks --json shape of docs/cli.md.
type Option struct {
	// Rank is "1", "1b", "2" or "3" (a string because of "1b").
	Rank string `json:"rank"`
	// Kind is substitute, lower_permission, degrade or retry.
	Kind string `json:"kind"`
	// Title says what to do, in one line, without the "Option N —" prefix.
	Title string `json:"title"`
	// Command is the concrete invocation.
	Command string `json:"command"`
	// Gap is what is lost or different compared with the failing tool (the skill's "Impact" for
	// option 2).
	Gap string `json:"gap"`
	// When says when to use the option.
	When string `json:"when"`
	// Blocked marks a substitute whose own circuit is OPEN: listed so the model knows why it is
	// not used, ranked after every usable option.
	Blocked bool `json:"blocked,omitempty"`
}

// Texts of option 1b, from the skill's Step 4.
const (
	lowerPermissionChecks = "Before relying on it, confirm credential scope (does a member-level token suffice, and with which scopes?), " +
		"audit parity (is the call logged where the MCP path would log it?) and behaviour gap (what does the MCP path do that this does not, " +
		"e.g. natural-language workflow creation vs hand-written JSON?)."
	gatingCarriesOver = "Gating carries over to the substitute: classify its calls under the same ask/allow tiers; reads are allowed only " +
		"after behaviour confirmation, and any write, send, delete or permission change stays ask. A REST token lowers the permission " +
		"barrier, not the action's risk."
)

// typeWhat says in a few words what each failure type means, for Markdown.
var typeWhat = map[ledger.FailureType]string{
	ledger.AdminGated: "the MCP mount waits for an admin's approval",
	ledger.Auth:       "credentials expired, missing or lacking scope",
	ledger.RateLimit:  "quota or rate limit reached",
	ledger.NotFound:   "the tool or server is gone or renamed",
	ledger.Timeout:    "the server is slow, down or unreachable",
	ledger.Malformed:  "request or response does not match the schema",
	ledger.Unknown:    "the failure could not be classified",
}

// Propose returns the ranked fallback options for the open circuit r describes: usable
// substitutes (rank 1), lower-permission paths (1b, ADMIN_GATED only), degrade (2), retry (3),
// then blocked substitutes. There are always at least three usable options; the package doc
// gives the sources and the ranking rules. The result is deterministic for a given r.
func Propose(r Request) []Option {
	p := newProposal(r)
	var cands []candidate
	seen := map[string]bool{}
	add := func(cs []candidate) {
		for _, c := range cs {
			if !seen[c.dedupe] {
				seen[c.dedupe] = true
				cands = append(cands, c)
			}
		}
	}
	add(p.fromCatalog())
	add(p.fromCache())
	add(p.fromBuiltins())

	var subs, lower, blocked []Option
	for _, c := range cands {
		switch {
		case c.opt.Blocked:
			blocked = append(blocked, c.opt)
		case c.opt.Rank == RankLowerPermission:
			lower = append(lower, c.opt)
		default:
			subs = append(subs, c.opt)
		}
	}
	if len(subs) == 0 {
		subs = append(subs, p.discovery())
	}
	if len(lower) == 0 && p.typ == ledger.AdminGated {
		lower = append(lower, p.genericLowerPermission())
	}
	// Blocked rank-1 options come before blocked 1b ones, each group in source order.
	sort.SliceStable(blocked, func(i, j int) bool {
		return blocked[i].Rank == RankSubstitute && blocked[j].Rank != RankSubstitute
	})
	out := make([]Option, 0, len(subs)+len(lower)+len(blocked)+2)
	out = append(out, subs...)
	out = append(out, lower...)
	out = append(out, p.degrade(), p.retry())
	return append(out, blocked...)
}

// proposal is the derived view of one Request.
type proposal struct {
	r          Request
	typ        ledger.FailureType
	tool       string // the circuit key, cleaned
	server     string // the failing server, sanitized; "" when the key is not an MCP key
	serverName string // the failing server's display name
	toolPart   string // the tool part of the key; "*" for a server key
	serverWide bool

	failing     []profile // the failing tool, or every cached tool of a failing server
	serverWords []string
	nameWords   []string
	descWords   []string
	writes      bool

	at     time.Time // the exact retry time; zero when none is known
	hasAt  bool
	atText string // the retry time as RFC 3339 with the relative time, when known
}

// newProposal derives what every option needs from r.
func newProposal(r Request) *proposal {
	p := &proposal{r: r, typ: r.Type, tool: Clean(r.Tool)}
	if !p.typ.Valid() {
		p.typ = ledger.Unknown
	}
	keyServer, toolPart, _ := ledger.Key(p.tool).Split()
	p.toolPart = toolPart
	// Only a server name of this key is shown; other text in its place is replaced by the key's
	// server part (ledger.ServerName).
	p.serverName = ledger.ServerName(Clean(r.Server), ledger.Key(p.tool))
	if p.serverName == "" {
		p.serverName = keyServer
	}
	if p.serverName != "" {
		p.server = ledger.Sanitize(p.serverName)
	}
	p.serverWide = toolPart == "*" || (p.server != "" && p.isOpen(string(ledger.ServerKey(p.server))))

	var cached []Tool
	for _, name := range sortedKeys(r.Tools) {
		if p.server != "" && ledger.Sanitize(name) == p.server {
			cached = append(cached, r.Tools[name]...)
		}
	}
	p.serverWords = words(p.serverName)
	if p.serverWide {
		// The tool that failed is the best description of what is needed, even when its whole
		// server is open; the server's other cached tools widen the search.
		if toolPart != "" && toolPart != "*" {
			p.failing = append(p.failing, newProfile(toolPart, ""))
			p.nameWords = append(p.nameWords, words(toolPart)...)
		}
		for _, t := range cached {
			_, tp := cacheKey(p.server, t.Name)
			p.failing = append(p.failing, newProfile(tp, t.Description))
			p.nameWords = append(p.nameWords, words(tp)...)
			p.descWords = append(p.descWords, words(t.Description)...)
		}
		if len(p.failing) == 0 {
			p.failing = []profile{newProfile(p.serverName, "")}
		}
	} else {
		desc := ""
		for _, t := range cached {
			if _, tp := cacheKey(p.server, t.Name); ledger.Sanitize(tp) == toolPart {
				desc = t.Description
				break
			}
		}
		if toolPart == "" { // not an MCP key: compare the whole name
			toolPart = p.tool
		}
		f := newProfile(toolPart, desc)
		p.failing = []profile{f}
		p.nameWords, p.descWords = f.name, words(desc)
		p.writes = f.verbClass() < 0
	}

	switch {
	case !r.OpenUntil.IsZero():
		p.at, p.hasAt = r.OpenUntil, true
	case r.RetryAfter > 0 && !r.Now.IsZero():
		p.at, p.hasAt = r.Now.Add(r.RetryAfter), true
	}
	if p.hasAt {
		// The rounding every view shares (timetext.CeilSecond, timetext.WaitText), so option 3 names the
		// same time and wait as the gate's reason and check at the same clock.
		p.atText = timetext.CeilSecond(p.at).Format(time.RFC3339)
		if !r.Now.IsZero() {
			p.atText += " (" + timetext.WaitText(r.Now, p.at) + ")"
		}
		p.at = timetext.CeilSecond(p.at)
	}
	return p
}

// isOpen asks the caller whether key's circuit is OPEN.
func (p *proposal) isOpen(key string) bool { return p.r.IsOpen != nil && p.r.IsOpen(key) }

// openKey returns the OPEN circuit that blocks the MCP tool key (the tool's own or its
// server's), or "" when none does or key is not an MCP key.
func (p *proposal) openKey(key string) string {
	k := ledger.Key(key)
	switch {
	case !k.IsMCP():
		return ""
	case p.isOpen(key):
		return key
	case p.isOpen(string(k.ServerKey())):
		return string(k.ServerKey())
	}
	return ""
}

// onFailingServer reports whether the MCP tool key belongs to the failing server.
func (p *proposal) onFailingServer(key string) bool {
	server, _, ok := ledger.Key(key).Split()
	return ok && p.server != "" && server == p.server
}

// candidate is a substitute before assembly.
type candidate struct {
	opt    Option
	dedupe string // one option per substitute, whichever source names it first
}

// newCandidate builds a substitute option for the tool named name; key is its MCP key or "".
func (p *proposal) newCandidate(name, key string, opt Option) candidate {
	if open := p.openKey(key); open != "" {
		opt.Blocked = true
		opt.When = "not now: its own circuit " + open + " is OPEN too; listed so you know it was considered"
	}
	dedupe := name
	if rest, ok := strings.CutPrefix(name, "Bash("); ok {
		dedupe = "Bash(" + strings.TrimRight(firstField(rest), ")")
	}
	return candidate{opt: opt, dedupe: dedupe}
}

// stateDir is where the project's state files live, named in the sources of quoted texts.
const stateDir = ".claude/mcp_circuit"

// catalogSays introduces a text quoted from the catalog.
const catalogSays = "from " + stateDir + "/" + CatalogFile + ": "

// Bounds of the catalog's texts in an option: a command or a gap is a line, not a page.
const (
	maxCatalogText = 300
	maxCatalogName = 120
)

// fromCatalog returns the catalog's substitutes for the failing circuit, in file order.
func (p *proposal) fromCatalog() []candidate {
	var out []candidate
	for _, s := range p.r.Catalog.Lookup(p.tool, p.typ) {
		name := Clean(s.Tool)
		key := ""
		if ledger.Key(name).IsMCP() {
			key = name
		}
		if name == "" || Clean(s.Command) == "" || name == p.tool || (key != "" && p.serverWide && p.onFailingServer(key)) {
			continue
		}
		// The catalog is a project file, which a cloned repository may have written: its words
		// are clipped and shown as quoted data with their source, never as ours.
		gap := "not described in " + CatalogFile + ": compare its output with what " + p.tool + " returns"
		if g := Clean(s.Gap); g != "" {
			gap = catalogSays + redact.QuoteData(g, maxCatalogText)
		}
		when := p.substituteWhen()
		if w := Clean(s.When); w != "" {
			when = catalogSays + redact.QuoteData(w, maxCatalogText)
		}
		// The command and the tool's name are the catalog's words too: attributed and quoted,
		// never presented as our recommendation.
		title := "Use " + name + " instead"
		if !plainToolName(name) {
			title = "Use " + redact.QuoteData(name, maxCatalogName) + " (from " + stateDir + "/" + CatalogFile + ") instead"
		}
		opt := Option{
			Rank: RankSubstitute, Kind: KindSubstitute,
			Title:   title,
			Command: catalogSays + redact.QuoteData(s.Command, maxCatalogText),
			Gap:     gap,
			When:    when,
		}
		if s.Kind == KindLowerPermission {
			opt.Rank, opt.Kind = RankLowerPermission, KindLowerPermission
			g := ""
			if Clean(s.Gap) != "" {
				g = gap + "."
			}
			opt.Gap = joinSentences(g, lowerPermissionChecks, gatingCarriesOver)
		}
		out = append(out, p.newCandidate(name, key, opt))
	}
	return out
}

// plainToolName reports whether a catalog's tool name is a name and nothing more: an MCP tool key,
// or a built-in tool's name (letters, digits, '_'), which may be shown as ours. Anything else
// (Bash(…) with a command, prose) is shown quoted with its source.
func plainToolName(name string) bool {
	if ledger.Key(name).IsMCP() {
		return ledger.ValidToolName(name)
	}
	if name == "" || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// scored is a similar tool with its score.
type scored struct {
	key, server, desc string
	score             float64
}

// fromCache returns up to maxSimilar similar tools of other servers, best score first, ties by key.
func (p *proposal) fromCache() []candidate {
	var found []scored
	seen := map[string]bool{}
	for _, name := range sortedKeys(p.r.Tools) {
		server := ledger.Sanitize(name)
		if server == p.server {
			continue // only other servers
		}
		for _, t := range p.r.Tools[name] {
			key, tp := cacheKey(server, t.Name)
			key = Clean(key)
			if t.Name == "" || key == p.tool || seen[key] || (p.serverWide && p.onFailingServer(key)) {
				continue
			}
			seen[key] = true
			prof := newProfile(tp, t.Description)
			best := 0.0
			for _, f := range p.failing {
				best = max(best, similarity(f, prof))
			}
			if best >= similarityThreshold {
				found = append(found, scored{key, Clean(name), Clean(t.Description), best})
			}
		}
	}
	sort.SliceStable(found, func(i, j int) bool {
		if found[i].score != found[j].score {
			return found[i].score > found[j].score
		}
		return found[i].key < found[j].key
	})
	var out []candidate
	for _, s := range found[:min(len(found), maxSimilar)] {
		does := "no description cached"
		if s.desc != "" {
			// The description is the server's text: quoted data with its source.
			does = "its description (from the server's tools/list, cached in " + stateDir + "/tools.json): " + redact.QuoteData(s.desc, 160)
		}
		out = append(out, p.newCandidate(s.key, s.key, Option{
			Rank: RankSubstitute, Kind: KindSubstitute,
			Title:   "Use " + s.key + " instead",
			Command: s.key + "(<the same arguments, mapped to its input schema>)",
			Gap: fmt.Sprintf("a similar tool on server %s (similarity %.2f), not the same one: check that it covers the same data; %s",
				s.server, s.score, does),
			When: p.substituteWhen(),
		}))
	}
	return out
}

// cacheKey returns the tool key and tool part of a cached tool of server (sanitized): names that
// already are keys are kept, others are sanitized the way Claude Code does.
func cacheKey(server, name string) (key, toolPart string) {
	if _, tp, ok := ledger.Key(name).Split(); ok {
		return name, tp
	}
	return string(ledger.ToolKey(server, ledger.Sanitize(name))), name
}

// fromBuiltins returns the built-in tools that fit the failing server, at most maxBuiltins.
func (p *proposal) fromBuiltins() []candidate {
	var out []candidate
	ms := matchBuiltins(p.serverWords, p.nameWords, p.descWords, p.writes, p.serverWide)
	verbs := p.nameWords
	if p.serverWide {
		verbs = nil // the words of many tools would pick an arbitrary, maybe writing, command
	}
	for _, m := range ms[:min(len(ms), maxBuiltins)] {
		b := m.rule
		opt := Option{
			Rank: RankSubstitute, Kind: KindSubstitute,
			Title:   "Use " + b.name + " instead",
			Command: b.command(verbs),
			Gap:     b.gap,
			When:    p.substituteWhen(),
		}
		switch {
		case b.ownCreds && p.typ == ledger.AdminGated:
			opt.Rank, opt.Kind = RankLowerPermission, KindLowerPermission
			opt.Title = "Use " + b.name + " with your own member-scoped login"
			opt.Gap = joinSentences(b.gap, lowerPermissionChecks, gatingCarriesOver)
			opt.When = "now, instead of retrying: the MCP mount waits for an admin, your own login may already reach the same API"
		case b.ownCreds && p.typ == ledger.Auth:
			opt.When = "now: it signs in with its own credentials, separate from the failing mount's"
		}
		out = append(out, p.newCandidate(b.name, "", opt))
	}
	return out
}

// discovery is option 1 when no usable substitute is known: search the session's tools.
func (p *proposal) discovery() Option {
	q := queryWords(p.nameWords)
	if p.serverWide || q == "" {
		q = queryWords(p.serverWords)
	}
	if q == "" {
		q = p.capability()
	}
	when := p.substituteWhen()
	switch {
	case p.serverWide:
		when += "; skip every tool of " + p.serverName + " while its circuit is open"
	case p.typ == ledger.NotFound:
		when += "; it may have been renamed on " + p.serverName + " itself"
	}
	command := `ToolSearch(query: "` + strings.ReplaceAll(q, `"`, "") + `")`
	if p.r.NoToolSearch {
		command = `look through the tools listed in this session for one matching "` + strings.ReplaceAll(q, `"`, "") + `"`
	}
	return Option{
		Rank: RankSubstitute, Kind: KindSubstitute,
		Title:   "Find another tool that covers " + p.capability(),
		Command: command,
		Gap: "no known substitute: " + CatalogFile + ", the tools cache and the built-in table gave none; a tool found this way may differ " +
			"in scope, arguments and output (with tool search off, look through the tools already listed in the session)",
		When: when + "; add the one you settle on to " + CatalogFile,
	}
}

// genericLowerPermission is option 1b when neither the catalog nor the built-in table has one.
func (p *proposal) genericLowerPermission() Option {
	return Option{
		Rank: RankLowerPermission, Kind: KindLowerPermission,
		Title:   "Reach the capability through a member-scoped REST API or a workflow runner",
		Command: `Bash(curl -sS -H "Authorization: Bearer $MEMBER_TOKEN" "https://<service API>/<endpoint for the same action>")`,
		Gap:     joinSentences(lowerPermissionChecks, gatingCarriesOver),
		When:    "now, instead of retrying: the MCP mount waits for an admin, the capability behind it usually does not",
	}
}

// degrade is option 2.
func (p *proposal) degrade() Option {
	c := p.capability()
	gap := "the result lacks what " + p.tool + " would have provided; say so instead of guessing it"
	when := "when the step is optional or no substitute fits"
	switch p.typ {
	case ledger.Timeout, ledger.RateLimit, ledger.Unknown:
		when += "; come back to it after " + p.untilText()
	case ledger.AdminGated:
		when = "when the step is optional and neither a substitute nor a lower-permission path fits"
	}
	return Option{
		Rank: RankDegrade, Kind: KindDegrade,
		Title:   "Skip this step, continue without " + c,
		Command: fmt.Sprintf(`skip the calls to %s and write in the answer: "Not done: %s, %s unavailable (%s)"`, p.tool, c, p.tool, p.typ),
		Gap:     gap,
		When:    when,
	}
}

// retry is option 3: the exact time, or who must act.
func (p *proposal) retry() Option {
	probe := "mcp-circuit-breaker probe " + shellArg(p.tool)
	if p.serverWide && p.serverName != "" {
		probe = "mcp-circuit-breaker probe --server " + shellArg(p.serverName)
	}
	reset := "mcp-circuit-breaker reset " + shellArg(p.tool)
	o := Option{Rank: RankRetry, Kind: KindRetry, Command: probe, Gap: retryGap[p.typ]}
	if p.typ == ledger.RateLimit && p.r.RetryAfter > 0 {
		o.Gap += " (upstream hint: " + p.r.RetryAfter.String() + ")"
	}
	if c := redact.CauseText(Clean(p.r.Cause)); c != "" {
		o.Gap += " (cause: " + c + ")"
	}
	config := orDefault(Clean(p.r.ConfigFile), "the server's MCP configuration")
	switch {
	case p.typ == ledger.AdminGated:
		o.Title = "Retry after an admin acts: no automatic retry"
		o.When = "after an admin approves the mount; the probe closes the circuit on success, and " + reset + " closes it by hand"
	case p.typ == ledger.Auth:
		o.Title = "Retry after credentials change"
		o.When = "after the credentials are refreshed in " + config + "; a changed configuration allows a trial at once"
		if p.hasAt {
			o.Title += "; trial allowed from " + p.atText
			o.When += ", otherwise not before " + p.at.Format(time.RFC3339)
		}
	case p.hasAt:
		o.Title = "Retry after cooldown at " + p.atText
		o.When = "not before " + p.at.Format(time.RFC3339) + ": the first call after that is let through as the trial, " +
			"calls before it are denied, so do not retry earlier; the probe checks the server without spending a real call"
	default:
		o.Title = "Retry after a person resets the circuit"
		o.Command = reset
		o.When = "only a person can close this circuit: ask the user to run it once the cause is fixed"
	}
	return o
}

// retryGap is the gap of option 3 per failure type.
var retryGap = map[ledger.FailureType]string{
	ledger.AdminGated: "nothing recovers until an admin approves; no timer reopens the circuit",
	ledger.Auth:       "nothing recovers until the credentials change",
	ledger.RateLimit:  "the task waits; the quota refills on the provider's schedule, so pace the calls after the trial",
	ledger.NotFound:   "waiting does not bring a removed tool back; the probe checks tools/list, and the tool may have been renamed",
	ledger.Timeout:    "the task waits; if the server is still down the trial fails and the cooldown doubles (up to 10 min)",
	ledger.Malformed:  "the same arguments fail the same way: fix them against the tool's current schema before the trial",
	ledger.Unknown:    "the cause is unknown; a failed trial doubles the cooldown",
}

// substituteWhen is when a substitute is worth it, per failure type.
func (p *proposal) substituteWhen() string {
	switch p.typ {
	case ledger.AdminGated:
		return "now: retrying never helps until an admin approves the mount; check that the substitute is not gated the same way"
	case ledger.Auth:
		return "now: the failure is this mount's credentials, and the substitute has its own"
	case ledger.NotFound:
		return "now: the tool is gone or renamed on its server"
	case ledger.Malformed:
		return "now: the tool's schema or responses changed, and the substitute avoids the mismatch"
	}
	return "when the task cannot wait until " + p.untilText()
}

// untilText is the time the circuit may close, or who closes it.
func (p *proposal) untilText() string {
	if p.hasAt {
		return p.at.Format(time.RFC3339)
	}
	return "the circuit is reset"
}

// capability names what is lost without the failing tool.
func (p *proposal) capability() string {
	switch {
	case p.serverWide && p.serverName != "":
		return "the " + p.serverName + " server"
	case p.toolPart != "" && p.serverName != "":
		return strings.NewReplacer("_", " ", "-", " ").Replace(p.toolPart) + " on " + p.serverName
	case p.tool != "":
		return p.tool
	}
	return "this tool"
}

// sortedKeys returns the keys of m in order.
func sortedKeys(m map[string][]Tool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// queryWords joins up to six distinct words, in order, for a search query.
func queryWords(ws []string) string {
	var out []string
	seen := map[string]bool{}
	for _, w := range ws {
		if !seen[w] && len(out) < 6 {
			seen[w] = true
			out = append(out, w)
		}
	}
	return strings.Join(out, " ")
}

// orDefault returns s, or def when s is empty.
func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// joinSentences joins the non-empty parts with a space, ending each with a period.
func joinSentences(parts ...string) string {
	var out []string
	for _, s := range parts {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		if !strings.HasSuffix(s, ".") && !strings.HasSuffix(s, "?") && !strings.HasSuffix(s, "!") {
			s += "."
		}
		out = append(out, s)
	}
	return strings.Join(out, " ")
}

// firstField returns the first space-separated word of s.
func firstField(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return ""
}
