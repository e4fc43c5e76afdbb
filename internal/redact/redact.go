// Package redact owns what of a text we did not write may be kept or shown: a server's error, a
// ledger's or a project file's words. Secrets are replaced by [Redacted] (the known shapes, among
// them gitleaks' pinned rule set, and the values a server is configured with), control characters
// and invalid UTF-8 are removed, the text is clipped to what the ledger keeps ([StoredText]), and
// text for the model is quoted as data so that it cannot close the quote or open a tag
// ([QuoteData]). docs/security.md says why each rule is there.
package redact

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/term"
)

// Redacted is what every secret is replaced with.
const Redacted = "[REDACTED]"

// MaxStoredRunes is the most characters [StoredText] keeps, the "…" included (docs/ledger.md: the ledger's
// error field holds at most 500 characters).
const MaxStoredRunes = 500

// StoredText returns s as it may be kept in the ledger, a report or a deny reason: control characters
// other than newline and tab replaced by spaces, invalid UTF-8 replaced by U+FFFD, secrets redacted,
// and cut to at most [MaxStoredRunes] characters, the last of which is "…" when something was cut.
//
// The order matters. Control characters go first, as a NUL between "Bearer" and a token would hide the
// token from Redact and then become the space that shows it. Redaction comes before the cut: a secret
// cut in half could escape the patterns and leave its prefix in the ledger.
func StoredText(s string) string {
	return term.Clip(Redact(sanitize(s)), MaxStoredRunes)
}

// maxCauseLen bounds a cause shown as is: ours are short identifiers (connection_refused, http_401).
const maxCauseLen = 64

// CauseText returns a circuit's cause as it may be shown to the model or a terminal. The causes we
// write are identifiers and come back unchanged; anything else (a hand-written ledger entry) is
// shown as quoted data: control characters stripped, secrets redacted, clipped to 60 characters,
// its own double quotes turned into single ones so that it cannot close the quote.
func CauseText(s string) string {
	if len(s) <= maxCauseLen && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_.:/-", r))
	}) < 0 {
		return s
	}
	return QuoteData(s, 60)
}

// QuoteData returns text that did not come from us (a ledger's error text, a server's reply, a
// project file's words) as one line of quoted data for the model: control characters and line
// breaks turned into spaces, secrets redacted, clipped to max characters with "…", its double
// quotes (typographic ones too) turned into single ones so that it cannot end the quote and speak
// as us, and its angle brackets into ‹ › so that it cannot write a tag the model reads as
// structure (Claude Code puts our context inside <system-reminder> … </system-reminder>).
func QuoteData(s string, max int) string {
	s = StoredText(s)
	s = strings.Join(strings.Fields(quoteSafe.Replace(s)), " ")
	return `"` + term.Clip(s, max) + `"`
}

// DataText is [QuoteData] without the quotes around it, for a field that is data by its place (a
// JSON string beside its source): control characters and line breaks turned into spaces, secrets
// redacted, clipped to max characters, double quotes made single and angle brackets ‹ ›, so that
// whoever reads the field's text cannot take it for a tag or for our words.
func DataText(s string, max int) string {
	s = StoredText(s)
	return term.Clip(strings.Join(strings.Fields(quoteSafe.Replace(s)), " "), max)
}

// quoteSafe replaces what could end a quote or open a tag inside one.
var quoteSafe = strings.NewReplacer(`"`, "'", "“", "'", "”", "'", "„", "'", "‟", "'",
	"<", "‹", ">", "›", "＜", "‹", "＞", "›")

// MinKnownSecret is the shortest configured value [RedactKnown] replaces: a shorter one ("1",
// "true", "dev") would blank out ordinary words of every message while protecting nothing.
const MinKnownSecret = 6

// RedactKnown is [Redact] that also replaces every occurrence of the known secrets: the values a
// server is configured with (every env and header value, every value expanded from `${VAR}`),
// which have no shape Redact could recognise. Longer values are replaced first, so that a value
// holding another is not left half shown.
func RedactKnown(s string, known []string) string {
	s = Redact(s)
	if len(known) == 0 {
		return s
	}
	sorted := slices.Clone(known)
	slices.SortFunc(sorted, func(a, b string) int { return len(b) - len(a) })
	for _, k := range sorted {
		if len(k) >= MinKnownSecret && k != Redacted && strings.Contains(s, k) {
			s = strings.ReplaceAll(s, k, Redacted)
		}
	}
	return s
}

// CleanKnown is [StoredText] without the cut: control characters replaced, invalid UTF-8 repaired,
// secrets and the known values redacted. For a server's text that is printed in full.
func CleanKnown(s string, known []string) string { return RedactKnown(sanitize(s), known) }

// StoredTextKnown is [StoredText] that also replaces the known secrets (see [RedactKnown]).
func StoredTextKnown(s string, known []string) string {
	if len(known) == 0 {
		return StoredText(s)
	}
	return StoredText(RedactKnown(sanitize(s), known))
}

