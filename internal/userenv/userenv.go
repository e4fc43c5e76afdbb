// Package userenv is the environment the gate obeys: the process environment without the
// variables a repository set for it. Claude Code passes the "env" of a project's own
// .claude/settings.json and .claude/settings.local.json to hooks and to the model's commands, and
// a cloned repository carries those files (Qwen Code does the same with the "env" of a project's
// .qwen/settings.json; Gemini CLI and Qwen Code also load a dotenv file into their own
// environment, the first they find from their working folder up to the root, so a folder above
// the repository counts too); so every MCP_CIRCUIT_* variable, and the HOME, CLAUDE_CONFIG_DIR,
// XDG_CONFIG_HOME, PATH and agent directories (CODEX_HOME, …) our trust decisions rest on, is
// ignored when its value is the one such a file set (docs/security.md "Only you configure the
// gate"). A directory variable whose value is relative names whatever folder the agent runs in,
// and is refused too.
package userenv

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/redact"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/safefile"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/settings"
)

// Prefix names the variables that configure the gate.
const Prefix = "MCP_CIRCUIT_"

// guardedOther are the variables outside Prefix whose value decides what we trust: which
// ~/.claude.json approves servers, which user file names the shared board, where a binary is found.
// Claude Code filters the first three from a settings file's env, but other agents may not, so the
// defence does not rely on it.
//
// CLAUDE_PROJECT_DIR names the project the gate guards, and so where it writes: agents set it
// themselves, so a value equal to the one a project's settings set is the project's, and the
// gate then guards the current directory rather than the directory the repository chose.
//
// CODEX_HOME, COPILOT_HOME, CLINE_DIR, OPENCODE_CONFIG_DIR and KILO_CONFIG_DIR name the agents' user directories,
// whose MCP configuration resolves an agent's tool names to circuits and where install and doctor
// find the agent's hooks: a repository that chose them could move a call off its OPEN circuit.
// CLINE_DATA_DIR and CLINE_MCP_SETTINGS_PATH name where Cline's MCP settings are, for the same reason.
// GEMINI_CLI_HOME and QWEN_HOME name Gemini CLI's and Qwen Code's user directories, whose settings
// hold their user MCP servers and whose .env files they load as the user's. CRUSH_GLOBAL_CONFIG
// names the directory of Crush's user crush.json, where install writes its hooks.
//
// XDG_CACHE_HOME holds our user cache (internal/project's UserCacheDir): the decoded answers the
// lean hook reads instead of running the full CLI, and the fleet identities of a project's
// servers. Both are trusted as our own work, so a repository that pointed the cache at its own
// files (XDG_CACHE_HOME=cache) could plant answers there, and have the gate write wherever it says.
var guardedOther = []string{"HOME", "CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "PATH", "CLAUDE_PROJECT_DIR",
	"CODEX_HOME", "COPILOT_HOME", "CLINE_DIR", "OPENCODE_CONFIG_DIR", "KILO_CONFIG_DIR", "CLINE_DATA_DIR", "CLINE_MCP_SETTINGS_PATH",
	"GEMINI_CLI_HOME", "QWEN_HOME", "CRUSH_GLOBAL_CONFIG"}

// dirVars are the guarded variables that name a directory (CLINE_MCP_SETTINGS_PATH a file) of the
// user's. A relative value would name whatever the folder the agent runs in holds — a
// repository's — so it is refused: treated as unset (HOME as the password database's), and said.
var dirVars = []string{"HOME", "CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "CODEX_HOME", "COPILOT_HOME", "CLINE_DIR",
	"OPENCODE_CONFIG_DIR", "KILO_CONFIG_DIR", "CLINE_DATA_DIR", "CLINE_MCP_SETTINGS_PATH", "GEMINI_CLI_HOME", "QWEN_HOME", "CRUSH_GLOBAL_CONFIG"}

// Guarded reports whether the value of the variable name is ignored when a project sets it.
func Guarded(name string) bool {
	return strings.HasPrefix(name, Prefix) || slices.Contains(guardedOther, name)
}

