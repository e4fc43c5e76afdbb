package main

// doctor checks the installation end to end (docs/cli.md). Claude Code treats a hook that cannot run
// (a missing binary, exit 127, a timeout) as a non-blocking error and lets the call through, so a
// broken install looks exactly like a healthy one with no open circuit: these checks are the only
// place where it shows.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/message"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/redact"

	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/fallbacks"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/agent"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/mcpconfig"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/probe"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/safefile"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/settings"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/term"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/toolcache"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/userenv"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/yamlfile"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/skill"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// Check statuses.
const (
	statusPass = "PASS"
	statusWarn = "WARN"
	statusFail = "FAIL"
)

// doctorCheck is one line of the doctor's output; Fix is nil for a PASS.
type doctorCheck struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Detail string `json:"detail"`
	Fix    any    `json:"fix"`
}

func doctorCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:  "doctor",
		Usage: "check the installation: hook binary, hooks, skill, shadow mode, ledger, permissions, git-ignore, policy, MCP config, fleet board",
		Description: "Each check prints PASS, WARN or FAIL with a fix. Exit status 1 when any check FAILs.\n" +
			"A missing or broken hook binary is the failure to look for: Claude Code then lets every call\n" +
			"through without a word, so the gate is off while everything looks fine.",
		Flags:  []cli.Flag{dirFlag(), jsonFlag()},
		Action: action(e, parseDoctor, runDoctor),
	}
}

// doctorOptions are the options of doctor.
type doctorOptions struct {
	globalOptions
}

// doctorJSON is doctor's --json output.
type doctorJSON struct {
	Checks []doctorCheck `json:"checks"`
}

func parseDoctor(c *cli.Context) (*doctorOptions, error) {
	g, err := parseGlobal(c)
	if err != nil {
		return nil, err
	}
	return &doctorOptions{globalOptions: g}, noArgs(c)
}

// settingsFile is one Claude Code settings file as doctor reads it.
type settingsFile struct {
	scope   string
	path    string
	display string
	exists  bool
	doc     *settings.Doc
	err     error
}

// doctor holds what the checks share.
type doctor struct {
	e     *Env
	dir   string
	home  string
	sd    string
	files []*settingsFile
	// plugin is the pseudo settings file standing for the enabled mcp-circuit-breaker plugin, whose
	// hooks/hooks.json wires the gate; nil when no settings file enables it. pluginID is its
	// plugin@marketplace id.
	plugin   *settingsFile
	pluginID string
	checks   []doctorCheck
}

func (d *doctor) add(name, status, detail, fix string) {
	ck := doctorCheck{Name: name, Status: status, Detail: detail}
	if status != statusPass && fix != "" {
		ck.Fix = fix
	}
	d.checks = append(d.checks, ck)
}

func (d *doctor) show(path string) string { return showPath(d.dir, d.home, path) }

// managedSettings is the managed settings file of this platform.
func managedSettings() string { return mcpconfig.ManagedSettingsPath() }

// readSettings reads the settings files, highest precedence first.
func (d *doctor) readSettings() {
	paths := []struct{ scope, path string }{
		{"managed", managedSettings()},
		{"local", filepath.Join(d.dir, ".claude", "settings.local.json")},
		{"project", filepath.Join(d.dir, ".claude", "settings.json")},
	}
	if cfg, err := d.e.userConfigDir(); err == nil {
		paths = append(paths, struct{ scope, path string }{"user", filepath.Join(cfg, "settings.json")})
	}
	for _, p := range paths {
		f := &settingsFile{scope: p.scope, path: p.path, display: d.show(p.path)}
		data, err := safefile.ReadBounded(p.path, safefile.MaxConfigBytes)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			f.exists, f.err = true, err
		default:
			f.exists = true
			f.doc, f.err = settings.Parse(f.display, data)
		}
		d.files = append(d.files, f)
	}
}

// pluginPrefix starts the id of this repository's Claude Code plugin in "enabledPlugins"
// (plugin@marketplace; the marketplace of plugin/ is named mcp-circuit-breaker too).
const pluginPrefix = skill.Binary + "@"

// findPlugin looks for the plugin in the "enabledPlugins" of the settings files. The file of
// highest precedence that names a plugin id decides whether it is on, as Claude Code merges them.
func (d *doctor) findPlugin() {
	decided := map[string]bool{}
	for _, f := range d.files {
		if f.doc == nil {
			continue
		}
		enabled := f.doc.Root().Get("enabledPlugins")
		for _, id := range enabled.Keys() {
			if !strings.HasPrefix(id, pluginPrefix) || decided[id] {
				continue
			}
			decided[id] = true
			if on, _ := enabled.Get(id).Bool(); on && d.plugin == nil {
				d.plugin = &settingsFile{scope: "plugin", display: "plugin " + id + " (enabled in " + f.display + ")", exists: true}
				d.pluginID = id
			}
		}
	}
}

// ourHandler is a handler of the gate and the file that holds it.
type ourHandler struct {
	file *settingsFile
	h    settings.Handler
}

func (d *doctor) ours() []ourHandler {
	var out []ourHandler
	for _, f := range d.files {
		if f.doc == nil {
			continue
		}
		for _, h := range f.doc.Handlers() {
			if isOurs(h) {
				out = append(out, ourHandler{f, h})
			}
		}
	}
	// The plugin's hooks/hooks.json runs the binary linked into its data directory for the tool
	// events; its SessionStart script runs the same one, or warns when it is missing.
	if d.plugin != nil {
		for _, ev := range hookEvents {
			h := settings.Handler{Event: ev.event, Type: "command", Command: pluginHookCommand, Args: hookArgs}
			h.Matcher, h.HasMatcher = ev.matcher, ev.matcher != ""
			out = append(out, ourHandler{d.plugin, h})
		}
	}
	return out
}

