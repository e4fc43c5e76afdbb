package fallbacks

import "strings"

// Match levels of a built-in rule: where its keyword was found.
const (
	levelNone = iota
	levelDescription
	levelToolName
	levelServerName
)

// maxBuiltins is the most built-in tools proposed for one failure.
const maxBuiltins = 2

// builtin is one row of the built-in tool table in the package doc.
type builtin struct {
	id   string
	name string // how the option names the tool
	// keywords count in the server name, tool names and descriptions; a keyword with a space
	// needs all its words.
	keywords []string
	// serverOnly keywords count only in the server name: they are too common elsewhere.
	serverOnly []string
	// notWith names rules that, when they match too, make this one a poor fit.
	notWith []string
	// write restricts the rule to failing tools that write (+1) or do not write (-1).
	write int
	// ownCreds marks a path that uses the user's own login: option 1b for ADMIN_GATED.
	ownCreds bool
	command  func(w []string) string
	gap      string
}

// dbAndCode are the rules after which a web tool is a poor substitute.
var dbAndCode = []string{"fs-read", "fs-write", "git", "github", "sqlite", "postgres"}

// builtins is the built-in tool table, in tie-break order.
var builtins = []builtin{
	{
		id: "fs-read", name: "Read/Grep/Glob", keywords: []string{"filesystem"},
		serverOnly: []string{"fs", "file", "directory", "folder"}, write: -1,
		command: func([]string) string {
			return `Glob(pattern: "**/*"), Grep(pattern: "<regex>", path: "<dir>"), Read(file_path: "<absolute path>")`
		},
		gap: "only paths Claude Code may read, not the server's allowed roots; no tree or metadata calls: use Glob or Bash(ls -l) instead",
	},
	{
		id: "fs-write", name: "Write/Edit", keywords: []string{"filesystem"},
		serverOnly: []string{"fs", "file", "directory", "folder"}, write: +1,
		command: func([]string) string {
			return `Write(file_path: "<absolute path>", content: "<text>") or Edit(file_path: "<absolute path>", old_string: "<old>", new_string: "<new>")`
		},
		gap: "each write asks under the session's permission rules (gating carries over); no move or delete: those need Bash(mv …)/Bash(rm …) and their own approval",
	},
	{
		id: "git", name: "Bash(git …)", keywords: []string{"git"},
		command: gitCommand,
		gap:     "runs in the session's working tree through Bash (its permission rules apply); output is git's text, not the server's JSON",
	},
	{
		id: "github", name: "Bash(gh …)", keywords: []string{"github"}, serverOnly: []string{"gh"},
		ownCreds: true, command: ghCommand,
		gap: "gh uses its own login (check gh auth status): another token with other scopes; output is gh's text unless --json is given; each command goes through Bash permission rules",
	},
	{
		id: "webfetch", name: "WebFetch",
		keywords: []string{"url", "http", "https", "browser", "browse", "scrape", "scraper", "crawl", "crawler",
			"puppeteer", "playwright", "website", "webpage", "html"},
		serverOnly: []string{"fetch", "web", "page", "download", "curl", "firecrawl"},
		notWith:    dbAndCode,
		command: func([]string) string {
			return `WebFetch(url: "<https://…>", prompt: "<what to extract>")`
		},
		gap: "one public URL per call: no JavaScript, login, cookies, clicks or forms; the page is summarised by a small model, so ask for exact quotes",
	},
	{
		id: "websearch", name: "WebSearch",
		keywords: []string{"google", "bing", "brave", "duckduckgo", "kagi", "tavily", "exa", "serp", "serpapi",
			"perplexity", "websearch", "web search"},
		serverOnly: []string{"search", "web"},
		notWith:    dbAndCode,
		command: func([]string) string {
			return `WebSearch(query: "<keywords>")`
		},
		gap: "public web results (titles, links, snippets), not the service's own index or private data; follow up with WebFetch for a page's content",
	},
	{
		id: "sqlite", name: "Bash(sqlite3 …)", keywords: []string{"sqlite", "sqlite3"},
		command: func([]string) string {
			return `Bash(sqlite3 -readonly <database file> "SELECT …")`
		},
		gap: "needs the sqlite3 program; -readonly keeps it to reads, and a write stays ask",
	},
	{
		id: "postgres", name: "Bash(psql …)", keywords: []string{"postgres", "postgresql", "psql"},
		command: func([]string) string {
			return `Bash(psql "$DATABASE_URL" -c "SELECT …")`
		},
		gap: "needs psql and a connection string; runs with that role's rights, and a write stays ask",
	},
}

// builtinMatch is a rule that fits, with its level.
type builtinMatch struct {
	rule  *builtin
	level int
}

