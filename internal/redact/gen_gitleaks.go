//go:build ignore

// Command gen_gitleaks writes gitleaks_keys.go: the secret shapes of gitleaks' default rules that
// are a fixed prefix and a run of characters, as a table Redact's linear scanner reads. gitleaks
// (MIT, Copyright (c) 2019 Zachary Rice) keeps its rules as regular expressions in
// config/gitleaks.toml; importing its config package would cost the lean hook 4 MB of binary,
// twice its start-up and 130 ms to compile the expressions at the first redaction
// (docs/security.md), so the table is generated here from the pinned version instead.
//
//	go generate ./internal/redact
//
// It fetches the module with the ordinary Go client (go mod download, through the module proxy),
// reads every rule's regex with regexp/syntax and keeps a rule when its secret is, in every branch,
// a literal prefix (small character classes and alternations of literals expand to several
// prefixes) followed by characters of one set (the union of what the rest can hold) with a least
// length. Rules whose secret needs the words around it (a key name before '='), or whose prefix is
// too short to stand alone, are left out and counted in the file's header. The version is pinned
// below; changing it and running go generate is how the table follows gitleaks.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/format"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"
	"unicode"
)

// module and version pin the rule set.
const (
	module  = "github.com/zricethezav/gitleaks/v8"
	version = "v8.30.1"
)

// Limits that keep a shape from matching ordinary text: a prefix of 4 characters and 8 after it, or
// a prefix of 2 or 3 characters and 16 after it (Twilio's SK and 32 hex digits).
const (
	minPrefix      = 2
	minLongPrefix  = 4
	minRest        = 8
	minRestShort   = 16
	maxPrefixes    = 16
	maxSetForClass = 4 // a class of at most this many characters in a prefix is expanded
)

// ours are the rules Redact has a rule of its own for, which says more: they are left out.
var ours = map[string]string{
	"openai-api-key": "the sk- rule keeps sk-ant-, sk-proj-, sk-svcacct- and sk-admin- and finds shorter keys",
}

type rule struct{ id, regex string }

// shape is one table entry: prefix, then at least min characters of set.
type shape struct {
	id     string
	prefix string
	fold   bool
	set    [4]uint64
	min    int
}

func main() {
	dir, err := moduleDir()
	if err != nil {
		log.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "config", "gitleaks.toml"))
	if err != nil {
		log.Fatal(err)
	}
	rules := parseRules(string(data))
	var shapes []shape
	skipped := 0
	for _, r := range rules {
		if _, ok := ours[r.id]; ok {
			skipped++
			continue
		}
		got, ok := shapesOf(r)
		if !ok {
			skipped++
			continue
		}
		shapes = append(shapes, got...)
	}
	if err := write("gitleaks_keys.go", shapes, len(rules), skipped); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("gitleaks %s: %d rules, %d shapes from %d of them, %d left out\n", version, len(rules), len(shapes), len(rules)-skipped, skipped)
}

// moduleDir downloads the pinned module into the module cache and returns its directory.
func moduleDir() (string, error) {
	out, err := exec.Command("go", "mod", "download", "-json", module+"@"+version).Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w", module, version, err)
	}
	var m struct{ Dir, Error string }
	if err := json.Unmarshal(out, &m); err != nil {
		return "", fmt.Errorf("read go mod download's answer: %w", err)
	}
	if m.Error != "" || m.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s: %s", module, version, m.Error)
	}
	return m.Dir, nil
}

var (
	idLine    = regexp.MustCompile(`(?m)^id = "([^"]+)"`)
	regexLine = regexp.MustCompile(`(?ms)^regex = '''(.*?)'''`)
)

// parseRules reads the id and regex of every [[rules]] table of gitleaks.toml (the rules use only
// basic strings for ids and triple-quoted literal strings for regexes; a rule with no regex matches paths).
func parseRules(toml string) []rule {
	var out []rule
	for _, block := range strings.Split(toml, "\n[[rules]]")[1:] {
		if i := strings.Index(block, "\n[["); i >= 0 && !strings.HasPrefix(block[i:], "\n[[rules.") {
			block = block[:i]
		}
		// The rule's own keys come before its sub-tables ([[rules.allowlists]]).
		if i := strings.Index(block, "\n[[rules."); i >= 0 {
			block = block[:i]
		}
		id, re := idLine.FindStringSubmatch(block), regexLine.FindStringSubmatch(block)
		if id == nil || re == nil {
			continue
		}
		out = append(out, rule{id[1], re[1]})
	}
	return out
}

