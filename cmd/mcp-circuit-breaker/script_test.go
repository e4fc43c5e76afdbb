package main

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	// Scripts set TZ to show local times; the zone database is linked in so that they do not
	// depend on the machine's.
	_ "time/tzdata"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/agent"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/gate"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/hookboard"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/project"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/testservers"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/internal/yamlfile"
	"github.com/mcp-circuit-breaker/mcp-circuit-breaker/ledger"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"mcp-circuit-breaker": func() { testBudget(); os.Exit(Main()) },
		"mcp-circuit-breaker-hook": func() {
			testBudget()
			os.Exit(gate.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv, agent.Wire, hookboard.Lean))
		},
		// mcpfixture is a real stdio MCP server (go-sdk) that misbehaves on cue, for probe scripts.
		"mcpfixture": func() {
			mode := "healthy"
			if len(os.Args) > 1 {
				mode = os.Args[1]
			}
			os.Exit(testservers.RunFixture(mode))
		},
	})
}

// testBudget gives the hook of a script that sets MCB_TEST_HOOK_BUDGET (a duration) that budget
// instead of the product's 2.5 s (gate.TestOnlyBudget): a script whose event is heavy to read or
// decide asserts on the decision, not on how fast a loaded machine under the race detector made
// it. The product never reads the variable.
func testBudget() {
	if v := os.Getenv("MCB_TEST_HOOK_BUDGET"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			fmt.Fprintf(os.Stderr, "MCB_TEST_HOOK_BUDGET=%q: not a positive duration\n", v)
			os.Exit(2)
		}
		gate.TestOnlyBudget = d
	}
}

// TestScript runs the end-to-end scripts in testdata/ (named <command>_<topic>.txtar). Set
// MCB_UPDATE=1 to rewrite the golden sections (cmp stdout want) from the actual output.
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("..", "..", "testdata"),
		RequireUniqueNames:  true,
		RequireExplicitExec: true,
		UpdateScripts:       os.Getenv("MCB_UPDATE") != "",
		Setup: func(env *testscript.Env) error {
			// A home of its own, so ~/.claude.json of the machine is never read.
			env.Setenv("HOME", filepath.Join(env.WorkDir, "home"))
			env.Setenv("NO_COLOR", "1")
			env.Values["redis"] = &redisSlot{}
			// Human output is in the local zone: UTC unless a script sets TZ.
			env.Setenv("TZ", "UTC")
			// The plugin's files, for the scripts that run its SessionStart hook.
			root, err := filepath.Abs(filepath.Join("..", "..", "plugin"))
			if err != nil {
				return err
			}
			env.Setenv("PLUGIN_ROOT", root)
			if err := os.MkdirAll(filepath.Join(env.WorkDir, "home"), 0o755); err != nil {
				return err
			}
			// A fixed provenance key, so that the ledgers the scripts compare are the same on
			// every run (the gate makes a random one where there is none).
			return writeTestKey(filepath.Join(env.WorkDir, "home"))
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "root":
				return os.Geteuid() == 0, nil
			case "redis":
			default:
				return false, fmt.Errorf("unknown condition %q", cond)
			}
			// [redis]: redis-server can be started. Missing, it skips loudly; CI installs it, so
			// there it is an error.
			if msg := testservers.RedisMissing(); msg != "" {
				fmt.Fprintf(os.Stderr, "\n*** %s ***\n\n", msg)
				if os.Getenv("CI") == "true" {
					return false, errors.New(msg)
				}
				return false, nil
			}
			return true, nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"entries":      cmdEntries,
			"chopnl":       cmdChopNL,
			"pyyaml":       cmdPyYAML,
			"bigevent":     cmdBigEvent,
			"perm":         cmdPerm,
			"exits":        cmdExits,
			"expandenv":    cmdExpandEnv,
			"bounded":      cmdBounded,
			"mkfifo":       cmdMkfifo,
			"bigfile":      cmdBigFile,
			"unchanged":    cmdUnchanged,
			"hostileevent": cmdHostileEvent,
			"redis":        cmdRedis,
			"transcript":   cmdTranscript,
			"sign":         cmdSign,
			"flowledger":   cmdFlowLedger,
			"padledger":    cmdPadLedger,
			"waitcatchup":  cmdWaitCatchUp,
		},
	})
}