// hookProgram is the program a handler of ours runs, with ${CLAUDE_PROJECT_DIR} substituted as
// Claude Code does.
func (d *doctor) hookProgram(h settings.Handler) string {
	prog := h.Command
	if h.Args == nil {
		prog, _ = strings.CutSuffix(strings.TrimSpace(prog), " hook")
		prog = strings.Trim(strings.TrimSpace(prog), `"'`)
	}
	if strings.Contains(prog, "${CLAUDE_PLUGIN_DATA}") {
		if data, err := d.e.pluginDataDir(d.pluginID); err == nil {
			prog = strings.ReplaceAll(prog, "${CLAUDE_PLUGIN_DATA}", data)
		}
	}
	prog = strings.ReplaceAll(prog, "${CLAUDE_PROJECT_DIR}", d.dir)
	return strings.ReplaceAll(prog, "$CLAUDE_PROJECT_DIR", d.dir)
}

func runDoctor(opts *doctorOptions, e *Env) error {
	dir, err := e.projectDir(opts.Dir)
	if err != nil {
		return err
	}
	d := &doctor{e: e, dir: dir, home: e.Getenv("HOME"), sd: filepath.Join(dir, project.StateDirName)}
	d.readSettings()
	d.findPlugin()
	d.checkBinary()
	d.checkPath()
	d.checkHooks()
	d.checkAgents()
	d.checkAgentHooks()
	d.checkSkill()
	d.checkShadow()
	d.checkProjectEnv()
	d.checkStateFiles()
	entries := d.checkLedger()
	d.checkProvenance(entries)
	d.checkPermissions()
	d.checkGitignore()
	d.checkTracked()
	d.checkPolicy()
	d.checkFallbacks()
	d.checkMCPConfig()
	d.checkApprovals()
	d.checkProxied()
	d.checkMultiServer(entries)
	d.checkFleet()
	d.checkHookLinking()

	failed := false
	counts := map[string]int{}
	for _, ck := range d.checks {
		counts[ck.Status]++
		failed = failed || ck.Status == statusFail
	}
	if opts.JSON {
		if err := e.printJSON(doctorJSON{Checks: d.checks}); err != nil {
			return err
		}
	} else {
		for _, ck := range d.checks {
			e.printf("%s  %s: %s\n", ck.Status, term.Escape(ck.Name), strings.ReplaceAll(term.Lines(ck.Detail), "\n", "\n      "))
			if ck.Fix != nil {
				e.printf("      fix: %s\n", ck.Fix)
			}
		}
		fmt.Fprintf(e.Stdout, "doctor: %d FAIL, %d WARN, %d PASS\n", counts[statusFail], counts[statusWarn], counts[statusPass])
	}
	if failed {
		return &exitCodeError{code: exitFailure}
	}
	return nil
}

const installFix = "run 'mcp-circuit-breaker install' (--scope local for this machine only, --scope user for every project)"

// checkBinary: every command the hooks name exists and is executable. A missing one is the
// silent failure: Claude Code runs nothing and allows the call.
func (d *doctor) checkBinary() {
	const name = "hook binary"
	ours := d.ours()
	if len(ours) == 0 {
		d.add(name, statusWarn, "no settings file runs '"+skill.Binary+" hook', so there is no hook binary to check", installFix)
		return
	}
	byProg := map[string][]string{}
	var progs []string
	fromPlugin := map[string]bool{}
	for _, o := range ours {
		p := d.hookProgram(o.h)
		fromPlugin[p] = fromPlugin[p] || o.file == d.plugin
		if _, ok := byProg[p]; !ok {
			progs = append(progs, p)
		}
		if !contains(byProg[p], o.file.display) {
			byProg[p] = append(byProg[p], o.file.display)
		}
	}
	status := statusPass
	var details, fixes []string
	worse := func(s string) {
		if s == statusFail || status == statusPass {
			status = s
		}
	}
	for _, p := range progs {
		by := "named by " + strings.Join(byProg[p], ", ")
		path := p
		if fromPlugin[p] {
			// The plugin runs the link in its data directory, never a PATH lookup that a
			// repository's settings could redirect.
			if !isExecutable(p) {
				worse(statusFail)
				details = append(details, fmt.Sprintf("%s (%s) is missing or not executable: the plugin's hooks cannot start it, so Claude Code lets every MCP call through (its SessionStart hook warns about this in every session)", p, by))
				fixes = append(fixes, "install the binaries (go install github.com/mcp-circuit-breaker/mcp-circuit-breaker/cmd/...@latest, or go install ./cmd/... in a clone), then run 'mcp-circuit-breaker install --plugin' once")
				continue
			}
			target, _ := filepath.EvalSymlinks(p)
			details = append(details, fmt.Sprintf("%s (%s) links to %s: the plugin's hooks run it from there, not from PATH", p, by, target))
			continue
		}
		if !filepath.IsAbs(p) {
			found, ok := lookPath(d.e.Getenv("PATH"), p)
			if !ok {
				worse(statusFail)
				details = append(details, fmt.Sprintf("%s (%s) is not on PATH: the hooks cannot start it, and Claude Code then lets every MCP call through silently", p, by))
				fixes = append(fixes, "run 'mcp-circuit-breaker install' from the installed binary so the hooks name its absolute path")
				continue
			}
			worse(statusWarn)
			details = append(details, fmt.Sprintf("%s (%s) is found on this shell's PATH at %s, but Claude Code starts hooks with its own PATH", p, by, found))
			fixes = append(fixes, "run 'mcp-circuit-breaker install' again so the hooks name an absolute path")
			path = found
		}
		fi, err := os.Stat(path)
		switch {
		case err != nil:
			worse(statusFail)
			details = append(details, fmt.Sprintf("%s (%s) does not exist: Claude Code treats a missing hook binary as a non-blocking error, so the gate is silently off", p, by))
			fixes = append(fixes, fmt.Sprintf("install the binary at %s, or run '%s install' from the installed binary to point the hooks at it", p, skill.Binary))
		case !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0:
			worse(statusFail)
			details = append(details, fmt.Sprintf("%s (%s) is not an executable file (mode %04o): the hooks cannot run it, and the gate is silently off", p, by, fi.Mode().Perm()))
			fixes = append(fixes, "chmod +x "+p)
		case d.e.inTempDir(path):
			worse(statusWarn)
			details = append(details, fmt.Sprintf("%s (%s) is in a temporary or build directory: when it is cleaned up the gate is silently off", p, by))
			fixes = append(fixes, fmt.Sprintf("install the binaries (go install ./cmd/...) and run '%s install' from them", skill.Binary))
		default:
			details = append(details, fmt.Sprintf("%s (%s) exists and is executable", p, by))
		}
	}
	d.add(name, status, strings.Join(details, "\n"), strings.Join(fixes, "; "))
}

