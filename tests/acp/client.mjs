// An ACP client for tests/acp.rs, written with the official TypeScript SDK
// (@agentclientprotocol/sdk, its `client()` app API; .ci/run installs it
// into the folder named by WAYPOINT_TEST_ACP_DIR). It spawns the agent
// command of a script and plays the script's steps, printing every message
// it receives and each step's outcome as one JSON line on stdout:
//
//   {"event":"in","message":{...}}           every JSON-RPC message received
//   {"event":"update","step":N,"params":{...}} a session/update the SDK parsed
//   {"event":"permission","step":N,"params":{...},"answer":"allow_once"|...}
//   {"event":"result","step":N,"op":"...","result":{...}}  a request's answer
//   {"event":"error","step":N,"op":"...","error":"..."}    a request's failure
//   {"event":"cancelled","step":N,"pid":P,"pgid":G}         session/cancel sent
//   {"event":"gone","step":N,"pid":P,"pgid":G,"group_gone":b,"proc_gone":b}
//   {"event":"exit","code":C,"signal":S}     an agent process ended
//
// The script (a JSON file, the first argument):
//   {"command": "...", "args": [...], "env": {...}, "steps": [
//     {"op":"initialize", "plan": true},   // advertise clientCapabilities.plan
//     {"op":"new", "cwd": "..."},          // session/new; remembered as current
//     {"op":"set_mode", "modeId": "..."},
//     {"op":"prompt", "text": "...",
//      "permissions": ["allow_once", "reject_once", ...],  // answered in order
//      "cancel": {"update": {"sessionUpdate":"tool_call","kind":"execute"},
//                 "pidFile": "..."}},    // cancel once such an update came and
//                                        // the file holds a pid
//     {"op":"wait_gone", "timeoutMs": 5000},  // the cancelled pid's group ends
//     {"op":"restart"},                    // a new agent process, same script
//     {"op":"load", "sessionId": "..." | omitted for the current one, "cwd": "..."}
//   ]}
// Permission answers: an option's kind (allow_once, allow_always,
// reject_once, reject_always); with none left the request is cancelled.

import { spawn } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const dir = process.env.WAYPOINT_TEST_ACP_DIR;
if (!dir) {
  console.error("WAYPOINT_TEST_ACP_DIR is not set");
  process.exit(2);
}
const require = createRequire(join(dir, "package.json"));
const acp = await import(
  pathToFileURL(require.resolve("@agentclientprotocol/sdk/unstable")).href
);

const script = JSON.parse(readFileSync(process.argv[2], "utf8"));
const out = (line) => process.stdout.write(JSON.stringify(line) + "\n");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

let step = -1;
let permissions = [];
let current = null; // the current session id
let cancelWatch = null; // {update, pidFile, fired}
let cancelled = null; // {pid, pgid}

/** Whether `update` holds every field of `pattern` (shallow). */
function matches(update, pattern) {
  return Object.entries(pattern).every(([k, v]) => update[k] === v);
}

/** The pid in `file` and its process group, or null. */
function pidOf(file) {
  if (!existsSync(file)) return null;
  const pid = parseInt(readFileSync(file, "utf8").trim(), 10);
  if (!Number.isInteger(pid) || pid <= 0) return null;
  return { pid, pgid: stat(pid)?.pgid ?? null };
}

/** The state letter and process group of `pid` (from /proc), or null. */
function stat(pid) {
  try {
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and ')'.
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const rest = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { state: rest[0], pgid: parseInt(rest[2], 10) };
  } catch {
    return null;
  }
}

/** A zombie (killed, waiting to be reaped) counts as gone. */
const live = (s) => s != null && !["Z", "X", "x"].includes(s.state);

/** The live processes of group `pgid`, as kill(-pgid, 0) would see them
 * less the zombies (nothing reaps orphans where PID 1 does not). */
function groupMembers(pgid) {
  return readdirSync("/proc")
    .filter((n) => /^[0-9]+$/.test(n))
    .filter((n) => {
      const s = stat(n);
      return live(s) && s.pgid === pgid;
    })
    .map(Number);
}

async function fireCancel(agent) {
  const watch = cancelWatch;
  if (!watch || watch.fired) return;
  watch.fired = true;
  let ids = null;
  for (let i = 0; i < 200 && !ids; i++) {
    ids = watch.pidFile ? pidOf(watch.pidFile) : { pid: null, pgid: null };
    if (!ids) await sleep(50);
  }
  cancelled = ids ?? { pid: null, pgid: null };
  await agent.notify(acp.methods.agent.session.cancel, { sessionId: current });
  out({ event: "cancelled", step, ...cancelled });
}

