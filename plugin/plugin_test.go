package plugin

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// stubHook is a hook binary for the plugins' tests: it appends its arguments and stdin to $STUB_LOG,
// one JSON line, and prints $STUB_ANSWER ($STUB_ANSWER2 for an event of callID 2).
const stubHook = `#!/bin/sh
event=$(cat)
printf '{"args":"%s","event":%s}\n' "$*" "$event" >> "$STUB_LOG"
case $event in
*'"callID":"2"'*) printf '%s' "$STUB_ANSWER2" ;;
*) printf '%s' "$STUB_ANSWER" ;;
esac
`

// runPlugin runs script with node, with the plugin of agent (its hook binary hookBin) at
// $PLUGIN; it returns node's stderr and the events the stub hook received.
func runPlugin(t *testing.T, agent, hookBin, answer, script string) (string, []map[string]any) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("skipped: the stub hook is a shell script")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("skipped: node is not on PATH")
	}
	dir := t.TempDir()
	src, err := Source(agent, hookBin)
	if err != nil {
		t.Fatal(err)
	}
	ext := ".cjs"
	if agent == "opencode" || agent == "kilo" {
		ext = ".mjs"
	}
	pl := filepath.Join(dir, "plugin"+ext)
	main := filepath.Join(dir, "main"+ext)
	log := filepath.Join(dir, "stub.log")
	for name, data := range map[string]string{pl: string(src), main: script} {
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("node", main)
	cmd.Env = append(os.Environ(), "PLUGIN="+pl, "STUB_LOG="+log, "STUB_ANSWER="+answer, `STUB_ANSWER2={"context":"C"}`)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if out, err := cmd.Output(); err != nil {
		t.Fatalf("node: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr.String())
	}
	var events []map[string]any
	if b, err := os.ReadFile(log); err == nil {
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var e map[string]any
			if err := json.Unmarshal([]byte(line), &e); err != nil {
				t.Fatalf("stub log line %q: %v", line, err)
			}
			events = append(events, e)
		}
	}
	return stderr.String(), events
}

// stub writes the stub hook binary into a directory of the test.
func stub(t *testing.T) string {
	t.Helper()
	name := filepath.Join(t.TempDir(), "hook")
	if err := os.WriteFile(name, []byte(stubHook), 0o755); err != nil {
		t.Fatal(err)
	}
	return name
}

const clineScript = `
const assert = require("node:assert");
const p = require(process.env.PLUGIN);
(async () => {
  p.setup({}, { workspaceInfo: { rootPath: "/w" } });
  const snap = { snapshot: { conversationId: "conv_1" } };
  const call = (id, name) => ({ ...snap, toolCall: { toolCallId: id, toolName: name }, input: { big: "x" } });
  const out = {};
  out.run = await p.hooks.beforeRun(snap);
  out.builtin = await p.hooks.beforeTool(call("0", "read_file"));
  out.before = await p.hooks.beforeTool(call("1", "fix__echo"));
  out.afterSkipped = await p.hooks.afterTool({ ...call("1", "fix__echo"), result: { output: { error: "R" }, isError: true }, durationMs: 3 });
  out.afterOther = await p.hooks.afterTool({ ...call("2", "fix__echo"), result: { output: { content: [{ type: "text", text: "boom" }], isError: true } }, durationMs: 4 });
  out.beforeBig = await p.hooks.beforeTool({ ...snap, toolCall: { toolCallId: "3", toolName: "fix__echo", input: { big: "x".repeat(300 * 1024) } } });
  console.log(JSON.stringify(out));
})().catch((e) => { console.error(e); process.exit(1); });
`