// checkPath: the skill runs the bare command name through Bash.
func (d *doctor) checkPath() {
	const name = "PATH"
	if p, ok := lookPath(d.e.Getenv("PATH"), skill.Binary); ok {
		d.add(name, statusPass, fmt.Sprintf("%s is on PATH at %s (the skill runs it by name)", skill.Binary, p), "")
		return
	}
	d.add(name, statusWarn, fmt.Sprintf("%s is not on PATH: the skill's commands (%s status, fallbacks, probe, …) will fail with 'command not found'", skill.Binary, skill.Binary),
		"put the binary's directory on PATH (go install puts it in $(go env GOPATH)/bin)")
}

// lookPath finds an executable file named prog in the directories of path.
func lookPath(path, prog string) (string, bool) {
	if strings.ContainsRune(prog, filepath.Separator) {
		fi, err := os.Stat(prog)
		return prog, err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, prog)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}

var (
	// simpleMatcher is Claude Code's exact-name matcher syntax: names separated by | or ,.
	simpleMatcher = regexp.MustCompile(`^[A-Za-z0-9_\- ,|]+$`)
	// mcpSamples are tool names every MCP matcher of the gate must match.
	mcpSamples = []string{"mcp__a__b", "mcp__my-server__some_tool", "mcp__plugin_p_srv__t"}
	// sessionSamples are the SessionStart sources the gate must see.
	sessionSamples = []string{"startup", "resume", "clear", "compact"}
)

// matcherCovers reports whether a group's matcher matches every sample, the way Claude Code
// evaluates matchers (an exact name list, or an unanchored regular expression).
func matcherCovers(h settings.Handler, samples []string) bool {
	m := h.Matcher
	if !h.HasMatcher || m == "" || m == "*" {
		return true
	}
	if simpleMatcher.MatchString(m) {
		names := strings.FieldsFunc(m, func(r rune) bool { return r == '|' || r == ',' })
		for _, s := range samples {
			if !contains(names, s) {
				return false
			}
		}
		return true
	}
	re, err := regexp.Compile(m)
	if err != nil {
		return false
	}
	for _, s := range samples {
		if !re.MatchString(s) {
			return false
		}
	}
	return true
}

// checkHooks: the four events are wired, in which files, and nothing switches them off.
func (d *doctor) checkHooks() {
	const name = "hooks"
	var fails, warns, fixes []string
	for _, f := range d.files {
		if f.err != nil {
			fails = append(fails, fmt.Sprintf("%v: Claude Code ignores a settings file it cannot parse, hooks included", f.err))
			fixes = append(fixes, "fix "+f.display)
		}
	}
	// disableAllHooks takes the value of the highest-precedence file that sets it.
	for _, f := range d.files {
		if f.doc == nil {
			continue
		}
		if v, ok := f.doc.Root().Get("disableAllHooks").Bool(); ok {
			if v {
				fails = append(fails, fmt.Sprintf("disableAllHooks is true in %s: no hook runs", f.display))
				fixes = append(fixes, "remove disableAllHooks from "+f.display)
			}
			break
		}
	}
	ours := d.ours()
	if f := d.files[0]; f.doc != nil {
		if v, _ := f.doc.Root().Get("allowManagedHooksOnly").Bool(); v {
			inManaged := false
			for _, o := range ours {
				inManaged = inManaged || o.file == f
			}
			if !inManaged {
				fails = append(fails, fmt.Sprintf("allowManagedHooksOnly is true in %s: hooks from user, project and local settings do not run", f.display))
				fixes = append(fixes, "ask the administrator to add the hooks to "+f.display)
			}
		}
	}
	var wiredText []string
	var missing []string
	commands := map[string][]string{}
	var cmdOrder []string
	if d.plugin != nil {
		var also, scopes []string
		for _, o := range ours {
			if o.file == d.plugin || contains(also, o.file.display) {
				continue
			}
			also = append(also, o.file.display)
			if o.file.scope != "managed" && !contains(scopes, o.file.scope) {
				scopes = append(scopes, o.file.scope)
			}
		}
		if len(also) > 0 {
			warns = append(warns, fmt.Sprintf("the plugin %s and %s both wire the gate: Claude Code runs every handler, so every failure would be recorded twice", d.pluginID, strings.Join(also, ", ")))
			fix := "'claude plugin disable " + d.pluginID + "'"
			if len(scopes) > 0 {
				fix = fmt.Sprintf("'mcp-circuit-breaker uninstall --scope %s', or %s", strings.Join(scopes, "|"), fix)
			}
			fixes = append(fixes, "keep one: "+fix)
		}
	}
	for _, ev := range hookEvents {
		samples := mcpSamples
		if ev.matcher == "" {
			samples = sessionSamples
		}
		var in []string
		seen := false
		for _, o := range ours {
			if o.h.Event != ev.event {
				continue
			}
			seen = true
			key := o.h.Command + " " + strings.Join(o.h.Args, " ")
			if _, ok := commands[key]; !ok && o.file != d.plugin {
				cmdOrder = append(cmdOrder, key)
			}
			if !contains(commands[key], o.file.display) && o.file != d.plugin {
				commands[key] = append(commands[key], o.file.display)
			}
			if !matcherCovers(o.h, samples) {
				warns = append(warns, fmt.Sprintf("%s in %s has matcher %q, which does not cover %s", ev.event, o.file.display, o.h.Matcher, strings.Join(samples, ", ")))
				fixes = append(fixes, fmt.Sprintf("set the matcher of that %s group to %s", ev.event, matcherWanted(ev.event)))
				continue
			}
			if !contains(in, o.file.display) {
				in = append(in, o.file.display)
			}
		}
		if !seen {
			missing = append(missing, ev.event)
		}
		if len(in) == 0 {
			continue
		}
		wiredText = append(wiredText, ev.event+" in "+strings.Join(in, ", "))
	}
	if len(cmdOrder) > 1 {
		var parts []string
		for _, k := range cmdOrder {
			parts = append(parts, fmt.Sprintf("%q in %s", k, strings.Join(commands[k], ", ")))
		}
		warns = append(warns, "the hooks run different commands: "+strings.Join(parts, "; ")+"; Claude Code runs each of them, so every failure would be recorded more than once")
		fixes = append(fixes, "keep one install: 'mcp-circuit-breaker uninstall --scope …' the others")
	}
	if len(missing) > 0 {
		what := "not wired: " + strings.Join(missing, ", ")
		if len(missing) == len(hookEvents) {
			what = "no settings file wires " + strings.Join(missing, ", ") + ": MCP calls are neither gated nor recorded"
		}
		if len(missing) == len(hookEvents) && d.othersOnly() {
			// Claude Code is not found here and another agent is wired: nothing of Claude Code's
			// goes ungated.
			warns = append(warns, what+" in Claude Code, which is not found on this machine (see agents)")
			fixes = append(fixes, "if you use Claude Code too: "+installFix)
		} else {
			fails = append(fails, what)
			fixes = append(fixes, installFix)
		}
	}
	detail := strings.Join(append(append(fails, warns...), joinWired(wiredText)...), "\n")
	switch {
	case len(fails) > 0:
		d.add(name, statusFail, detail, strings.Join(fixes, "; "))
	case len(warns) > 0:
		d.add(name, statusWarn, detail, strings.Join(fixes, "; "))
	default:
		d.add(name, statusPass, detail, "")
	}
}