let agentCtx = null;

function start() {
  const child = spawn(script.command, script.args ?? [], {
    env: script.env ?? process.env,
    stdio: ["pipe", "pipe", "inherit"],
  });
  const exited = new Promise((resolve) =>
    child.on("exit", (code, signal) => {
      out({ event: "exit", code, signal });
      resolve();
    }),
  );
  const raw = acp.ndJsonStream(
    Writable.toWeb(child.stdin),
    Readable.toWeb(child.stdout),
  );
  const tap = new TransformStream({
    transform(message, controller) {
      out({ event: "in", message });
      controller.enqueue(message);
    },
  });
  const stream = { writable: raw.writable, readable: raw.readable.pipeThrough(tap) };
  const app = acp
    .client({ name: "waypoint-test-client" })
    .onNotification(acp.methods.client.session.update, ({ params, agent }) => {
      out({ event: "update", step, params });
      if (cancelWatch && matches(params.update, cancelWatch.update)) {
        void fireCancel(agent);
      }
    })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      const want = permissions.shift();
      const option = params.options.find((o) => o.kind === want);
      out({ event: "permission", step, params, answer: option ? want : "cancelled" });
      if (!option) return { outcome: { outcome: "cancelled" } };
      return { outcome: { outcome: "selected", optionId: option.optionId } };
    });
  const connection = app.connect(stream);
  agentCtx = connection.agent;
  return { child, connection, exited };
}

async function stop(proc) {
  proc.child.stdin.end();
  const timer = setTimeout(() => proc.child.kill("SIGKILL"), 10000);
  await proc.exited;
  clearTimeout(timer);
  proc.connection.close();
}

async function request(op, method, params) {
  try {
    const result = await agentCtx.request(method, params);
    out({ event: "result", step, op, result });
    return result;
  } catch (e) {
    out({ event: "error", step, op, error: String(e?.message ?? e), data: e?.data });
    return null;
  }
}

/** initialize's params: no fs or terminal of the client; the unstable
 * plan operations (`clientCapabilities.plan`) when `plan` is set. */
function initParams(plan) {
  const clientCapabilities = {
    fs: { readTextFile: false, writeTextFile: false },
    terminal: false,
  };
  if (plan) clientCapabilities.plan = {};
  return {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities,
    clientInfo: { name: "waypoint-test-client", version: "1.0.0" },
  };
}

let proc = start();
let lastInit = null;
const m = acp.methods.agent;
for (const [i, s] of script.steps.entries()) {
  step = i;
  switch (s.op) {
    case "initialize":
      lastInit = s;
      await request("initialize", m.initialize, initParams(s.plan));
      break;
    case "new": {
      const r = await request("new", m.session.new, { cwd: s.cwd, mcpServers: [] });
      if (r) current = r.sessionId;
      break;
    }
    case "set_mode":
      await request("set_mode", m.session.setMode, {
        sessionId: s.sessionId ?? current,
        modeId: s.modeId,
      });
      break;
    case "prompt":
      permissions = [...(s.permissions ?? [])];
      cancelWatch = s.cancel ? { ...s.cancel, fired: false } : null;
      await request("prompt", m.session.prompt, {
        sessionId: s.sessionId ?? current,
        prompt: [{ type: "text", text: s.text }],
      });
      cancelWatch = null;
      break;
    case "wait_gone": {
      const deadline = Date.now() + (s.timeoutMs ?? 5000);
      const { pid, pgid } = cancelled ?? {};
      const groupAlive = () => pgid != null && groupMembers(pgid).length > 0;
      const procAlive = () => pid != null && live(stat(pid));
      while ((groupAlive() || procAlive()) && Date.now() < deadline) await sleep(50);
      out({
        event: "gone",
        step,
        pid,
        pgid,
        group_gone: pgid != null && !groupAlive(),
        left: pgid != null ? groupMembers(pgid) : [],
        proc_gone: pid != null && !procAlive(),
      });
      break;
    }
    case "restart":
      await stop(proc);
      proc = start();
      if (lastInit) await request("initialize", m.initialize, initParams(lastInit.plan));
      break;
    case "load": {
      const sessionId = s.sessionId ?? current;
      const r = await request("load", m.session.load, {
        sessionId,
        cwd: s.cwd,
        mcpServers: [],
      });
      if (r) current = sessionId;
      break;
    }
    default:
      out({ event: "error", step, op: s.op, error: "unknown step" });
  }
}
step = script.steps.length;
await stop(proc);
process.exit(0);
