package fallbacks

import (
	"errors"
	"path"
	"reflect"
	"strings"
	"testing"

	multierror "github.com/hashicorp/go-multierror"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

// problems returns the CatalogErrors joined in err.
func problems(t *testing.T, err error) []*CatalogError {
	t.Helper()
	if err == nil {
		return nil
	}
	var errs []error
	if me, ok := errors.AsType[*multierror.Error](err); ok {
		errs = me.WrappedErrors()
	} else {
		errs = []error{err}
	}
	out := make([]*CatalogError, 0, len(errs))
	for _, e := range errs {
		var ce *CatalogError
		if !errors.As(e, &ce) {
			t.Fatalf("problem %v is a %T, not a *CatalogError", e, e)
		}
		out = append(out, ce)
	}
	return out
}

func TestParseCatalogValid(t *testing.T) {
	c, err := parseCatalog("fallbacks.yaml", []byte(`# user fallbacks
fallbacks:
  - match: "mcp__github__*"
    substitutes:
      - tool: "Bash(gh …)"
        command: "gh issue list --repo OWNER/REPO"
        gap: "no natural-language search"
        when: "AUTH or ADMIN_GATED on the GitHub mount"
        types: [AUTH, admin-gated]
      - tool: "Bash(gh api …)"
        command: "gh api repos/OWNER/REPO/issues"
        kind: lower_permission
  - match: mcp__fetch__fetch
    substitutes:
      - {tool: WebFetch, command: 'WebFetch(url: "…")', types: timeout}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := &Catalog{Name: "fallbacks.yaml", Entries: []Entry{
		{Match: "mcp__github__*", Line: 3, Substitutes: []Substitute{
			{Tool: "Bash(gh …)", Command: "gh issue list --repo OWNER/REPO", Gap: "no natural-language search",
				When: "AUTH or ADMIN_GATED on the GitHub mount", Types: []ledger.FailureType{ledger.Auth, ledger.AdminGated},
				Kind: KindSubstitute, Line: 5},
			{Tool: "Bash(gh api …)", Command: "gh api repos/OWNER/REPO/issues", Kind: KindLowerPermission, Line: 10},
		}},
		{Match: "mcp__fetch__fetch", Line: 13, Substitutes: []Substitute{
			{Tool: "WebFetch", Command: `WebFetch(url: "…")`, Types: []ledger.FailureType{ledger.Timeout}, Kind: KindSubstitute, Line: 15},
		}},
	}}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("got  %+v\nwant %+v", c, want)
	}

	for _, tc := range []struct {
		tool string
		typ  ledger.FailureType
		want []string
	}{
		{"mcp__github__search_issues", ledger.Auth, []string{"Bash(gh …)"}},
		{"mcp__github__search_issues", ledger.AdminGated, []string{"Bash(gh …)", "Bash(gh api …)"}},
		{"mcp__github__search_issues", ledger.Timeout, nil},
		{"mcp__github__*", ledger.Auth, []string{"Bash(gh …)"}},
		{"mcp__fetch__fetch", ledger.Timeout, []string{"WebFetch"}},
		{"mcp__fetch__fetch_url", ledger.Timeout, nil},
		{"mcp__fetch__*", ledger.Timeout, nil},
	} {
		t.Run(tc.tool+"/"+string(tc.typ), func(t *testing.T) {
			var got []string
			for _, s := range c.Lookup(tc.tool, tc.typ) {
				got = append(got, s.Tool)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Lookup = %q, want %q", got, tc.want)
			}
		})
	}
	if (*Catalog)(nil).Lookup("mcp__a__b", ledger.Auth) != nil {
		t.Error("a nil catalog has substitutes")
	}
}

func TestParseCatalogReportsEveryProblem(t *testing.T) {
	data := `fallbacks:
  - match: ""
    substitutes:
      - tool: WebFetch
        command: "x"
  - match: "mcp__[x__*"
    substitue: []
  - match: "mcp__ok__*"
    substitutes:
      - tool: "mcp__a__b"
        types: [AUTH, BOGUS]
        gap: [not, a, string]
      - command: "c"
        kind: sideways
      - tool: t
        command: c
        kind: lower_permission
        types: AUTH
      - tool: good
        command: fine
        tool: again
      - tool: kept
        command: "kept command"
  - "just a string"
extra: 1
`
	c, err := parseCatalog("f.yaml", []byte(data))
	want := []string{
		`f.yaml:2: fallbacks[0].match: empty tool glob`,
		`f.yaml:6: fallbacks[1].match: bad glob "mcp__[x__*"`,
		`f.yaml:6: fallbacks[1].substitutes: missing`,
		`f.yaml:7: fallbacks[1].substitue: unknown key (want match, substitutes)`,
		`f.yaml:10: fallbacks[2].substitutes[0].command: missing: a substitute needs a command`,
		`f.yaml:11: fallbacks[2].substitutes[0].types[1]: unknown failure type "BOGUS" (want one of ADMIN_GATED, AUTH, RATE_LIMIT, NOT_FOUND, TIMEOUT, MALFORMED, UNKNOWN)`,
		`f.yaml:12: fallbacks[2].substitutes[0].gap: want a string, got a list`,
		`f.yaml:13: fallbacks[2].substitutes[1].tool: missing: a substitute needs a tool`,
		`f.yaml:14: fallbacks[2].substitutes[1].kind: unknown kind "sideways" (want substitute or lower_permission)`,
		`f.yaml:18: fallbacks[2].substitutes[2].types: a lower_permission substitute applies to ADMIN_GATED only; list it or drop types`,
		`f.yaml:21: fallbacks[2].substitutes[3].tool: repeated key`,
		`f.yaml:24: fallbacks[3]: want a mapping, got a string`,
		`f.yaml:25: extra: unknown key (want fallbacks)`,
	}
	var got []string
	for _, p := range problems(t, err) {
		got = append(got, p.Error())
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if err.Error() != strings.Join(want, "\n") {
		t.Errorf("joined error:\n%s", err)
	}
	// What validated is still returned: the one good substitute of the third entry.
	if len(c.Entries) != 1 || c.Entries[0].Match != "mcp__ok__*" || len(c.Entries[0].Substitutes) != 1 ||
		c.Entries[0].Substitutes[0].Tool != "kept" {
		t.Errorf("partial catalog = %+v", c)
	}
}

func TestParseCatalogCases(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		want       []string // problems; nil for none
		entries    int
	}{
		{"empty", "", nil, 0},
		{"comments only", "# nothing yet\n", nil, 0},
		{"null", "~\n", nil, 0},
		{"null list", "fallbacks:\n", nil, 0},
		{"empty list", "fallbacks: []\n", nil, 0},
		{"flow style", `{fallbacks: [{match: "*", substitutes: [{tool: t, command: c}]}]}`, nil, 1},
		{"anchor", "fallbacks:\n  - &e {match: a, substitutes: [{tool: t, command: c}]}\n  - {match: b, substitutes: [{tool: t, command: c}]}\n", nil, 2},
		{"syntax", "fallbacks:\n  - match: [\n", []string{"f.yaml:2: did not find expected node content"}, 0},
		{"tab", "fallbacks:\n\t- match: x\n", []string{"f.yaml:2: found character that cannot start any token"}, 0},
		{"top-level list", "- match: a\n", []string{"f.yaml:1: want a mapping, got a list"}, 0},
		{"top-level string", "hello\n", []string{"f.yaml:1: want a mapping, got a string"}, 0},
		{"fallbacks mapping", "fallbacks: {match: a}\n", []string{"f.yaml:1: fallbacks: want a list, got a mapping"}, 0},
		{"second document", "fallbacks: []\n---\nfoo: 1\n", []string{"f.yaml:2: a second YAML document: the catalog is one document"}, 0},
		{"alias", "fallbacks:\n  - &e {match: a, substitutes: [{tool: t, command: c}]}\n  - *e\n",
			[]string{"f.yaml:3: fallbacks[1]: aliases are not supported: write the value out"}, 1},
		{"merge key", "fallbacks:\n  - {match: a, substitutes: [{tool: t, command: c}], <<: {}}\n",
			[]string{"f.yaml:2: fallbacks[0].<<: unknown key (want match, substitutes)"}, 0},
		{"repeated top key", "fallbacks: []\nfallbacks: []\n", []string{"f.yaml:2: fallbacks: repeated key"}, 0},
		{"non-string key", "fallbacks:\n  - ? [a]\n    : b\n    match: x\n    substitutes: [{tool: t, command: c}]\n",
			[]string{"f.yaml:2: fallbacks[0]: a key must be a string, got a list"}, 0},
		{"null match", "fallbacks:\n  - match:\n    substitutes: [{tool: t, command: c}]\n", []string{"f.yaml:2: fallbacks[0].match: empty tool glob"}, 0},
		{"missing match", "fallbacks:\n  - substitutes: [{tool: t, command: c}]\n", []string{"f.yaml:2: fallbacks[0].match: missing"}, 0},
		{"match list", "fallbacks:\n  - match: [a]\n    substitutes: [{tool: t, command: c}]\n", []string{"f.yaml:2: fallbacks[0].match: want a string, got a list"}, 0},
		{"empty substitutes", "fallbacks:\n  - match: a\n    substitutes: []\n", []string{"f.yaml:3: fallbacks[0].substitutes: empty: list at least one substitute"}, 0},
		{"blank tool", "fallbacks:\n  - match: a\n    substitutes:\n      - tool: \"  \"\n        command: c\n",
			[]string{"f.yaml:4: fallbacks[0].substitutes[0].tool: missing: a substitute needs a tool"}, 0},
		{"types not a list", "fallbacks:\n  - match: a\n    substitutes: [{tool: t, command: c, types: {AUTH: 1}}]\n",
			[]string{"f.yaml:3: fallbacks[0].substitutes[0].types: want a string, got a mapping"}, 0},
		{"invisible command", "fallbacks:\n  - match: a\n    substitutes: [{tool: t, command: \"\\u202e\\n\"}]\n",
			[]string{"f.yaml:3: fallbacks[0].substitutes[0].command: missing: a substitute needs a command"}, 0},
		{"numbers are text", "fallbacks:\n  - match: a\n    substitutes: [{tool: 42, command: 7, gap: yes}]\n", nil, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseCatalog("f.yaml", []byte(tc.data))
			var got []string
			for _, p := range problems(t, err) {
				got = append(got, p.Error())
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("problems %q, want %q", got, tc.want)
			}
			if c == nil || len(c.Entries) != tc.entries {
				t.Errorf("catalog %+v, want %d entries", c, tc.entries)
			}
		})
	}
}

// FuzzParseCatalog checks that no input panics, that a catalog without problems is fully valid,
// that every problem names the file, and that Propose over any parsed catalog keeps its promises.
func FuzzParseCatalog(f *testing.F) {
	for _, seed := range []string{
		"",
		"fallbacks: []\n",
		"fallbacks:\n  - match: \"mcp__github__*\"\n    substitutes:\n      - tool: \"Bash(gh …)\"\n        command: \"gh issue list\"\n        types: [AUTH, ADMIN_GATED]\n        kind: lower_permission\n",
		"fallbacks:\n  - match: \"mcp__[x\"\n    substitue: []\n  - \"x\"\nextra: 1\n",
		"fallbacks:\n  - &e {match: a, substitutes: [{tool: t, command: c}]}\n  - *e\n",
		"fallbacks:\n  - {match: \"*\", substitutes: [{tool: \"mcp__s__t\\nX\", command: \"\\u202e\", types: timeout}]}\n",
		"fallbacks: [\n",
		"a: b\n---\nc: d\n",
		"? [a]\n: b\n",
		"fallbacks:\n  - match: !!binary aGVsbG8=\n    substitutes: [{tool: !!int 1, command: c}]\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data string) {
		c, err := parseCatalog("fuzz.yaml", []byte(data))
		if c == nil {
			t.Fatal("nil catalog")
		}
		for _, p := range problems(t, err) {
			if p.File != "fuzz.yaml" || !strings.HasPrefix(p.Error(), "fuzz.yaml") || strings.ContainsAny(p.Msg, "\n\r") {
				t.Errorf("bad problem %q", p.Error())
			}
		}
		for _, e := range c.Entries {
			if strings.TrimSpace(e.Match) == "" || !wellFormedGlob(e.Match) || len(e.Substitutes) == 0 {
				t.Errorf("invalid entry kept: %+v", e)
			}
			for _, s := range e.Substitutes {
				if strings.TrimSpace(s.Tool) == "" || strings.TrimSpace(s.Command) == "" ||
					(s.Kind != KindSubstitute && s.Kind != KindLowerPermission) {
					t.Errorf("invalid substitute kept: %+v", s)
				}
				for _, ty := range s.Types {
					if !ty.Valid() {
						t.Errorf("invalid type kept: %q", ty)
					}
				}
			}
		}
		for _, typ := range []ledger.FailureType{ledger.AdminGated, ledger.Timeout} {
			for _, tool := range []string{"mcp__github__search_issues", "mcp__s__t", "mcp__s__*"} {
				opts := Propose(Request{Tool: tool, Type: typ, Catalog: c})
				checkShape(t, opts)
				for _, line := range strings.Split(Markdown(tool, typ, opts), "\n") {
					if Clean(line) != strings.TrimSpace(line) {
						t.Errorf("unclean Markdown line %q", line)
					}
				}
				if s := Short(opts, 700); len(s) > 700 {
					t.Errorf("Short is %d bytes", len(s))
				}
			}
		}
	})
}

// wellFormedGlob reports whether pattern is a well-formed path.Match pattern.
func wellFormedGlob(pattern string) bool {
	_, err := path.Match(pattern, "")
	return err == nil
}