// testKey is the provenance key of the scripts' HOME.
var testKey = bytes.Repeat([]byte("mcb-test"), 4)

// writeTestKey puts testKey where the gate looks for the user's provenance key in home.
func writeTestKey(home string) error {
	path := project.ProvenanceKeyPath(func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	})
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(hex.EncodeToString(testKey)+"\n"), 0o600)
}

// cmdSign signs every entry of the ledger FILE with the key of $HOME, as this user's own gate
// would have written them: sign FILE. It rewrites the file in the shape the gate writes.
func cmdSign(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: sign FILE")
	}
	entries, problems := ledger.Parse([]byte(ts.ReadFile(args[0])), 1, yamlfile.Item)
	if len(problems) > 0 {
		ts.Fatalf("sign %s: %v", args[0], problems)
	}
	prov := ledger.UserProvenance(project.ProvenanceKeyPath(ts.Getenv), true)
	var out []byte
	for _, e := range entries {
		e.Provenance = ""
		prov.Sign(&e)
		if !e.Verified {
			ts.Fatalf("sign %s: no key at %s", args[0], project.ProvenanceKeyPath(ts.Getenv))
		}
		out = ledger.AppendEncoded(out, e)
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), out, 0o600))
}

// cmdEntries checks that a ledger parses strictly and holds N entries: entries FILE N.
func cmdEntries(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: entries FILE N")
	}
	want, err := strconv.Atoi(args[1])
	ts.Check(err)
	got, problems := ledger.Parse([]byte(ts.ReadFile(args[0])), 1, yamlfile.Item)
	ok := len(problems) == 0 && len(got) == want
	if ok == neg {
		ts.Fatalf("entries %s: got %d entries and problems %v, want %d and none (neg=%v)", args[0], len(got), problems, want, neg)
	}
}

// cmdChopNL removes the final newline of FILE, as a write cut short or an editor that adds none
// leaves it (a txtar file always ends its files with one): chopnl FILE.
func cmdChopNL(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: chopnl FILE")
	}
	data := ts.ReadFile(args[0])
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(strings.TrimSuffix(data, "\n")), 0o600))
}

// cmdPyYAML loads FILE with PyYAML and checks it is a list of N items: pyyaml FILE N. When python3
// or PyYAML is missing it skips the check, printing why on the test's stderr.
func cmdPyYAML(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: pyyaml FILE N")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		fmt.Fprintln(os.Stderr, "SKIP pyyaml check: python3 not found")
		return
	}
	if exec.Command(py, "-c", "import yaml").Run() != nil {
		fmt.Fprintln(os.Stderr, "SKIP pyyaml check: PyYAML is not installed (pip install pyyaml)")
		return
	}
	out, err := exec.Command(py, "-c", `
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
assert isinstance(d, list), "not a list: %r" % type(d)
for i, item in enumerate(d):
    assert isinstance(item, dict) and "tool" in item, "item %d is not an entry" % i
print(len(d))
`, ts.MkAbs(args[0])).CombinedOutput()
	got := strings.TrimSpace(string(out))
	ok := err == nil && got == args[1]
	if ok == neg {
		ts.Fatalf("pyyaml %s: got %q (err %v), want %s items", args[0], got, err, args[1])
	}
}

// cmdBigEvent writes a hook event whose tool_input holds a string of SIZE bytes: bigevent FILE
// EVENT TOOL SIZE.
func cmdBigEvent(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 4 {
		ts.Fatalf("usage: bigevent FILE EVENT TOOL SIZE")
	}
	size, err := strconv.Atoi(args[3])
	ts.Check(err)
	if raceEnabled && args[1] != "PreToolUse" {
		// A PreToolUse is decided from tool_name while the rest streams; any other event is read
		// whole, which the race detector slows past the watchdog on a loaded machine (a plain build
		// reads 50 MB in a fraction of a second: go test -short runs it at full size).
		size /= 10
		ts.Logf("race detector on: the %s payload is %d bytes", args[1], size)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"session_id":"s1","hook_event_name":%q,"tool_name":%q,"tool_input":{"content":"`, args[1], args[2])
	chunk := []byte(`abc\"def\\ghi\u00e9 {[ \"x\": 1 ]} `)
	for b.Len() < size {
		b.Write(chunk)
	}
	fmt.Fprintf(&b, `"},"tool_use_id":"toolu_big","mcp_server":{"name":"big","source":"project"}}`)
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), b.Bytes(), 0o644))
}