// SettingsFiles are the project files whose "env" an agent passes to hooks, relative to a
// project directory: Claude Code's two, and Qwen Code's .qwen/settings.json, whose "env" fills
// what its own environment leaves unset (and so reaches the hooks it runs).
var SettingsFiles = []string{filepath.Join(".claude", "settings.json"), filepath.Join(".claude", "settings.local.json"),
	filepath.Join(".qwen", "settings.json")}

// commented are the SettingsFiles whose agent strips comments before it parses them (Qwen Code);
// Claude Code's are read as strict JSON, and one that is not is unreadable.
var commented = map[string]bool{filepath.Join(".qwen", "settings.json"): true}

// EnvFiles are the dotenv files that an agent looks for in each folder, relative to it: Gemini CLI
// .gemini/.env, else .env; Qwen Code .qwen/.env, else .env. [DotenvFiles] says which of them, in
// which folders, an agent loads.
var EnvFiles = []string{filepath.Join(".gemini", ".env"), filepath.Join(".qwen", ".env"), ".env"}

// envWalk is how one agent finds the dotenv file it loads into its own environment (which its hooks
// inherit): from its working folder up to the root, in each folder the first of names that exists;
// the first folder that has one ends the search, and the agent loads that file only (setting what
// is not set already). A file in the home directory is the user's own.
type envWalk struct {
	// names are the files looked for in each folder, in the agent's order.
	names []string
	// stopAtHome: the search ends at the home directory whatever it holds (Qwen Code); Gemini CLI
	// goes on above it when it holds neither file.
	stopAtHome bool
}

// envWalks are the agents that walk up for a dotenv file, as their sources do: Gemini CLI 0.61.0
// (findEnvFile: .gemini/.env, then .env, in each folder, to the root) and Qwen Code 0.24.4
// (findEnvFiles: .qwen/.env, then .env, up to the home directory or the root).
var envWalks = []envWalk{
	{names: []string{filepath.Join(".gemini", ".env"), ".env"}},
	{names: []string{filepath.Join(".qwen", ".env"), ".env"}, stopAtHome: true},
}

// homeEnvFiles are the dotenv files, relative to an agent's home directory, that the agent loads as
// the user's: Gemini CLI's GEMINI_CLI_HOME (.gemini/.env, .env), Qwen Code's QWEN_HOME (.env),
// Codex CLI's CODEX_HOME (.env; Codex loads ~/.codex/.env at start). Under an absolute home they
// are the user's own and not read; a relative home is resolved by the agent against the folder it
// runs in, which makes them a repository's files.
var homeEnvFiles = map[string][]string{
	"GEMINI_CLI_HOME": {filepath.Join(".gemini", ".env"), ".env"},
	"QWEN_HOME":       {".env"},
	"CODEX_HOME":      {".env"},
}

// Ignored is one variable the gate does not obey: its name, the value it had, and the project
// file that sets it.
type Ignored struct {
	Name, Value, File string
}

// Env is the environment of one process as the gate obeys it. Its zero value is not usable; make
// one with [New].
type Env struct {
	raw      func(string) string
	dirs     []string
	userHome func() (string, error)

	once    sync.Once
	ignored []Ignored
	byName  map[string]Ignored
	// refused are the directory variables whose value is relative (dirVars), by name.
	refused []Ignored
}

// New returns the environment raw describes, minus what a project set. The projects whose
// settings are read are every directory the process may end up guarding: the agent's project
// directory (CLAUDE_PROJECT_DIR), the current directory, the directory MCP_CIRCUIT_DIR names
// (whoever set it: a user's MCP_CIRCUIT_DIR may point at a repository) and extra (a --dir flag).
// The files are read only once a guarded variable is asked for and set, so an environment without
// MCP_CIRCUIT_* variables costs the hook no file read until HOME is needed.
func New(raw func(string) string, extra ...string) *Env {
	e := &Env{raw: raw, userHome: userHomeDir}
	seen := map[string]bool{}
	add := func(d string) {
		if d == "" {
			return
		}
		abs, err := filepath.Abs(d)
		if err != nil || seen[abs] {
			return
		}
		seen[abs] = true
		e.dirs = append(e.dirs, abs)
	}
	add(raw("CLAUDE_PROJECT_DIR"))
	if wd, err := os.Getwd(); err == nil {
		add(wd)
		// From a subdirectory the gate guards the project found above it (project.Locate): every
		// directory up to HOME (whose .claude is the user's own) or the root may be that project.
		home := filepath.Clean(raw("HOME"))
		for d := filepath.Dir(wd); d != home && d != filepath.Dir(d); d = filepath.Dir(d) {
			add(d)
		}
	}
	add(raw(Prefix + "DIR"))
	for _, d := range extra {
		add(d)
	}
	return e
}

