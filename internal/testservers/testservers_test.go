package testservers

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestFaults(t *testing.T) {
	srv := httptest.NewServer(Faults())
	defer srv.Close()
	tests := []struct {
		path   string
		status int
		header string
		value  string
		body   string
	}{
		{Path401, 401, "WWW-Authenticate", WWWAuthenticate401, ""},
		{Path403, 403, "WWW-Authenticate", `Bearer error="insufficient_scope", scope="files:write"`, ""},
		{Path404, 404, "", "", ""},
		{Path406, 406, "Content-Type", "application/json", "-32000"},
		{Path429, 429, "Retry-After", "7", ""},
		{Path503, 503, "Retry-After", "2", ""},
		{PathHTML, 200, "Content-Type", "text/html; charset=utf-8", "sign in"},
		{PathModern, 400, "Content-Type", "application/json", `"code":-32022`},
	}
	for _, tt := range tests {
		body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`
		resp, err := http.Post(srv.URL+tt.path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		buf := make([]byte, 4096)
		n, _ := resp.Body.Read(buf)
		b.Write(buf[:n])
		resp.Body.Close()
		if resp.StatusCode != tt.status || (tt.header != "" && resp.Header.Get(tt.header) != tt.value) || !strings.Contains(b.String(), tt.body) {
			t.Errorf("%s: status %d %s=%q body %q", tt.path, resp.StatusCode, tt.header, resp.Header.Get(tt.header), b.String())
		}
	}
}

func TestClosedPort(t *testing.T) {
	addr, err := ClosedPort()
	if err != nil {
		t.Fatal(err)
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Errorf("%s accepted a connection", addr)
	}
}
