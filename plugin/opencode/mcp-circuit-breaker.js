// Keep ask() in step with plugin/cline/mcp-circuit-breaker.js: each plugin ships as one self-contained file (an ES module here, CommonJS there) with no module to share.
// mcp-circuit-breaker for opencode: an opencode plugin that hands each MCP tool call to the gate
// (mcp-circuit-breaker-hook --agent opencode) and does what it answers. opencode has no command
// hooks: a call whose circuit is open is refused here by throwing the gate's reason, which the
// model reads as the tool's result; a failed call fires no hook, only a bus event, which is
// forwarded so the circuit counts it. Installed by `mcp-circuit-breaker install --agent opencode`,
// which writes the hook's path below; docs/agents.md says what it does and how to remove it.
// Kilo Code's CLI, a fork of opencode, runs this same file: `install --agent kilo` writes "kilo"
// as the agent below.
//
// The gate runs as a program with an argument vector (no shell), gets one event as JSON on stdin
// and prints its answer as JSON. If it cannot run, the call goes ahead and this says so on stderr:
// a broken gate must never block a healthy tool.
import { spawn } from "node:child_process";

const HOOK_BIN = "mcp-circuit-breaker-hook";
// The --agent the gate is run with.
const AGENT = "opencode";
// Longer than the gate's own budget (2.5 s) plus a process start.
const TIMEOUT_MS = 5000;
// How long the list of MCP servers is reused before opencode is asked again.
const SERVERS_TTL_MS = 2000;

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

export const McpCircuitBreaker = async ({ client, directory, worktree }) => {
  const dir = directory || worktree || process.cwd();
  let warned = false;
  let broken = "";
  const denied = new Set(); // calls refused here: their error is our own deny, never a failure
  const reported = new Set(); // failed calls already sent to the gate
  // The MCP calls under way, with the servers their tool.execute.before saw. A failure is reported
  // with them: the bus event must not ask opencode for its servers, because opencode may be
  // waiting for this very handler before it answers.
  const calls = new Map();
  let pending = []; // context for the model's next request (after a failure, at session start)
  let failures = Promise.resolve(); // failure reports in flight: the next decision waits for them
  // What the gate said at each session's start, by session: put into every request of the session
  // until its first MCP call (a title request may come first, and must not use it up).
  const started = new Map();
  let servers = { names: [], at: 0 };

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
      let child;
      try {
        child = spawn(HOOK_BIN, ["hook", "--agent", AGENT, "--dir", dir], { stdio: ["pipe", "pipe", "pipe"] });
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
      child.stdin.on("error", () => {}); // a gate that exits early must not crash opencode
      child.stdin.end(JSON.stringify({ ...event, directory: dir }));
    });
  }

  function said(a) {
    if (typeof a.notice === "string" && a.notice !== "") console.error(a.notice);
    return typeof a.context === "string" && a.context !== "" ? a.context : "";
  }

  // mcpServers is the names of opencode's MCP servers, which name its MCP tools <server>_<tool>.
  async function mcpServers() {
    if (Date.now() - servers.at < SERVERS_TTL_MS) return servers.names;
    try {
      const res = await client.mcp.status();
      const data = res && typeof res === "object" && "data" in res ? res.data : res;
      servers = { names: Object.keys(data || {}), at: Date.now() };
    } catch (err) {
      warn(`cannot list opencode's MCP servers: ${err.message}`);
    }
    return servers.names;
  }

  function sanitize(name) {
    return name.replace(/[^A-Za-z0-9_-]/g, "_");
  }

  // mcpTool resolves to the servers when tool is one of their tools, else to null: every other
  // tool goes ahead without the gate.
  async function mcpTool(tool) {
    if (typeof tool !== "string") return null;
    const names = await mcpServers();
    const hit = names.some((s) => tool.startsWith(s + "_") || tool.startsWith(sanitize(s) + "_"));
    return hit ? names : null;
  }

  return {
    event: async ({ event }) => {
      if (!event || typeof event !== "object") return;
      if (event.type !== "message.part.updated") return;
      const part = (event.properties && event.properties.part) || {};
      const state = part.state || {};
      if (part.type !== "tool" || state.status !== "error") return;
      const id = String(part.callID || "");
      if (denied.delete(id) || reported.has(id)) return;
      const names = calls.get(id);
      if (!names) return; // not an MCP call the gate saw
      calls.delete(id);
      reported.add(id);
      const report = (async () => {
        const t = state.time || {};
        const ms = typeof t.start === "number" && typeof t.end === "number" && t.end >= t.start ? t.end - t.start : 0;
        // state.input is the call's args, as tool.execute.before sent them: both hash alike.
        const a = await ask({ hook: "tool.failed", tool: part.tool, sessionID: String(part.sessionID || ""), callID: id,
          servers: names, args: argsOf(state.input), durationMs: ms,
          error: typeof state.error === "string" ? state.error : JSON.stringify(state.error) });
        const ctx = said(a);
        if (ctx !== "") pending.push(ctx);
      })();
      failures = failures.then(() => report);
      await report;
    },

    "tool.execute.before": async (input, output) => {
      await failures;
      const names = await mcpTool(input.tool);
      if (!names) return;
      started.set(String(input.sessionID || ""), ""); // the model had the start context, if any
      const a = await ask({ hook: "tool.execute.before", tool: input.tool, sessionID: String(input.sessionID || ""),
        callID: String(input.callID || ""), servers: names, args: argsOf(output && output.args) });
      const ctx = said(a);
      if (a.deny === true && typeof a.reason === "string") {
        denied.add(String(input.callID || ""));
        throw new Error(a.reason);
      }
      calls.set(String(input.callID || ""), names);
      if (ctx !== "") pending.push(ctx);
    },

    "tool.execute.after": async (input, output) => {
      const names = calls.get(String(input.callID || ""));
      if (!names) return;
      calls.delete(String(input.callID || ""));
      const a = await ask({ hook: "tool.execute.after", tool: input.tool, sessionID: String(input.sessionID || ""),
        callID: String(input.callID || ""), servers: names, args: argsOf(input.args) });
      const ctx = said(a);
      if (ctx === "") return;
      if (output && Array.isArray(output.content)) {
        output.content.push({ type: "text", text: ctx });
      } else {
        pending.push(ctx);
      }
    },

    "experimental.chat.system.transform": async (input, output) => {
      if (!output || !Array.isArray(output.system)) return;
      const sid = String((input && input.sessionID) || "");
      if (!started.has(sid)) {
        // The session's first request: ask what the model must know of the circuits. (opencode's
        // session.created bus event comes too early for a plugin to see it in `opencode run`.)
        started.set(sid, "");
        const a = await ask({ hook: "session.created", sessionID: sid });
        const ctx = said(a);
        if (broken !== "") {
          started.set(sid, `mcp-circuit-breaker: the circuit breaker is not running (${broken}): MCP tool calls are not guarded in this session.`);
        } else if (ctx !== "") {
          started.set(sid, ctx);
        }
      }
      if (started.get(sid) !== "") output.system.push(started.get(sid));
      await failures;
      if (pending.length === 0) return;
      output.system.push(pending.join("\n\n"));
      pending = [];
    },
  };
};