// sanitize replaces control characters (see isControl) by spaces and invalid UTF-8 by U+FFFD.
func sanitize(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if isControl(r) {
			b.WriteByte(' ')
		} else {
			b.WriteRune(r) // an invalid byte arrives as utf8.RuneError and is written as U+FFFD
		}
	}
	return b.String()
}

// isControl reports whether r would garble a line of the ledger or a terminal: a control character
// as term.IsControl defines it, other than newline and tab, which stored text keeps.
func isControl(r rune) bool { return r != '\n' && r != '\t' && term.IsControl(r) }

// clean reports whether s is valid UTF-8 without characters StoredText replaces.
func clean(s string) bool {
	for i, r := range s {
		if isControl(r) || r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD") {
			return false
		}
	}
	return true
}

// Redact replaces the secrets in s with [Redacted], keeping what names them so that the text stays
// useful (docs/security.md):
//
//   - bearer tokens: "Bearer eyJ…" → "Bearer [REDACTED]";
//   - Authorization and Proxy-Authorization header values, keeping the scheme, and Cookie headers;
//   - values of secret-looking keys, as key=value, key: value, JSON "key": "value" and URL query
//     parameters: password, passwd, token, api_key, apikey, secret, access_token, client_secret, and
//     any key ending in token, secret, password or api_key;
//   - API keys by shape: sk-… (sk-ant-…, sk-proj-…), sk_live_…, GitHub ghp_/gho_/ghu_/ghs_/ghr_… and
//     github_pat_…, Slack xoxb-/xoxp-/xox?-… and xapp-…, AWS AKIA…/ASIA…, Google AIza…, JWTs (eyJ….….…);
//   - the password of a URL's user information (https://user:secret@host);
//   - flag pairs whose value is the next word: --token V, --api-key V, --password V (any flag whose
//     name is a secret key) and -p V;
//   - GitLab glpat-…, npm npm_…, Hugging Face hf_…, Slack webhook URLs (hooks.slack.com/services/…),
//     and a bare 40-character AWS secret access key on the line of an AKIA/ASIA key id or after
//     aws_secret_access_key and a blank;
//   - Azure connection strings' AccountKey=… and SharedAccessKey=…, quoted pass='…' and pwd="…"
//     values, and the body of a PEM private-key block (-----BEGIN … PRIVATE KEY-----);
//   - Google OAuth ya29.…, DigitalOcean dop_v1_…, SendGrid SG.….…, Linear lin_api_…, Shopify
//     shpat_…, PyPI pypi-AgE…, Supabase sbp_…, a quoted Docker "auth" value, a JSON "key" whose
//     quoted value is shaped like a credential, and keys that start with '_' (npm's :_authToken=…);
//   - the token shapes of gitleaks' default rules that are a prefix and a run (gitleaks_keys.go,
//     generated from the pinned version by gen_gitleaks.go): Vault hvs.…, Atlassian ATATT3…, Postman
//     PMAK-…, Sentry sntrys_…, Databricks dapi…, Twilio SK…, Doppler dp.pt.…, and a hundred more.
//
// Keys and shaped tokens are matched at the start of a word (after a byte that is not an ASCII letter,
// digit or '_'); GitHub tokens anywhere. Redact(Redact(s)) == Redact(s), and its time is linear in
// len(s) whatever s holds.
func Redact(s string) string {
	r := redactor{s: s}
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		m := r.at(i)
		switch {
		case m.next == 0:
			// No rule starts here. Skip the rest of a word: inside one only a GitHub token can start.
			inWord := isWordChar(s[i])
			for i++; inWord && i < len(s) && isWordChar(s[i]) && s[i] != 'g'; i++ {
			}
			continue
		case m.from < m.to:
			if last == 0 {
				b.Grow(len(s))
			}
			b.WriteString(s[last:m.from])
			b.WriteString(Redacted)
			last = m.to
		}
		i = m.next
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// match is what a rule found at a byte: the span [from, to) to replace (empty when there is nothing to
// replace, as for an already redacted value), and next, the byte to go on from. next == 0 means that
// no rule matched. A match never ends before it starts, so Redact always moves forward.
type match struct{ from, to, next int }

func replace(from, to int) match { return match{from, to, to} }

// redactor scans one string. It remembers where two rules whose tokens can nest failed, so that a
// string made of "sk-sk-sk-…" or "eyJ-eyJ-…" is scanned once rather than once per occurrence.
type redactor struct {
	s     string
	noSK  int // no sk-… key starts before this byte
	noJWT int // no JWT starts before this byte
	// awsUntil is the end of the line of the last AWS key id seen: a 40-character base64 word
	// before it is taken for the secret access key that goes with the id.
	awsUntil int
	// eolFrom and eol cache the end of the line that holds the bytes [eolFrom, eol).
	eolFrom, eol int
}

// at returns the match of the rule that applies at byte i.
func (r *redactor) at(i int) match {
	s := r.s
	c := s[i]
	switch c {
	case ':':
		if m := slackWebhook(s, i); m.next != 0 {
			return m
		}
		return userinfo(s, i)
	case 'h':
		if m := slackWebhook(s, i); m.next != 0 {
			return m
		}
	case 'g':
		// GitHub and GitLab tokens are matched even inside a word: their prefix is distinctive enough.
		if m := githubToken(s, i); m.next != 0 {
			return m
		}
		if m := gitlabToken(s, i); m.next != 0 {
			return m
		}
	case '-':
		if m := pemPrivateKey(s, i); m.next != 0 {
			return m
		}
		if m := flagPair(s, i); m.next != 0 {
			return m
		}
	}
	if i < r.awsUntil && (i == 0 || !isB64Std(s[i-1])) {
		// A secret access key printed next to its key id: exactly 40 base64 characters.
		if e := runAtMost(s, i, 41, isB64Std); e-i == 40 && (e == len(s) || s[e] != '=') && mixedCase(s[i:e]) {
			return replace(i, e)
		}
	}
	// A key may start with '_' (npm's "//registry.npmjs.org/:_authToken=…"); no shaped key does.
	if i > 0 && isWordChar(s[i-1]) || !isAlnum(c) && c != '_' {
		return match{}
	}
	if m := r.shapedKey(i); m.next != 0 {
		return m
	}
	if hasFoldPrefix(s[i:], "bearer") && (i+len("bearer") == len(s) || !isKeyChar(s[i+len("bearer")])) {
		return bearer(s, i+len("bearer"))
	}
	if i > 0 && s[i-1] == '-' {
		// The tail of a longer key ("x-api-key" is looked at from its start), unless the dashes
		// start a command-line flag: "--token=…", "-password=…".
		k := i
		for k > 0 && s[k-1] == '-' {
			k--
		}
		if k > 0 && s[k-1] != ' ' && s[k-1] != '\t' && s[k-1] != '"' && s[k-1] != '\'' && s[k-1] != '[' && s[k-1] != ',' {
			return match{}
		}
	}
	// Keys are short: a longer word is no key, and need not be read to its end.
	j := i
	for j < len(s) && j-i <= maxKeyLen && isKeyChar(s[j]) {
		j++
	}
	if j-i > maxKeyLen {
		return match{}
	}
	if !separatorAfter(s, j) {
		// `password "v"`, `secret is 'v'`: a quoted value right after a secret key, without ':' or '='.
		if j < len(s) && (s[j] == ' ' || s[j] == '\t') && keyClass(s[i:j]) == keySecret {
			if m := quotedAfterKey(s, j); m.next != 0 {
				return m
			}
			return awsSecretAfterKey(s, j)
		}
		return match{}
	}
	if class := keyClass(s[i:j]); class != keyNone {
		return r.keyValue(j, class)
	}
	if j-i == len("key") && strings.EqualFold(s[i:j], "key") && i > 0 && s[i-1] == '"' &&
		(j < len(s) && s[j] == '"' || j+1 < len(s) && s[j] == '\\' && s[j+1] == '"') {
		// A JSON "key": too common a word to hide every value of ("key": "PROJ-123" is a Jira
		// issue), so only a quoted value shaped like a credential.
		return r.keyValue(j, keyShaped)
	}
	return match{}
}

// lineEnd returns the index of the end of the line that holds byte k.
func (r *redactor) lineEnd(k int) int {
	if k >= r.eolFrom && k < r.eol {
		return r.eol
	}
	e := strings.IndexAny(r.s[k:], "\r\n")
	if e < 0 {
		e = len(r.s) - k
	}
	r.eolFrom, r.eol = k, k+e
	return k + e
}

func hasFoldPrefix(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// separatorAfter reports whether a key that ends at j is followed by ':' or '=', allowing for the
// closing quote of a JSON key and blanks. It is the cheap test that spares most words keyClass.
func separatorAfter(s string, j int) bool {
	for k := j; k < len(s) && k < j+8; k++ {
		switch s[k] {
		case ':', '=':
			return true
		case '"', '\'', '\\', ' ', '\t':
		default:
			return false
		}
	}
	return false
}

func isWordChar(c byte) bool { return isAlnum(c) || c == '_' }

// isToken68 reports whether c may appear in an RFC 9110 token68 (a bearer credential), '=' aside.
func isToken68(c byte) bool {
	return isWordChar(c) || c == '-' || c == '.' || c == '~' || c == '+' || c == '/'
}

// run returns the end of the run of bytes from i on that satisfy in.
func run(s string, i int, in func(byte) bool) int {
	for i < len(s) && in(s[i]) {
		i++
	}
	return i
}

// runAtMost is run that stops after max bytes.
func runAtMost(s string, i, max int, in func(byte) bool) int {
	return i + run(s[i:min(len(s), i+max)], 0, in)
}

func isKeyChar(c byte) bool    { return isWordChar(c) || c == '-' }
func isUpperAlnum(c byte) bool { return isDigit(c) || c >= 'A' && c <= 'Z' }
func isB64URL(c byte) bool     { return isWordChar(c) || c == '-' }

// githubToken matches ghp_/gho_/ghu_/ghs_/ghr_ and github_pat_ tokens at i, keeping the prefix.
func githubToken(s string, i int) match {
	rest := s[i:]
	p := 0
	in := isAlnum
	switch {
	case strings.HasPrefix(rest, "github_pat_"):
		p, in = len("github_pat_"), isWordChar
	case len(rest) >= 4 && rest[1] == 'h' && rest[3] == '_' && strings.IndexByte("pousr", rest[2]) >= 0:
		p = 4
	default:
		return match{}
	}
	start := i + p
	if e := run(s, start, in); e-start >= 16 {
		return replace(start, e)
	}
	return match{}
}

// gitlabToken matches a GitLab personal access token glpat-…, keeping the prefix.
func gitlabToken(s string, i int) match {
	if !strings.HasPrefix(s[i:], "glpat-") {
		return match{}
	}
	start := i + len("glpat-")
	if e := run(s, start, isKeyChar); e-start >= 20 {
		return replace(start, e)
	}
	return match{}
}

// slackWebhook matches the secret path of a Slack webhook URL at the ':' of "://", or at the host
// when the scheme is left out: https://hooks.slack.com/services/T…/B…/secret keeps "services/"
// and replaces the rest.
func slackWebhook(s string, i int) match {
	host := "://hooks.slack.com/"
	if s[i] == 'h' {
		host = host[len("://"):]
	}
	if !strings.HasPrefix(s[i:], host) {
		return match{}
	}
	k := i + len(host)
	for _, kind := range [...]string{"services/", "workflows/", "triggers/"} {
		if strings.HasPrefix(s[k:], kind) {
			start := k + len(kind)
			e := run(s, start, func(c byte) bool { return isKeyChar(c) || c == '/' })
			if e-start >= 8 {
				return replace(start, e)
			}
		}
	}
	return match{}
}

// flagPair matches the value of a command-line flag that takes a secret as its next word: a long
// flag whose name is a secret key (--token, --api-key, --password, --client-secret) or -p, as in
// `--token V`, `-p V`, or `"--token", "V"` in a JSON argument list. `--token=V` is a key=value and
// matched by the key rule.
func flagPair(s string, i int) match {
	if i > 0 && strings.IndexByte(" \t\"'[,(", s[i-1]) < 0 {
		return match{}
	}
	j := i + 1
	long := j < len(s) && s[j] == '-'
	if long {
		j++
	}
	e := run(s, j, isKeyChar)
	if long && keyClass(s[j:e]) != keySecret || !long && s[j:e] != "p" {
		return match{}
	}
	k := e
	if k < len(s) && (s[k] == '"' || s[k] == '\'') {
		k++
		if k < len(s) && s[k] == ',' {
			k++
		}
	}
	if k >= len(s) || s[k] != ' ' && s[k] != '\t' {
		return match{}
	}
	k = skipSpaces(s, k)
	var end int
	if k < len(s) && (s[k] == '"' || s[k] == '\'') {
		k++
		end = quotedEnd(s, k, s[k-1], false)
	} else {
		end = run(s, k, isValueChar)
	}
	if v := s[k:end]; v == "" || v[0] == '-' || v == Redacted || v == Redacted[:len(Redacted)-1] {
		return match{e, e, e} // no value, the next flag, or hidden already
	}
	return replace(k, end)
}

func isB64Std(c byte) bool { return isAlnum(c) || c == '+' || c == '/' }

// mixedCase reports whether w has a lower-case letter, an upper-case one or a digit mix that a
// random key has and a word or a hex digest does not.
func mixedCase(w string) bool {
	var lower, upper bool
	for i := 0; i < len(w); i++ {
		lower = lower || w[i] >= 'a' && w[i] <= 'z'
		upper = upper || w[i] >= 'A' && w[i] <= 'Z'
	}
	return lower && upper
}

// prefixKey is an API key that is a fixed prefix and a run of one character class: the text
// starts with starts, prefix (a head of it) is kept, and at least min characters of class after
// the prefix are replaced. A text that starts so but is shorter is no other key either.
type prefixKey struct {
	starts, prefix string
	class          func(byte) bool
	min            int
}

// prefixKeys are the keys shapedKey finds by prefixKey's rule alone.
var prefixKeys = []prefixKey{
	// Shopify access tokens: shpat_, shpss_, shpca_, shppa_ and 32 hex digits.
	{"shpat_", "shpat_", isAlnum, 32}, {"shpss_", "shpss_", isAlnum, 32},
	{"shpca_", "shpca_", isAlnum, 32}, {"shppa_", "shppa_", isAlnum, 32},
	// Stripe: sk_live_…, rk_test_…
	{"sk_live_", "sk_live_", isAlnum, 10}, {"sk_test_", "sk_test_", isAlnum, 10},
	{"rk_live_", "rk_live_", isAlnum, 10}, {"rk_test_", "rk_test_", isAlnum, 10},
	// Google API keys: AIza and 35 more; OAuth access tokens: ya29. and a long base64url run.
	{"AIza", "AIza", isKeyChar, 30}, {"ya29.", "ya29.", isB64URL, 20},
	// DigitalOcean tokens: dop_v1_, doo_v1_, dor_v1_ and 64 hex digits.
	{"dop_v1_", "dop_v1_", isAlnum, 32}, {"doo_v1_", "doo_v1_", isAlnum, 32}, {"dor_v1_", "dor_v1_", isAlnum, 32},
	// Linear API keys: lin_api_ and 40 letters or digits.
	{"lin_api_", "lin_api_", isAlnum, 30},
	// PyPI upload tokens: pypi- and a long base64url macaroon (it starts with AgE).
	{"pypi-AgE", "pypi-", isB64URL, 50},
	// Hugging Face access tokens: hf_ and 34 letters; npm access tokens: npm_ and 36.
	{"hf_", "hf_", isAlnum, 30}, {"npm_", "npm_", isAlnum, 30},
	// Supabase access tokens: sbp_ and 40 hex digits (not among gitleaks' rules at gitleaksVersion).
	{"sbp_", "sbp_", isAlnum, 40},
}

// shapeKey is a secret of gitleaks' rules (gitleaks_keys.go, generated by gen_gitleaks.go): prefix,
// kept, then at least min bytes of the set gitleaksSets[set], replaced. fold matches the prefix in
// any case.
type shapeKey struct {
	prefix string
	fold   bool
	set    uint8
	min    uint16
}

// byteSet is a set of ASCII bytes, one bit each.
type byteSet [4]uint64

func (b *byteSet) has(c byte) bool { return b[c>>6]&(1<<(c&63)) != 0 }

//go:generate go run gen_gitleaks.go

// gitleaksKey matches at i the first of gitleaks' shapes whose prefix starts the text and whose run
// is long enough. Only the shapes whose prefix starts with the byte at i are tried.
func gitleaksKey(s string, i int) match {
	rest := s[i:]
	for _, n := range gitleaksFirst[s[i]] {
		k := &gitleaksShapes[n]
		if len(rest) < len(k.prefix) || !(rest[:len(k.prefix)] == k.prefix || k.fold && strings.EqualFold(rest[:len(k.prefix)], k.prefix)) {
			continue
		}
		start := i + len(k.prefix)
		set := &gitleaksSets[k.set]
		e := start
		for e < len(s) && set.has(s[e]) {
			e++
		}
		if e-start >= int(k.min) {
			return replace(start, e)
		}
	}
	return match{}
}

// shapedKey matches the API keys recognisable by their shape, at the start of a word. It keeps the
// prefix, which says what kind of credential it was, and replaces the rest: first the keys this
// file knows by their own rule, then gitleaks' (gitleaksKey), then the shapes of more than one part.
func (r *redactor) shapedKey(i int) match {
	s := r.s
	rest := s[i:]
	for _, k := range prefixKeys {
		if rest[0] == k.starts[0] && strings.HasPrefix(rest, k.starts) {
			start := i + len(k.prefix)
			if e := run(s, start, k.class); e-start >= k.min {
				return replace(start, e)
			}
			return match{}
		}
	}
	if m := gitleaksKey(s, i); m.next != 0 {
		return m
	}
	switch s[i] {
	case 's':
		if i < r.noSK || !strings.HasPrefix(rest, "sk-") {
			return match{}
		}
		// OpenAI sk-…, sk-proj-…; Anthropic sk-ant-api03-…. At least 12 characters with a digit, so
		// that prose such as "sk-learn" or a hyphenated word is left alone.
		start := i + len("sk-")
		e := run(s, start, isKeyChar)
		if e-start < 12 || !strings.ContainsAny(s[start:e], "0123456789") {
			r.noSK = e // an sk- later in this run has a shorter run with no more digits
			return match{}
		}
		for _, sub := range [...]string{"ant-", "proj-", "svcacct-", "admin-"} {
			if strings.HasPrefix(s[start:e], sub) {
				start += len(sub)
				break
			}
		}
		if start == e {
			return match{}
		}
		return replace(start, e)
	case 'x':
		// Slack: xoxb-…, xoxp-…, xoxa-…, xapp-…
		if !(len(rest) >= 5 && strings.HasPrefix(rest, "xox") && rest[3] >= 'a' && rest[3] <= 'z' && rest[4] == '-' ||
			strings.HasPrefix(rest, "xapp-")) {
			return match{}
		}
		start := i + 5
		if e := run(s, start, func(c byte) bool { return isAlnum(c) || c == '-' }); e-start >= 8 {
			return replace(start, e)
		}
	case 'A':
		// AWS access key IDs: AKIA or ASIA and 16 upper-case letters or digits, a whole word.
		if strings.HasPrefix(rest, "AKIA") || strings.HasPrefix(rest, "ASIA") {
			start := i + 4
			if e := runAtMost(s, start, 17, isUpperAlnum); e-start == 16 && (e == len(s) || !isWordChar(s[e])) {
				r.awsUntil = r.lineEnd(e)
				return replace(start, e)
			}
			return match{}
		}
	case 'S':
		// SendGrid API keys: SG., 22 base64url characters, '.', 43 more.
		if strings.HasPrefix(rest, "SG.") {
			start := i + len("SG.")
			if e1 := run(s, start, isB64URL); e1-start >= 16 && e1 < len(s) && s[e1] == '.' {
				if e := run(s, e1+1, isB64URL); e-e1-1 >= 30 {
					return replace(start, e)
				}
			}
		}
	case 'e':
		// JWT: three base64url segments, the first a JSON header ("eyJ" is `{"` encoded).
		if i < r.noJWT || !strings.HasPrefix(rest, "eyJ") {
			return match{}
		}
		e1 := run(s, i, isB64URL)
		if e1-i < 10 || e1 >= len(s) || s[e1] != '.' {
			r.noJWT = e1 // an eyJ later in this run ends its first segment at the same byte
			return match{}
		}
		e2 := run(s, e1+1, isB64URL)
		if e2-e1-1 < 2 || e2 >= len(s) || s[e2] != '.' {
			r.noJWT = e1
			return match{}
		}
		return replace(i, run(s, e2+1, isB64URL))
	}
	return match{}
}

// bearerWord reports whether w is a word that follows "Bearer" in prose rather than a credential:
// "missing Bearer token".
func bearerWord(w string) bool {
	switch strings.ToLower(w) {
	case "token", "tokens", "auth", "authentication", "authorization", "scheme", "header", "realm",
		"required", "missing", "invalid", "expired", "is", "was", "the", "a", "an", "and", "or", "not",
		"none", "null", "undefined", "string", "type", "prefix", "credentials":
		return true
	}
	return false
}

// bearer matches the credential after "Bearer" (which ends at j). An auth-param such as
// `Bearer error="insufficient_scope"` or `Bearer realm=x` in a WWW-Authenticate header is not one.
func bearer(s string, j int) match {
	if j >= len(s) || s[j] != ' ' && s[j] != '\t' {
		return match{}
	}
	k := skipSpaces(s, j)
	m := run(s, k, isToken68)
	e := m
	for e < len(s) && s[e] == '=' {
		e++
	}
	// An auth-param name is a short word; a run of 20 or more token characters is a credential
	// even when something unexpected follows its padding.
	if m == k || e > m && e < len(s) && (s[e] == '"' || isToken68(s[e])) && m-k < 20 || bearerWord(s[k:m]) {
		return match{}
	}
	if e > m && e < len(s) && isToken68(s[e]) {
		e = run(s, e, func(c byte) bool { return isToken68(c) || c == '=' })
	}
	return replace(k, e)
}

// maxKeyLen is the length of the longest key keyClass knows, with room for a prefix.
const maxKeyLen = 40

// The kinds of key whose value is a secret.
const (
	keyNone       = iota
	keySecret     // the value is one credential
	keyAuthHeader // an Authorization header: keep the scheme, replace the credentials
	keyLine       // a Cookie header: replace the rest of the line
	keyQuoted     // a short key (pass, pwd) whose value is a secret only when quoted: pass='v'
	keyShaped     // JSON's "key": a quoted value of 20 or more characters, no blank, letters and digits
)

// keyClass tells what the value of the key ident holds.
func keyClass(ident string) int {
	if len(ident) < 3 || len(ident) > maxKeyLen {
		return keyNone
	}
	var buf [maxKeyLen]byte
	k := buf[:len(ident)]
	for i := 0; i < len(ident); i++ {
		c := ident[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		k[i] = c
	}
	key := string(k)
	switch key {
	case "authorization", "proxy-authorization", "x-authorization":
		return keyAuthHeader
	case "cookie", "set-cookie":
		return keyLine
	case "pass", "pwd", "auth":
		// Common words too ("pass: 3 fail: 1", "auth: required"), so only a quoted value is taken
		// for a secret: pass='v', Docker's "auth": "<base64 user:password>".
		return keyQuoted
	case "accountkey", "sharedaccesskey":
		// Azure connection strings: AccountKey=…; SharedAccessKey=…;
		return keySecret
	case "password", "passwd", "secret", "api_key", "apikey", "api-key", "sig", "x-amz-signature",
		"x-amz-credential", "private_key", "privatekey", "secret_key", "secretkey", "access_key_secret":
		return keySecret
	}
	for _, suffix := range [...]string{"token", "secret", "password", "passwd", "api_key", "apikey", "api-key",
		"secret_key", "secretkey", "secret_access_key", "private_key"} {
		if strings.HasSuffix(key, suffix) {
			return keySecret
		}
	}
	return keyNone
}

// keyValue matches the value after a secret key that ends at j: `key=v`, `key: v`, `"key": "v"`,
// `\"key\":\"v\"` (JSON inside a JSON string), `?key=v&`.
//
// A quoted value is replaced whole; an empty one, or one that is exactly [Redacted], is stepped over.
// An unquoted value is one word, or for an Authorization or Cookie header the rest of the line.
func (r *redactor) keyValue(j, class int) match {
	s := r.s
	k := j
	if k+1 < len(s) && s[k] == '\\' && s[k+1] == '"' {
		k += 2
	} else if k < len(s) && (s[k] == '"' || s[k] == '\'') {
		k++
	}
	k = skipSpaces(s, k)
	if k >= len(s) || s[k] != ':' && s[k] != '=' {
		return match{}
	}
	k = skipSpaces(s, k+1)
	quoted := true
	var end int
	switch {
	case k+1 < len(s) && s[k] == '\\' && s[k+1] == '"':
		k += 2
		end = quotedEnd(s, k, '"', true)
	case k < len(s) && (s[k] == '"' || s[k] == '\''):
		k++
		end = quotedEnd(s, k, s[k-1], false)
	default:
		quoted = false
		end = r.lineEnd(k)
	}
	var from, to int
	switch class {
	case keyAuthHeader:
		from, to = authCredentials(s, k, end)
	case keyLine:
		from, to = k, end
	case keyQuoted:
		if !quoted {
			return match{}
		}
		from, to = k, end
	case keyShaped:
		if !quoted || !credentialShaped(s[k:end]) {
			return match{}
		}
		from, to = k, end
	default:
		from, to = k, end
		if !quoted {
			to = run(s, k, isValueChar)
			switch strings.ToLower(s[from:to]) {
			case "null", "true", "false", "none", "undefined":
				return match{to, to, to}
			}
		}
	}
	if to < len(s) && s[to] == '}' && strings.HasPrefix(s[from:to], "${") {
		to++ // an unquoted ${NAME} ends at its brace, which ends a value otherwise
		if !isVarRef(s[from:to]) {
			to--
		}
	}
	if v := s[from:to]; v == "" || v == Redacted || v == Redacted[:len(Redacted)-1] || isVarRef(v) {
		// Nothing to hide, hidden already ("[REDACTED" is the word before the ']' that ends it),
		// or a reference to a variable ($TOKEN, ${API_KEY}) that holds the secret elsewhere.
		return match{to, to, to}
	}
	return replace(from, to)
}

// credentialShaped reports whether v looks like a generated credential rather than a name: at
// least 20 characters, no blank, and both letters and digits.
func credentialShaped(v string) bool {
	if len(v) < 20 || strings.ContainsAny(v, " \t") {
		return false
	}
	return strings.ContainsAny(v, "0123456789") && strings.IndexFunc(v, func(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }) >= 0
}

// isVarRef reports whether v is exactly a shell or configuration variable reference: $NAME or
// ${NAME}. It names where a secret is kept and is no secret itself.
func isVarRef(v string) bool {
	if len(v) < 2 || v[0] != '$' {
		return false
	}
	name := v[1:]
	if strings.HasPrefix(name, "{") && strings.HasSuffix(name, "}") {
		name = name[1 : len(name)-1]
	}
	if name == "" || isDigit(name[0]) {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !isWordChar(name[i]) {
			return false
		}
	}
	return true
}

// quotedAfterKey matches a quoted value that follows a secret key (ending at j) after blanks and
// at most one of "is", "was", "of": the prose and log shapes `password "v"`, `secret is 'v'`.
func quotedAfterKey(s string, j int) match {
	k := skipSpaces(s, j)
	for _, w := range [...]string{"is ", "was ", "of "} {
		if strings.HasPrefix(s[k:], w) {
			k = skipSpaces(s, k+len(w))
			break
		}
	}
	if k >= len(s) || s[k] != '"' && s[k] != '\'' {
		return match{}
	}
	end := quotedEnd(s, k+1, s[k], false)
	if v := s[k+1 : end]; v == "" || v == Redacted {
		return match{end, end, end}
	}
	return replace(k+1, end)
}

// awsSecretAfterKey matches an AWS secret access key written after its key name and blanks, with
// no '=' or ':' between them (`aws configure list`, `aws_secret_access_key wJalr…`): one word of
// exactly 40 base64 characters mixing upper and lower case.
func awsSecretAfterKey(s string, j int) match {
	k := skipSpaces(s, j)
	e := runAtMost(s, k, 41, isB64Std)
	if e-k != 40 || e < len(s) && (isB64Std(s[e]) || s[e] == '=') || !mixedCase(s[k:e]) {
		return match{}
	}
	return replace(k, e)
}

// pemPrivateKey matches the body of a PEM private-key block at the first '-' of its header:
// "-----BEGIN RSA PRIVATE KEY-----" (any label with PRIVATE KEY in it: PKCS#8, EC, OPENSSH,
// ENCRYPTED, PGP) up to its "-----END" line, or to the end of the text when a cut took the end
// away. The header and footer stay, saying what was there. Certificates and public keys are not
// secrets and stay whole.
func pemPrivateKey(s string, i int) match {
	const begin = "-----BEGIN "
	if !strings.HasPrefix(s[i:], begin) {
		return match{}
	}
	k := i + len(begin)
	e := runAtMost(s, k, 41, func(c byte) bool { return c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == ' ' })
	if e-k > 40 || !strings.Contains(s[k:e], "PRIVATE KEY") || !strings.HasPrefix(s[e:], "-----") {
		return match{}
	}
	from := e + len("-----")
	to := len(s)
	if end := strings.Index(s[from:], "-----END"); end >= 0 {
		to = from + end
	}
	// Keep the line breaks around the body (real ones, or "\n" inside a JSON string).
	for from < to {
		if s[from] == '\r' || s[from] == '\n' || s[from] == ' ' || s[from] == '\t' {
			from++
		} else if strings.HasPrefix(s[from:to], `\n`) || strings.HasPrefix(s[from:to], `\r`) {
			from += 2
		} else {
			break
		}
	}
	for to > from {
		if c := s[to-1]; c == '\r' || c == '\n' || c == ' ' || c == '\t' {
			to--
		} else if to-from >= 2 && (s[to-2:to] == `\n` || s[to-2:to] == `\r`) {
			to -= 2
		} else {
			break
		}
	}
	if v := s[from:to]; v == "" || v == Redacted {
		return match{to, to, to}
	}
	return replace(from, to)
}

// isValueChar reports whether c may be part of an unquoted value: not a blank, nor what separates
// parameters in a query string, a header list or a sentence.
func isValueChar(c byte) bool {
	return c > ' ' && strings.IndexByte("&,;\"'<>)]}", c) < 0
}

// quotedEnd returns where a quoted value that starts at k ends: at its closing quote (`\"` when the
// value is JSON inside a JSON string), or at the end of the line when the quote is never closed.
func quotedEnd(s string, k int, quote byte, escaped bool) int {
	for m := k; m < len(s); m++ {
		switch c := s[m]; {
		case c == '\n' || c == '\r':
			return m
		case c == '\\':
			if escaped && m+1 < len(s) && s[m+1] == '"' {
				return m
			}
			m++
		case c == quote && !escaped:
			return m
		}
	}
	return len(s)
}

// authCredentials returns the credentials in an Authorization value [k, end). A scheme that carries
// one token68 (Bearer, Basic, Token, DPoP) is kept and the token replaced; for the schemes with
// parameters (Digest, AWS4-HMAC-SHA256, …) the rest of the value is replaced; a value with no scheme
// that we know is replaced whole, since its first word may be the secret itself.
func authCredentials(s string, k, end int) (from, to int) {
	w := run(s[:end], k, isKeyChar)
	if w == k || w == end || s[w] != ' ' && s[w] != '\t' {
		if end == len(s) || s[end] == '\n' || s[end] == '\r' {
			// unquoted and one word: that word, as the value of any other key
			return k, run(s, k, isValueChar)
		}
		return k, end
	}
	switch strings.ToLower(s[k:w]) {
	case "bearer", "basic", "token", "dpop", "apikey", "api-key":
		from = skipSpaces(s[:end], w)
		return from, run(s[:end], from, isValueChar)
	case "digest", "negotiate", "ntlm", "aws4-hmac-sha256", "hoba", "mutual", "oauth", "hawk", "sso-key",
		"signature", "gostack", "mac", "vapid":
		return skipSpaces(s[:end], w), end
	}
	return k, end
}

// userinfo matches the password in "scheme://user:password@host" at the ':' of "://".
func userinfo(s string, i int) match {
	if !strings.HasPrefix(s[i:], "://") {
		return match{}
	}
	u := run(s, i+3, func(c byte) bool { return c > ' ' && strings.IndexByte(":@/?#", c) < 0 })
	if u >= len(s) || s[u] != ':' {
		return match{}
	}
	p := run(s, u+1, func(c byte) bool { return c > ' ' && strings.IndexByte("@/?#", c) < 0 })
	if p >= len(s) || s[p] != '@' || p == u+1 {
		return match{}
	}
	if s[u+1:p] == Redacted {
		return match{p, p, p}
	}
	return replace(u+1, p)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isAlnum(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func skipSpaces(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}