// Getenv is the variable as the gate obeys it: "" for a guarded variable a project set or a
// directory variable that is relative, except HOME, which is then the home directory of the user
// from the password database.
func (e *Env) Getenv(name string) string {
	v := e.raw(name)
	if v == "" || !Guarded(name) {
		return v
	}
	e.load()
	if _, ok := e.byName[name]; !ok && (filepath.IsAbs(v) || !slices.Contains(dirVars, name)) {
		return v
	}
	if name == "HOME" {
		h, _ := e.userHome()
		return h
	}
	return ""
}

// Ignored lists the variables the gate does not obey, by name.
func (e *Env) Ignored() []Ignored {
	e.load()
	return e.ignored
}

// Refused lists the directory variables the gate treats as unset because their value is relative.
func (e *Env) Refused() []Ignored {
	e.load()
	return e.refused
}

// Notice is the one warning that says what is ignored or refused ("" when nothing is), without the
// "mcp-circuit-breaker: warning: " prefix.
func (e *Env) Notice() string {
	ig := e.Ignored()
	var refused string
	if rf := e.Refused(); len(rf) > 0 {
		var parts []string
		for _, r := range rf {
			parts = append(parts, r.Name+"="+redact.QuoteData(r.Value, 60))
		}
		refused = "refusing relative " + strings.Join(parts, ", ") + ": a relative directory names whatever folder the agent runs in, " +
			"so the gate treats it as unset (HOME as your home directory from the password database); set an absolute path"
	}
	if len(ig) == 0 {
		return refused
	}
	if refused != "" {
		refused = "; " + refused
	}
	var parts []string
	byFile := map[string][]string{}
	var files []string
	for _, i := range ig {
		if _, ok := byFile[i.File]; !ok {
			files = append(files, i.File)
		}
		byFile[i.File] = append(byFile[i.File], i.Name+"="+redact.QuoteData(i.Value, 60))
	}
	for _, f := range files {
		parts = append(parts, strings.Join(byFile[f], ", ")+" (set by "+redact.QuoteData(f, 200)+")")
	}
	return "ignoring " + strings.Join(parts, "; ") +
		": a project's own settings may not configure the gate, since a cloned repository carries them. " +
		"If you mean a value, set it in your own environment or in ~/.claude/settings.json \"env\"; " +
		"'mcp-circuit-breaker doctor' lists them" + refused
}

// errUnreadable stands for a project settings file that exists but cannot be read or parsed: what
// its env sets is unknown, so no guarded variable is vouched for.
var errUnreadable = errors.New("unreadable")

// read reports whether the project file at path was read (err is how): an absent file sets
// nothing. An agent may still read a file we cannot (more leniently than we do: comments, trailing
// commas); we cannot tell what it sets, so every guarded variable that is set is taken for the
// project's, HOME and PATH included.
func (e *Env) read(path string, err error) bool {
	switch {
	case errors.Is(err, os.ErrNotExist):
		return false
	case err != nil:
		e.ignoreAllSet(path + " (" + errUnreadable.Error() + ": " + err.Error() + ")")
		return false
	}
	return true
}