// joinWired shortens "A in f, B in f, …" to "A, B, … wired in f" when every event is in the same
// files.
func joinWired(parts []string) []string {
	if len(parts) == 0 {
		return nil
	}
	var events []string
	where := ""
	for _, p := range parts {
		ev, in, _ := strings.Cut(p, " in ")
		if where != "" && in != where {
			return []string{"wired: " + strings.Join(parts, "; ")}
		}
		where = in
		events = append(events, ev)
	}
	return []string{strings.Join(events, ", ") + " wired in " + where}
}

// checkSkill: the skill is installed and is this binary's version.
func (d *doctor) checkSkill() {
	const name = "skill"
	paths := []string{filepath.Join(d.dir, ".claude", "skills", skill.Binary, "SKILL.md")}
	if cfg, err := d.e.userConfigDir(); err == nil {
		paths = append(paths, filepath.Join(cfg, "skills", skill.Binary, "SKILL.md"))
	}
	var current, stale []string
	for _, p := range paths {
		data, err := safefile.ReadBounded(p, safefile.MaxConfigBytes)
		if err != nil {
			continue
		}
		if string(data) == skill.Text() {
			current = append(current, d.show(p))
		} else {
			stale = append(stale, d.show(p))
		}
	}
	switch {
	case d.plugin != nil && len(stale) == 0:
		d.add(name, statusPass, "provided by "+d.plugin.display, "")
	case len(stale) > 0:
		d.add(name, statusWarn, strings.Join(stale, ", ")+" differs from this binary's skill (an older version, or edited by hand)",
			"run 'mcp-circuit-breaker install' again (with the same --scope) to update it")
	case len(current) > 0:
		d.add(name, statusPass, "installed at "+strings.Join(current, ", "), "")
	default:
		d.add(name, statusWarn, "not installed in .claude/skills/ or ~/.claude/skills/: the model does not know the protocol, only the gate enforces it", installFix)
	}
}

// checkShadow: MCP_CIRCUIT_FAIL_OPEN in the environment the gate obeys. A project settings
// file's env cannot turn it on (checkProjectEnv says when one tries).
func (d *doctor) checkShadow() {
	const name = "shadow mode"
	if !d.e.shadow() {
		d.add(name, statusPass, "off: OPEN circuits are denied", "")
		return
	}
	d.add(name, statusWarn, message.ShadowWarning+" Set in: the environment.",
		"unset MCP_CIRCUIT_FAIL_OPEN once the would_block entries look right")
}

// checkProjectEnv: the project's own settings files set, in "env", variables that configure the
// gate (MCP_CIRCUIT_*) or that its trust decisions rest on (HOME, CLAUDE_CONFIG_DIR,
// XDG_CONFIG_HOME, PATH). Claude Code passes them to the hook, and a cloned repository carries
// them, so the gate ignores every one whose value it is given (internal/userenv).
func (d *doctor) checkProjectEnv() {
	const name = "project env"
	var found []string
	for _, f := range d.files {
		if f.scope != "local" && f.scope != "project" {
			continue
		}
		env, err := userenv.ReadEnv(f.path)
		if err != nil {
			continue
		}
		found = append(found, d.guardedIn(env, f.display)...)
	}
	// Qwen Code fills its environment from its project settings' "env" too (Claude Code's files
	// are among d.files above).
	for _, rel := range userenv.SettingsFiles {
		if filepath.Dir(rel) == ".claude" {
			continue
		}
		env, err := userenv.ReadProjectEnv(d.dir, rel)
		if err != nil {
			continue
		}
		found = append(found, d.guardedIn(env, filepath.ToSlash(rel))...)
	}
	// Gemini CLI and Qwen Code load a dotenv file into their environment: the first they find
	// from the project up to the root, each in its own order.
	for _, path := range userenv.DotenvFiles([]string{d.dir}, d.e.Getenv) {
		names, err := userenv.ReadDotenvNames(path)
		if err != nil {
			continue
		}
		rel := path
		if r, err := filepath.Rel(d.dir, path); err == nil && filepath.IsLocal(r) {
			rel = filepath.ToSlash(r)
		}
		for _, k := range names {
			if !userenv.Guarded(k) {
				continue
			}
			state := "not in this environment"
			if d.e.user != nil && slices.ContainsFunc(d.e.user.Ignored(), func(i userenv.Ignored) bool { return i.Name == k }) {
				state = "ignored here"
			}
			found = append(found, fmt.Sprintf("%s in %s (%s)", k, rel, state))
		}
	}
	if len(found) == 0 {
		return // nothing to flag; a PASS line would say nothing the shadow-mode line does not
	}
	d.add(name, statusWarn, "the project's settings set variables the gate reads; it ignores each one whose value it is given, as a cloned repository could set them: "+strings.Join(found, "; "),
		"remove them from the project's settings \"env\" (and its .env files); set what you mean in your own environment or in ~/.claude/settings.json \"env\"")
}

