package userenv

import (
	"bytes"
	"encoding/json"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// project makes a project directory whose .claude/settings.json holds settings.
func project(t *testing.T, settings string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	if settings != "" {
		if err := os.WriteFile(filepath.Join(dir, ".claude", "settings.json"), []byte(settings), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestGetenv(t *testing.T) {
	repo := project(t, `{"env": {"MCP_CIRCUIT_FAIL_OPEN": "1", "MCP_CIRCUIT_DIR": "../x", "MCP_CIRCUIT_NOW": "2099-01-01T00:00:00Z",
		"MCP_CIRCUIT_LOCK_WAIT": 5, "HOME": "/planted", "CLAUDE_CONFIG_DIR": "/planted/.claude", "PATH": "./bin", "OTHER": "kept"}}`)
	for _, c := range []struct {
		name, value, want string
	}{
		{"MCP_CIRCUIT_FAIL_OPEN", "1", ""},                                  // the project's value: ignored
		{"MCP_CIRCUIT_DIR", "../x", ""},                                     // the project's value: ignored
		{"MCP_CIRCUIT_NOW", "2026-11-29T12:00:00Z", "2026-11-29T12:00:00Z"}, // another value is the user's
		{"MCP_CIRCUIT_LOCK_WAIT", "5", ""},                                  // a number in the file arrives as its text
		{"MCP_CIRCUIT_SHARED", "redis://x", "redis://x"},                    // not set by the project
		{"HOME", "/planted", "/the/users/home"},                             // replaced by the password database's
		{"CLAUDE_CONFIG_DIR", "/planted/.claude", ""},
		{"PATH", "./bin", ""},
		{"OTHER", "kept", "kept"}, // not ours to judge
	} {
		t.Run(c.name, func(t *testing.T) {
			env := map[string]string{"CLAUDE_PROJECT_DIR": repo, c.name: c.value}
			e := New(func(k string) string { return env[k] })
			e.userHome = func() (string, error) { return "/the/users/home", nil }
			if got := e.Getenv(c.name); got != c.want {
				t.Errorf("Getenv(%s) with %q = %q, want %q", c.name, c.value, got, c.want)
			}
		})
	}
}

// TestDirTarget: a directory MCP_CIRCUIT_DIR points at is read too, whoever set the variable, and
// so is a settings.local.json.
func TestDirTarget(t *testing.T) {
	here := project(t, "")
	target := project(t, "")
	if err := os.WriteFile(filepath.Join(target, ".claude", "settings.local.json"), []byte(`{"env": {"MCP_CIRCUIT_SHARED": "redis://evil:6379"}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"CLAUDE_PROJECT_DIR": here, "MCP_CIRCUIT_DIR": target, "MCP_CIRCUIT_SHARED": "redis://evil:6379"}
	e := New(func(k string) string { return env[k] })
	if got := e.Getenv("MCP_CIRCUIT_SHARED"); got != "" {
		t.Errorf("MCP_CIRCUIT_SHARED = %q, want it ignored", got)
	}
	if got := e.Getenv("MCP_CIRCUIT_DIR"); got != target {
		t.Errorf("MCP_CIRCUIT_DIR = %q, want the user's %q", got, target)
	}
	ig := e.Ignored()
	if len(ig) != 1 || ig[0].Name != "MCP_CIRCUIT_SHARED" || ig[0].File != filepath.Join(target, ".claude", "settings.local.json") {
		t.Errorf("Ignored() = %+v", ig)
	}
	if e.Notice() == "" {
		t.Error("no notice")
	}
}

// TestUnreadableSettings: a settings file that exists but cannot be read (here not JSON) vouches
// for nothing, so the set MCP_CIRCUIT_* variables are ignored.
func TestUnreadableSettings(t *testing.T) {
	repo := project(t, `{"env": {`)
	t.Setenv("MCP_CIRCUIT_FAIL_OPEN", "1")
	e := New(func(k string) string {
		return map[string]string{"CLAUDE_PROJECT_DIR": repo, "MCP_CIRCUIT_FAIL_OPEN": "1"}[k]
	})
	if got := e.Getenv("MCP_CIRCUIT_FAIL_OPEN"); got != "" {
		t.Errorf("MCP_CIRCUIT_FAIL_OPEN = %q, want it ignored", got)
	}
}

// TestUnreadableSettingsGuardsAll: an agent may read a file we cannot (a comment, a trailing
// comma) and pass its HOME, PATH or CLAUDE_CONFIG_DIR; an unreadable file vouches for none of them,
// so a planted HOME cannot pick the ~/.claude.json that approves the repository's servers.
func TestUnreadableSettingsGuardsAll(t *testing.T) {
	for _, settings := range []string{
		"// the team's settings\n{\"env\": {\"HOME\": \"/planted\"}}",
		`{"env": {"HOME": "/planted"},}`,
	} {
		repo := project(t, settings)
		env := map[string]string{"CLAUDE_PROJECT_DIR": repo, "HOME": "/planted", "PATH": "./bin",
			"CLAUDE_CONFIG_DIR": "/planted/.claude", "XDG_CONFIG_HOME": "/planted/.config", "OTHER": "kept"}
		e := New(func(k string) string { return env[k] })
		e.userHome = func() (string, error) { return "/the/users/home", nil }
		for name, want := range map[string]string{"HOME": "/the/users/home", "PATH": "", "CLAUDE_CONFIG_DIR": "",
			"XDG_CONFIG_HOME": "", "OTHER": "kept"} {
			if got := e.Getenv(name); got != want {
				t.Errorf("settings %q: Getenv(%s) = %q, want %q", settings, name, got, want)
			}
		}
	}
}

// TestByteOrderMark: a settings file that starts with a UTF-8 byte-order mark is read through it,
// so its env is known: its HOME is ignored, a variable it does not set is obeyed.
func TestByteOrderMark(t *testing.T) {
	repo := project(t, "\ufeff"+`{"env": {"HOME": "/planted"}}`)
	env := map[string]string{"CLAUDE_PROJECT_DIR": repo, "HOME": "/planted", "MCP_CIRCUIT_NOW": "2026-11-29T12:00:00Z"}
	e := New(func(k string) string { return env[k] })
	e.userHome = func() (string, error) { return "/the/users/home", nil }
	if got := e.Getenv("HOME"); got != "/the/users/home" {
		t.Errorf("HOME = %q, want the user's", got)
	}
	if got := e.Getenv("MCP_CIRCUIT_NOW"); got != "2026-11-29T12:00:00Z" {
		t.Errorf("MCP_CIRCUIT_NOW = %q, want it obeyed (the file does not set it)", got)
	}
	if ig := e.Ignored(); len(ig) != 1 || ig[0].Name != "HOME" {
		t.Errorf("Ignored() = %+v, want HOME only", ig)
	}
}

// TestNoReadWithoutVariables: without a guarded variable set, nothing is read and nothing is
// ignored.
func TestNoReadWithoutVariables(t *testing.T) {
	e := New(func(k string) string { return map[string]string{"CLAUDE_PROJECT_DIR": "/no/such/dir"}[k] })
	if got := e.Getenv("MCP_CIRCUIT_NOW"); got != "" {
		t.Errorf("Getenv = %q", got)
	}
	if e.byName != nil {
		t.Error("settings were read although no guarded variable is set")
	}
}

// TestDotenv: Gemini CLI and Qwen Code load a project's .gemini/.env, .qwen/.env or .env into their
// own environment, which hooks inherit; a guarded name such a file sets is ignored whatever its
// quoting, and a name it does not set is obeyed.
func TestDotenv(t *testing.T) {
	for _, c := range []struct{ file, text string }{
		{".env", "# app settings\nDATABASE_URL=postgres://x\nMCP_CIRCUIT_FAIL_OPEN=1\n"},
		{".env", "export MCP_CIRCUIT_FAIL_OPEN='1' # inline comment\n"},
		{".env", "MCP_CIRCUIT_FAIL_OPEN: \"1\"\r\n"},
		{filepath.Join(".gemini", ".env"), "  MCP_CIRCUIT_FAIL_OPEN = 1"},
		{filepath.Join(".qwen", ".env"), "NOTE=\"multi\nMCP_CIRCUIT_FAIL_OPEN=1\nline\"\n"},
	} {
		repo := project(t, "")
		path := filepath.Join(repo, c.file)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(c.text), 0o600); err != nil {
			t.Fatal(err)
		}
		env := map[string]string{"CLAUDE_PROJECT_DIR": repo, "MCP_CIRCUIT_FAIL_OPEN": "1", "MCP_CIRCUIT_NOW": "2026-11-29T12:00:00Z"}
		e := New(func(k string) string { return env[k] })
		if got := e.Getenv("MCP_CIRCUIT_FAIL_OPEN"); got != "" {
			t.Errorf("%s %q: MCP_CIRCUIT_FAIL_OPEN = %q, want it ignored", c.file, c.text, got)
		}
		if got := e.Getenv("MCP_CIRCUIT_NOW"); got == "" {
			t.Errorf("%s %q: MCP_CIRCUIT_NOW ignored, but the file does not set it", c.file, c.text)
		}
		if ig := e.Ignored(); len(ig) != 1 || ig[0].File != path {
			t.Errorf("%s: Ignored() = %+v", c.file, ig)
		}
	}
}

// TestProjectDirFromSettings: a CLAUDE_PROJECT_DIR whose value is the one a project's settings set
// is the repository's choice of where the gate reads and writes: ignored, so the gate guards the
// current directory. The agent's own value (another one) is obeyed.
func TestProjectDirFromSettings(t *testing.T) {
	repo := project(t, `{"env": {"CLAUDE_PROJECT_DIR": "/elsewhere"}}`)
	for value, want := range map[string]string{"/elsewhere": "", repo: repo} {
		env := map[string]string{"CLAUDE_PROJECT_DIR": value}
		e := New(func(k string) string { return env[k] }, repo)
		if got := e.Getenv("CLAUDE_PROJECT_DIR"); got != want {
			t.Errorf("CLAUDE_PROJECT_DIR=%q: Getenv = %q, want %q", value, got, want)
		}
	}
}

// TestCacheHomeFromProject: a project's settings or dotenv file that points our user cache at its
// own files (where the lean hook takes decoded answers and fleet identities as its own work) is
// ignored; the user's own XDG_CACHE_HOME is obeyed.
func TestCacheHomeFromProject(t *testing.T) {
	repo := project(t, `{"env": {"XDG_CACHE_HOME": "/planted/cache"}}`)
	for value, want := range map[string]string{"/planted/cache": "", "/home/me/.cache": "/home/me/.cache"} {
		env := map[string]string{"CLAUDE_PROJECT_DIR": repo, "XDG_CACHE_HOME": value}
		if got := New(func(k string) string { return env[k] }).Getenv("XDG_CACHE_HOME"); got != want {
			t.Errorf("XDG_CACHE_HOME=%q: Getenv = %q, want %q", value, got, want)
		}
	}
	// A dotenv file's guarded name is ignored whatever its value.
	writeFile(t, repo, ".env", "XDG_CACHE_HOME=/planted/dotenv-cache\n")
	env := map[string]string{"CLAUDE_PROJECT_DIR": repo, "XDG_CACHE_HOME": "/planted/dotenv-cache"}
	if got := New(func(k string) string { return env[k] }).Getenv("XDG_CACHE_HOME"); got != "" {
		t.Errorf("XDG_CACHE_HOME from the project's .env: Getenv = %q, want it ignored", got)
	}
}

// TestNonStringValue: a value that is not a JSON string reaches the hook as the agent turns it into
// text (JavaScript's String(1.0) is "1"), so it is ignored whatever text the hook is given.
func TestNonStringValue(t *testing.T) {
	repo := project(t, `{"env": {"MCP_CIRCUIT_FAIL_OPEN": 1.0, "MCP_CIRCUIT_LOCK_WAIT": 5e0}}`)
	env := map[string]string{"CLAUDE_PROJECT_DIR": repo, "MCP_CIRCUIT_FAIL_OPEN": "1", "MCP_CIRCUIT_LOCK_WAIT": "5"}
	e := New(func(k string) string { return env[k] })
	for _, name := range []string{"MCP_CIRCUIT_FAIL_OPEN", "MCP_CIRCUIT_LOCK_WAIT"} {
		if got := e.Getenv(name); got != "" {
			t.Errorf("%s = %q, want it ignored", name, got)
		}
	}
}

func TestPasswdHome(t *testing.T) {
	data := []byte("# comment\n+nis\nroot:x:0:0:root:/root:/bin/bash\nme:x:1000:1000:Me,,,:/home/me:/bin/zsh\nrel:x:1001:1:r:relative:/bin/sh\n")
	mac := []byte("me:********:501:20::0:0:Me:/Users/me:/bin/zsh\n")
	for _, c := range []struct {
		data []byte
		uid  string
		home string
		ok   bool
	}{
		{data, "0", "/root", true},
		{data, "1000", "/home/me", true},
		{data, "100", "", false},
		{data, "1001", "", false}, // a relative home is no home
		{mac, "501", "/Users/me", true},
		{[]byte("short:x:7\n"), "7", "", false},
	} {
		if h, ok := passwdHome(c.data, c.uid); h != c.home || ok != c.ok {
			t.Errorf("passwdHome(uid %s) = %q, %v; want %q, %v", c.uid, h, ok, c.home, c.ok)
		}
	}
}

// TestQwenSettingsEnv: Qwen Code fills its environment from the "env" of a project's
// .qwen/settings.json (comments allowed) and its hooks inherit it; the agents' directories a
// project sets there, or in Claude Code's settings, are ignored like the gate's own variables,
// and a comment in the file does not make its env unknown.
func TestQwenSettingsEnv(t *testing.T) {
	repo := project(t, `{"env": {"COPILOT_HOME": "/planted/copilot"}}`)
	qwen := "// the team's Qwen settings\n{\"env\": {\"CODEX_HOME\": \"/planted/codex\", /* and */ \"URL\": \"http://x//y\"}}"
	if err := os.MkdirAll(filepath.Join(repo, ".qwen"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(repo, ".qwen", "settings.json"), []byte(qwen), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"CLAUDE_PROJECT_DIR": repo, "CODEX_HOME": "/planted/codex", "COPILOT_HOME": "/planted/copilot",
		"CLINE_DIR": "/users/cline", "MCP_CIRCUIT_NOW": "2026-11-29T12:00:00Z"}
	e := New(func(k string) string { return env[k] })
	for name, want := range map[string]string{"CODEX_HOME": "", "COPILOT_HOME": "", "CLINE_DIR": "/users/cline",
		"MCP_CIRCUIT_NOW": "2026-11-29T12:00:00Z"} {
		if got := e.Getenv(name); got != want {
			t.Errorf("Getenv(%s) = %q, want %q", name, got, want)
		}
	}
	ig := e.Ignored()
	if len(ig) != 2 || ig[0].Name != "CODEX_HOME" || ig[0].File != filepath.Join(repo, ".qwen", "settings.json") || ig[1].Name != "COPILOT_HOME" {
		t.Errorf("Ignored() = %+v", ig)
	}
}

func TestStripComments(t *testing.T) {
	for in, want := range map[string]string{
		`{"a": "//x"} // c`:           `{"a": "//x"}     `,
		"{/* c\n */\"a\": 1}":         "{    \n   \"a\": 1}",
		`{"a": "\"/*"}`:               `{"a": "\"/*"}`,
		`{"a": 1} /* open`:            `{"a": 1}        `,
		`{"a": "b"}`:                  `{"a": "b"}`,
		"{\"a\": 1 // c\n, \"b\": 2}": "{\"a\": 1     \n, \"b\": 2}",
	} {
		if got := string(stripComments([]byte(in))); got != want {
			t.Errorf("stripComments(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestUserHomeDirIsThisUsers(t *testing.T) {
	home, err := userHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	want, err := user.Current()
	if err != nil {
		t.Skip(err)
	}
	if home != want.HomeDir {
		t.Fatalf("userHomeDir() = %q, os/user says %q", home, want.HomeDir)
	}
}

// FuzzStripComments: the text keeps its length and its line breaks, valid JSON (which has no
// comment) is left as it is, and stripping twice changes nothing more.
func FuzzStripComments(f *testing.F) {
	for _, s := range []string{`{"env": {"A": "//x"}} // c`, "{/* c\n */\"a\": 1}", `{"a": "\"/*"}`, `/*/`, `{"a":1}/`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out := stripComments(in)
		if len(out) != len(in) {
			t.Fatalf("length %d, want %d", len(out), len(in))
		}
		for i := range in {
			if (in[i] == '\n') != (out[i] == '\n') {
				t.Fatalf("line break moved at %d: %q → %q", i, in, out)
			}
		}
		if json.Valid(in) && !bytes.Equal(out, in) {
			t.Fatalf("valid JSON changed: %q → %q", in, out)
		}
		if again := stripComments(out); !bytes.Equal(again, out) {
			t.Fatalf("not idempotent: %q → %q → %q", in, out, again)
		}
	})
}

// writeFile writes text to path under root, making its folders.
func writeFile(t *testing.T, root, path, text string) {
	t.Helper()
	p := filepath.Join(root, path)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestDotenvWalksUp: Gemini CLI and Qwen Code load the first dotenv file they find from the folder
// they run in up to the root (each in its own order), so a repository's .env above a subfolder the
// agent was started in — or any folder above the repository — sets their hooks' environment; each
// guarded name it sets is ignored. A file the agents do not reach (one above the first they find)
// sets nothing.
func TestDotenvWalksUp(t *testing.T) {
	for _, c := range []struct {
		name  string
		files map[string]string
		// ignored are the guarded names ignored, each with the file that sets it.
		ignored map[string]string
	}{
		{"the repository's .env, above the folder the agent runs in",
			map[string]string{"parent/repo/.env": "MCP_CIRCUIT_FAIL_OPEN=1\nCLAUDE_CONFIG_DIR=.\n"},
			map[string]string{"MCP_CIRCUIT_FAIL_OPEN": "parent/repo/.env", "CLAUDE_CONFIG_DIR": "parent/repo/.env"}},
		{"a .gemini/.env in the folder above the repository",
			map[string]string{"parent/.gemini/.env": "MCP_CIRCUIT_DIR=/elsewhere\n"},
			map[string]string{"MCP_CIRCUIT_DIR": "parent/.gemini/.env"}},
		{"each agent's own first file: Gemini CLI's .env far up, Qwen Code's .qwen/.env nearer",
			map[string]string{"parent/repo/.qwen/.env": "MCP_CIRCUIT_DIR=/q\n", ".env": "MCP_CIRCUIT_FAIL_OPEN=1\n"},
			map[string]string{"MCP_CIRCUIT_DIR": "parent/repo/.qwen/.env", "MCP_CIRCUIT_FAIL_OPEN": ".env"}},
		{"a nearer .env ends both searches: the one above it is loaded by neither",
			map[string]string{"parent/repo/.env": "APP=1\n", "parent/.env": "MCP_CIRCUIT_FAIL_OPEN=1\n"},
			nil},
		{"a folder named .env (a Python virtualenv) ends the search and sets nothing",
			map[string]string{"parent/repo/.env/bin/activate": "MCP_CIRCUIT_FAIL_OPEN=1\n", "parent/.env": "MCP_CIRCUIT_FAIL_OPEN=1\n"},
			nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			home := filepath.Join(root, "home")
			sub := filepath.Join(root, "parent", "repo", "sub")
			if err := os.MkdirAll(sub, 0o700); err != nil {
				t.Fatal(err)
			}
			for path, text := range c.files {
				writeFile(t, root, path, text)
			}
			env := map[string]string{"CLAUDE_PROJECT_DIR": sub, "HOME": home, "MCP_CIRCUIT_FAIL_OPEN": "1",
				"MCP_CIRCUIT_DIR": "/elsewhere", "CLAUDE_CONFIG_DIR": "/users/claude"}
			e := New(func(k string) string { return env[k] })
			got := map[string]string{}
			for _, i := range e.Ignored() {
				rel, err := filepath.Rel(root, i.File)
				if err != nil {
					t.Fatal(err)
				}
				got[i.Name] = filepath.ToSlash(rel)
			}
			if len(got) != len(c.ignored) {
				t.Errorf("ignored %v, want %v", got, c.ignored)
			}
			for name, file := range c.ignored {
				if got[name] != file {
					t.Errorf("%s: ignored as set by %q, want %q", name, got[name], file)
				}
				if v := e.Getenv(name); v != "" {
					t.Errorf("Getenv(%s) = %q, want it ignored", name, v)
				}
			}
			if len(c.ignored) == 0 && e.Getenv("MCP_CIRCUIT_FAIL_OPEN") != "1" {
				t.Error("MCP_CIRCUIT_FAIL_OPEN ignored, but no agent loads a file that sets it")
			}
		})
	}
}

// TestDotenvHome: the home directory's dotenv files are the user's own and obeyed; Gemini CLI goes
// on above a home directory that has none (a .env in /home or / is another user's), Qwen Code
// stops there.
func TestDotenvHome(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	proj := filepath.Join(home, "src", "proj")
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, root, ".env", "MCP_CIRCUIT_DIR=/other-users\n")
	env := map[string]string{"CLAUDE_PROJECT_DIR": proj, "HOME": home, "MCP_CIRCUIT_SHARED": "redis://mine", "MCP_CIRCUIT_DIR": "/other-users"}
	e := New(func(k string) string { return env[k] })
	if got := e.Getenv("MCP_CIRCUIT_DIR"); got != "" {
		t.Errorf("MCP_CIRCUIT_DIR = %q: the .env above a home directory without one is Gemini CLI's, and not the user's", got)
	}
	writeFile(t, home, ".gemini/.env", "MCP_CIRCUIT_SHARED=redis://mine\n")
	e = New(func(k string) string { return env[k] })
	if got := e.Getenv("MCP_CIRCUIT_SHARED"); got != "redis://mine" {
		t.Errorf("MCP_CIRCUIT_SHARED = %q, want the user's own from ~/.gemini/.env", got)
	}
	if got := e.Getenv("MCP_CIRCUIT_DIR"); got != "/other-users" {
		t.Errorf("MCP_CIRCUIT_DIR = %q: with ~/.gemini/.env found first, the .env above home is loaded by no agent", got)
	}
}

// TestRelativeDirs: a relative HOME, CLAUDE_CONFIG_DIR, XDG_CONFIG_HOME or agent home names whatever
// the folder the agent runs in holds: treated as unset (HOME as the password database's), and
// said; an absolute one is obeyed. An agent home that is relative also makes its dotenv file a
// repository's file.
func TestRelativeDirs(t *testing.T) {
	repo := project(t, "")
	writeFile(t, repo, "codex/.env", "MCP_CIRCUIT_FAIL_OPEN=1\n")
	env := map[string]string{"CLAUDE_PROJECT_DIR": repo, "HOME": "home", "CLAUDE_CONFIG_DIR": ".claude", "XDG_CONFIG_HOME": "../cfg",
		"XDG_CACHE_HOME": "cache", "CODEX_HOME": "codex", "COPILOT_HOME": "/users/copilot", "GEMINI_CLI_HOME": "./g", "QWEN_HOME": "q", "MCP_CIRCUIT_FAIL_OPEN": "1"}
	e := New(func(k string) string { return env[k] })
	e.userHome = func() (string, error) { return "/the/users/home", nil }
	for name, want := range map[string]string{"HOME": "/the/users/home", "CLAUDE_CONFIG_DIR": "", "XDG_CONFIG_HOME": "", "XDG_CACHE_HOME": "", "CODEX_HOME": "",
		"GEMINI_CLI_HOME": "", "QWEN_HOME": "", "COPILOT_HOME": "/users/copilot", "MCP_CIRCUIT_FAIL_OPEN": ""} {
		if got := e.Getenv(name); got != want {
			t.Errorf("Getenv(%s) = %q, want %q", name, got, want)
		}
	}
	var names []string
	for _, r := range e.Refused() {
		names = append(names, r.Name)
	}
	if want := []string{"HOME", "CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "CODEX_HOME", "GEMINI_CLI_HOME", "QWEN_HOME"}; !slices.Equal(names, want) {
		t.Errorf("Refused() = %v, want %v", names, want)
	}
	if ig := e.Ignored(); len(ig) != 1 || ig[0].Name != "MCP_CIRCUIT_FAIL_OPEN" || ig[0].File != filepath.Join(repo, "codex", ".env") {
		t.Errorf("Ignored() = %+v, want MCP_CIRCUIT_FAIL_OPEN from the relative CODEX_HOME's .env", ig)
	}
	n := e.Notice()
	if !strings.Contains(n, `refusing relative HOME="home", CLAUDE_CONFIG_DIR=".claude"`) || !strings.Contains(n, "ignoring MCP_CIRCUIT_FAIL_OPEN=") {
		t.Errorf("Notice() = %q", n)
	}
}

// TestAncestorProject: run from a subdirectory, the gate guards the project found above it, so a
// variable that project's settings set is ignored too; the settings in HOME are the user's own.
func TestAncestorProject(t *testing.T) {
	repo := project(t, `{"env": {"MCP_CIRCUIT_FAIL_OPEN": "1"}}`)
	sub := filepath.Join(repo, "src", "deep")
	if err := os.MkdirAll(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	t.Chdir(sub)
	env := map[string]string{"MCP_CIRCUIT_FAIL_OPEN": "1"}
	if got := New(func(k string) string { return env[k] }).Getenv("MCP_CIRCUIT_FAIL_OPEN"); got != "" {
		t.Errorf("from %s: the project's MCP_CIRCUIT_FAIL_OPEN = %q, want it ignored", sub, got)
	}
	env["HOME"] = repo
	if got := New(func(k string) string { return env[k] }).Getenv("MCP_CIRCUIT_FAIL_OPEN"); got != "1" {
		t.Errorf("with HOME=%s: the user's MCP_CIRCUIT_FAIL_OPEN = %q, want 1", repo, got)
	}
}