// shapesOf returns the shapes of r's branches that are a prefix and a run, or false when none is.
func shapesOf(r rule) ([]shape, bool) {
	re, err := syntax.Parse(r.regex, syntax.Perl)
	if err != nil {
		return nil, false
	}
	// A rule with branches of both kinds (Atlassian's key name before '=', or ATATT3 and 186
	// characters) gives the shapes of the branches that are one.
	var out []shape
	for _, branch := range alternatives(re) {
		token := secretOf(branch)
		if token == nil {
			continue
		}
		for _, t := range alternatives(token) {
			if got, ok := shapeOf(r.id, flatten(t)); ok {
				out = append(out, got...)
			}
		}
	}
	return out, len(out) > 0
}

// alternatives are the branches of re when it is an alternation, else re.
func alternatives(re *syntax.Regexp) []*syntax.Regexp {
	for re.Op == syntax.OpCapture && len(re.Sub) == 1 && re.Sub[0].Op == syntax.OpAlternate {
		re = re.Sub[0]
	}
	if re.Op == syntax.OpAlternate {
		return re.Sub
	}
	return []*syntax.Regexp{re}
}

// secretOf is the part of a branch that is the secret: its first capture group, else the branch
// without the boundaries and the context that only tells where the secret ends.
func secretOf(re *syntax.Regexp) *syntax.Regexp {
	if c := firstCapture(re); c != nil {
		return c.Sub[0]
	}
	nodes := flatten(re)
	for len(nodes) > 0 && context(nodes[len(nodes)-1]) {
		nodes = nodes[:len(nodes)-1]
	}
	if len(nodes) == 0 {
		return nil
	}
	return &syntax.Regexp{Op: syntax.OpConcat, Sub: nodes}
}

func firstCapture(re *syntax.Regexp) *syntax.Regexp {
	if re.Op == syntax.OpCapture {
		return re
	}
	for _, s := range re.Sub {
		if c := firstCapture(s); c != nil {
			return c
		}
	}
	return nil
}

// context reports whether re only says where a secret ends: an empty-width assertion, an
// alternation with one ((?:[\x60'"\s;]|$)), or a negated class ([^a-zA-Z0-9+/]).
func context(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true
	case syntax.OpAlternate:
		for _, s := range re.Sub {
			if context(s) {
				return true
			}
		}
	case syntax.OpCharClass:
		return classSize(re) > 128
	}
	return false
}

// flatten is re as a list of nodes in sequence.
func flatten(re *syntax.Regexp) []*syntax.Regexp {
	switch re.Op {
	case syntax.OpConcat:
		var out []*syntax.Regexp
		for _, s := range re.Sub {
			out = append(out, flatten(s)...)
		}
		return out
	case syntax.OpCapture:
		return flatten(re.Sub[0])
	}
	return []*syntax.Regexp{re}
}

// shapeOf reads nodes as prefix and rest.
func shapeOf(id string, nodes []*syntax.Regexp) ([]shape, bool) {
	for len(nodes) > 0 && (nodes[0].Op == syntax.OpWordBoundary || nodes[0].Op == syntax.OpBeginText || nodes[0].Op == syntax.OpBeginLine) {
		nodes = nodes[1:]
	}
	prefixes := []string{""}
	fold := false
	i := 0
	for ; i < len(nodes); i++ {
		alts, f, ok := literals(nodes[i])
		if !ok || len(prefixes)*len(alts) > maxPrefixes {
			break
		}
		fold = fold || f
		var next []string
		for _, p := range prefixes {
			for _, a := range alts {
				next = append(next, p+a)
			}
		}
		prefixes = next
	}
	var set [4]uint64
	min := 0
	for _, n := range nodes[i:] {
		m, ok := addSet(n, &set)
		if !ok {
			return nil, false
		}
		min += m
	}
	// A prefix shorter than another of the same rule must still stand alone.
	short := len(prefixes[0])
	for _, p := range prefixes {
		short = minInt(short, len(p))
	}
	switch {
	case short < minPrefix, min < minRest, short < minLongPrefix && min < minRestShort, set == [4]uint64{}:
		return nil, false
	}
	for _, p := range prefixes {
		// A two-letter prefix stands alone only in capitals and in that case only (Twilio's SK):
		// "ey" (a JWT, which Redact reads by its three parts), "00" (Okta) or "b_" in any case
		// (Beamer) would take hex digests and identifiers.
		if len(p) < 3 && (fold || strings.ToUpper(p) != p || strings.Trim(p, "0123456789") == "") {
			return nil, false
		}
	}
	for c := 0; c <= ' '; c++ {
		if set[c/64]&(1<<(c%64)) != 0 {
			return nil, false // blanks and line breaks never belong to a key
		}
	}
	var out []shape
	for _, p := range prefixes {
		out = append(out, shape{id: id, prefix: p, fold: fold, set: set, min: min})
	}
	return out, true
}