// checkStateFiles: the state directory and .claude are real directories and every state file is a
// regular file, not a link, FIFO or device (docs/security.md): a repository that commits one of those
// could make us write outside the project or hang, so every command refuses it.
func (d *doctor) checkStateFiles() {
	const name = "state files"
	var bad []string
	if err := safefile.CheckStateDir(d.sd); err != nil {
		bad = append(bad, err.Error())
	} else {
		for _, f := range []string{ledger.FileName, ".circuit_log.lock", states.SnapshotName, states.ProvisionalName, "policy.yaml",
			fallbacks.CatalogFile, toolcache.ToolsFile, toolcache.ToolsFile + ".lock", gate.PendingFile, gate.PendingLock} {
			p := filepath.Join(d.sd, f)
			if _, err := safefile.LstatRegular(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				bad = append(bad, err.Error())
			}
		}
	}
	if len(bad) > 0 {
		d.add(name, statusFail, strings.Join(bad, "; "),
			"remove what is named above (a cloned repository may have committed it); every command refuses it until then")
		return
	}
	d.add(name, statusPass, "the state directory and its files are real directories and regular files", "")
}

// checkLedger: the ledger parses; it returns the entries for the later checks.
func (d *doctor) checkLedger() []ledger.Entry {
	const name = "ledger"
	// The user's key checks the entries (never made here: doctor writes nothing).
	l := &ledger.Ledger{Dir: d.sd, Slow: yamlfile.Item, Provenance: ledger.UserProvenance(project.ProvenanceKeyPath(d.e.Getenv), false)}
	entries, problems, err := l.ReadFile()
	show := d.show(l.Path())
	switch {
	case err != nil:
		d.add(name, statusFail, err.Error(), "check the permissions of "+show)
	case len(problems) > 0:
		p := problems[0]
		st := statusWarn
		if len(entries) == 0 {
			st = statusFail
		}
		d.add(name, st, fmt.Sprintf("%s has %d problem(s), first at line %d: %s; those items are left out, every other entry counts and appends go on (the gate follows on_error only when nothing at all can be read)", show, len(problems), p.Line, p.Msg),
			"run 'mcp-circuit-breaker ledger verify' to see every problem, then 'mcp-circuit-breaker ledger repair' (it keeps a backup)")
	case entries == nil:
		d.add(name, statusPass, "no ledger yet ("+show+" is created on the first recorded failure)", "")
	default:
		var b states.Board
		b.Replay(entries)
		notClosed := 0
		for _, k := range b.Keys() {
			if b.Get(k).State != ledger.Closed {
				notClosed++
			}
		}
		d.add(name, statusPass, fmt.Sprintf("%s: %d entries, %d circuit(s) not CLOSED", show, len(entries), notClosed), "")
	}
	return entries
}

// checkProvenance: which entries this user's gate did not write (docs/security.md, provenance),
// and the key that tells them apart.
func (d *doctor) checkProvenance(entries []ledger.Entry) {
	const name = "provenance"
	keyPath := project.ProvenanceKeyPath(d.e.Getenv)
	keyNote := ""
	switch fi, err := os.Lstat(keyPath); {
	case keyPath == "":
		d.add(name, statusWarn, "no absolute HOME: there is no provenance key, so every ledger entry is unverified (never shared on the fleet board, never held until a person acts)",
			"run the gate with HOME set to your home directory")
		return
	case os.IsNotExist(err):
		keyNote = "no key yet at " + d.show(keyPath) + " (the gate makes it, 0600, at the first entry it writes)"
	case err != nil || !fi.Mode().IsRegular():
		d.add(name, statusFail, d.show(keyPath)+" is not a regular file: no entry can be signed or verified", "remove it; the gate makes a new key at its next entry")
		return
	case fi.Mode().Perm()&0o077 != 0:
		d.add(name, statusWarn, fmt.Sprintf("%s has mode %04o, so the gate does not use it (whoever else can read it, or a repository that committed it, could sign entries as you): every entry is unverified", d.show(keyPath), fi.Mode().Perm()),
			"if you made it yourself, chmod 600 "+d.show(keyPath)+"; otherwise remove it, and the gate makes a new key at its next entry")
		return
	case project.OutsideWorkTree(keyPath, d.dir) != nil:
		d.add(name, statusWarn, fmt.Sprintf("%s is refused: %v; every entry is unverified (never shared on the fleet board, never held until a person acts)", d.show(keyPath), project.OutsideWorkTree(keyPath, d.dir)),
			"run the gate with HOME set to a home directory outside the repository")
		return
	default:
		keyNote = "key " + d.show(keyPath)
	}
	var unverified []string
	n := 0
	for _, e := range entries {
		if e.Verified || e.Event == ledger.EventBlocked || e.Event == ledger.EventWouldBlock {
			continue
		}
		if n++; len(unverified) < 5 {
			unverified = append(unverified, fmt.Sprintf("line %d (%s)", e.Line, message.ShownKey(e.Tool)))
		}
	}
	if n == 0 {
		d.add(name, statusPass, "every entry was written by this user's gate; "+keyNote, "")
		return
	}
	var b states.Board
	b.Replay(entries)
	detail := fmt.Sprintf("%d entr(ies) carry no provenance of this user's gate (committed with the repository, merged in, written by hand, or by a version before provenance): %s",
		n, strings.Join(unverified, ", "))
	if n > len(unverified) {
		detail += ", …"
	}
	if w := message.UnverifiedWarning(&b); w != "" {
		detail += "\n" + w
	}
	d.add(name, statusWarn, detail+"\n"+keyNote,
		"if these are your own circuits, 'mcp-circuit-breaker reset TOOL' or 'trip TOOL --type TYPE' records them again as yours; if they came with the repository, remove the ledger from git ('git rm --cached "+project.StateDirName+"/"+ledger.FileName+"')")
}

