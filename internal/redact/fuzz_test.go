package redact

import (
	"regexp"
	"testing"
	"unicode/utf8"
)

// secretShapes are credential shapes that must never survive StoredText. The boundaries (\b) are those
// Redact documents: a key is matched at the start of a word, a GitHub token anywhere.
var secretShapes = []*regexp.Regexp{
	regexp.MustCompile(`gh[pousr]_[A-Za-z0-9]{36}`),
	regexp.MustCompile(`github_pat_[A-Za-z0-9_]{22,}`),
	regexp.MustCompile(`\bAKIA[0-9A-Z]{16}\b`),
	regexp.MustCompile(`\bxox[a-z]-[A-Za-z0-9-]{8,}`),
	regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{7,}\.[A-Za-z0-9_-]{2,}\.`),
	regexp.MustCompile(`(?i)\bbearer[ \t]+[A-Za-z0-9._~+/-]{20,}=*(?:[^="A-Za-z0-9._~+/-]|$)`),
	regexp.MustCompile(`glpat-[A-Za-z0-9_-]{20,}`),
	regexp.MustCompile(`\bnpm_[A-Za-z0-9]{36}`),
	regexp.MustCompile(`\bhf_[A-Za-z0-9]{34}`),
	regexp.MustCompile(`hooks\.slack\.com/services/[A-Za-z0-9_/-]{8,}`),
}

func FuzzStoredText(f *testing.F) {
	for _, c := range redactCases {
		in, _, _ := unmark(c.marked)
		f.Add(in)
	}
	for _, s := range unchangedCases {
		f.Add(s)
	}
	// Failure texts as servers write them, with a secret or a control character inside.
	f.Add("401 Unauthorized: token ghp_0123456789abcdefghijABCDEFGHIJ012345 is invalid")
	f.Add("Error: connect ECONNREFUSED 127.0.0.1:5432 (postgres://app:s3cretpass@db/app)")
	f.Add("rate limited\x1b[2J, retry after 30s; key=sk-proj-0123456789abcdefghijklmnop")
	f.Add("x\x00y\r\u202e" + fakeGHP)
	f.Fuzz(func(t *testing.T, in string) {
		got := StoredText(in)
		if !utf8.ValidString(got) {
			t.Fatalf("StoredText(%q) = %q: not valid UTF-8", in, got)
		}
		if n := utf8.RuneCountInString(got); n > MaxStoredRunes {
			t.Fatalf("StoredText(%q) has %d runes, more than %d", in, n, MaxStoredRunes)
		}
		for _, r := range got {
			if isControl(r) {
				t.Fatalf("StoredText(%q) = %q keeps control character %U", in, got, r)
			}
		}
		redacted := Redact(in)
		for _, re := range secretShapes {
			if m := re.FindString(redacted); m != "" {
				t.Fatalf("Redact(%q) = %q keeps %q (%s)", in, redacted, m, re)
			}
			if m := re.FindString(got); m != "" {
				t.Fatalf("StoredText(%q) = %q keeps %q (%s)", in, got, m, re)
			}
		}
		if again := Redact(redacted); again != redacted {
			t.Fatalf("Redact is not idempotent on %q:\n once  %q\n twice %q", in, redacted, again)
		}
	})
}