// cmdPerm checks a file's permission bits: perm FILE 0600.
func cmdPerm(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: perm FILE MODE")
	}
	fi, err := os.Stat(ts.MkAbs(args[0]))
	ts.Check(err)
	want, err := strconv.ParseUint(args[1], 8, 32)
	ts.Check(err)
	if (fi.Mode().Perm() == os.FileMode(want)) == neg {
		ts.Fatalf("perm %s: mode %o, want %o", args[0], fi.Mode().Perm(), want)
	}
}

// cmdExits runs a program and checks its exit code: exits N PROGRAM ARGS...
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits N PROGRAM [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	checkExit(ts, args[1], ts.Exec(args[1], args[2:]...), want)
}

// checkExit fails the script unless err (from running prog) carries exit code want.
func checkExit(ts *testscript.TestScript, prog string, err error, want int) {
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("%s: %v", prog, err)
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", prog, got, want)
	}
}

// cmdExpandEnv copies SRC to DST replacing $VAR and ${VAR} with the script's environment, for
// config files that must name $WORK: expandenv SRC DST.
func cmdExpandEnv(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: expandenv SRC DST")
	}
	out := os.Expand(ts.ReadFile(args[0]), ts.Getenv)
	ts.Check(os.MkdirAll(filepath.Dir(ts.MkAbs(args[1])), 0o755))
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(out), 0o600))
}

// redisSlot holds the redis-server a script started.
type redisSlot struct{ r *testservers.Redis }

// cmdRedis runs a real redis-server for the fleet-shared board: "redis start [PASSWORD]" starts
// one on a free port and sets $REDIS_URL (with the password) and $REDIS_ADDR; "redis stop" kills
// it. Scripts guard it with "[!redis] skip".
func cmdRedis(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: redis start [PASSWORD] | redis stop")
	}
	switch args[0] {
	case "start":
		if msg := testservers.RedisMissing(); msg != "" {
			ts.Fatalf("%s (guard the script with [!redis] skip)", msg)
		}
		pw := ""
		if len(args) > 1 {
			pw = args[1]
		}
		r, err := testservers.NewRedis(ts.MkAbs("redis"), pw)
		ts.Check(err)
		ts.Defer(r.Stop)
		ts.Setenv("REDIS_URL", r.URL())
		ts.Setenv("REDIS_ADDR", fmt.Sprintf("127.0.0.1:%d", r.Port))
		ts.Value("redis").(*redisSlot).r = r
	case "stop":
		r := ts.Value("redis").(*redisSlot).r
		if r == nil {
			ts.Fatalf("redis stop: no redis started")
		}
		r.Stop()
	default:
		ts.Fatalf("usage: redis start [PASSWORD] | redis stop")
	}
}

// cmdTranscript puts a file where Claude Code keeps the transcript of a session started in DIR:
// transcript FILE SESSION DIR copies FILE to $CLAUDE_CONFIG_DIR (else $HOME/.claude)
// /projects/<DIR, every character but ASCII letters and digits a '-'>/SESSION.jsonl. The name is
// worked out here, apart from the reader's own, as Claude Code 2.1.332 was seen to name it.
func cmdTranscript(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: transcript FILE SESSION DIR")
	}
	cfg := ts.Getenv("CLAUDE_CONFIG_DIR")
	if cfg == "" {
		cfg = filepath.Join(ts.Getenv("HOME"), ".claude")
	}
	var key strings.Builder
	for _, r := range ts.MkAbs(args[2]) {
		if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			key.WriteRune(r)
		} else {
			key.WriteByte('-')
		}
	}
	dir := filepath.Join(cfg, "projects", key.String())
	ts.Check(os.MkdirAll(dir, 0o700))
	ts.Check(os.WriteFile(filepath.Join(dir, args[1]+".jsonl"), []byte(ts.ReadFile(args[0])), 0o600))
}
