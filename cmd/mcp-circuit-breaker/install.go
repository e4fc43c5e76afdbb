package main

// install and uninstall wire the gate into Claude Code (docs/cli.md): the four hook events in one
// settings file, the skill, and the git-ignore line of the state directory. Every file is planned
// first and written only when all of them could be planned, so a settings file that is not valid
// JSON stops the command before anything changes; --dry-run prints the plan as a unified diff.

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/agent"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/safefile"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/settings"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/term"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/skill"
)

// hookTimeout is the handler timeout in seconds. The gate bounds itself at 2.5 s (docs/hook.md); the
// margin covers a cold process start. Claude Code's default, 600 s, would let a stuck gate stall
// every MCP call for ten minutes.
const hookTimeout = 5

// mcpMatcher matches every MCP tool name (a JavaScript RegExp tested unanchored).
const mcpMatcher = "mcp__.*"

// hookEvents are the events the gate handles, with their matchers ("" for none).
var hookEvents = []struct{ event, matcher string }{
	{"PreToolUse", mcpMatcher},
	{"PostToolUse", mcpMatcher},
	{"PostToolUseFailure", mcpMatcher},
	{"SessionStart", ""},
}

// hookArgs are the handler's exec-form arguments.
var hookArgs = []string{"hook"}

// agentSpecs are the handlers install wires for an agent whose hook file has Claude Code's shape.
func agentSpecs(c agent.Codec, command string) []settings.Spec {
	set := c.Setup()
	specs := make([]settings.Spec, len(set.Hooks))
	for i, h := range set.Hooks {
		specs[i] = settings.Spec{Event: h.Event, Matcher: h.Matcher, Command: command, Args: agent.HookArgs(c.Name()), Timeout: set.Timeout}
	}
	return specs
}

// isOurs reports whether a handler runs this gate for Claude Code: a command named
// mcp-circuit-breaker (any directory) with the single argument "hook" (or "hook --agent claude"),
// in exec form or as a shell command line.
func isOurs(h settings.Handler) bool { return oursFor(agent.Claude.Name())(h) }

// oursFor is isOurs for the agent called name: its handlers pass "hook --agent NAME".
func oursFor(name string) func(settings.Handler) bool {
	forms := [][]string{agent.HookArgs(name)}
	if name == agent.Claude.Name() {
		forms = append(forms, []string{"hook", "--agent", name})
	}
	return func(h settings.Handler) bool {
		if h.Type != "command" && h.Type != "" {
			return false
		}
		for _, args := range forms {
			if h.Args != nil {
				if isBinary(h.Command) && slices.Equal(h.Args, args) {
					return true
				}
				continue
			}
			prog, ok := strings.CutSuffix(strings.Join(strings.Fields(h.Command), " "), " "+strings.Join(args, " "))
			if ok && isBinary(strings.Trim(strings.TrimSpace(prog), `"'`)) {
				return true
			}
		}
		return false
	}
}

// leanBinary is the hook-only binary (cmd/mcp-circuit-breaker-hook).
const leanBinary = skill.Binary + "-hook"

func isBinary(path string) bool {
	base := strings.TrimSuffix(filepath.Base(path), ".exe")
	return base == skill.Binary || base == leanBinary
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

func scopeFlag() cli.Flag {
	return &cli.StringFlag{Name: "scope", Value: "project",
		Usage: "project (.claude/settings.json, shared), local (.claude/settings.local.json, this machine) or user (~/.claude/settings.json, every project)"}
}

func dryRunFlag() cli.Flag {
	return &cli.BoolFlag{Name: "dry-run", Usage: "print the changes as a unified diff and change nothing"}
}

func installCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:  "install",
		Usage: "wire the hooks into Claude Code's settings, install the skill and git-ignore the state directory",
		Description: "Adds PreToolUse, PostToolUse and PostToolUseFailure handlers (matcher mcp__.*) and a SessionStart\n" +
			"handler that run this binary (exec form: command + args [\"hook\"], timeout 5 s) to the settings file\n" +
			"of the scope, keeping everything else in it; writes the skill to .claude/skills/mcp-circuit-breaker/;\n" +
			"adds .claude/mcp_circuit/ to .gitignore and creates it (mode 0700). Running it again changes nothing,\n" +
			"or updates the hook command in place when the binary moved.",
		Flags: []cli.Flag{
			scopeFlag(), dryRunFlag(), agentFlag(),
			&cli.StringFlag{Name: "command", Usage: "the binary the hooks run (default: this binary, symlinks resolved); it must be named mcp-circuit-breaker"},
			&cli.BoolFlag{Name: "plugin", Usage: "only link the gate binary into the Claude Code plugin's data directory, where the plugin's hooks run it (docs/plugin.md); no settings file or skill is changed"},
			&cli.BoolFlag{Name: "statusline", Usage: "also make 'statusline' Claude Code's status line (the open MCP circuits), unless a settings file has a status line already: then it is kept, and install says how to show both"},
			proxyFlag(),
			dirFlag(),
		},
		Action: action(e, parseInstall, runInstall),
	}
}

// proxyFlag is install's and uninstall's --proxy: the project's MCP servers through the proxy
// instead of the hooks (docs/proxy.md).
func proxyFlag() cli.Flag {
	return &cli.BoolFlag{Name: "proxy", Usage: "instead of the hooks, make every stdio server of the client's MCP configuration (claude: .mcp.json, cursor: .cursor/mcp.json, gemini: .gemini/settings.json, vscode: .vscode/mcp.json; claude-desktop, windsurf, zed: the user's file) run through 'mcp-circuit-breaker proxy' (uninstall --proxy restores the file)"}
}

