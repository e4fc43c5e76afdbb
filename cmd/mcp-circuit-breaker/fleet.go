package main

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	"gopkg.in/yaml.v3"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/boardconn/goredisconn"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/fleet"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/report"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/term"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/skill"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/states"
)

// fleetFlag asks status and report for the fleet-shared board instead of this project's ledger.
func fleetFlag() cli.Flag {
	return &cli.BoolFlag{Name: "fleet", Usage: "show the fleet-shared board (" + fleet.EnvURL + " or the user configuration) instead of this project's ledger"}
}

// fleetCLITimeout bounds each exchange of a command with the board: a person waits, not a tool call.
const fleetCLITimeout = 2 * time.Second

// openFleet opens the board the user configured for the project in dir; errNoFleet when none is.
func (e *Env) openFleet(dir string) (*fleet.Board, error) {
	cfg, err := fleet.Load(e.Getenv, dir, yaml.Unmarshal)
	if err != nil {
		return nil, err
	}
	if cfg == nil {
		return nil, withHint(errNoFleet, "set "+fleet.EnvURL+"=redis://HOST:PORT (or rediss:// for TLS) and "+fleet.EnvNamespace+
			", or 'shared: {url: …, namespace: …}' in "+fleet.UserConfigPath(e.Getenv))
	}
	cfg.Timeout = max(cfg.Timeout, fleetCLITimeout)
	return fleet.Open(*cfg, goredisconn.Dial)
}

// errNoFleet is returned when --fleet is asked for and no shared board is configured.
var errNoFleet = errors.New("no fleet-shared board is configured")

// fleetView is what status --fleet and report --fleet show: the board, its circuits that are not
// idle sorted by key, and their --json shape.
type fleetView struct {
	cfg       fleet.Config
	circuits  []*states.Circuit
	sharedBy  []string          // of circuits: what each is shared by (fleet.ScopeKind)
	standings []states.Standing // of circuits, as of the command's now
	warnings  []string          // records the board holds that were refused
	json      fleetJSON
}

// fleetJSON is the --json shape of the fleet board (status --fleet, report --fleet's "fleet").
type fleetJSON struct {
	Board    fleetBoardJSON     `json:"board"`
	Circuits []fleetCircuitJSON `json:"circuits"`
}

// fleetCircuitJSON is a circuit of the board: as in status, named as the session that last wrote
// it named it, and what it is shared by (endpoint, machine, credential, machine and user).
type fleetCircuitJSON struct {
	circuitJSON
	SharedBy string `json:"shared_by"`
}

// fleetBoardJSON says which board was read.
type fleetBoardJSON struct {
	URL       string `json:"url"`
	Namespace string `json:"namespace"`
	From      string `json:"from"`
}

// readFleet opens the board configured for the project in dir and lists it as of now.
func (e *Env) readFleet(dir string, now time.Time) (*fleetView, error) {
	b, err := e.openFleet(dir)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	all, err := b.List(ctx, now)
	if err != nil {
		return nil, err
	}
	v := &fleetView{cfg: b.Config()}
	out := []fleetCircuitJSON{}
	var listed []fleet.Listed
	for _, l := range all {
		if l.Circuit == nil {
			v.warnings = append(v.warnings, fmt.Sprintf("the board's record %s was refused: %s; hooks decide without it, and the next write of that circuit replaces it",
				term.Escape(fleet.ShownKey(l.RedisKey)), l.Refused))
			continue
		}
		// Named as the session that last wrote it named it: the board shares circuits by
		// endpoint, credential or machine, not by name (docs/fleet.md).
		if !l.Circuit.AtRest() {
			listed = append(listed, l)
		}
	}
	sort.SliceStable(listed, func(i, j int) bool { return listed[i].Circuit.Key < listed[j].Circuit.Key })
	for _, l := range listed {
		c := l.Circuit
		v.circuits = append(v.circuits, c)
		v.sharedBy = append(v.sharedBy, fleet.ScopeKind(l.Scope))
		// No configuration fingerprint: the board's circuits come from other machines' files.
		st := c.StandingAt(now, nil, "")
		v.standings = append(v.standings, st)
		out = append(out, fleetCircuitJSON{toCircuitJSON(c, st, nil), fleet.ScopeKind(l.Scope)})
	}
	v.json = fleetJSON{Board: fleetBoardJSON{URL: v.cfg.Redacted(), Namespace: v.cfg.Namespace, From: v.cfg.From}, Circuits: out}
	return v, nil
}

