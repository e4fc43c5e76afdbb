package failure

import (
	"regexp"
	"testing"
	"unicode/utf8"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

func FuzzClassify(f *testing.F) {
	for _, c := range classifyCases {
		f.Add(c.ev.Text, c.ev.Status, c.ev.Code, string(c.ev.Type), c.ev.Interrupt)
	}
	for _, c := range redactCases {
		in, _, _ := unmark(c.marked)
		f.Add(in, 0, 0, "", false)
	}
	f.Add("Retry-After: Wed, 21 Oct 2026 07:28:30 GMT", 503, 0, "", false)
	f.Add("retry after 1m30", 0, -32603, "", false)
	f.Add("Request was aborted.", 0, 0, "AUTH", true)
	f.Fuzz(func(t *testing.T, text string, status, code int, typ string, interrupt bool) {
		ev := Evidence{Type: ledger.FailureType(typ), Status: status, Code: code, Text: text, Interrupt: interrupt}
		got := Classify(ev, testNow)
		if interrupt {
			if got != (Result{Interrupt: true}) {
				t.Fatalf("Classify(%+v) = %+v, want only Interrupt", ev, got)
			}
			return
		}
		if got.Interrupt || !got.Type.Valid() {
			t.Fatalf("Classify(%+v) = %+v: invalid type", ev, got)
		}
		if got.Transient != got.Type.Transient() {
			t.Fatalf("Classify(%+v) = %+v: Transient disagrees with the type", ev, got)
		}
		if got.RetryAfter < 0 || got.RetryAfter > MaxRetryAfter {
			t.Fatalf("Classify(%+v) = %+v: RetryAfter out of [0, %v]", ev, got, MaxRetryAfter)
		}
		if got.RetryAfter != RetryHint(text, testNow) {
			t.Fatalf("Classify(%+v).RetryAfter = %v, RetryHint = %v", ev, got.RetryAfter, RetryHint(text, testNow))
		}
		switch got.Type {
		case ledger.NotFound, ledger.Malformed, ledger.Unknown:
			if got.ServerWide {
				t.Fatalf("Classify(%+v) = %+v: a per-call type is server-wide", ev, got)
			}
		case ledger.AdminGated, ledger.RateLimit:
			if !got.ServerWide && got.Fault != ledger.FaultCall {
				t.Fatalf("Classify(%+v) = %+v: must be server-wide", ev, got)
			}
		}
		if !got.Fault.Valid() || got.Fault == ledger.FaultCall && got.ServerWide {
			t.Fatalf("Classify(%+v) = %+v: fault", ev, got)
		}
		if got.Type == ledger.AdminGated && got.Fault != ledger.FaultAdmin && got.Fault != ledger.FaultCall {
			t.Fatalf("Classify(%+v) = %+v: an admin's gate is the admin's", ev, got)
		}
		if _, explicit := ledger.ParseFailureType(typ); !explicit && got.Cause == "" {
			t.Fatalf("Classify(%+v) = %+v: no cause", ev, got)
		}
	})
}

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
	for _, c := range classifyCases {
		f.Add(c.ev.Text)
	}
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