func agentFlag() cli.Flag {
	return &cli.StringSliceFlag{Name: "agent", Value: cli.NewStringSlice(agent.Claude.Name()),
		Usage: "the agent to wire, repeatable: " + strings.Join(agent.Names(), ", ")}
}

// installOptions are the options of install and uninstall.
type installOptions struct {
	globalOptions
	// Agents are the --agent codecs, in the order given, without repeats.
	Agents []agent.Codec
	// Scope is project, local or user.
	Scope string
	// Command is --command, the binary the hooks run; "" for this one.
	Command string
	DryRun  bool
	// Plugin is --plugin: link the binary for the Claude Code plugin instead.
	Plugin bool
	// StatusLine is --statusline: wire Claude Code's status line too, where the user has none.
	StatusLine bool
	// Proxy is --proxy: the project's MCP servers through the proxy, not the hooks.
	Proxy bool
	// proxyTarget is the client file --proxy edits.
	proxyTarget proxyTarget
}

func parseInstall(c *cli.Context) (*installOptions, error) {
	g, err := parseGlobal(c)
	if err != nil {
		return nil, err
	}
	opts := &installOptions{globalOptions: g, Scope: c.String("scope"), Command: c.String("command"), DryRun: c.Bool("dry-run"), Plugin: c.Bool("plugin"),
		StatusLine: c.Bool("statusline"), Proxy: c.Bool("proxy")}
	if opts.Proxy {
		// The clients --proxy edits are not all agents (Claude Desktop, Zed run no hooks).
		if err := parseInstallProxy(opts, c.StringSlice("agent")); err != nil {
			return nil, err
		}
		return opts, nil
	}
	for _, name := range c.StringSlice("agent") {
		a, err := agent.Lookup(name)
		if err != nil {
			return nil, usagef("--agent: %v", err)
		}
		if !slices.Contains(opts.Agents, a) {
			opts.Agents = append(opts.Agents, a)
		}
	}
	if opts.StatusLine && (!slices.Contains(opts.Agents, agent.Claude) || opts.Plugin) {
		return nil, usagef("--statusline wires Claude Code's status line: give it with --agent claude (the default), without --plugin")
	}
	for _, a := range opts.Agents {
		if !installable(a) {
			return nil, usagef("--agent %s: %s; docs/agents.md shows how to wire it by hand", a.Name(), notInstallable(a))
		}
		if _, ok := scopeOf(a, opts.Scope); !ok {
			var names []string
			for _, sc := range a.Setup().Scopes {
				names = append(names, sc.Name)
			}
			list := strings.Join(names, " or ")
			if n := len(names); n > 2 {
				list = strings.Join(names[:n-1], ", ") + " or " + names[n-1]
			}
			msg := fmt.Sprintf("--scope %q is not %s", opts.Scope, list)
			if a != agent.Claude {
				msg += " (the scopes of " + a.Title() + ")"
			}
			return nil, usagef("%s", msg)
		}

	}
	return opts, noArgs(c)
}

func uninstallCommand(e *Env) *cli.Command {
	return &cli.Command{
		Name:   "uninstall",
		Usage:  "remove the hooks and the skill installed by install (the ledger is kept)",
		Flags:  []cli.Flag{scopeFlag(), dryRunFlag(), agentFlag(), proxyFlag(), dirFlag()},
		Action: action(e, parseInstall, runUninstall),
	}
}

// scopePaths are the files of one install scope.
type scopePaths struct {
	scope    string
	settings string
	skill    string
	// dir is the project directory; "" for the user scope, which belongs to no project.
	dir  string
	home string
}

// scopeOf is the agent's scope called name.
func scopeOf(a agent.Codec, name string) (agent.Scope, bool) {
	for _, sc := range a.Setup().Scopes {
		if sc.Name == name {
			return sc, true
		}
	}
	return agent.Scope{}, false
}

// agentConfigDir is an agent's user directory: $ConfigDirEnv, else HomeDir under $HOME.
func (e *Env) agentConfigDir(a agent.Codec) (string, error) {
	set := a.Setup()
	if a == agent.Claude {
		return e.userConfigDir()
	}
	if set.ConfigDirEnv != "" {
		if d := e.Getenv(set.ConfigDirEnv); d != "" {
			return filepath.Abs(d)
		}
	}
	if h := e.Getenv("HOME"); h != "" && set.HomeDir != "" {
		return filepath.Join(h, filepath.FromSlash(set.HomeDir)), nil
	}
	return "", withHint(fmt.Errorf("cannot find %s's user directory: HOME is not set", a.Title()), "set HOME")
}

// agentPaths are the files of one install scope for an agent other than Claude Code: its hook file
// only (the skill is Claude Code's).
func (e *Env) agentPaths(opts *installOptions, a agent.Codec) (scopePaths, error) {
	if a == agent.Claude {
		return e.scopePaths(opts)
	}
	p := scopePaths{scope: opts.Scope, home: e.Getenv("HOME")}
	sc, _ := scopeOf(a, opts.Scope)
	base := ""
	if sc.InConfigDir {
		cfg, err := e.agentConfigDir(a)
		if err != nil {
			return p, err
		}
		base = cfg
	} else {
		dir, err := e.projectDir(opts.Dir)
		if err != nil {
			return p, err
		}
		p.dir, base = dir, dir
	}
	p.settings = filepath.Join(base, filepath.FromSlash(sc.Path))
	return p, nil
}