func (e *Env) load() {
	e.once.Do(func() {
		e.byName = map[string]Ignored{}
		for _, d := range e.dirs {
			for _, rel := range SettingsFiles {
				path := filepath.Join(d, rel)
				env, other, err := readEnv(path, commented[rel])
				if !e.read(path, err) {
					continue
				}
				for name, v := range env {
					// A value that is not a string (1.0, 1e0) reaches the hook as the agent
					// writes it: ignored whenever the variable is set.
					if raw := e.raw(name); Guarded(name) && raw != "" && (raw == v || other[name]) {
						e.ignore(Ignored{Name: name, Value: raw, File: path})
					}
				}
			}
		}
		for _, path := range dotenvFiles(e.dirs, e.raw, e.userHome) {
			names, err := ReadDotenvNames(path)
			if !e.read(path, err) {
				continue
			}
			// Dotenv quoting, escapes and multi-line values differ between loaders, so the
			// value is not compared: a guarded name the file sets is ignored whenever it is set.
			for _, name := range names {
				if v := e.raw(name); Guarded(name) && v != "" {
					e.ignore(Ignored{Name: name, Value: v, File: path})
				}
			}
		}
		sort.SliceStable(e.ignored, func(i, j int) bool { return e.ignored[i].Name < e.ignored[j].Name })
		for _, name := range dirVars {
			if _, ok := e.byName[name]; !ok {
				if v := e.raw(name); v != "" && !filepath.IsAbs(v) {
					e.refused = append(e.refused, Ignored{Name: name, Value: v})
				}
			}
		}
	})
}

// DotenvFiles are the dotenv files an agent would load into its environment when it runs in one of
// dirs and that are not the user's own, as getenv describes the environment: for each agent that
// walks up (Gemini CLI, Qwen Code) the file it finds, in its own order, when that file is not in
// the home directory; and the dotenv files of an agent home that is relative. Only files that exist
// are listed; a folder named like one is passed over (the agent reads nothing from it). Every path
// is absolute.
func DotenvFiles(dirs []string, getenv func(string) string) []string {
	var abs []string
	for _, d := range dirs {
		if a, err := filepath.Abs(d); err == nil {
			abs = append(abs, a)
		}
	}
	return dotenvFiles(abs, getenv, userHomeDir)
}

// dotenvFiles is DotenvFiles for absolute dirs. The home directory is $HOME, as the agents use it
// (an agent that loads a .env only sets what is not set already, so one cannot change the HOME it
// walked with); only when HOME is not absolute is it userHome's.
//
// The agents walk up from their working folder as the process sees it (Node's process.cwd(), a
// physical path), which is the hook's working folder and CLAUDE_PROJECT_DIR: both are in dirs.
func dotenvFiles(dirs []string, getenv func(string) string, userHome func() (string, error)) []string {
	home := getenv("HOME")
	if !filepath.IsAbs(home) {
		home, _ = userHome()
	}
	home = filepath.Clean(home)
	var out []string
	listed := map[string]bool{}
	// exists says whether the agents would find path (Node's existsSync, a stat that follows
	// links), and whether it is a folder, which they fail to read and so take nothing from.
	type found struct{ ok, dir bool }
	stats := map[string]found{}
	exists := func(path string) found {
		if f, ok := stats[path]; ok {
			return f
		}
		fi, err := os.Stat(path)
		f := found{ok: err == nil, dir: err == nil && fi.IsDir()}
		stats[path] = f
		return f
	}
	add := func(path string) {
		if f := exists(path); f.ok && !f.dir && !listed[path] {
			listed[path] = true
			out = append(out, path)
		}
	}
	for _, d := range dirs {
		for _, w := range envWalks {
		walk:
			for c := filepath.Clean(d); ; {
				if home != "" && home != "." && c == home {
					if w.stopAtHome {
						break // the home directory's files are the user's
					}
					for _, n := range w.names {
						if exists(filepath.Join(c, n)).ok {
							break walk // the user's own file, found first
						}
					}
				} else {
					for _, n := range w.names {
						if p := filepath.Join(c, n); exists(p).ok {
							add(p)
							break walk
						}
					}
				}
				parent := filepath.Dir(c)
				if parent == c {
					break
				}
				c = parent
			}
		}
		for _, name := range dirVars {
			rel, ok := homeEnvFiles[name]
			if v := getenv(name); ok && v != "" && !filepath.IsAbs(v) {
				for _, n := range rel {
					add(filepath.Join(d, v, n))
				}
			}
		}
	}
	return out
}