func TestClinePlugin(t *testing.T) {
	t.Run("deny, and our own deny is not reported", func(t *testing.T) {
		_, events := runPlugin(t, "cline", stub(t), `{"skip":true,"reason":"R"}`, clineScript+`
`)
		var hooks []string
		for _, e := range events {
			ev := e["event"].(map[string]any)
			hooks = append(hooks, ev["hook"].(string))
			if e["args"] != "hook --agent cline --dir /w" {
				t.Errorf("the hook ran with %q, want hook --agent cline --dir /w", e["args"])
			}
			// The gate hashes the arguments for its loop guard: sent alike before and after a
			// call, and not at all when they are too big.
			if tc, ok := ev["toolCall"].(map[string]any); ok {
				in, _ := json.Marshal(tc["input"])
				switch tc["toolCallId"] {
				case "3":
					if _, sent := tc["input"]; sent {
						t.Errorf("the plugin sent %d bytes of arguments, over its bound", len(in))
					}
				default:
					if string(in) != `{"big":"x"}` {
						t.Errorf("%s of call %v sent input %s, want {\"big\":\"x\"}", ev["hook"], tc["toolCallId"], in)
					}
				}
			}
		}
		// beforeRun, beforeTool 1 (skipped), afterTool 2, beforeTool 3; not read_file, not afterTool 1.
		if strings.Join(hooks, ",") != "beforeRun,beforeTool,afterTool,beforeTool" {
			t.Errorf("the gate got %q", hooks)
		}
		last := events[len(events)-1]["event"].(map[string]any)
		if tc := events[2]["event"].(map[string]any)["toolCall"].(map[string]any); tc["toolCallId"] != "2" {
			t.Errorf("the afterTool reported is of call %v, want 2", tc["toolCallId"])
		}
		if last["durationMs"] != nil {
			t.Errorf("a beforeTool sent a duration: %v", last)
		}
	})
	t.Run("the answer is passed on", func(t *testing.T) {
		dir := t.TempDir()
		script := strings.Replace(clineScript, "console.log(JSON.stringify(out));", "require('node:fs').writeFileSync("+jsString(filepath.Join(dir, "out.json"))+", JSON.stringify(out));", 1)
		runPlugin(t, "cline", stub(t), `{"skip":true,"reason":"R","notice":"N"}`, script)
		out := readOut(t, filepath.Join(dir, "out.json"))
		if b, _ := json.Marshal(out["before"]); string(b) != `{"reason":"R","skip":true}` {
			t.Errorf("beforeTool returned %s, want {skip: true, reason: R}", b)
		}
		if out["builtin"] != nil {
			t.Errorf("a built-in tool got an answer: %v", out)
		}
		// Our own skip's result is the reason, as plain text, still an error.
		if b, _ := json.Marshal(out["afterSkipped"]); string(b) != `{"result":{"isError":true,"output":"R"}}` {
			t.Errorf("the skipped call's afterTool returned %s, want its result replaced by the reason", b)
		}
	})
	t.Run("a missing binary fails open, loudly", func(t *testing.T) {
		dir := t.TempDir()
		script := strings.Replace(clineScript, "console.log(JSON.stringify(out));", "require('node:fs').writeFileSync("+jsString(filepath.Join(dir, "out.json"))+", JSON.stringify(out));", 1)
		stderr, _ := runPlugin(t, "cline", filepath.Join(dir, "no-such-hook"), "", script)
		out := readOut(t, filepath.Join(dir, "out.json"))
		if out["before"] != nil {
			t.Errorf("beforeTool answered %v without a gate, want nothing (the call goes ahead)", out["before"])
		}
		run, _ := out["run"].(map[string]any)
		if ctx, _ := run["appendContext"].(string); !strings.Contains(ctx, "the circuit breaker is not running") {
			t.Errorf("the model is not told the gate is off: %v", out["run"])
		}
		if strings.Count(stderr, "mcp-circuit-breaker: warning: cannot run") != 1 {
			t.Errorf("stderr does not warn once:\n%s", stderr)
		}
	})
}

const opencodeScript = `
import fs from "node:fs";
import { pathToFileURL } from "node:url";
const { McpCircuitBreaker } = await import(pathToFileURL(process.env.PLUGIN).href);
const client = { mcp: { status: async () => ({ data: { fix: { status: "connected" } } }) } };
const h = await McpCircuitBreaker({ client, directory: "/w", worktree: "/" });
const out = {};
const before = async (tool, id) => {
  try { await h["tool.execute.before"]({ tool, sessionID: "s", callID: id }, { args: { big: "x" } }); return "allowed"; } catch (e) { return e.message; }
};
out.builtin = await before("bash", "0");
out.before = await before("fix_echo", "1");
out.before2 = await before("fix_echo", "2");
await h.event({ event: { type: "message.part.updated", properties: { part: { type: "tool", tool: "fix_echo", callID: "9", state: { status: "error", error: "never seen" } } } } });
const err = (id) => ({ event: { type: "message.part.updated", properties: { part: { type: "tool", tool: "fix_echo", callID: id, sessionID: "s", state: { status: "error", input: { big: "x" }, error: "boom " + id, time: { start: 1000, end: 46000 } } } } } });
await h.event(err("1"));
await h.event(err("2"));
await h.event(err("2"));
const sys = { system: [] };
await h["experimental.chat.system.transform"]({}, sys);
out.system = sys.system;
fs.writeFileSync(process.env.OUT, JSON.stringify(out));
`