// statusFleet is status --fleet: the board's circuits of the namespace.
func (e *Env) statusFleet(asJSON bool, dir string, now time.Time) error {
	v, err := e.readFleet(dir, now)
	if err != nil {
		return err
	}
	if asJSON {
		return e.printJSON(struct {
			fleetJSON
			Warnings []string `json:"warnings"`
		}{v.json, append([]string{}, v.warnings...)})
	}
	for _, w := range v.warnings {
		e.warnf("%s", w)
	}
	cfg, circuits := v.cfg, v.circuits
	e.printf("Fleet board %s, namespace %q:\n", cfg.Redacted(), cfg.Namespace)
	if len(circuits) == 0 {
		e.println("All shared circuits CLOSED: no failures recorded.")
		return nil
	}
	rows := [][]string{{"TOOL", "STATE", "TYPE", "FAILURES", "BLOCKED", "OPEN UNTIL", "SHARED BY"}}
	for i, ci := range circuits {
		rows = append(rows, append(e.statusRow(ci, v.standings[i]), v.sharedBy[i]))
	}
	printTable(e, rows)
	return nil
}

// fleetWarning is status's and report's word on the board when one is configured and it cannot be
// used: "" when none is configured or it answers.
func (e *Env) fleetWarning(dir string) string {
	cfg, err := fleet.Load(e.Getenv, dir, yaml.Unmarshal)
	if err != nil {
		return fmt.Sprintf("%v; circuits are decided from this project's ledger alone", err)
	}
	if cfg == nil {
		return ""
	}
	b, err := fleet.Open(*cfg, goredisconn.Dial)
	if err == nil {
		defer b.Close()
		_, err = b.Ping(context.Background())
	}
	if err != nil {
		return fmt.Sprintf("the fleet-shared board %s is unreachable (%v): hooks decide from this project's ledger alone until it answers; run 'mcp-circuit-breaker doctor'", cfg.Redacted(), err)
	}
	return ""
}

// checkFleet: the shared board, when configured (no line otherwise), answers within its timeout, and says where it
// is configured; one set by a project file is refused.
func (d *doctor) checkFleet() {
	const name = "fleet board"
	cfg, err := fleet.Load(d.e.Getenv, d.dir, yaml.Unmarshal)
	if errors.Is(err, fleet.ErrProjectConfigured) {
		d.add(name, statusFail, err.Error()+": hooks ignore it and decide from this project's ledger",
			"remove "+fleet.EnvURL+" from the project's .claude/settings*.json \"env\"; set it in your own environment or "+fleet.UserConfigPath(d.e.Getenv))
		return
	}
	if err != nil {
		d.add(name, statusFail, err.Error(), "fix "+fleet.EnvURL+" or "+fleet.UserConfigPath(d.e.Getenv))
		return
	}
	if cfg == nil {
		return // not configured: circuits are this project's own, nothing to check
	}
	b, err := fleet.Open(*cfg, goredisconn.Dial)
	if err != nil {
		d.add(name, statusFail, err.Error(), "fix the URL in "+cfg.From)
		return
	}
	defer b.Close()
	// The first exchange also dials (and does TLS and AUTH): time a second one, as a hook's
	// connection would cost both, and report both.
	first, err := b.Ping(context.Background())
	if err != nil {
		d.add(name, statusFail, fmt.Sprintf("%v; hooks decide from this project's ledger alone (timeout %s)", err, cfg.Timeout),
			"start the Redis at "+cfg.Redacted()+", or check the address, password and TLS (rediss://) in "+cfg.From)
		return
	}
	rtt, _ := b.Ping(context.Background())
	detail := fmt.Sprintf("%s, namespace %q (from %s): connect + PING %s, PING %s, timeout %s",
		cfg.Redacted(), cfg.Namespace, cfg.From, first.Round(10*time.Microsecond), rtt.Round(10*time.Microsecond), cfg.Timeout)
	if sd := d.project().FleetAwaySince(); sd != "" {
		detail += "; hooks last found it away at " + sd
	}
	if first > cfg.Timeout/2 {
		d.add(name, statusWarn, detail+": connecting takes more than half the hook's timeout, so hooks under load will often decide locally",
			"raise "+fleet.EnvTimeout+" (at most "+fleet.MaxTimeout.String()+") or use a nearer Redis")
		return
	}
	if cfg.Secret == "" {
		d.add(name, statusWarn, detail+"; no secret: the board's key names hold the hashes of what fails together, so without a secret the users share (shared.secret, or the board's password) no credential is shared across machines",
			"set shared.secret in "+fleet.UserConfigPath(d.e.Getenv)+" (the same on every machine of the team), or "+fleet.EnvSecret+", or give the board a password")
	} else {
		d.add(name, statusPass, detail, "")
	}
	var sharing []string
	for _, id := range fleet.ProjectIdentities(d.project(), cfg.Keys(), nil) {
		sharing = append(sharing, id.Server+": "+id.Describe())
	}
	if len(sharing) > 0 {
		d.add("fleet sharing", statusPass, strings.Join(sharing, "; "), "")
	}
}