func (e *Env) ignore(i Ignored) {
	if _, ok := e.byName[i.Name]; ok {
		return
	}
	e.byName[i.Name] = i
	e.ignored = append(e.ignored, i)
}

// ignoreAllSet ignores every guarded variable that is set: the MCP_CIRCUIT_* names come from the
// process environment, the only list of them there is; the others are named in guardedOther. A
// HOME left obeyed here would let the file's HOME choose which ~/.claude.json approves servers.
func (e *Env) ignoreAllSet(file string) {
	names := slices.Clone(guardedOther)
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, Prefix) {
			names = append(names, name)
		}
	}
	for _, name := range names {
		if v := e.raw(name); v != "" {
			e.ignore(Ignored{Name: name, Value: v, File: file})
		}
	}
}

// ReadEnv returns the "env" of an agent settings file, bounded like every file of a repository
// (a link is followed, a FIFO or device refused). Values are strings as the agent passes them: a
// number or a boolean in the file arrives as its JSON text.
func ReadEnv(path string) (map[string]string, error) {
	env, _, err := readEnv(path, false)
	return env, err
}

// ReadProjectEnv is ReadEnv of the SettingsFiles entry rel under the project directory dir, read
// as its agent reads it (Qwen Code's with comments).
func ReadProjectEnv(dir, rel string) (map[string]string, error) {
	env, _, err := readEnv(filepath.Join(dir, rel), commented[rel])
	return env, err
}

// readEnv is ReadEnv that also names the values that are not JSON strings: an agent turns those
// into text its own way (JavaScript's String(1.0) is "1", not "1.0"), so their text cannot be
// compared with the value the hook is given. With comments, // and /* */ comments are read as
// white space.
func readEnv(path string, comments bool) (map[string]string, map[string]bool, error) {
	data, err := safefile.ReadBounded(path, safefile.MaxConfigBytes)
	if err != nil {
		return nil, nil, err
	}
	// Editors on some systems start a UTF-8 file with a byte-order mark, and agents read through
	// it; so do we, or the file's env would go unread.
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	if comments {
		data = stripComments(data)
	}
	var doc struct {
		Env map[string]json.RawMessage `json:"env"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	out := make(map[string]string, len(doc.Env))
	var other map[string]bool
	for k, raw := range doc.Env {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			out[k] = s
			continue
		}
		out[k] = strings.TrimSpace(string(raw))
		if other == nil {
			other = map[string]bool{}
		}
		other[k] = true
	}
	return out, other, nil
}

// ReadDotenvNames returns the names a dotenv file sets (NAME=value, NAME: value, export NAME=value),
// read bounded like every file of a repository. It errs on the side of more names: a line inside a
// multi-line quoted value that looks like an assignment counts too.
func ReadDotenvNames(path string) ([]string, error) {
	data, err := safefile.ReadBounded(path, safefile.MaxConfigBytes)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, line := range strings.FieldsFunc(string(data), func(r rune) bool { return r == '\n' || r == '\r' }) {
		line = strings.TrimLeft(line, " \t\ufeff")
		if rest, ok := strings.CutPrefix(line, "export"); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
			line = strings.TrimLeft(rest, " \t")
		}
		n := 0
		for n < len(line) && (line[n] == '_' || line[n] == '.' || line[n] == '-' ||
			line[n] >= 'a' && line[n] <= 'z' || line[n] >= 'A' && line[n] <= 'Z' || line[n] >= '0' && line[n] <= '9') {
			n++
		}
		if n == 0 {
			continue
		}
		if rest := strings.TrimLeft(line[n:], " \t"); rest != "" && (rest[0] == '=' || rest[0] == ':') {
			names = append(names, line[:n])
		}
	}
	return names, nil
}

// stripComments blanks the // and /* */ comments of JSON text outside its strings, as the
// agents that accept them in their settings do (settings.StripComments).
func stripComments(data []byte) []byte { return settings.StripComments(data) }