// literals returns the strings re matches when it is a literal, a small class or an alternation
// of them, and whether it matches in any case.
func literals(re *syntax.Regexp) ([]string, bool, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		s := string(re.Rune)
		if !ascii(s) {
			return nil, false, false
		}
		return []string{s}, re.Flags&syntax.FoldCase != 0, true
	case syntax.OpCharClass:
		if classSize(re) > maxSetForClass {
			return nil, false, false
		}
		var out []string
		for k := 0; k < len(re.Rune); k += 2 {
			for r := re.Rune[k]; r <= re.Rune[k+1]; r++ {
				if r > unicode.MaxASCII {
					return nil, false, false
				}
				out = append(out, string(r))
			}
		}
		return out, false, true
	case syntax.OpAlternate:
		var out []string
		fold := false
		for _, s := range re.Sub {
			parts := []string{""}
			for _, n := range flatten(s) {
				alts, f, ok := literals(n)
				if !ok {
					return nil, false, false
				}
				fold = fold || f
				var next []string
				for _, p := range parts {
					for _, a := range alts {
						next = append(next, p+a)
					}
				}
				parts = next
			}
			out = append(out, parts...)
		}
		return out, fold, true
	}
	return nil, false, false
}

// addSet adds the characters re can match to set and returns the least number of characters it
// matches; false when it can match a character outside ASCII, or any character.
func addSet(re *syntax.Regexp, set *[4]uint64) (int, bool) {
	add := func(lo, hi rune) bool {
		if hi > unicode.MaxASCII {
			return false
		}
		for r := lo; r <= hi; r++ {
			set[r/64] |= 1 << (r % 64)
		}
		return true
	}
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if !add(r, r) {
				return 0, false
			}
			if re.Flags&syntax.FoldCase != 0 {
				for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
					if f <= unicode.MaxASCII {
						add(f, f)
					}
				}
			}
		}
		return len(re.Rune), true
	case syntax.OpCharClass:
		if classSize(re) > 128 {
			return 0, false
		}
		// (?i) adds ſ and the Kelvin sign to a class with s and k; the scanner reads bytes, so
		// only the ASCII part of a class counts.
		any := false
		for k := 0; k < len(re.Rune); k += 2 {
			if lo, hi := re.Rune[k], min(re.Rune[k+1], unicode.MaxASCII); lo <= hi {
				add(lo, hi)
				any = true
			}
		}
		return 1, any
	case syntax.OpRepeat, syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		m, ok := addSet(re.Sub[0], set)
		if !ok {
			return 0, false
		}
		switch re.Op {
		case syntax.OpRepeat:
			return m * re.Min, true
		case syntax.OpPlus:
			return m, true
		}
		return 0, true
	case syntax.OpConcat, syntax.OpCapture:
		total := 0
		for _, s := range re.Sub {
			m, ok := addSet(s, set)
			if !ok {
				return 0, false
			}
			total += m
		}
		return total, true
	case syntax.OpAlternate:
		least := -1
		for _, s := range re.Sub {
			m, ok := addSet(s, set)
			if !ok {
				return 0, false
			}
			if least < 0 || m < least {
				least = m
			}
		}
		return least, true
	case syntax.OpEmptyMatch, syntax.OpWordBoundary, syntax.OpNoWordBoundary, syntax.OpEndText, syntax.OpEndLine:
		return 0, true
	}
	return 0, false
}

func classSize(re *syntax.Regexp) int {
	n := 0
	for k := 0; k < len(re.Rune); k += 2 {
		n += int(re.Rune[k+1]-re.Rune[k]) + 1
	}
	return n
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] > unicode.MaxASCII {
			return false
		}
	}
	return true
}

func minInt(a, b int) int {
	if a < b {
		return a
	}
	return b
}