// matchBuiltins returns the rules that fit a failing server, best level first, then table order.
// server, names and descs are word lists; writes tells whether the failing tool writes, and
// serverWide lifts the read/write restriction.
func matchBuiltins(server, names, descs []string, writes, serverWide bool) []builtinMatch {
	sv, nm, ds := wordSet(server), wordSet(names), wordSet(descs)
	var out []builtinMatch
	best := levelNone
	for i := range builtins {
		b := &builtins[i]
		if !serverWide && ((b.write > 0 && !writes) || (b.write < 0 && writes)) {
			continue
		}
		lvl := levelNone
		switch {
		case hasAny(sv, b.keywords) || hasAny(sv, b.serverOnly):
			lvl = levelServerName
		case hasAny(nm, b.keywords):
			lvl = levelToolName
		case hasAny(ds, b.keywords):
			lvl = levelDescription
		}
		if lvl != levelNone {
			out = append(out, builtinMatch{b, lvl})
			best = max(best, lvl)
		}
	}
	// Descriptions are noisy: they count only when no name matched any rule.
	kept := out[:0]
	for _, m := range out {
		if m.level == levelDescription && best > levelDescription {
			continue
		}
		if conflicts(m.rule, out) {
			continue
		}
		kept = append(kept, m)
	}
	// Stable insertion sort by level, keeping table order for ties.
	for i := 1; i < len(kept); i++ {
		for j := i; j > 0 && kept[j].level > kept[j-1].level; j-- {
			kept[j], kept[j-1] = kept[j-1], kept[j]
		}
	}
	return kept
}

// conflicts reports whether a rule named in r.notWith is among the matches.
func conflicts(r *builtin, ms []builtinMatch) bool {
	for _, m := range ms {
		for _, id := range r.notWith {
			if m.rule.id == id {
				return true
			}
		}
	}
	return false
}

// hasAny reports whether the sorted word set holds one of the keywords; a keyword with spaces
// needs all its words.
func hasAny(set, keywords []string) bool {
	for _, k := range keywords {
		all := true
		for _, w := range strings.Fields(k) {
			if !contains(set, stem(w)) { // the set holds folded words: postgres → postgre
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// has reports whether any of ws is in the word list.
func has(list []string, ws ...string) bool {
	for _, a := range list {
		for _, b := range ws {
			if a == b {
				return true
			}
		}
	}
	return false
}

// gitCommand picks a git invocation from the failing tool's words.
func gitCommand(w []string) string {
	switch {
	case has(w, "diff"):
		return "Bash(git diff)"
	case has(w, "log", "history"):
		return "Bash(git log --oneline -20)"
	case has(w, "blame"):
		return "Bash(git blame <file>)"
	case has(w, "show"):
		return "Bash(git show <rev>)"
	case has(w, "branch"):
		return "Bash(git branch --all)"
	case has(w, "add"):
		return "Bash(git add <path>)"
	case has(w, "commit") && !has(w, "list", "get", "search"):
		return `Bash(git commit -m "<message>")`
	case has(w, "commit"):
		return "Bash(git log --oneline -20)"
	case has(w, "checkout", "switch"):
		return "Bash(git switch <branch>)"
	}
	return "Bash(git status --short)"
}

// ghCommand picks a gh invocation from the failing tool's words.
func ghCommand(w []string) string {
	writes := has(w, "create", "add", "update", "edit", "write")
	switch {
	case has(w, "comment"):
		return `Bash(gh issue comment <number> --repo OWNER/REPO --body "<text>")`
	case has(w, "pull", "pr") && writes:
		return `Bash(gh pr create --repo OWNER/REPO --title "<title>" --body "<body>")`
	case has(w, "pull", "pr") && has(w, "get", "view", "read"):
		return "Bash(gh pr view <number> --repo OWNER/REPO --json title,body,files,comments)"
	case has(w, "pull", "pr"):
		return `Bash(gh pr list --repo OWNER/REPO --search "<query>")`
	case has(w, "issue") && writes:
		return `Bash(gh issue create --repo OWNER/REPO --title "<title>" --body "<body>")`
	case has(w, "issue") && has(w, "get", "view", "read"):
		return "Bash(gh issue view <number> --repo OWNER/REPO --json title,body,comments)"
	case has(w, "issue"):
		return `Bash(gh issue list --repo OWNER/REPO --search "<query>")`
	case has(w, "code"):
		return `Bash(gh search code "<query>" --repo OWNER/REPO)`
	case has(w, "file", "content"):
		return "Bash(gh api repos/OWNER/REPO/contents/<path>)"
	case has(w, "repository", "repo") && has(w, "search"):
		return `Bash(gh search repos "<query>")`
	case has(w, "commit"):
		return "Bash(gh api repos/OWNER/REPO/commits)"
	}
	return "Bash(gh api repos/OWNER/REPO/<endpoint>)"
}
