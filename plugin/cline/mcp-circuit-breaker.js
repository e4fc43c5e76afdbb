// Keep ask() in step with plugin/opencode/mcp-circuit-breaker.js: each plugin ships as one self-contained file (CommonJS here, an ES module there) with no module to share.
// mcp-circuit-breaker for Cline: a Cline plugin that hands each MCP tool call to the gate
// (mcp-circuit-breaker-hook --agent cline) and does what it answers. Cline's own file hooks can
// only stop the whole run, so a call whose circuit is open is skipped here instead, and the model
// reads why. Installed by `mcp-circuit-breaker install --agent cline`, which writes the hook's path
// below; docs/agents.md says what it does and how to remove it.
//
// The gate runs as a program with an argument vector (no shell), gets one event as JSON on stdin
// and prints its answer as JSON. If it cannot run, the call goes ahead and this says so on stderr:
// a broken gate must never block a healthy tool.
"use strict";

const { spawn } = require("node:child_process");

const HOOK_BIN = "mcp-circuit-breaker-hook";
// Longer than the gate's own budget (2.5 s), shorter than the 3 s Cline gives a plugin's hook
// before it goes on without its answer.
const TIMEOUT_MS = 2900;

let root = "";
let warned = false;
// The calls this plugin skipped, with the reason: their afterTool is our own deny, never a failure
// of the tool.
const skipped = new Map();

let broken = "";

// The gate hashes a call's arguments (the same call failing the same way again and again is
// refused: the loop guard). Arguments longer than this as JSON are not sent: the hook's input stays
// small, and the guard cannot see that call repeat.
const MAX_ARGS = 256 * 1024;

// argsOf is v when it is small enough to send, else undefined (left out of the event).
function argsOf(v) {
  if (v === undefined) return undefined;
  try {
    const s = JSON.stringify(v);
    return typeof s === "string" && s.length <= MAX_ARGS ? v : undefined;
  } catch (err) {
    return undefined; // a cycle or a BigInt: not JSON
  }
}

function warn(msg) {
  broken = msg;
  if (!warned) {
    warned = true;
    console.error(`mcp-circuit-breaker: warning: ${msg}; MCP calls go ahead unguarded`);
  }
}

// ask runs the gate with one event and resolves to its answer, {} when it says nothing or fails.
function ask(event) {
  return new Promise((resolve) => {
    const args = ["hook", "--agent", "cline"];
    if (event.cwd) args.push("--dir", event.cwd);
    let child;
    try {
      child = spawn(HOOK_BIN, args, { stdio: ["pipe", "pipe", "pipe"] });
    } catch (err) {
      warn(`cannot run ${HOOK_BIN}: ${err.message}`);
      return resolve({});
    }
    // A gate that hangs is killed: the call must not wait for it.
    const timer = setTimeout(() => child.kill("SIGKILL"), TIMEOUT_MS);
    timer.unref();
    let out = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (s) => { out += s; });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (s) => { process.stderr.write(s); });
    child.on("error", (err) => {
      clearTimeout(timer);
      warn(`cannot run ${HOOK_BIN}: ${err.message}`);
      resolve({});
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (signal) {
        warn(`${HOOK_BIN} was stopped (${signal})`);
        return resolve({});
      }
      const text = out.trim();
      if (text === "") return resolve({});
      try {
        const a = JSON.parse(text);
        resolve(a && typeof a === "object" ? a : {});
      } catch (err) {
        warn(`${HOOK_BIN} answered what is not JSON (exit ${code})`);
        resolve({});
      }
    });
    child.stdin.on("error", () => {}); // a gate that exits early must not crash Cline
    child.stdin.end(JSON.stringify(event));
  });
}

// isMCP: Cline names an MCP tool <server>__<tool>; no other tool is sent to the gate.
function isMCP(name) {
  return typeof name === "string" && name.indexOf("__") > 0;
}

function base(hook, ctx) {
  return { hook, cwd: root || process.cwd(), conversationId: (ctx && ctx.snapshot && ctx.snapshot.conversationId) || "" };
}

function call(ctx) {
  const tc = (ctx && ctx.toolCall) || {};
  // The same input on beforeTool and afterTool, so that both hash alike.
  return { toolCallId: String(tc.toolCallId || ""), toolName: String(tc.toolName || ""),
    input: argsOf(tc.input !== undefined ? tc.input : ctx && ctx.input) };
}

function notice(a) {
  if (typeof a.notice === "string" && a.notice !== "") console.error(a.notice);
}

function context(a) {
  return typeof a.appendContext === "string" && a.appendContext !== "" ? { appendContext: a.appendContext } : undefined;
}

const plugin = {
  name: "mcp-circuit-breaker",
  manifest: { capabilities: ["hooks"] },
  setup(_api, ctx) {
    root = (ctx && ctx.workspaceInfo && ctx.workspaceInfo.rootPath) || "";
  },
  hooks: {
    async beforeRun(ctx) {
      const a = await ask(base("beforeRun", ctx));
      notice(a);
      if (broken !== "") {
        // Said to the model too: it must not take silence for healthy circuits.
        return { appendContext: `mcp-circuit-breaker: the circuit breaker is not running (${broken}): MCP tool calls are not guarded in this session.` };
      }
      return context(a);
    },
    async beforeTool(ctx) {
      const tc = call(ctx);
      if (!isMCP(tc.toolName)) return undefined;
      const a = await ask({ ...base("beforeTool", ctx), toolCall: tc });
      notice(a);
      if (a.skip === true && typeof a.reason === "string") {
        skipped.set(tc.toolCallId, a.reason);
        return { skip: true, reason: a.reason };
      }
      return context(a);
    },
    async afterTool(ctx) {
      const tc = call(ctx);
      if (!isMCP(tc.toolName)) return undefined;
      if (skipped.has(tc.toolCallId)) {
        // Cline gives the model a skipped call's reason as JSON ({"error": "…\n…"}); the result
        // is replaced by the reason itself, so that the model reads it as plain text. It stays an
        // error.
        const reason = skipped.get(tc.toolCallId);
        skipped.delete(tc.toolCallId);
        return { result: { output: reason, isError: true } };
      }
      const r = (ctx && ctx.result) || {};
      const a = await ask({ ...base("afterTool", ctx), toolCall: tc,
        result: { output: r.output === undefined ? null : r.output, isError: r.isError === true },
        durationMs: typeof ctx.durationMs === "number" ? ctx.durationMs : 0 });
      notice(a);
      return context(a);
    },
  },
};

module.exports = plugin;
module.exports.default = plugin;
module.exports.plugin = plugin;