func TestOpencodePlugin(t *testing.T) {
	// Kilo Code's CLI runs opencode's plugin, which runs the gate with --agent kilo there.
	for _, agent := range []string{"opencode", "kilo"} {
		t.Run(agent+": deny, failures from the bus, context in the system prompt", func(t *testing.T) {
			testOpencodePlugin(t, agent)
		})
	}
	t.Run("a missing binary fails open, loudly", func(t *testing.T) {
		dir := t.TempDir()
		out := filepath.Join(dir, "out.json")
		t.Setenv("OUT", out)
		stderr, _ := runPlugin(t, "opencode", filepath.Join(dir, "no-such-hook"), "", opencodeScript)
		if got := readOut(t, out); got["before"] != "allowed" {
			t.Errorf("fix_echo without a gate: %v, want allowed", got["before"])
		}
		if strings.Count(stderr, "mcp-circuit-breaker: warning: cannot run") != 1 {
			t.Errorf("stderr does not warn once:\n%s", stderr)
		}
	})
}

// testOpencodePlugin runs opencodeScript through the opencode plugin as installed for agent.
func testOpencodePlugin(t *testing.T, agent string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.json")
	t.Setenv("OUT", out)
	_, events := runPlugin(t, agent, stub(t), `{"deny":true,"reason":"R","context":"C"}`, opencodeScript)
	got := readOut(t, out)
	if got["builtin"] != "allowed" || got["before"] != "R" {
		t.Errorf("bash: %v, fix_echo: %v; want bash allowed without the gate and fix_echo refused with R", got["builtin"], got["before"])
	}
	var hooks []string
	for _, e := range events {
		ev := e["event"].(map[string]any)
		id, _ := ev["callID"].(string)
		hooks = append(hooks, ev["hook"].(string)+":"+id)
		if e["args"] != "hook --agent "+agent+" --dir /w" {
			t.Errorf("the hook ran with %q", e["args"])
		}
		if s, _ := json.Marshal(ev["servers"]); ev["hook"] != "session.created" && string(s) != `["fix"]` {
			t.Errorf("the plugin sent servers %s, want [\"fix\"]", s)
		}
		// The same arguments before the call and with its failure, for the gate's loop guard;
		// the failure's duration from the bus event's times.
		if a, _ := json.Marshal(ev["args"]); ev["hook"] != "session.created" && string(a) != `{"big":"x"}` {
			t.Errorf("%s sent args %s, want {\"big\":\"x\"}", ev["hook"], a)
		}
		if ev["hook"] == "tool.failed" && ev["durationMs"] != 45000.0 {
			t.Errorf("tool.failed sent durationMs %v, want 45000", ev["durationMs"])
		}
	}
	// Our own deny of call 1 is not reported; call 2's failure once, though the bus said it
	// twice; call 9, which no tool.execute.before saw, not at all; the session's first
	// request asks what to say at its start.
	if strings.Join(hooks, ",") != "tool.execute.before:1,tool.execute.before:2,tool.failed:2,session.created:" {
		t.Errorf("the gate got %q", hooks)
	}
	// The session start's C, then C from call 2's before (a trial, say) and from its failure,
	// both in the next request.
	if s, _ := json.Marshal(got["system"]); string(s) != `["C","C\n\nC"]` {
		t.Errorf("the system prompt got %s, want the start's context and call 2's, once", s)
	}
}

func jsString(s string) string { b, _ := json.Marshal(s); return string(b) }

func readOut(t *testing.T, name string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
