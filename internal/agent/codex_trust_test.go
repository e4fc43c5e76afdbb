package agent

import (
	"strings"
	"testing"
)

func TestCodexSnakeEvent(t *testing.T) {
	for in, want := range map[string]string{"PreToolUse": "pre_tool_use", "PostToolUse": "post_tool_use", "SessionStart": "session_start", "Stop": "stop"} {
		if got := codexSnakeEvent(in); got != want {
			t.Errorf("codexSnakeEvent(%q) = %q, want %q", in, got, want)
		}
	}
}

// The hash covers the event, the matcher, the command and the timeout: changing any one gives
// another hash (Codex then marks the hook "modified" and skips it).
func TestCodexTrustHash(t *testing.T) {
	base := CodexTrustHash("PreToolUse", "mcp__.*", "/bin/mcp-circuit-breaker-hook hook --agent codex", 5)
	if !strings.HasPrefix(base, "sha256:") || len(base) != len("sha256:")+64 {
		t.Fatalf("hash %q", base)
	}
	for _, other := range []string{
		CodexTrustHash("PostToolUse", "mcp__.*", "/bin/mcp-circuit-breaker-hook hook --agent codex", 5),
		CodexTrustHash("PreToolUse", "", "/bin/mcp-circuit-breaker-hook hook --agent codex", 5),
		CodexTrustHash("PreToolUse", "mcp__.*", "/bin/other hook --agent codex", 5),
		CodexTrustHash("PreToolUse", "mcp__.*", "/bin/mcp-circuit-breaker-hook hook --agent codex", 10),
	} {
		if other == base {
			t.Errorf("a changed handler has the same hash %s", base)
		}
	}
	// <, > and & are hashed as themselves, as serde_json writes them.
	if CodexTrustHash("Stop", "", "a && b > c", 5) == CodexTrustHash("Stop", "", `a \u0026\u0026 b \u003e c`, 5) {
		t.Error("HTML escaping changed the hashed text")
	}
}

func TestCodexTrustConfig(t *testing.T) {
	hooks := []byte(`{"hooks":{"PreToolUse":[{"matcher":"other","hooks":[{"type":"command","command":"theirs"}]},` +
		`{"matcher":"mcp__.*","hooks":[{"type":"command","command":"/b/mcp-circuit-breaker-hook hook --agent codex","timeout":5}]}],` +
		`"Stop":[{"hooks":[{"type":"command","command":"/b/mcp-circuit-breaker-hook hook --agent codex"}]}]}}`)
	ours := func(c string) bool { return strings.HasSuffix(c, "hook --agent codex") }
	trust, err := CodexTrustOf("/h/.codex/hooks.json", hooks, ours)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{}
	for _, tr := range trust {
		keys[tr.Key] = tr.Hash
	}
	if len(keys) != 2 || keys["/h/.codex/hooks.json:pre_tool_use:1:0"] != CodexTrustHash("PreToolUse", "mcp__.*", "/b/mcp-circuit-breaker-hook hook --agent codex", 5) ||
		keys["/h/.codex/hooks.json:stop:0:0"] != CodexTrustHash("Stop", "", "/b/mcp-circuit-breaker-hook hook --agent codex", 600) {
		t.Fatalf("trust %v: want our two handlers, by group and handler index, a missing timeout as Codex's 600", keys)
	}
	user := "model = \"gpt-5\"\n\n[projects.\"/p\"]\ntrust_level = \"trusted\"\n"
	out, outside, err := CodexTrustConfig([]byte(user), "/h/.codex/hooks.json:", trust)
	if err != nil || len(outside) != 0 {
		t.Fatal(err, outside)
	}
	if !strings.HasPrefix(string(out), user) || len(CodexTrusted(out)) != 2 {
		t.Errorf("the user's lines are not kept in front of the block, or the block lacks the entries:\n%s", out)
	}
	again, _, _ := CodexTrustConfig(out, "/h/.codex/hooks.json:", trust)
	if string(again) != string(out) {
		t.Errorf("a second run changed the file:\n%s\n---\n%s", out, again)
	}
	// Another hooks file's entries stay when this one's are replaced; removing them all leaves
	// the user's file as it was.
	other := []CodexTrust{{Key: "/p/.codex/hooks.json:stop:0:0", Hash: "sha256:1"}}
	both, _, _ := CodexTrustConfig(out, "/p/.codex/hooks.json:", other)
	if len(CodexTrusted(both)) != 3 {
		t.Errorf("entries of two files: %v", CodexTrusted(both))
	}
	gone, _, _ := CodexTrustConfig(both, "/h/.codex/hooks.json:", nil)
	gone, _, _ = CodexTrustConfig(gone, "/p/.codex/hooks.json:", nil)
	if string(gone) != user {
		t.Errorf("with no entries left the file is %q, want the user's %q", gone, user)
	}
	// A table the user wrote for one of our keys is not written twice.
	mine := user + "\n[hooks.state.\"/h/.codex/hooks.json:stop:0:0\"]\ntrusted_hash = \"sha256:0\"\n"
	out, outside, _ = CodexTrustConfig([]byte(mine), "/h/.codex/hooks.json:", trust)
	if same, ok := outside["/h/.codex/hooks.json:stop:0:0"]; !ok || same || strings.Count(string(out), "hooks.json:stop:0:0") != 1 {
		t.Errorf("outside %v; the key appears %d times:\n%s", outside, strings.Count(string(out), "hooks.json:stop:0:0"), out)
	}
	if _, _, err := CodexTrustConfig(nil, "", []CodexTrust{{Key: "bad\xff", Hash: "h"}}); err == nil {
		t.Error("a key that is not UTF-8 was written")
	}
}

// FuzzCodexTrustConfig: whatever config.toml holds, writing the block never panics, keeps what is
// outside the block, holds each added key once, and a second run changes nothing.
func FuzzCodexTrustConfig(f *testing.F) {
	f.Add("model = \"x\"\n", "/h/hooks.json:pre_tool_use:0:0")
	f.Add(codexBlockStart+"\n[hooks.state.\"k\"]\ntrusted_hash = \"h\"\n", "k2")
	f.Add(codexBlockStart+"\nno end", "/a\"b\\c\n")
	f.Add("[mcp_servers.\"x\"] # c\n"+codexBlockEnd, "/h:stop:0:0")
	f.Fuzz(func(t *testing.T, config, key string) {
		add := []CodexTrust{{Key: key, Hash: "sha256:ab"}}
		out, outside, err := CodexTrustConfig([]byte(config), key, add)
		if err != nil {
			return
		}
		if _, ok := outside[key]; !ok {
			n := 0
			for _, e := range CodexTrusted(out) {
				if e.Key == key {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("the key is in the block %d times:\n%s", n, out)
			}
		}
		again, _, err := CodexTrustConfig(out, key, add)
		if err != nil || string(again) != string(out) {
			t.Fatalf("a second run changed the file (%v):\n%q\n%q", err, out, again)
		}
		for _, line := range strings.Split(config, "\n") {
			tomlServerHeader(line)
		}
	})
}