func (e *Env) scopePaths(opts *installOptions) (scopePaths, error) {
	p := scopePaths{scope: opts.Scope, home: e.Getenv("HOME")}
	switch p.scope {
	case "project", "local":
		dir, err := e.projectDir(opts.Dir)
		if err != nil {
			return p, err
		}
		p.dir = dir
		name := "settings.json"
		if p.scope == "local" {
			name = "settings.local.json"
		}
		p.settings = filepath.Join(dir, ".claude", name)
		p.skill = filepath.Join(dir, ".claude", "skills", skill.Binary, "SKILL.md")
	case "user":
		cfg, err := e.userConfigDir()
		if err != nil {
			return p, err
		}
		p.settings = filepath.Join(cfg, "settings.json")
		p.skill = filepath.Join(cfg, "skills", skill.Binary, "SKILL.md")
	default:
		return p, usagef("--scope %q is not project, local or user", p.scope)
	}
	return p, nil
}

// userConfigDir is Claude Code's user directory: $CLAUDE_CONFIG_DIR, else ~/.claude.
func (e *Env) userConfigDir() (string, error) {
	if d := e.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return filepath.Abs(d)
	}
	if h := e.Getenv("HOME"); h != "" {
		return filepath.Join(h, ".claude"), nil
	}
	return "", withHint(errors.New("cannot find the user's Claude Code directory: neither CLAUDE_CONFIG_DIR nor HOME is set"),
		"set HOME, or CLAUDE_CONFIG_DIR to the directory that holds settings.json")
}

// show names path for output: relative to the project directory inside it, ~/… inside HOME.
func (p scopePaths) show(path string) string { return showPath(p.dir, p.home, path) }

func showPath(dir, home, path string) string {
	if dir != "" {
		if r, err := filepath.Rel(dir, path); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return r
		}
	}
	if home != "" {
		if r, err := filepath.Rel(home, path); err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return "~/" + r
		}
	}
	return path
}

// plan is one file install or uninstall would change.
type plan struct {
	path    string // the file written (a symlink already resolved)
	display string
	old     []byte
	new     []byte
	exists  bool
	mode    fs.FileMode
	remove  bool
	// prune is how many parent directories a removal also removes when it leaves them empty.
	prune int
	// done is what the output says about the file.
	done string
	// ours marks a file whose whole text is ours (the skill): a dry run names it and counts its
	// lines instead of printing all of it as a diff.
	ours bool
}

func (p *plan) changes() bool { return p.remove || !p.exists || string(p.old) != string(p.new) }

// writeWhole plans b as the file's whole text, ours, and says whether it is written anew, updated
// (in the words updated) or unchanged.
func (p *plan) writeWhole(b []byte, updated string) {
	p.new, p.ours = b, true
	switch {
	case !p.exists:
		p.done = "written"
	case p.changes():
		p.done = updated
	default:
		p.done = "unchanged"
	}
}

// readPlan reads name (following a symlink to its target) for a plan. dir is the project the file
// belongs to ("" for a user scope): a file there that is a link, or lies under a linked
// directory, whose target is outside the project is refused, since a cloned repository can commit
// .claude/skills/…/SKILL.md or .gitignore as a link to ~/.bashrc, which install would overwrite.
func readPlan(name, display string, newMode fs.FileMode, dir string) (*plan, error) {
	if dir != "" {
		if err := insideProject(dir, name); err != nil {
			return nil, withHint(fmt.Errorf("%s: %w", display, err), "remove the link (a repository may have committed it) and run the command again; nothing was changed")
		}
	}
	path, mode, exists, err := settings.Target(name, newMode)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", display, err)
	}
	p := &plan{path: path, display: display, exists: exists, mode: mode}
	if exists {
		if p.old, err = safefile.ReadBounded(path, safefile.MaxConfigBytes); err != nil {
			return nil, err
		}
		p.new = p.old
	}
	if path != name {
		p.display = fmt.Sprintf("%s (→ %s)", display, path)
	}
	return p, nil
}

// insideProject fails when name, with every link on its way resolved (its own, or a linked
// directory above it), is not inside dir. A part of name that does not exist yet is judged by the
// nearest part that does.
func insideProject(dir, name string) error {
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	p := name
	for {
		if _, err := os.Lstat(p); err == nil {
			break
		}
		up := filepath.Dir(p)
		if up == p {
			return nil
		}
		p = up
	}
	real, err := filepath.EvalSymlinks(p)
	if err != nil {
		return fmt.Errorf("%s is a link whose target cannot be resolved: %w", p, err)
	}
	if r, err := filepath.Rel(root, real); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return fmt.Errorf("%s leads outside the project, to %s; refusing to write through it", p, real)
	}
	return nil
}

// diff is the plan as a unified diff, or for a file of ours one line saying what would happen.
func (p *plan) diff() string {
	if p.ours && !p.remove && p.changes() {
		if !p.exists {
			return fmt.Sprintf("create %s (%d lines)\n", p.display, lines(p.new))
		}
		return fmt.Sprintf("update %s to this binary's version (%d lines, was %d)\n", p.display, lines(p.new), lines(p.old))
	}
	from, to := p.display, p.display
	if !p.exists {
		from = settings.NoFile
	}
	if p.remove {
		to = settings.NoFile
		return settings.Unified(from, to, p.old, nil)
	}
	return settings.Unified(from, to, p.old, p.new)
}

