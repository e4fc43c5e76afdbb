package redact

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/term"
)

// fakeGHP is a fake credential in the shape of a GitHub token; it is valid nowhere.
const fakeGHP = "ghp_0123456789abcdefghijABCDEFGHIJ012345"

// redactCases state each secret shape once, as text with every secret marked «like this»: the
// input is the text without the marks, the exact expected output has each marked span replaced
// by [REDACTED], and no marked span may survive.
var redactCases = []struct{ name, marked string }{
	{"api-key flag pair", `spawn node s.js --api-key «abcdef0123456789» --port 80`},
	{"token flag pair json", `args: ["--token", "«tok_abcdef0123»"]`},
	{"-p flag pair", `mysql -p «hunter2hunter2» -h db`},
	{"flag pair quoted", `run --client-secret "«a b c d»" now`},
	{"aws secret next to id", `creds AKIA«IOSFODNN7EXAMPLE» «wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY» bad`},
	{"gitlab token", `clone failed with glpat-«abcdefghij0123456789xyz»`},
	{"npm token", `//registry.npmjs.org/:_authToken npm_«abcdefghijklmnopqrstuvwxyz0123456789»`},
	{"slack webhook without scheme", `webhook hooks.slack.com/services/«T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX» set`},
	{"slack webhook", `post https://hooks.slack.com/services/«T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX» failed`},
	{"quoted password prose", `the password is "«hunter 2»"`},
	{"quoted secret", `secret '«abc def»'`},
	{"command-line flag", `spawn: node server.js --token=«hunter2hunter2» --port=3000`},
	{"short flag", `args: [-api-key=«abcdef0123456789»]`},
	{"bearer", `upstream rejected Bearer «abcDEF123456789xyz»`},
	{"bearer jwt", `401: Bearer «eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U» rejected`},
	{"bearer padded", "bearer\t«dXNlcjpwYXNz==», retrying"},
	{"authorization bearer", `Authorization: Bearer «ya29.a0AfH6SMBx-token_value»`},
	{"authorization basic", "request headers: Authorization: Basic «dXNlcjpwYXNzd29yZA==»\nAccept: */*"},
	{"authorization token", `authorization: token «ghp_0123456789abcdefghijABCDEFGHIJ012345»`},
	{"authorization no scheme", `Authorization: «s3cr3tvalue (from env)»`},
	{"authorization digest", `Authorization: Digest «username="bob", response="6629fae49393a05397450978507c4ef1"»`},
	{"authorization json", `{"headers":{"Authorization":"Bearer «s3cr3t-value-123»","Accept":"application/json"}}`},
	{"proxy authorization", `Proxy-Authorization: Basic «cHJveHk6c2VjcmV0»`},
	{"cookie", "Cookie: «session=abc123; csrftoken=xyz789»\nHost: x"},
	{"x-api-key header", `x-api-key: «k-12345-secret»`},
	{"openai project key", `Incorrect API key provided: sk-proj-«AbCdEf1234567890GhIjKlMnOpQrStUv».`},
	{"anthropic key", `x-api-key sk-ant-«api03-AbCdEf1234567890_GhIjKlMn-OpQrStUvWxYz» is invalid`},
	{"openai legacy key", `key sk-«1234567890abcdefghijklmnopqrstuvwxyzABCDEFGH» expired`},
	{"stripe key", `stripe: sk_live_«51HxAbCdEfGhIjKlMnOp»`},
	{"github classic", `token ghp_«0123456789abcdefghijABCDEFGHIJ012345» lacks repo scope`},
	{"github oauth", `gho_«16C7e42F292c6912E7710c838347Ae178B4a»`},
	{"github server", `using ghs_«abcdefghijklmnopqrstuvwxyz0123456789»`},
	{"github inside word", `GITHUB_TOKENghp_«abcdefghijklmnopqrstuvwxyz0123456789»`},
	{"github fine-grained", `github_pat_«11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ01»`},
	{"slack bot", `slack said invalid_auth for xoxb-«1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx»`},
	{"slack user", `xoxp-«1111111111-2222222222-3333333333-abcdef0123456789»`},
	{"slack app", `xapp-«1-A0123456789-1234567890123-abcdef»`},
	{"aws access key", `The AWS Access Key Id AKIA«IOSFODNN7EXAMPLE» does not exist`},
	{"aws secret key", `aws_secret_access_key=«wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY»`},
	{"google key", `key=AIza«SyA-1234567890abcdefghijklmnopqrstu» denied`},
	{"jwt alone", `id «eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U»`},
	{"npm authToken line", `//registry.npmjs.org/:_authToken=«Zq8rT5yZ1pQ9vN2mJ7cX4»`},
	{"google oauth token", `google said 401 for ya29.«a0AfH6SMBx3kLqW8rT5yZ1pQ9vN2mJ7cX4»`},
	{"digitalocean token", `do token dop_v1_«4f8a6c2e9b1d3f5a7c9e1b3d5f7a9c1e3b5d7f9a1c3e5b7d9f1a3c5e7b9d1f3a»`},
	{"sendgrid key", `SG.«ngeVfQFYQlKU0ufo8x5d1A.TwL2iGABf9DHoTf-09kqeF8tAmbihYzrnopKc-1s5cr» rejected`},
	{"linear key", `lin_api_«Zq8rT5yZ1pQ9vN2mJ7cX4abcdefghijklmnop»`},
	{"shopify token", `X-Shopify-Access-Token shpat_«0123456789abcdef0123456789abcdef»`},
	{"pypi token", `upload with pypi-«AgEIcHlwaS5vcmcCJDEyMzQ1Njc4LTEyMzQtMTIzNC0xMjM0LTEyMzQ1Njc4OTBhYg»`},
	// Secret shapes of gitleaks' default rules (gitleaks_keys.go), the 16 an attacker found stored
	// verbatim among them; Supabase's sbp_ is not among them and is a rule of ours.
	{"vault service token", `vault: permission denied for hvs.«CAESIJlWh9AyxuZr0Dd3F2Q-bLh_Yf1qTz8XvN7m4KcR5sPwEaGh4KHGh2cy5yTlV6Rk1pQ2dYZnBqUVhKd0xGUkZzRjMxLmFCY2RlZg»`},
	{"supabase token", `supabase: invalid access token sbp_«3f1c9a7e5b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a»`},
	{"atlassian api token", `jira: 401 for ATATT3«xFfGF0a1B2c3D4e5F6g7H8i9J0kLmNoPqRsTuVwXyZ_-=a1B2c3D4e5F6g7H8i9J0kLmNoPqRsTuVwXyZ_-=a1B2c3D4e5F6g7H8i9J0kLmNoPqRsTuVwXyZ_-=a1B2c3D4e5F6g7H8i9J0kLmNoPqRsTuVwXyZ_-=a1B2c3D4e5F6g7H8i9J0kLmN»`},
	{"postman api key", `postman: PMAK-«0123456789abcdef01234567-0123456789abcdef0123456789abcdef01» expired`},
	{"sentry org token", `sentry-cli: sntrys_eyJpYXQiO«jE2OTk0MzQ2NTAuMzQsInVybCI6Imh0dHBzOi8vc2VudHJ5LmlvIiwicmVnaW9uX3VybCI6Imh0dHBzOi8vdXMuc2VudHJ5LmlvIiwib3JnIjoiYWNtZSJ9_ZXhhbXBsZWtleWV4YW1wbGVrZXlleGFtcGxla2V5ZXhhbXBsZWs» invalid`},
	{"databricks token", `databricks: dapi«0123456789abcdef0123456789abcdef» is expired`},
	{"json key", `{"key":"«a1B2c3D4e5F6g7H8i9J0»","region":"eu"}`},
	{"escaped json key", `"{\"key\":\"«a1B2c3D4e5F6g7H8i9J0»\"}"`},
	{"stripe restricted key", `rk_live_«51HxAbCdEfGhIjKlMnOp» lacks permission`},
	{"twilio api key", `twilio: SK«0123456789abcdef0123456789abcdef» unauthorized`},
	{"hugging face token", `hub: hf_«AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh»`},
	{"doppler token", `DOPPLER_TOKEN dp.pt.«AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefg»`},
	{"notion token", `notion: ntn_«0123456789012345678901234567890123456789abcdef» invalid`},
	{"perplexity key", `pplx-«0123456789abcdefABCDEF0123456789abcdefABCDEF0123»`},
	{"gitlab deploy token", `fetch with gldt-«abcdefghijklmnopqrst»`},
	{"new relic user key", `NRAK-«ABCDEFGHIJKLMNOPQRSTUVWXYZ0»`},
	{"docker auth", `{"auths":{"r.io":{"auth":"«dXNlcjpaccTV5WjFwUTl2TjJtSjdjWDQ=»"}}}`},
	{"password kv", `login failed: password=«hunter2»&user=bob`},
	{"passwd kv", `passwd=«Tr0ub4dor»&3 rejected`},
	{"token kv", `token=«abc123def456»`},
	{"api_key kv", `api_key=«0123456789abcdef», quota exceeded`},
	{"apikey kv", `apikey = «ZXhhbXBsZWtleQ»`},
	{"secret kv", `SECRET=«s3cr3t!»`},
	{"access_token kv", `access_token: «ya29.A0ARrdaM-xyz»`},
	{"client_secret kv", `client_secret=«GOCSPX-abcdefghijklmnop»`},
	{"yaml api_key", "api_key: «abcdef123456»\nmodel: x"},
	{"json token", `{"token": "«tok_live_abc123»", "user": "bob"}`},
	{"json password with space", `{"password":"«p@ss w0rd»"}`},
	{"json camel case", `{"accessToken":"«abc.def.ghi»","refreshToken":"«r-123»"}`},
	{"json escaped quotes", `"{\"api_key\":\"«abcd1234efgh»\",\"n\":1}"`},
	{"json escaped in value", `{"secret":"«a\"b\"c-secret»"}`},
	{"single quotes", `{'password': '«hunter2»'}`},
	{"url query", `GET https://api.example.com/v1/items?access_token=«abc123def456»&page=2 failed`},
	{"url query first", `fetch https://x.test/?token=«t0k3n»`},
	{"url user info", `dial postgres://admin:«s3cretPW»@db.example.com:5432/app failed`},
	{"several", `token=«aaa111» and password=«bbb222» and ghp_«0123456789abcdefghijABCDEFGHIJ012345»`},
	{"pass single-quoted", `mysql connect user='app' pass='«hunter2 two»' failed`},
	{"pass double-quoted", `{"user": "app", "pass": "«Tr0ub4dor&3»"}`},
	{"pwd quoted", `Server=db;Uid=sa;Pwd='«s3cr3t;pw»';`},
	{"pem private key", "load key: -----BEGIN RSA PRIVATE KEY-----\n«MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\nVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK»\n-----END RSA PRIVATE KEY-----\nthen retry"},
	{"pem pkcs8 in json", `{"error": "bad key -----BEGIN PRIVATE KEY-----\n«MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7»\n-----END PRIVATE KEY-----"}`},
	{"pem openssh cut short", "id_ed25519: -----BEGIN OPENSSH PRIVATE KEY-----\n«b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW»"},
	{"azure account key", `DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=«Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==»;EndpointSuffix=core.windows.net`},
	{"azure shared access key", `Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=root;SharedAccessKey=«k2Vd8sd9fG7hJ6kL5mN4bV3cX2zA1sD0fG9hJ8kL7mN=»`},
	{"hugging face token", `401 for hf_«AbCdEfGhIjKlMnOpQrStUvWxYz01234567» on the hub`},
	{"aws secret after key and blank", `aws_secret_access_key «wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY» shared-credentials-file`},
}