// checkTracked: the state directory is tracked by git. Then a clone brings its ledger to
// everyone who checks it out: its entries are unverified for them, and what they record may be
// committed back.
func (d *doctor) checkTracked() {
	const name = "tracked by git"
	tracked, err := trackedByGit(d.dir, project.StateDirName)
	switch {
	case err != nil:
		return // not a repository, or no git: nothing to say
	case len(tracked) > 0:
		shown := tracked[:min(len(tracked), 3)]
		d.add(name, statusWarn, fmt.Sprintf("git tracks %s: whoever clones the repository gets these files; their entries are unverified for everyone but the one who wrote them", strings.Join(shown, ", ")),
			"git rm -r --cached "+project.StateDirName+" and add '"+project.StateDirName+"/' to .gitignore")
	default:
		d.add(name, statusPass, project.StateDirName+"/ is not tracked by git", "")
	}
}

// trackedByGit lists the files under rel that the git repository holding dir tracks. git runs
// with no shell and with every repository setting that runs a program turned off (core.fsmonitor,
// hooks): the repository is untrusted input. An error means it cannot tell (no git, no
// repository).
func trackedByGit(dir, rel string) ([]string, error) {
	git, err := exec.LookPath("git")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, git, "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "core.untrackedCache=false",
		"-C", dir, "ls-files", "-z", "--", rel)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0")
	out, err := cmd.Output()
	if err != nil {
		return nil, err
	}
	var files []string
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	return files, nil
}

// checkPermissions: the state directory is 0700 and the ledger 0600 (docs/ledger.md, docs/security.md).
func (d *doctor) checkPermissions() {
	const name = "permissions"
	fi, err := os.Lstat(d.sd)
	if err != nil || !fi.IsDir() {
		d.add(name, statusPass, "no state directory yet (it is created with mode 0700)", "")
		return
	}
	var bad, fixes []string
	if m := fi.Mode().Perm(); m != 0o700 {
		bad = append(bad, fmt.Sprintf("%s/ has mode %04o, want 0700", project.StateDirName, m))
		fixes = append(fixes, "chmod 700 "+d.show(d.sd))
	}
	lp := filepath.Join(d.sd, ledger.FileName)
	if fi, err := os.Lstat(lp); err == nil && fi.Mode().IsRegular() {
		if m := fi.Mode().Perm(); m != 0o600 {
			bad = append(bad, fmt.Sprintf("%s has mode %04o, want 0600 (it holds error texts of your tools)", d.show(lp), m))
			fixes = append(fixes, "chmod 600 "+d.show(lp))
		}
	}
	if len(bad) > 0 {
		d.add(name, statusWarn, strings.Join(bad, "; "), strings.Join(fixes, "; "))
		return
	}
	if _, err := os.Stat(lp); err != nil {
		d.add(name, statusPass, project.StateDirName+"/ is 0700 (no ledger yet)", "")
		return
	}
	d.add(name, statusPass, project.StateDirName+"/ is 0700, the ledger 0600", "")
}

func (d *doctor) checkGitignore() {
	const name = "gitignore"
	if project.Gitignored(d.dir) {
		d.add(name, statusPass, ".gitignore ignores "+project.StateDirName+"/", "")
		return
	}
	d.add(name, statusWarn, project.StateDirName+"/ is not git-ignored: the ledger (tool names, error texts) could be committed",
		"add the line '"+project.StateDirName+"/' to .gitignore, or run 'mcp-circuit-breaker install'")
}

func (d *doctor) checkPolicy() {
	const name = "policy"
	pol, err := d.project().Policy()
	switch {
	case err != nil:
		d.add(name, statusFail, err.Error(), "fix the lines named above; 'mcp-circuit-breaker policy show' prints the effective policy (the built-in values where the file is invalid)")
	case pol == nil:
		d.add(name, statusPass, "no policy.yaml: the built-in policy applies", "")
	case len(pol.CapWarnings()) > 0:
		d.add(name, statusWarn, d.show(filepath.Join(d.sd, "policy.yaml"))+": "+strings.Join(pol.CapWarnings(), "\n"),
			"raise cooldown_cap where the cooldown is set, or lower the cooldown; 'mcp-circuit-breaker policy show' prints what applies")
	default:
		d.add(name, statusPass, d.show(filepath.Join(d.sd, "policy.yaml"))+" is valid", "")
	}
}

func (d *doctor) checkFallbacks() {
	const name = "fallbacks"
	p := filepath.Join(d.sd, "fallbacks.yaml")
	data, err := d.project().ReadStateFile(p, safefile.MaxConfigBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d.add(name, statusPass, "no fallbacks.yaml: substitutes come from the tools/list cache and built-in tools", "")
	case err != nil:
		d.add(name, statusFail, err.Error(), "check the permissions of "+d.show(p))
	default:
		if _, err := yamlfile.Catalog(d.show(p), data); err != nil {
			d.add(name, statusFail, err.Error(), "fix the lines named above; 'mcp-circuit-breaker fallbacks TOOL' fails until then")
			return
		}
		d.add(name, statusPass, d.show(p)+" is valid", "")
	}
}

