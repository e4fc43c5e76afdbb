// Package fallbacks owns the fallback options proposed when a circuit opens (docs/fallbacks.md): where
// substitutes come from, how options are ranked, the user catalog fallbacks.yaml, and the Markdown
// and compact renderings of the options. It does no I/O: the caller reads files, the clock and the
// circuit states, and passes them in a [Request].
//
// # Ranking
//
// [Propose] returns at least three options, in the skill's Step 4 order:
//
//	rank "1"  kind substitute        another tool that covers the task
//	rank "1b" kind lower_permission  ADMIN_GATED only: a member-scoped API or workflow path
//	rank "2"  kind degrade           skip the step and note the gap
//	rank "3"  kind retry             pause; retry at the exact time, or after a person acts
//
// Substitutes come from, in this order: the user catalog (every matching entry, in file order),
// similar tools on other servers from the tools/list cache (best score first, ties by tool key),
// and Claude Code's built-in tools (best keyword match first, ties by table order). A substitute
// is proposed once, by its first source. When no usable substitute is found, option 1 is a search
// for one (Claude Code's ToolSearch), so even a bare request gets three usable options.
//
// A substitute whose own circuit is OPEN ([Request.IsOpen] true for its tool key or for its
// server key mcp__<server>__*) is marked [Option.Blocked] and moved after every usable option:
// marked, not hidden, so the model knows it was considered and why it must not be used now. When
// the failing circuit is server-wide (the key is mcp__<server>__*, or IsOpen reports that key
// open), no tool of the failing server is proposed at all. The order is deterministic.
//
// Option 3 names its time exactly: [Request.OpenUntil], else [Request.Now] plus
// [Request.RetryAfter], in RFC 3339 UTC rounded up to the whole second (never earlier than the
// real time, or a retry at that moment would still be denied). With neither, it says who must
// act: an admin for ADMIN_GATED, new credentials for AUTH, else a person running reset.
//
// # Catalog
//
// The optional catalog DIR/.claude/mcp_circuit/fallbacks.yaml maps tool globs to substitutes:
//
//	fallbacks:
//	  - match: "mcp__github__*"            # required: a tool glob
//	    substitutes:                       # required: at least one
//	      - tool: "Bash(gh …)"             # required: an MCP tool key or a built-in invocation
//	        command: "gh issue list --repo OWNER/REPO --search QUERY"   # required
//	        gap: "no natural-language search"                           # optional
//	        when: "AUTH or ADMIN_GATED on the GitHub mount"             # optional
//	        types: [AUTH, ADMIN_GATED]     # optional: only for these failure types
//	        kind: substitute               # optional: substitute (default) or lower_permission
//
// match is a [path.Match] pattern tested against the whole circuit key: * matches any run of
// characters but "/" (which Claude Code's keys never hold: they are [A-Za-z0-9_-]), so
// mcp__github__* covers every GitHub tool and the server key mcp__github__* itself; ? matches one
// character, [...] a class, and \ escapes. A server-wide circuit is matched
// only by patterns that match the literal key mcp__<server>__*. types takes failure type names
// (case-insensitive, - for _), as a list or a single name. A lower_permission substitute becomes
// option 1b and is proposed for ADMIN_GATED failures only; its types, when given, must include
// ADMIN_GATED. Anchors are allowed, aliases and merge keys are not.
//
// The reader (internal/yamlfile, through the project) reports every problem at once, each naming the file, the line and the key:
// YAML syntax, unknown or repeated keys, wrong value types, an empty match, a bad glob, an
// unknown failure type or kind, missing tool or command, an entry without substitutes.
//
// # Similarity
//
// A tool on another server is a candidate substitute when its score against the failing tool is
// at least 0.3. Names and descriptions are split into lowercase words (at non-letters and
// camelCase humps), stop words ("the", "tool", "mcp", …) and one-letter or numeric words are
// dropped, and plurals are folded ("issues" → "issue"). With N the name words and A the name and
// description words of each side,
//
//	score = 0.7 × wj(N₁, N₂) + 0.3 × wj(A₁, A₂)
//
// where wj is the weighted Jaccard index: shared weight over total weight, a word weighing 1, or
// 0.5 for a verb such as get, list, create or delete (the object names the task, the verb less
// so). When one tool reads and the other writes (judged by the first verb of each name) the score
// is halved: a write tool is a poor stand-in for a read tool. For a server-wide circuit each
// candidate takes its best score against any cached tool of the failing server (or against the
// server's name when none is cached). At most three similar tools are proposed.
//
// # Built-in tools
//
// Claude Code's built-in tools are proposed by keywords found in the failing server's name
// (strongest), its tool names, or, only when no name matches any rule, its tool descriptions:
//
//	built-in               keywords                                         notes
//	Read / Grep / Glob     filesystem; fs, file, directory, folder*         failing tool does not write
//	Write / Edit           filesystem; fs, file, directory, folder*         failing tool writes
//	Bash(git …)            git                                              command picked by the tool's words
//	Bash(gh …)             github; gh*                                      by the tool's words; 1b for ADMIN_GATED
//	WebFetch               url, http(s), browser, browse, scrape, crawl,    not with a file, git, GitHub
//	                       puppeteer, playwright, website, webpage, html;   or database rule
//	                       fetch, web, page, download, curl, firecrawl*
//	WebSearch              google, bing, brave, duckduckgo, kagi, tavily,   same
//	                       exa, serp, serpapi, perplexity, websearch,
//	                       "web search"; search, web*
//	Bash(sqlite3 …)        sqlite, sqlite3                                  read-only flag
//	Bash(psql …)           postgres, postgresql, psql
//
// Keywords after the ";" (marked *) count only in the server's name: they are too common in tool
// names. Words are compared after folding (files → file). A server-wide circuit gets both
// filesystem rules and each rule's general command (gh api …, git status). At most two
// built-ins are proposed.
//
// # Text
//
// Names and catalog text are data: the renderings escape nothing, but every rendered string has
// its newlines, control characters and bidirectional overrides removed, so a name cannot forge a
// line of the deny reason. No file path is ever built from a name.
package fallbacks