// lines counts the lines of a text, a last one without a newline included.
func lines(b []byte) int {
	n := bytes.Count(b, []byte("\n"))
	if len(b) > 0 && b[len(b)-1] != '\n' {
		n++
	}
	return n
}

func (p *plan) apply() error {
	if p.remove {
		if err := os.Remove(p.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		for dir, i := filepath.Dir(p.path), 0; i < p.prune && os.Remove(dir) == nil; i++ {
			dir = filepath.Dir(dir)
		}
		return nil
	}
	if !p.changes() {
		return nil
	}
	if err := settings.WriteFile(p.path, p.new, p.mode); err != nil {
		return fmt.Errorf("write %s: %w", p.display, err)
	}
	return nil
}

// hookBinary returns the absolute path the hooks will run, with warnings about it.
func (e *Env) hookBinary(opts *installOptions) (string, []string, error) {
	var warns []string
	path := opts.Command
	notNamed := func(path string) error {
		return withHint(fmt.Errorf("the hook command %s is not named %s or %s: uninstall and doctor find the hooks by those names", path, skill.Binary, leanBinary),
			"rename the binary, or pass --command with a path of one of those names")
	}
	if path != "" {
		if !isBinary(path) {
			return "", nil, notNamed(path)
		}
		abs, err := filepath.Abs(path)
		if err != nil {
			return "", nil, err
		}
		fi, err := os.Stat(abs)
		if err != nil {
			return "", nil, withHint(fmt.Errorf("--command %s: %w", path, err), "pass the path of an installed mcp-circuit-breaker binary")
		}
		if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			return "", nil, withHint(fmt.Errorf("--command %s is not an executable file", abs), "run: chmod +x "+abs)
		}
		path = abs
	} else {
		exe, err := os.Executable()
		if err != nil {
			return "", nil, withHint(fmt.Errorf("find this binary's path: %w", err), "pass it with --command PATH")
		}
		if r, err := filepath.EvalSymlinks(exe); err == nil {
			exe = r
		}
		path = exe
		// The lean gate binary next to this one starts about three times as fast (docs/performance.md):
		// the hooks run it when it is there.
		if lean := filepath.Join(filepath.Dir(exe), leanBinary); isExecutable(lean) {
			path = lean
		} else {
			warns = append(warns, fmt.Sprintf("%s is not installed next to %s: the hooks run '%s hook', the same gate at about three times the start-up cost; install both with 'go install ./cmd/...'", leanBinary, exe, exe))
		}
		if !filepath.IsAbs(path) {
			warns = append(warns, fmt.Sprintf("the hook command %s is not an absolute path: Claude Code resolves it with its own PATH, which may differ from your shell's; pass --command with an absolute path", path))
		}
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm()&0o111 == 0 {
			warns = append(warns, fmt.Sprintf("the hook command %s is not an executable file: a hook whose binary cannot run is skipped, which silently disables the gate", path))
		}
	}
	if !isBinary(path) {
		return "", nil, notNamed(path)
	}
	if e.inTempDir(path) {
		warns = append(warns, fmt.Sprintf("the hook command %s is in a temporary or build directory ('go run' or 'go test' binary): when it disappears Claude Code treats the missing binary as a non-blocking error and the gate is silently off. Install the binaries (go install ./cmd/...) and run install from them, or pass --command PATH", path))
	}
	return path, warns, nil
}