// checkMCPConfig: which local files define MCP servers. None is a warning, never "no MCP
// mounted": plugin, managed and claude.ai servers live in no local file.
func (d *doctor) checkMCPConfig() {
	const name = "mcp config"
	servers, err := d.project().Discover(nil)
	bySource := map[string][]string{}
	var sources []string
	for _, s := range servers {
		src := fmt.Sprintf("%s (%s)", d.show(s.Source), s.Scope)
		if _, ok := bySource[src]; !ok {
			sources = append(sources, src)
		}
		bySource[src] = append(bySource[src], s.Name)
	}
	var parts []string
	for _, src := range sources {
		parts = append(parts, strings.Join(bySource[src], ", ")+" from "+src)
	}
	switch {
	case err != nil:
		detail := fmt.Sprintf("%d server(s)", len(servers))
		if len(parts) > 0 {
			detail += ": " + strings.Join(parts, "; ")
		}
		d.add(name, statusWarn, detail+"\nproblems: "+err.Error(), "fix the files named above; Claude Code cannot load the servers they define either")
	case len(servers) == 0:
		d.add(name, statusWarn, "no project/user-scope config found (.mcp.json, ~/.claude.json): plugin, managed and claude.ai servers live in no local file, so this does not mean no MCP server is mounted; probe and fallback discovery cannot see them",
			"nothing to do if your servers come from plugins or claude.ai; otherwise add them with 'claude mcp add' or .mcp.json")
	default:
		d.add(name, statusPass, fmt.Sprintf("%d server(s): %s", len(servers), strings.Join(parts, "; ")), "")
	}
	d.checkCommands(servers)
}

// checkCommands flags stdio servers whose command does not exist or cannot be executed: Claude
// Code cannot start them either, and a probe trips their circuit at once (docs/probes.md).
func (d *doctor) checkCommands(servers []mcpconfig.Server) {
	const name = "mcp commands"
	var bad []string
	stdio := 0
	for _, s := range servers {
		if s.Transport != mcpconfig.TransportStdio {
			continue
		}
		stdio++
		if msg := probe.CommandProblem(s, d.dir); msg != "" {
			bad = append(bad, fmt.Sprintf("server %s (%s): %s", s.Name, d.show(s.Source), msg))
		}
	}
	switch {
	case len(bad) > 0:
		d.add(name, statusWarn, strings.Join(bad, "\n"), "install the command or fix \"command\" in the file named; until then Claude Code cannot start the server")
	case stdio > 0:
		d.add(name, statusPass, fmt.Sprintf("the command of each of %d stdio server(s) exists and is executable", stdio), "")
	}
}

// checkProxied: which servers of the project's .mcp.json run through the proxy (install --proxy,
// docs/proxy.md); said only when some do, and a WARN when one of them is also gated by our hooks,
// which count its failures a second time.
func (d *doctor) checkProxied() {
	var parts []string
	for _, t := range proxyTargets {
		if names, path, err := proxiedServers(d.dir, t, d.e.Getenv); err == nil && len(names) > 0 {
			shown := t.rel
			if shown == "" {
				shown = path
			}
			parts = append(parts, fmt.Sprintf("%s (%s)", strings.Join(names, ", "), shown))
		}
	}
	if len(parts) == 0 {
		return
	}
	detail := strings.Join(parts, "; ") + " run through 'mcp-circuit-breaker proxy'"
	if len(d.ours()) > 0 {
		d.add("proxy", statusWarn, detail+"; the hooks are wired too: Claude Code's calls are counted once (matched by their tool-use id), but an agent that sends no such id has each failure counted by both",
			"keep one for such agents: 'mcp-circuit-breaker uninstall --agent NAME' removes its hooks, 'mcp-circuit-breaker uninstall --proxy' the proxy")
		return
	}
	d.add("proxy", statusPass, detail, "")
}

// checkApprovals: which servers Claude Code has approved (docs/probes.md). A repository's server that is
// not approved is never started by a probe; with half_open: probe its trials are passive, which
// a person would otherwise find puzzling, so doctor says why and how to change it.
func (d *doctor) checkApprovals() {
	const name = "approvals"
	servers, _ := d.project().Discover(nil)
	pol, _ := d.project().Policy()
	var lines []string
	blocked := false
	for _, s := range servers {
		line := fmt.Sprintf("%s: %s", s.Name, s.Approval)
		if s.ApprovalNote != "" {
			line += " (" + s.ApprovalNote + ")"
		}
		if !s.Approval.Usable() {
			blocked = true
			if wantsProbe(pol, string(ledger.ServerKey(s.Sanitized))) {
				line += "; half_open: probe applies to it, but the gate starts no server Claude Code has not approved, so its trials are passive (the real call, which Claude Code gates, is the trial)"
			}
		}
		lines = append(lines, line)
	}
	switch {
	case len(servers) == 0:
		d.add(name, statusPass, "no server from a local file to approve", "")
	case blocked:
		d.add(name, statusWarn, strings.Join(lines, "\n"),
			"if you trust a server, approve it in Claude Code (accept it when claude asks, or add its name to enabledMcpjsonServers of this project in ~/.claude.json); until then no probe starts it")
	default:
		d.add(name, statusPass, strings.Join(lines, "; "), "")
	}
}

// wantsProbe reports whether the policy asks for probe trials for any failure type of key.
func wantsProbe(pol *states.Policy, key string) bool {
	for _, t := range append([]ledger.FailureType{""}, ledger.FailureTypes...) {
		if pol.For(key, t).HalfOpen == states.HalfOpenProbe {
			return true
		}
	}
	return false
}