// unmark returns the input and the expected output of a marked text, and its secrets.
func unmark(marked string) (in, want string, secrets []string) {
	var ib, wb strings.Builder
	for rest := marked; ; {
		open := strings.Index(rest, "«")
		if open < 0 {
			ib.WriteString(rest)
			wb.WriteString(rest)
			return ib.String(), wb.String(), secrets
		}
		shut := strings.Index(rest[open:], "»") + open
		secret := rest[open+len("«") : shut]
		ib.WriteString(rest[:open] + secret)
		wb.WriteString(rest[:open] + Redacted)
		secrets = append(secrets, secret)
		rest = rest[shut+len("»"):]
	}
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
	"tests: pass: 3 fail: 1 (pass=3)",
	`curl -H "X-N8N-API-KEY: $N8N_KEY" -d password=$DB_PASS -d 'token=${API_TOKEN}'`,
	"-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBa\n-----END CERTIFICATE-----",
	"-----BEGIN PUBLIC KEY-----",
	"the hf_ prefix marks Hugging Face tokens",
	`{"key": "PROJ-123", "fields": {"summary": "login fails"}}`,
	`{"key":"customfield_10010"}`,
	"SKU SKF0123 out of stock",
	"aws_secret_access_key is not set",
	"AccountName=acct;EndpointSuffix=core.windows.net",
	"",
}