// inTempDir reports whether path lies in a directory that is cleaned up behind the user's back.
func (e *Env) inTempDir(path string) bool {
	for _, part := range strings.Split(filepath.ToSlash(path), "/") {
		if strings.HasPrefix(part, "go-build") {
			return true
		}
	}
	roots := []string{"/tmp", "/var/tmp", "/private/tmp", "/var/folders", "/private/var/folders", "/dev/shm"}
	if t := e.Getenv("TMPDIR"); t != "" {
		roots = append(roots, filepath.Clean(t))
	}
	for _, r := range roots {
		if path == r || strings.HasPrefix(path, r+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// localIgnoreLine matches .gitignore lines that keep .claude/settings.local.json out of git.
var localIgnoreLine = regexp.MustCompile(`^/?(\.claude/settings\.local\.json|(\*\*/)?settings\.local\.json|\*\.local\.json|\.claude/?|\.claude/\*\*?)$`)

func lineIgnored(projectDir string, re *regexp.Regexp) bool {
	data, err := safefile.ReadBounded(filepath.Join(projectDir, ".gitignore"), safefile.MaxConfigBytes)
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(data), "\n") {
		if re.MatchString(strings.TrimSpace(l)) {
			return true
		}
	}
	return false
}

// eachAgent calls fn with each agent's paths, in the order the agents were given, and returns the
// scope the command's project-wide steps work in: the first agent's that names a project
// directory, else the last one's.
func (e *Env) eachAgent(opts *installOptions, fn func(a agent.Codec, ap scopePaths) error) (scopePaths, error) {
	var sp scopePaths
	for i, a := range opts.Agents {
		ap, err := e.agentPaths(opts, a)
		if err != nil {
			return sp, err
		}
		if i == 0 || sp.dir == "" {
			sp = ap
		}
		if err := fn(a, ap); err != nil {
			return sp, err
		}
	}
	return sp, nil
}

func runInstall(opts *installOptions, e *Env) error {
	if opts.Proxy {
		return runInstallProxy(opts, e)
	}
	if opts.Plugin {
		return runInstallPlugin(opts, e)
	}
	command, warns, err := e.hookBinary(opts)
	if err != nil {
		return err
	}
	for _, w := range warns {
		e.warnf("%s", w)
	}
	// Each agent's hook file (and Claude Code's skill), in the order the agents were given.
	var plans, hookFiles []*plan
	statusLine := ""
	sp, err := e.eachAgent(opts, func(a agent.Codec, ap scopePaths) error {
		sf, err := e.planHooks(ap, a, command)
		if err != nil {
			return err
		}
		if opts.StatusLine && a == agent.Claude {
			if statusLine, err = e.planStatusLine(sf, ap, command); err != nil {
				return err
			}
		}
		plans, hookFiles = append(plans, sf), append(hookFiles, sf)
		if a.Setup().Format == agent.FormatCodexHooks {
			// Codex skips an untrusted hook without a word: trust ours by hash, as its review would.
			cfg, err := e.agentConfigDir(a)
			if err != nil {
				return err
			}
			tp, err := e.codexTrustPlan(cfg, ap.settings, sf.new, ap.show)
			if err != nil {
				return err
			}
			plans = append(plans, tp)
		}
		if a.Setup().Skill {
			kf, err := readPlan(ap.skill, ap.show(ap.skill), 0o644, ap.dir)
			if err != nil {
				return err
			}
			kf.writeWhole([]byte(skill.Text()), "updated to this binary's version")
			plans = append(plans, kf)
		}
		return nil
	})
	if err != nil {
		return err
	}

	// The project's .gitignore and state directory; a user-scope install belongs to no project.
	var stateDir string
	var stateMissing bool
	if sp.dir != "" {
		var add []string
		if !project.Gitignored(sp.dir) {
			add = append(add, project.StateDirName+"/")
		}
		if sp.scope == "local" && slices.Contains(opts.Agents, agent.Claude) && !lineIgnored(sp.dir, localIgnoreLine) {
			add = append(add, ".claude/settings.local.json")
		}
		gi, err := readPlan(filepath.Join(sp.dir, ".gitignore"), ".gitignore", 0o644, sp.dir)
		if err != nil {
			return err
		}
		if len(add) > 0 {
			buf := append([]byte{}, gi.old...)
			if len(buf) > 0 && buf[len(buf)-1] != '\n' {
				buf = append(buf, '\n')
			}
			gi.new = append(buf, strings.Join(add, "\n")+"\n"...)
			gi.done = "added " + strings.Join(add, ", ")
		} else {
			gi.done = "unchanged (already ignores " + project.StateDirName + "/)"
		}
		plans = append(plans, gi)
		stateDir = filepath.Join(sp.dir, project.StateDirName)
		// A repository may commit .claude or .claude/mcp_circuit as a link to elsewhere: install
		// writes nothing through one (docs/security.md).
		if err := safefile.CheckStateDir(stateDir); err != nil {
			return withHint(err, "remove the link and run install again; nothing was changed")
		}
		_, err = os.Lstat(stateDir)
		stateMissing = errors.Is(err, fs.ErrNotExist)
	}

	if opts.DryRun {
		return e.printPlan(plans, func() {
			if stateMissing {
				fmt.Fprintf(e.Stdout, "would create %s/ (mode 0700)\n", project.StateDirName)
			}
			if statusLine != "" {
				fmt.Fprintln(e.Stdout, statusLine)
			}
		})
	}

	// Write the hooks last: a failure before leaves no gate wired to a half-done install.
	if stateMissing {
		if _, err := (&ledger.Ledger{Dir: stateDir}).EnsureDir(); err != nil {
			return err
		}
	}
	for i := len(plans) - 1; i >= 0; i-- {
		if err := plans[i].apply(); err != nil {
			return err
		}
	}
	fmt.Fprintf(e.Stdout, "%s scope: %s\n", sp.scope, scopeWhere(sp))
	for _, p := range plans {
		fmt.Fprintf(e.Stdout, "  %s: %s\n", p.display, p.done)
	}
	if stateDir != "" {
		if stateMissing {
			fmt.Fprintf(e.Stdout, "  %s/: created (mode 0700)\n", project.StateDirName)
		} else {
			fmt.Fprintf(e.Stdout, "  %s/: exists\n", project.StateDirName)
		}
	}
	for _, a := range opts.Agents {
		set := a.Setup()
		if a == agent.Claude {
			fmt.Fprintf(e.Stdout, "hook command: %s %s (timeout %d s)\n", command, strings.Join(hookArgs, " "), hookTimeout)
			if statusLine != "" {
				fmt.Fprintln(e.Stdout, statusLine)
			}
			continue
		}
		timeout := "no timeout: the agent's own default"
		if set.Timeout != 0 {
			timeout = fmt.Sprintf("timeout %d %s", set.Timeout, set.TimeoutUnit)
		}
		if shellFormat(set.Format) {
			event := ""
			if eventCommands(a) {
				event = "<event>"
			}
			fmt.Fprintf(e.Stdout, "hook command for %s: %s (%s)\n", a.Title(), agentHookCommand(command, a.Name(), event), timeout)
			continue
		}
		fmt.Fprintf(e.Stdout, "hook command for %s: %s %s (%s)\n", a.Title(), command, strings.Join(agent.HookArgs(a.Name()), " "), timeout)
	}
	for _, a := range opts.Agents {
		if ap, err := e.agentPaths(opts, a); err == nil {
			cfg, _ := e.agentConfigDir(a)
			e.agentTrustHint(a, ap, cfg)
		}
	}
	if sp.scope == "user" {
		fmt.Fprintf(e.Stdout, "each project's state lives in its own .claude/mcp_circuit/, created on first use: git-ignore it there (or in your global excludes file)\n")
	}
	fmt.Fprintf(e.Stdout, "check it with: %s doctor\n", skill.Binary)
	for _, sf := range hookFiles {
		if sp.scope == "project" && sf.changes() {
			e.hintf("%s is usually committed, and the hook names %s, a path on this machine: teammates need the binary at the same path, or install with --scope local", sf.display, command)
		}
	}
	return nil
}

// installable reports whether install can edit the agent's hook files: planHooks and planUnhook
// handle its format.
func installable(a agent.Codec) bool {
	switch a.Setup().Format {
	case agent.FormatClaudeSettings, agent.FormatCursorHooks, agent.FormatWindsurfHooks, agent.FormatCrushHooks:
		return true
	}
	return shellFormat(a.Setup().Format) || pluginFormat(a.Setup().Format)
}

// notInstallable says why install does not wire the agent.
func notInstallable(a agent.Codec) string {
	if a.Setup().Format == agent.FormatKiroAgent {
		return "its hooks go in one of your Kiro agents' files (.kiro/agents/<agent>.json), and which agent you run is yours to choose, so install does not pick one"
	}
	return fmt.Sprintf("install cannot edit its hook files (format %q) yet", a.Setup().Format)
}

// flatFormat reports whether the agent's hook file is flat (event → handlers with a shell command
// line), and what a new file and a new handler of it also hold.
func flatFormat(a agent.Codec) (flat bool, top, extra map[string]*settings.Value) {
	switch a.Setup().Format {
	case agent.FormatCursorHooks:
		return true, map[string]*settings.Value{"version": settings.Int(1)}, nil
	case agent.FormatWindsurfHooks:
		return true, nil, map[string]*settings.Value{"show_output": settings.Bool(true)}
	case agent.FormatCrushHooks:
		// Crush's handler selects its tools itself: only MCP tools reach the gate.
		return true, nil, map[string]*settings.Value{"matcher": settings.String(agent.Crush.Setup().Hooks[0].Matcher)}
	case agent.FormatKiroAgent:
		// Read by doctor only (install does not edit Kiro's agent files).
		return true, nil, nil
	}
	return false, nil, nil
}

// shellCommand is the command line of a flat hook file's handler: the binary (quoted when it holds
// a blank or a shell character) and the agent's hook arguments.
func shellCommand(command string, a agent.Codec) string {
	if strings.ContainsAny(command, " \t'\"$`\\|&;<>()*?[]#~") {
		command = "'" + strings.ReplaceAll(command, "'", `'\''`) + "'"
	}
	return command + " " + strings.Join(agent.HookArgs(a.Name()), " ")
}

// planHooks plans the agent's hook file at ap.settings with the gate wired for its events. This is
// where an agent whose hook file has another shape gets its editor (installable lists the formats
// handled here; parseInstall refuses the others).
func (e *Env) planHooks(ap scopePaths, a agent.Codec, command string) (*plan, error) {
	sf, err := readPlan(ap.settings, ap.show(ap.settings), 0o644, ap.dir)
	if err != nil {
		return nil, err
	}
	if shellFormat(a.Setup().Format) {
		return sf, e.planShellHooks(sf, ap.settings, a, command)
	}
	if pluginFormat(a.Setup().Format) {
		return sf, planPluginHooks(sf, a, command)
	}
	doc, err := settings.Parse(ap.settings, sf.old)
	if err != nil {
		return nil, withHint(err, "fix the file (or move it away) and run install again; nothing was changed")
	}
	var changes []settings.Change
	if flat, top, extra := flatFormat(a); flat {
		set := a.Setup()
		specs := make([]settings.FlatSpec, len(set.Hooks))
		for i, h := range set.Hooks {
			specs[i] = settings.FlatSpec{Event: h.Event, Command: shellCommand(command, a), Timeout: set.Timeout, Extra: extra}
		}
		changes, err = doc.EnsureFlat(specs, top, oursFor(a.Name()))
	} else {
		changes, err = doc.Ensure(agentSpecs(a, command), oursFor(a.Name()))
	}
	if err != nil {
		return nil, withHint(err, "fix the file and run install again; nothing was changed")
	}
	sf.new = doc.Bytes()
	sf.done = settingsSummary(changes)
	for _, ch := range changes {
		if ch.KeptMatcher != "" {
			e.warnf("%s: kept the matcher %q of the existing %s handler; the gate needs %s",
				sf.display, ch.KeptMatcher, ch.Event, matcherWanted(ch.Event))
		}
	}
	return sf, nil
}

func scopeWhere(sp scopePaths) string {
	if sp.dir != "" {
		return sp.dir
	}
	return sp.show(filepath.Dir(sp.settings))
}

func matcherWanted(event string) string {
	if event == "SessionStart" {
		return "no matcher (every source: startup, resume, clear, compact)"
	}
	return fmt.Sprintf("%q (every MCP tool)", mcpMatcher)
}

// settingsSummary says what Ensure did, in one line.
func settingsSummary(changes []settings.Change) string {
	var added, updated []string
	was, dups := "", 0
	for _, ch := range changes {
		switch ch.Action {
		case "added":
			added = append(added, ch.Event)
		case "updated":
			updated = append(updated, ch.Event)
			if was == "" {
				was = ch.Was
			}
		}
		dups += ch.Duplicates
	}
	var parts []string
	if len(added) > 0 {
		parts = append(parts, "hooks added for "+strings.Join(added, ", "))
	}
	if len(updated) > 0 {
		s := "hooks updated in place for " + strings.Join(updated, ", ")
		if was != "" {
			s += " (command was " + was + ")"
		}
		parts = append(parts, s)
	}
	if dups > 0 {
		parts = append(parts, fmt.Sprintf("%d duplicate handler(s) removed", dups))
	}
	if len(parts) == 0 {
		return "unchanged (the hooks are already wired)"
	}
	return strings.Join(parts, "; ")
}

// printPlan prints every change as a unified diff, then what else would happen.
func (e *Env) printPlan(plans []*plan, more func()) error {
	changed := false
	for _, p := range plans {
		if d := p.diff(); d != "" {
			fmt.Fprint(e.Stdout, term.Lines(d)) // not e.printf: a diff shows the files' bytes, times included
			changed = true
		}
	}
	more()
	if !changed {
		fmt.Fprintln(e.Stdout, "dry run: no file would change")
		return nil
	}
	fmt.Fprintln(e.Stdout, "dry run: nothing was changed")
	return nil
}

func runUninstall(opts *installOptions, e *Env) error {
	if opts.Proxy {
		return runUninstallProxy(opts, e)
	}
	var plans []*plan
	sp, err := e.eachAgent(opts, func(a agent.Codec, ap scopePaths) error {
		more, err := e.planUnhook(ap, a)
		plans = append(plans, more...)
		return err
	})
	if err != nil {
		return err
	}
	// What install made in the project for the gate goes too when nothing was recorded and no
	// hook file of the project still runs the gate: the state directory, empty, and the lines it
	// added to .gitignore.
	var emptyState string
	if sp.dir != "" {
		sd := filepath.Join(sp.dir, project.StateDirName)
		if ents, err := os.ReadDir(sd); err == nil && len(ents) == 0 && safefile.CheckStateDir(sd) == nil && !e.projectWired(sp.dir, plans) {
			emptyState = sd
			gi, err := readPlan(filepath.Join(sp.dir, ".gitignore"), ".gitignore", 0o644, sp.dir)
			if err != nil {
				return err
			}
			if gi.exists {
				local := filepath.Join(sp.dir, ".claude", "settings.local.json")
				_, err := os.Stat(local)
				unignore(gi, errors.Is(err, fs.ErrNotExist) || planned(plans, local))
				plans = append(plans, gi)
			}
		}
	}
	if opts.DryRun {
		return e.printPlan(plans, func() {
			if emptyState != "" {
				fmt.Fprintf(e.Stdout, "remove %s/ (empty: nothing was recorded)\n", project.StateDirName)
			}
		})
	}
	for _, p := range plans {
		if p.exists {
			if err := p.apply(); err != nil {
				return err
			}
			if p.remove {
				e.pruneEmpty(filepath.Dir(p.path), sp.dir)
			}
		}
	}
	if emptyState != "" {
		os.Remove(emptyState)
		e.pruneEmpty(filepath.Dir(emptyState), sp.dir)
	}
	fmt.Fprintf(e.Stdout, "%s scope: %s\n", sp.scope, scopeWhere(sp))
	for _, p := range plans {
		fmt.Fprintf(e.Stdout, "  %s: %s\n", p.display, p.done)
	}
	switch {
	case emptyState != "":
		fmt.Fprintf(e.Stdout, "  %s/: removed (empty: nothing was recorded)\n", project.StateDirName)
	case sp.dir != "":
		if _, err := os.Stat(filepath.Join(sp.dir, project.StateDirName)); err == nil {
			fmt.Fprintf(e.Stdout, "kept %s/ (the ledger) and its .gitignore line\n", project.StateDirName)
		}
	}
	return nil
}

// pruneEmpty removes dir and the directories above it while they are empty, up to (not
// including) the project directory, HOME, the agents' configuration roots the user named, or the
// file system's root: install made them for files uninstall removed, and an empty ~/.codex or
// .gemini would still make doctor take the agent for installed.
func (e *Env) pruneEmpty(dir, projectDir string) {
	stops := map[string]bool{}
	for _, s := range []string{projectDir, e.Getenv("HOME"), e.Getenv("XDG_CONFIG_HOME"), e.Getenv("CLAUDE_CONFIG_DIR")} {
		if s != "" {
			stops[filepath.Clean(s)] = true
		}
	}
	for d := filepath.Clean(dir); !stops[d] && filepath.Dir(d) != d; d = filepath.Dir(d) {
		if err := os.Remove(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return
		}
	}
}

// planned reports whether plans remove the file at path.
func planned(plans []*plan, path string) bool {
	for _, p := range plans {
		if p.path == path && p.remove {
			return true
		}
	}
	return false
}

// unignore plans the removal, from the project's .gitignore, of the lines install adds (the
// state directory, and .claude/settings.local.json when localGone: that file is gone); a
// .gitignore left empty is removed.
func unignore(gi *plan, localGone bool) {
	drop := map[string]bool{project.StateDirName + "/": true}
	if localGone {
		drop[".claude/settings.local.json"] = true
	}
	var keep []string
	removed := 0
	for _, l := range strings.SplitAfter(string(gi.old), "\n") {
		if drop[strings.TrimSpace(l)] {
			removed++
			continue
		}
		if l != "" {
			keep = append(keep, l)
		}
	}
	gi.new = []byte(strings.Join(keep, ""))
	switch {
	case removed == 0:
		gi.done = "unchanged"
	case strings.TrimSpace(string(gi.new)) == "":
		gi.remove, gi.done = true, "removed (it held only the lines install added)"
	default:
		gi.done = fmt.Sprintf("removed the %d line(s) install added", removed)
	}
}

// projectWired reports whether a hook file of the project, as it will be once plans are applied,
// still runs the gate (another agent, or the other of the project and local scopes): then the
// state directory and its .gitignore line stay.
func (e *Env) projectWired(dir string, plans []*plan) bool {
	planned := map[string]*plan{}
	for _, p := range plans {
		planned[p.path] = p
	}
	for _, a := range agent.All() {
		for _, sc := range a.Setup().Scopes {
			if sc.InConfigDir {
				continue
			}
			path := filepath.Join(dir, filepath.FromSlash(sc.Path))
			var data []byte
			if p, ok := planned[path]; ok {
				if p.remove {
					continue
				}
				data = p.new
			} else {
				data, _ = safefile.ReadBounded(path, safefile.MaxConfigBytes)
			}
			if bytes.Contains(data, []byte(skill.Binary)) {
				return true
			}
		}
	}
	for _, name := range []string{"settings.json", "settings.local.json"} {
		path := filepath.Join(dir, ".claude", name)
		if p, ok := planned[path]; ok {
			if !p.remove && bytes.Contains(p.new, []byte(skill.Binary)) {
				return true
			}
			continue
		}
		if data, _ := safefile.ReadBounded(path, safefile.MaxConfigBytes); bytes.Contains(data, []byte(skill.Binary)) {
			return true
		}
	}
	return false
}

// claudeWired reports whether the Claude Code settings file at path has a handler of ours.
func claudeWired(path string) bool {
	data, err := safefile.ReadBounded(path, safefile.MaxConfigBytes)
	if err != nil {
		return false
	}
	doc, err := settings.Parse(path, data)
	if err != nil {
		return false
	}
	for _, h := range doc.Handlers() {
		if isOurs(h) {
			return true
		}
	}
	return false
}

// planUnhook plans the removal of the gate's handlers from the agent's hook file, and of the
// skill when the agent has one.
func (e *Env) planUnhook(sp scopePaths, a agent.Codec) ([]*plan, error) {
	sf, err := readPlan(sp.settings, sp.show(sp.settings), 0o644, sp.dir)
	if err != nil {
		return nil, err
	}
	if pluginFormat(a.Setup().Format) {
		planPluginUnhook(sf)
		return []*plan{sf}, nil
	}
	if shellFormat(a.Setup().Format) {
		if err := planShellUnhook(sf, sp.settings, a); err != nil {
			return nil, err
		}
		if a.Setup().Format == agent.FormatGoosePlugin && sf.remove {
			// The plugin's directory is ours: Goose would still list an empty one as a plugin.
			sf.prune = 2
		}
		plans := []*plan{sf}
		if a.Setup().Format == agent.FormatCodexHooks {
			cfg, err := e.agentConfigDir(a)
			if err != nil {
				return nil, err
			}
			var keep []byte
			if !sf.remove {
				keep = sf.new
			}
			tp, err := e.codexTrustPlan(cfg, sp.settings, keep, sp.show)
			if err != nil {
				return nil, err
			}
			if tp.exists {
				plans = append(plans, tp)
			}
		}
		return plans, nil
	}
	if sf.exists {
		doc, err := settings.Parse(sp.settings, sf.old)
		if err != nil {
			return nil, withHint(err, "fix the file and run uninstall again; nothing was changed")
		}
		var events []string
		var n int
		flat, top, _ := flatFormat(a)
		if flat {
			events, n = doc.RemoveFlat(oursFor(a.Name()))
		} else {
			events, n = doc.Remove(oursFor(a.Name()))
		}
		removedLine := a == agent.Claude && removeStatusLine(doc)
		sf.new = doc.Bytes()
		// What is left besides the keys every file of the format holds ("version").
		rest := 0
		for _, k := range doc.Root().Keys() {
			if _, ok := top[k]; !ok {
				rest++
			}
		}
		if n > 0 || removedLine {
			switch {
			case n == 0:
				sf.done = "removed the status line"
			case removedLine:
				sf.done = fmt.Sprintf("removed %d handler(s) from %s, and the status line", n, strings.Join(events, ", "))
			default:
				sf.done = fmt.Sprintf("removed %d handler(s) from %s", n, strings.Join(events, ", "))
			}
			if rest == 0 {
				// Nothing but our hooks was in it (install created it): a missing settings file
				// means the same to Claude Code as an empty one.
				sf.remove = true
				sf.done += "; the file held nothing else and was removed"
			}
		} else {
			sf.done = "unchanged (no hooks of " + skill.Binary + ")"
		}
	} else {
		sf.done = "absent"
	}
	if !a.Setup().Skill {
		return []*plan{sf}, nil
	}
	kf, err := readPlan(sp.skill, sp.show(sp.skill), 0o644, sp.dir)
	if err != nil {
		return nil, err
	}
	other := map[string]string{"local": "project", "project": "local"}[sp.scope]
	otherSettings := filepath.Join(filepath.Dir(sp.settings), map[string]string{"local": "settings.local.json", "project": "settings.json"}[other])
	switch {
	case kf.exists && sp.dir != "" && other != "" && claudeWired(otherSettings):
		// The project and local scopes share the project's skill.
		kf.done = "kept (the " + other + " scope's hooks still use it)"
	case kf.exists:
		// The skill's directory, and skills/ above it, go too when nothing else is in them.
		kf.remove, kf.prune, kf.done = true, 2, "removed"
	default:
		kf.done = "absent"
	}
	return []*plan{sf, kf}, nil
}