// reportFleet is report --fleet: this project's report, then the fleet board's circuits (what
// every session of the namespace shares), so the local record and the shared one sit side by side.
func (e *Env) reportFleet(dir string, now time.Time, asJSON bool, local *report.Report) error {
	v, err := e.readFleet(dir, now)
	if err != nil {
		return err
	}
	if asJSON {
		// The report's own JSON, every key of it, plus "fleet".
		return e.printJSON(struct {
			*report.Report
			Fleet fleetJSON `json:"fleet"`
		}{local, v.json})
	}
	for _, w := range v.warnings {
		e.warnf("%s", w)
	}
	e.printf("%s", local.Markdown())
	cfg, circuits := v.cfg, v.circuits
	e.printf("\n## Fleet board\n\n%s, namespace `%s`: the circuits every session of the namespace shares.\n\n", cfg.Redacted(), cfg.Namespace)
	if len(circuits) == 0 {
		e.println("All shared circuits CLOSED: no failures recorded.")
		return nil
	}
	e.println("| Tool | State | Type | Failures | Blocked | Tripped | Open until | Shared by |")
	e.println("|---|---|---|---|---|---|---|---|")
	for i, ci := range circuits {
		st := v.standings[i]
		tripped := "—"
		if !ci.TrippedAt.IsZero() && st.Phase != states.PhaseClosed {
			tripped = e.localTime(ci.TrippedAt)
		}
		e.printf("| %s | %s | %s | %d | %d | %s | %s | %s |\n", report.Cell(ci.Key), st.Label(), typeOrDash(ci),
			st.FailureCount, ci.Blocked, tripped, e.untilText(st), v.sharedBy[i])
	}
	return nil
}

// fleetSection is the board's part of an HTML fleet report, with the figures report --fleet prints.
func (e *Env) fleetSection(v *fleetView) *report.FleetSection {
	f := &report.FleetSection{Board: fmt.Sprintf("%s, namespace %s", v.cfg.Redacted(), v.cfg.Namespace)}
	for i, ci := range v.circuits {
		st := v.standings[i]
		tripped := "—"
		if !ci.TrippedAt.IsZero() && st.Phase != states.PhaseClosed {
			tripped = e.localTime(ci.TrippedAt)
		}
		f.Rows = append(f.Rows, report.FleetRow{Tool: ci.Key, State: st.Label(), Type: typeOrDash(ci),
			Failures: strconv.Itoa(st.FailureCount), Blocked: strconv.Itoa(ci.Blocked), Tripped: tripped, OpenUntil: e.untilText(st)})
	}
	return f
}

func typeOrDash(ci *states.Circuit) string {
	if ci.FailureType == "" {
		return "—"
	}
	return string(ci.FailureType)
}

// checkHookLinking: the hook binaries the settings name are statically linked, and a lean one has
// the full CLI beside it. A binary that links net or os/user with cgo on (the full CLI wired as
// the hook, or a lean one of an older build) loads libc at every start: 0.8 ms more per MCP call
// on the benchmark machine (docs/fleet.md). The lean binary links no YAML library and no board:
// it asks the full CLI for those (docs/performance.md), and without one it decides with the
// built-in policy, no catalog and no board.
func (d *doctor) checkHookLinking() {
	const name = "hook linking"
	var dynamic, static, alone []string
	seen := map[string]bool{}
	for _, o := range d.ours() {
		p := d.hookProgram(o.h)
		if !filepath.IsAbs(p) {
			found, ok := lookPath(d.e.Getenv("PATH"), p)
			if !ok {
				continue // checkBinary reports it
			}
			p = found
		}
		if seen[p] {
			continue
		}
		seen[p] = true
		if strings.TrimSuffix(filepath.Base(p), ".exe") == leanBinary {
			full := filepath.Join(filepath.Dir(p), skill.Binary)
			if _, err := os.Stat(full); err != nil {
				if _, ok := lookPath(d.e.Getenv("PATH"), skill.Binary); !ok {
					alone = append(alone, p)
				}
			}
		}
		f, err := elf.Open(p)
		if err != nil {
			continue // not ELF (another OS) or unreadable: checkBinary reports the latter
		}
		interp := false
		for _, prog := range f.Progs {
			interp = interp || prog.Type == elf.PT_INTERP
		}
		f.Close()
		if interp {
			dynamic = append(dynamic, p)
		} else {
			static = append(static, p)
		}
	}
	switch {
	case len(alone) > 0:
		d.add(name, statusWarn, strings.Join(alone, ", ")+" has no "+skill.Binary+" beside it or on PATH: it cannot read policy.yaml or fallbacks.yaml, nor reach a fleet-shared board",
			"install both binaries side by side: go install ./cmd/...")
	case len(dynamic) > 0:
		d.add(name, statusWarn, strings.Join(dynamic, ", ")+" is dynamically linked (built with cgo): every hook run loads libc first, about 0.8 ms more per MCP call",
			"rebuild with go install ./cmd/... (the lean hook is static) or CGO_ENABLED=0")
	case len(static) > 0:
		d.add(name, statusPass, strings.Join(static, ", ")+" is statically linked", "")
	}
}