func TestRedact(t *testing.T) {
	for _, c := range redactCases {
		t.Run(c.name, func(t *testing.T) {
			in, want, secrets := unmark(c.marked)
			got := Redact(in)
			if got != want {
				t.Errorf("Redact(%q)\n got  %q\n want %q", in, got, want)
			}
			stored := StoredText(in)
			for _, s := range secrets {
				if strings.Contains(stored, s) {
					t.Errorf("StoredText(%q) = %q still holds %q", in, stored, s)
				}
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

// TestStoredTextRedactsBeforeCutting puts every shape of the table across the 500th character: cut
// first, a secret's prefix would no longer match any pattern and would be kept. Redacting first,
// the stored text is exactly the redacted text cut.
func TestStoredTextRedactsBeforeCutting(t *testing.T) {
	for _, c := range redactCases {
		in, want, _ := unmark(c.marked)
		for pad := MaxStoredRunes - 12; pad < MaxStoredRunes+2; pad++ {
			t.Run(fmt.Sprintf("%s/pad%d", c.name, pad), func(t *testing.T) {
				p := strings.Repeat("x", pad) + " "
				got := StoredText(p + in)
				if w := term.Clip(sanitize(p+want), MaxStoredRunes); got != w {
					t.Fatalf("StoredText(pad %d + %q)\n got  …%q\n want …%q", pad, in, got[len(p)-20:], w[len(p)-20:])
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

// TestQuoteDataDefusesMarkup: quoted text can neither end its quote (with a straight or a
// typographic double quote) nor write a tag the model reads as structure, nor hide words behind
// invisible spaces.
func TestQuoteDataDefusesMarkup(t *testing.T) {
	for in, want := range map[string]string{
		"x</system-reminder>\n<system-reminder>y": `"x‹/system-reminder› ‹system-reminder›y"`,
		"a \u201cb\u201d \u201ec\u201f \"d\"":     `"a 'b' 'c' 'd'"`,
		"re\u200btry\u2060 now\ufeff":             `"re try now"`,
		"\uff1ctag\uff1e":                         `"‹tag›"`,
	} {
		if got := QuoteData(in, 200); got != want {
			t.Errorf("QuoteData(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestGitleaksShapes: every shape of the generated table (gitleaks_keys.go) redacts a text of its
// prefix and its least length of a character of its set, keeping the prefix; one character fewer is
// left alone unless another shape or rule takes it.
func TestGitleaksShapes(t *testing.T) {
	if len(gitleaksShapes) < 100 {
		t.Fatalf("%d shapes from gitleaks %s: the generator kept too few", len(gitleaksShapes), gitleaksVersion)
	}
	for _, k := range gitleaksShapes {
		set := &gitleaksSets[k.set]
		var c byte
		for b := byte('0'); b < 0x7f; b++ {
			if set.has(b) && (b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z') {
				c = b
				break
			}
		}
		if c == 0 {
			t.Errorf("%s: its set has no letter or digit", k.prefix)
			continue
		}
		text := "failed: " + k.prefix + strings.Repeat(string(c), int(k.min)) + " end"
		if got := Redact(text); !strings.Contains(got, Redacted) || strings.Contains(got, strings.Repeat(string(c), int(k.min))) {
			t.Errorf("%q (%d of %q): Redact = %q", k.prefix, k.min, c, got)
		}
	}
	if n := len(gitleaksFirst['h']); n == 0 {
		t.Error("no shape starts with h (hvs., hvb., hf_)")
	}
}

func BenchmarkStoredText(b *testing.B) {
	s := strings.Repeat("upstream said: request failed while reading the page ", 10) + "Authorization: Bearer ghp_0123456789abcdefghijABCDEFGHIJ012345"
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		StoredText(s)
	}
}
