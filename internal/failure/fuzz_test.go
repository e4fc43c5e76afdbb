package failure

import (
	"testing"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

func FuzzClassify(f *testing.F) {
	for _, c := range classifyCases {
		f.Add(c.ev.Text, c.ev.Status, c.ev.Code, string(c.ev.Type), c.ev.Interrupt)
	}
	f.Add("Authorization: Bearer ghp_0123456789abcdefghijABCDEFGHIJ012345 rejected", 401, 0, "", false)
	f.Add("x\x00y\r\u202e connection refused", 0, 0, "", false)
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
