package mcpconfig

import (
	"slices"
	"testing"
)

func TestCredentials(t *testing.T) {
	for name, want := range map[string]bool{
		"Authorization": true, "cookie": true, "X-Api-Key": true, "GITHUB_PERSONAL_ACCESS_TOKEN": true, "OPENAI_API_KEY": true,
		"access_token": true, "GITLAB_PAT": true, "DB_PASSWORD": true,
		"PATH": false, "HOME": false, "X-Client": false, "NODE_OPTIONS": false, "KEYBOARD": false, "region": false,
	} {
		if got := CredentialName(name); got != want {
			t.Errorf("CredentialName(%q) = %v, want %v", name, got, want)
		}
	}
	s := Server{
		Command: "npx", Args: []string{"-y", "srv", "--token", "t1", "--api-key=k2", "--root", "/srv"},
		Env:     map[string]string{"GITHUB_TOKEN": "g3", "PATH": "/bin"},
		URL:     "https://u:p4@h/mcp?api_key=q5&region=eu",
		Headers: map[string]string{"Authorization": "Bearer h6", "X-Client": "cli"},
	}
	want := []string{"arg:--api-key=k2", "arg:--token=t1", "env:GITHUB_TOKEN=g3", "header:authorization=Bearer h6", "url:api_key=q5", "url:user=u:p4"}
	if got := s.Credentials(); !slices.Equal(got, want) {
		t.Fatalf("Credentials = %q, want %q", got, want)
	}
	if got := (Server{Transport: TransportHTTP, URL: "https://h/mcp"}).Credentials(); len(got) != 0 {
		t.Fatalf("a server without a configured credential: %q", got)
	}
}