// checkMultiServer is the skill's multi_server_failure escalation (docs/circuits.md): two or more server
// circuits OPEN with transport causes, tripped within one minute, point at the local machine.
func (d *doctor) checkMultiServer(entries []ledger.Entry) {
	const name = "multi-server failure"
	var b states.Board
	b.Replay(entries)
	var trips []states.Trip
	for _, k := range b.Keys() {
		ci := b.Get(k)
		if !ledger.Key(k).IsServer() || ci.State != ledger.Open || !states.IsTransportCause(ci.Cause) || ci.TrippedAt.IsZero() {
			continue
		}
		srv := ci.Server
		if srv == "" {
			srv = ledger.Key(k).Server()
		}
		trips = append(trips, states.Trip{Server: srv, At: ci.TrippedAt})
	}
	if group, at := states.MultiServer(trips); group != nil {
		d.add(name, statusWarn, fmt.Sprintf("servers %s opened with transport failures within one minute of %s: the likely cause is local (network down, VPN, laptop asleep), not the servers",
			strings.Join(group, ", "), at.UTC().Format(time.RFC3339)),
			"check the connection, then run 'mcp-circuit-breaker probe --all' (a healthy probe closes each circuit)")
		return
	}
	d.add(name, statusPass, "no two servers opened with transport failures within a minute", "")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// project is the project doctor examines.
func (d *doctor) project() *project.Project {
	return project.New(d.dir, d.e.Getenv, d.e.Stderr, yamlDecoder())
}

// checkAgents says which agents are wired and which are installed (a program of theirs on PATH, or
// their user directory present) but not protected. Claude Code's hooks are checked in detail by
// checkHooks; here every agent gets one line.
func (d *doctor) checkAgents() {
	const name = "agents"
	var lines, warns, fixes []string
	for _, a := range agent.All() {
		wired := d.agentWired(a)
		installed := d.agentInstalled(a)
		switch {
		case len(wired) > 0:
			lines = append(lines, fmt.Sprintf("%s: wired in %s", a.Title(), strings.Join(wired, ", ")))
		case len(installed) > 0 && a != agent.Claude:
			warns = append(warns, fmt.Sprintf("%s is installed (%s) but not wired: its MCP calls are neither gated nor recorded", a.Title(), strings.Join(installed, ", ")))
			if installable(a) {
				fixes = append(fixes, "run 'mcp-circuit-breaker install --agent "+a.Name()+"'")
			} else {
				fixes = append(fixes, "wire "+a.Title()+" by hand as docs/agents.md shows ("+notInstallable(a)+")")
			}
		case len(installed) > 0:
			lines = append(lines, fmt.Sprintf("%s: installed (%s), not wired (see hooks)", a.Title(), strings.Join(installed, ", ")))
		default:
			lines = append(lines, a.Title()+": not found")
		}
	}
	detail := strings.Join(append(warns, lines...), "\n")
	if len(warns) > 0 {
		d.add(name, statusWarn, detail, strings.Join(fixes, "; "))
		return
	}
	d.add(name, statusPass, detail, "")
}

// agentInstalled says why the agent looks installed: a program of its on PATH, its user directory.
func (d *doctor) agentInstalled(a agent.Codec) []string {
	var installed []string
	for _, b := range a.Setup().Binaries {
		if p, ok := lookPath(d.e.Getenv("PATH"), b); ok {
			installed = append(installed, d.show(p)+" on PATH")
			break
		}
	}
	if cfg, err := d.e.agentConfigDir(a); err == nil {
		if fi, err := os.Stat(cfg); err == nil && fi.IsDir() {
			installed = append(installed, d.show(cfg)+" exists")
		}
	}
	return installed
}

// othersOnly reports whether Claude Code looks absent while another agent is wired: then its
// unwired hooks are a warning, not a failure.
func (d *doctor) othersOnly() bool {
	if len(d.agentInstalled(agent.Claude)) > 0 {
		return false
	}
	for _, a := range agent.All() {
		if a != agent.Claude && len(d.agentWired(a)) > 0 {
			return true
		}
	}
	return false
}

// agentWired lists the files that wire every hook event of the agent to the gate.
func (d *doctor) agentWired(a agent.Codec) []string {
	if a == agent.Claude {
		var in []string
		for _, ev := range hookEvents {
			var files []string
			for _, o := range d.ours() {
				if o.h.Event == ev.event && !contains(files, o.file.display) {
					files = append(files, o.file.display)
				}
			}
			if len(files) == 0 {
				return nil
			}
			for _, f := range files {
				if !contains(in, f) {
					in = append(in, f)
				}
			}
		}
		return in
	}
	var in []string
	ours := oursFor(a.Name())
	for _, f := range d.hookFiles(a) {
		path, data := f.path, f.data
		if shellFormat(a.Setup().Format) || pluginFormat(a.Setup().Format) {
			if shellWired(a, path, data) {
				in = append(in, d.show(path))
			}
			continue
		}
		if !installable(a) && a.Setup().Format != agent.FormatKiroAgent {
			continue
		}
		doc, err := settings.Parse(path, data)
		if err != nil {
			continue
		}
		handlers := doc.Handlers()
		if flat, _, _ := flatFormat(a); flat {
			handlers = doc.FlatHandlers()
		}
		all := true
		for _, h := range a.Setup().Hooks {
			found := false
			for _, dh := range handlers {
				found = found || (dh.Event == h.Event && ours(dh))
			}
			all = all && found
		}
		if all {
			in = append(in, d.show(path))
		}
	}
	return in
}

// guardedIn lists the variables env (the "env" of the project file shown as file) sets that the
// gate does not take from a project, each with whether this environment ignores it.
func (d *doctor) guardedIn(env map[string]string, file string) []string {
	var names []string
	for k := range env {
		if userenv.Guarded(k) {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	var found []string
	for _, k := range names {
		state := "not in this environment"
		if d.e.user != nil && slices.ContainsFunc(d.e.user.Ignored(), func(i userenv.Ignored) bool { return i.Name == k }) {
			state = "ignored here"
		}
		found = append(found, fmt.Sprintf("%s=%s in \"env\" of %s (%s)", k, redact.QuoteData(env[k], 60), file, state))
	}
	return found
}