// write renders the table, its sets once each, and the index by first byte.
func write(name string, shapes []shape, rules, skipped int) error {
	// Longest prefix first, so that the more telling shape is tried first; then by id.
	sort.SliceStable(shapes, func(i, j int) bool {
		if len(shapes[i].prefix) != len(shapes[j].prefix) {
			return len(shapes[i].prefix) > len(shapes[j].prefix)
		}
		return shapes[i].id < shapes[j].id
	})
	// The same prefix twice (two rules, or one prefix of a rule's alternatives) keeps one entry: the
	// union of its sets and the smaller least length.
	var merged []shape
	at := map[string]int{}
	for _, s := range shapes {
		key := fmt.Sprint(s.prefix, s.fold)
		if i, ok := at[key]; ok {
			for k := range s.set {
				merged[i].set[k] |= s.set[k]
			}
			merged[i].min = minInt(merged[i].min, s.min)
			if !strings.Contains(merged[i].id, s.id) {
				merged[i].id += ", " + s.id
			}
			continue
		}
		at[key] = len(merged)
		merged = append(merged, s)
	}
	var sets [][4]uint64
	setIndex := map[[4]uint64]int{}
	for _, s := range merged {
		if _, ok := setIndex[s.set]; !ok {
			setIndex[s.set] = len(sets)
			sets = append(sets, s.set)
		}
	}
	first := map[byte][]int{}
	for i, s := range merged {
		c := s.prefix[0]
		if s.fold && c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		first[c] = append(first[c], i)
		if s.fold {
			if u := strings.ToUpper(string(c))[0]; u != c {
				first[u] = append(first[u], i)
			}
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by gen_gitleaks.go from %s@%s config/gitleaks.toml; DO NOT EDIT.\n\n", module, version)
	fmt.Fprintf(&b, "// gitleaks is MIT licensed, Copyright (c) 2019 Zachary Rice. Of its %d rules, %d give the %d shapes\n", rules, rules-skipped, len(merged))
	fmt.Fprintf(&b, "// below; the other %d find a secret by the words around it (a key name before '=') or have\n", skipped)
	b.WriteString("// a prefix too short to stand alone, and are not here (Redact's key rules cover the first kind);\n")
	var left []string
	for id, why := range ours {
		left = append(left, id+" ("+why+")")
	}
	sort.Strings(left)
	b.WriteString("// left out for a rule of Redact's own: " + strings.Join(left, "; ") + ".\n\n")
	b.WriteString("package redact\n\n")
	fmt.Fprintf(&b, "// gitleaksVersion is the gitleaks release the table was generated from.\nconst gitleaksVersion = %q\n\n", version)
	b.WriteString("// gitleaksSets are the character sets of gitleaksShapes, as bitmaps of the ASCII bytes.\n")
	b.WriteString("var gitleaksSets = [...]byteSet{\n")
	for _, s := range sets {
		fmt.Fprintf(&b, "\t{%#x, %#x, %#x, %#x},\n", s[0], s[1], s[2], s[3])
	}
	b.WriteString("}\n\n")
	b.WriteString("// gitleaksShapes are the secrets that are a prefix (kept) and at least min characters of a set.\n")
	b.WriteString("var gitleaksShapes = [...]shapeKey{\n")
	for _, s := range merged {
		fmt.Fprintf(&b, "\t{prefix: %q, fold: %v, set: %d, min: %d}, // %s\n", s.prefix, s.fold, setIndex[s.set], s.min, s.id)
	}
	b.WriteString("}\n\n")
	b.WriteString("// gitleaksFirst lists the shapes by the first byte of their prefix (both cases when it folds).\n")
	b.WriteString("var gitleaksFirst = [256][]uint8{\n")
	var keys []int
	for c := range first {
		keys = append(keys, int(c))
	}
	sort.Ints(keys)
	for _, c := range keys {
		idx := first[byte(c)]
		parts := make([]string, len(idx))
		for k, i := range idx {
			parts[k] = fmt.Sprint(i)
		}
		fmt.Fprintf(&b, "\t%q: {%s},\n", rune(c), strings.Join(parts, ", "))
	}
	b.WriteString("}\n")
	if len(merged) > 255 {
		return fmt.Errorf("%d shapes do not fit the uint8 index", len(merged))
	}
	src, err := format.Source(b.Bytes())
	if err != nil {
		return fmt.Errorf("format %s: %w", name, err)
	}
	return os.WriteFile(name, src, 0o644)
}
