package failure

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// Fake credentials in the shapes of real ones. None of them is valid anywhere.
const (
	fakeGHP     = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
	fakeJWT     = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
	fakeSlack   = "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
	fakeAWS     = "AKIAIOSFODNN7EXAMPLE"
	fakeOpenAI  = "sk-proj-AbCdEf1234567890GhIjKlMnOpQrStUv"
	fakeAnthrop = "sk-ant-api03-AbCdEf1234567890_GhIjKlMn-OpQrStUvWxYz"
)

// redactCase is a text and the secrets that must not survive StoredText. want, when set, is the exact
// expected output.
type redactCase struct {
	name    string
	in      string
	secrets []string
	want    string
}

var redactCases = []redactCase{
	{"api-key flag pair", "spawn node s.js --api-key abcdef0123456789 --port 80", []string{"abcdef0123456789"}, "spawn node s.js --api-key [REDACTED] --port 80"},
	{"token flag pair json", `args: ["--token", "tok_abcdef0123"]`, []string{"tok_abcdef0123"}, `args: ["--token", "[REDACTED]"]`},
	{"-p flag pair", "mysql -p hunter2hunter2 -h db", []string{"hunter2hunter2"}, "mysql -p [REDACTED] -h db"},
	{"flag pair quoted", `run --client-secret "a b c d" now`, []string{"a b c d"}, `run --client-secret "[REDACTED]" now`},
	{"aws secret next to id", "creds AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY bad", []string{"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "IOSFODNN7EXAMPLE"}, "creds AKIA[REDACTED] [REDACTED] bad"},
	{"gitlab token", "clone failed with glpat-abcdefghij0123456789xyz", []string{"abcdefghij0123456789xyz"}, "clone failed with glpat-[REDACTED]"},
	{"npm token", "//registry.npmjs.org/:_authToken npm_abcdefghijklmnopqrstuvwxyz0123456789", []string{"abcdefghijklmnopqrstuvwxyz0123456789"}, "//registry.npmjs.org/:_authToken npm_[REDACTED]"},
	{"slack webhook", "post https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX failed", []string{"T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"}, "post https://hooks.slack.com/services/[REDACTED] failed"},
	{"quoted password prose", `the password is "hunter 2"`, []string{"hunter 2"}, `the password is "[REDACTED]"`},
	{"quoted secret", `secret 'abc def'`, []string{"abc def"}, `secret '[REDACTED]'`},
	{"command-line flag", "spawn: node server.js --token=hunter2hunter2 --port=3000", []string{"hunter2hunter2"}, "spawn: node server.js --token=[REDACTED] --port=3000"},
	{"short flag", "args: [-api-key=abcdef0123456789]", []string{"abcdef0123456789"}, "args: [-api-key=[REDACTED]]"},
	{"bearer", "upstream rejected Bearer abcDEF123456789xyz", []string{"abcDEF123456789xyz"}, "upstream rejected Bearer [REDACTED]"},
	{"bearer jwt", "401: Bearer " + fakeJWT + " rejected", []string{fakeJWT, "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"}, "401: Bearer [REDACTED] rejected"},
	{"bearer padded", "bearer\tdXNlcjpwYXNz==, retrying", []string{"dXNlcjpwYXNz=="}, "bearer\t[REDACTED], retrying"},
	{"authorization bearer", "Authorization: Bearer ya29.a0AfH6SMBx-token_value", []string{"ya29.a0AfH6SMBx-token_value"}, "Authorization: Bearer [REDACTED]"},
	{"authorization basic", "request headers: Authorization: Basic dXNlcjpwYXNzd29yZA==\nAccept: */*", []string{"dXNlcjpwYXNzd29yZA=="}, "request headers: Authorization: Basic [REDACTED]\nAccept: */*"},
	{"authorization token", "authorization: token " + fakeGHP, []string{fakeGHP, "0123456789abcdef"}, "authorization: token [REDACTED]"},
	{"authorization no scheme", "Authorization: s3cr3tvalue (from env)", []string{"s3cr3tvalue"}, "Authorization: [REDACTED]"},
	{"authorization digest", `Authorization: Digest username="bob", response="6629fae49393a05397450978507c4ef1"`, []string{"6629fae49393a05397450978507c4ef1"}, "Authorization: Digest [REDACTED]"},
	{"authorization json", `{"headers":{"Authorization":"Bearer s3cr3t-value-123","Accept":"application/json"}}`, []string{"s3cr3t-value-123"}, `{"headers":{"Authorization":"Bearer [REDACTED]","Accept":"application/json"}}`},
	{"proxy authorization", "Proxy-Authorization: Basic cHJveHk6c2VjcmV0", []string{"cHJveHk6c2VjcmV0"}, "Proxy-Authorization: Basic [REDACTED]"},
	{"cookie", "Cookie: session=abc123; csrftoken=xyz789\nHost: x", []string{"abc123", "xyz789"}, "Cookie: [REDACTED]\nHost: x"},
	{"x-api-key header", "x-api-key: k-12345-secret", []string{"k-12345-secret"}, "x-api-key: [REDACTED]"},
	{"openai project key", "Incorrect API key provided: " + fakeOpenAI + ".", []string{fakeOpenAI, "AbCdEf1234567890"}, "Incorrect API key provided: sk-proj-[REDACTED]."},
	{"anthropic key", "x-api-key " + fakeAnthrop + " is invalid", []string{fakeAnthrop, "api03-AbCdEf"}, "x-api-key sk-ant-[REDACTED] is invalid"},
	{"openai legacy key", "key sk-1234567890abcdefghijklmnopqrstuvwxyzABCDEFGH expired", []string{"1234567890abcdefghij"}, "key sk-[REDACTED] expired"},
	{"stripe key", "stripe: sk_live_51HxAbCdEfGhIjKlMnOp", []string{"51HxAbCdEfGhIjKlMnOp"}, "stripe: sk_live_[REDACTED]"},
	{"github classic", "token " + fakeGHP + " lacks repo scope", []string{fakeGHP, "0123456789abcdefghij"}, "token ghp_[REDACTED] lacks repo scope"},
	{"github oauth", "gho_16C7e42F292c6912E7710c838347Ae178B4a", []string{"16C7e42F292c6912E7710c838347Ae178B4a"}, "gho_[REDACTED]"},
	{"github server", "using ghs_abcdefghijklmnopqrstuvwxyz0123456789", []string{"abcdefghijklmnopqrstuvwxyz0123456789"}, "using ghs_[REDACTED]"},
	{"github inside word", "GITHUB_TOKENghp_abcdefghijklmnopqrstuvwxyz0123456789", []string{"abcdefghijklmnopqrstuvwxyz0123456789"}, "GITHUB_TOKENghp_[REDACTED]"},
	{"github fine-grained", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ01", []string{"11ABCDEFG0123456789_abcdef"}, "github_pat_[REDACTED]"},
	{"slack bot", "slack said invalid_auth for " + fakeSlack, []string{fakeSlack, "1234567890-1234567890123"}, "slack said invalid_auth for xoxb-[REDACTED]"},
	{"slack user", "xoxp-1111111111-2222222222-3333333333-abcdef0123456789", []string{"1111111111-2222222222"}, "xoxp-[REDACTED]"},
	{"slack app", "xapp-1-A0123456789-1234567890123-abcdef", []string{"A0123456789-1234567890123"}, "xapp-[REDACTED]"},
	{"aws access key", "The AWS Access Key Id " + fakeAWS + " does not exist", []string{fakeAWS, "IOSFODNN7EXAMPLE"}, "The AWS Access Key Id AKIA[REDACTED] does not exist"},
	{"aws secret key", "aws_secret_access_key=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", []string{"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}, "aws_secret_access_key=[REDACTED]"},
	{"google key", "key=AIzaSyA-1234567890abcdefghijklmnopqrstu denied", []string{"SyA-1234567890abcdefghijklmnopqrstu"}, "key=AIza[REDACTED] denied"},
	{"jwt alone", "id " + fakeJWT, []string{fakeJWT, "dozjgNryP4J3jVmNHl0w5N"}, "id [REDACTED]"},
	{"password kv", "login failed: password=hunter2&user=bob", []string{"hunter2"}, "login failed: password=[REDACTED]&user=bob"},
	{"passwd kv", "passwd=Tr0ub4dor&3 rejected", []string{"Tr0ub4dor"}, "passwd=[REDACTED]&3 rejected"},
	{"token kv", "token=abc123def456", []string{"abc123def456"}, "token=[REDACTED]"},
	{"api_key kv", "api_key=0123456789abcdef, quota exceeded", []string{"0123456789abcdef"}, "api_key=[REDACTED], quota exceeded"},
	{"apikey kv", "apikey = ZXhhbXBsZWtleQ", []string{"ZXhhbXBsZWtleQ"}, "apikey = [REDACTED]"},
	{"secret kv", "SECRET=s3cr3t!", []string{"s3cr3t!"}, "SECRET=[REDACTED]"},
	{"access_token kv", "access_token: ya29.A0ARrdaM-xyz", []string{"ya29.A0ARrdaM-xyz"}, "access_token: [REDACTED]"},
	{"client_secret kv", "client_secret=GOCSPX-abcdefghijklmnop", []string{"GOCSPX-abcdefghijklmnop"}, "client_secret=[REDACTED]"},
	{"yaml api_key", "api_key: abcdef123456\nmodel: x", []string{"abcdef123456"}, "api_key: [REDACTED]\nmodel: x"},
	{"json token", `{"token": "tok_live_abc123", "user": "bob"}`, []string{"tok_live_abc123"}, `{"token": "[REDACTED]", "user": "bob"}`},
	{"json password with space", `{"password":"p@ss w0rd"}`, []string{"p@ss w0rd", "w0rd"}, `{"password":"[REDACTED]"}`},
	{"json camel case", `{"accessToken":"abc.def.ghi","refreshToken":"r-123"}`, []string{"abc.def.ghi", "r-123"}, `{"accessToken":"[REDACTED]","refreshToken":"[REDACTED]"}`},
	{"json escaped quotes", `"{\"api_key\":\"abcd1234efgh\",\"n\":1}"`, []string{"abcd1234efgh"}, `"{\"api_key\":\"[REDACTED]\",\"n\":1}"`},
	{"json escaped in value", `{"secret":"a\"b\"c-secret"}`, []string{"c-secret"}, `{"secret":"[REDACTED]"}`},
	{"single quotes", "{'password': 'hunter2'}", []string{"hunter2"}, "{'password': '[REDACTED]'}"},
	{"url query", "GET https://api.example.com/v1/items?access_token=abc123def456&page=2 failed", []string{"abc123def456"}, "GET https://api.example.com/v1/items?access_token=[REDACTED]&page=2 failed"},
	{"url query first", "fetch https://x.test/?token=t0k3n", []string{"t0k3n"}, "fetch https://x.test/?token=[REDACTED]"},
	{"url user info", "dial postgres://admin:s3cretPW@db.example.com:5432/app failed", []string{"s3cretPW"}, "dial postgres://admin:[REDACTED]@db.example.com:5432/app failed"},
	{"several", "token=aaa111 and password=bbb222 and " + fakeGHP, []string{"aaa111", "bbb222", fakeGHP}, "token=[REDACTED] and password=[REDACTED] and ghp_[REDACTED]"},
}

// unchangedCases hold no secret: Redact and StoredText must return them as they are.
var unchangedCases = []string{
	"Connection closed",
	"MCP error -32000: Connection closed",
	`MCP server "probe" tool "slow" timed out after 3s`,
	"<tool_use_error>Error: No such tool available: mcp__probe__nope</tool_use_error>",
	"upstream said: quota exceeded",
	"Unexpected token < in JSON at position 0",
	`WWW-Authenticate: Bearer error="insufficient_scope", scope="files:read"`,
	`Bearer resource_metadata="https://auth.example.com/.well-known/oauth-protected-resource"`,
	"Bearer realm=example",
	"missing Bearer token",
	"token has expired",
	"authorization failed: token is invalid",
	"password policy requires 12 characters",
	"the secret sauce is patience",
	"max_tokens=4096 exceeds the limit",
	"risk-assessment-2024 failed; task-sk-learn done",
	"sk-learn is a library",
	"AKIA is the prefix of AWS key ids; AKIAIOSFODNN7EXAMPLEX is too long",
	"the ghp_ prefix marks GitHub tokens",
	"https://example.com/path?page=2&sort=asc",
	"https://example.com:8443/x",
	`{"token": null, "password": ""}`,
	"token_type=bearer",
	"author: bob; authors=3",
	"ошибка: соединение закрыто 🚫",
	"",
}

func TestRedact(t *testing.T) {
	for _, c := range redactCases {
		t.Run(c.name, func(t *testing.T) {
			got := Redact(c.in)
			if c.want != "" && got != c.want {
				t.Errorf("Redact(%q)\n got  %q\n want %q", c.in, got, c.want)
			}
			stored := StoredText(c.in)
			for _, s := range c.secrets {
				if strings.Contains(stored, s) {
					t.Errorf("StoredText(%q) = %q still holds %q", c.in, stored, s)
				}
			}
			if !strings.Contains(stored, Redacted) {
				t.Errorf("StoredText(%q) = %q has no %s", c.in, stored, Redacted)
			}
			if again := Redact(got); again != got {
				t.Errorf("Redact is not idempotent:\n once  %q\n twice %q", got, again)
			}
		})
	}
}

func TestRedactUnchanged(t *testing.T) {
	for _, in := range unchangedCases {
		t.Run(in, func(t *testing.T) {
			if got := Redact(in); got != in {
				t.Errorf("Redact(%q) = %q, want it unchanged", in, got)
			}
			if got := StoredText(in); got != in {
				t.Errorf("StoredText(%q) = %q, want it unchanged", in, got)
			}
		})
	}
}

func TestStoredText(t *testing.T) {
	for _, c := range []struct {
		name string
		in   string
		want string
	}{
		{"short", "Connection closed", "Connection closed"},
		{"exactly the limit", strings.Repeat("a", MaxStoredRunes), strings.Repeat("a", MaxStoredRunes)},
		{"one over", strings.Repeat("a", MaxStoredRunes+1), strings.Repeat("a", MaxStoredRunes-1) + "…"},
		{"ascii cut", strings.Repeat("a", 600), strings.Repeat("a", MaxStoredRunes-1) + "…"},
		{"two-byte runes", strings.Repeat("é", 600), strings.Repeat("é", MaxStoredRunes-1) + "…"},
		{"four-byte runes", strings.Repeat("🚫", 600), strings.Repeat("🚫", MaxStoredRunes-1) + "…"},
		{"multi-byte at the limit", strings.Repeat("日本", MaxStoredRunes/2), strings.Repeat("日本", MaxStoredRunes/2)},
		{"controls", "a\x00b\rc\x1bd\te\nf\x7fg\u0085h", "a b c d\te\nf g h"},
		{"bidi override", "tool \u202eevil\u202c name", "tool  evil  name"},
		{"invalid utf-8", "a\xffb\xc3", "a\uFFFDb\uFFFD"},
		{"replacement char kept", "a\uFFFDb", "a\uFFFDb"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := StoredText(c.in)
			if got != c.want {
				t.Errorf("StoredText(%.40q…)\n got  %.80q (%d runes)\n want %.80q (%d runes)",
					c.in, got, utf8.RuneCountInString(got), c.want, utf8.RuneCountInString(c.want))
			}
			if !utf8.ValidString(got) {
				t.Errorf("StoredText(%.40q…) is not valid UTF-8", c.in)
			}
			if n := utf8.RuneCountInString(got); n > MaxStoredRunes {
				t.Errorf("StoredText(%.40q…) has %d runes, more than %d", c.in, n, MaxStoredRunes)
			}
		})
	}
}

// TestStoredTextRedactsBeforeCutting puts secrets across the 500th character: cut first, their prefixes
// would no longer match any pattern and would be kept.
func TestStoredTextRedactsBeforeCutting(t *testing.T) {
	for _, secret := range []string{fakeGHP, fakeJWT, fakeSlack, fakeAWS, fakeOpenAI, "password=hunter2hunter2", "Bearer abcdefghij0123456789"} {
		for pad := MaxStoredRunes - 12; pad < MaxStoredRunes+2; pad++ {
			in := strings.Repeat("x", pad) + " " + secret + " tail"
			t.Run(fmt.Sprintf("%s/pad%d", secret[:6], pad), func(t *testing.T) {
				got := StoredText(in)
				if utf8.RuneCountInString(got) > MaxStoredRunes {
					t.Fatalf("StoredText has %d runes", utf8.RuneCountInString(got))
				}
				// The part of the secret after its kept prefix must not leak, not even 4 characters of it.
				body := secret[len(secret)-12:]
				for n := 4; n <= len(body); n++ {
					if strings.Contains(got, body[:n]) {
						t.Fatalf("StoredText(pad %d) = …%q leaks %q", pad, got[len(got)-30:], body[:n])
					}
				}
			})
		}
	}
}

// TestRedactKnown checks that configured values without a recognisable shape are replaced wherever
// they appear, longest first, and that short values are left alone.
func TestRedactKnown(t *testing.T) {
	known := []string{"plainvalue42", "plainvalue42-extended", "abc", "internal-host.corp"}
	in := "server said: bad key plainvalue42-extended (also plainvalue42) from internal-host.corp; abc ok"
	got := StoredTextKnown(in, known)
	want := "server said: bad key [REDACTED] (also [REDACTED]) from [REDACTED]; abc ok"
	if got != want {
		t.Errorf("StoredTextKnown = %q, want %q", got, want)
	}
	if RedactKnown(got, known) != got {
		t.Errorf("not idempotent: %q", RedactKnown(got, known))
	}
}
