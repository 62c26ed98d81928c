/**
 * `npm run bench:harness`: harness episodes (an agent program in the task's container, its
 * model calls through the episode's endpoint) side by side with verifiers 0.4.0, in one run,
 * on this machine:
 *
 *   1. Per-call proxy overhead. BENCH_CALLS (300) sequential Chat Completions calls with one
 *      realistic ~12 KB body (system, task, four assistant tool calls and their `tool` results,
 *      the `bash` tool schema: bench/support/agent-call-body.ts) made
 *        (a) directly to a scripted upstream (test/support/scripted-upstream.ts),
 *        (b) through an edgegym harness episode's endpoint, from the host with the episode's key
 *            (the episode's agent is `sleep 600`, so the episode stays active while the bench
 *            calls its endpoint itself; every call is stored as a turn before it is answered),
 *        (c) through verifiers 0.4.0's interception server in front of the same upstream
 *            (bench/vf_interception.py: an `InterceptionServer` and one registered
 *            `RolloutSession`, as a rollout on a local runtime has them; every call is
 *            committed to the trace's message graph before it is answered),
 *        (d, e) through a bare Node pass-through proxy (bench/support/bare-proxy.mjs: node:http in,
 *            `fetch` (as edgegym) or node:http.request out; no key, no parsing, no storage): the
 *            floor one more Node hop costs on this machine,
 *      in rounds of one call each, the order rotating, so machine noise hits all paths alike.
 *      Prints p50/p99 of each, the overheads (b−a, c−a), their ratio, and each server's CPU
 *      time per call. With BENCH_CPU_PROF=1 the edgegym server runs under `--cpu-prof` and
 *      the samples of the measured window are summarised (where its time goes).
 *   2. Whole rollouts of mini-swe-agent 2.4.6 on the write-greeting task
 *      (test/support/mini-swe-image.ts: its image, scripted replies and command): edgegym
 *      (reset with `agent` → done → score) and verifiers 0.4.0's mini_swe_agent harness on its
 *      Docker runtime on the image edgegym built (bench/vf_mini_rollout.py, which says what it
 *      changes and why), BENCH_ROLLOUTS (2) each after one warm-up each, interleaved.
 *
 * The edgegym server is the built CLI (`bin/edgegym.js serve`, a child process, SQLite file,
 * 127.0.0.1, its own EDGEGYM_SANDBOX_EGRESS_PORT); the upstreams run in this process. Every
 * request has a timeout and the whole run a deadline; containers either system made are
 * removed by their labels at the end, also after a failure or Ctrl-C.
 *
 *   BENCH_CALLS=300 BENCH_WARMUP=30 BENCH_ROLLOUTS=2 BENCH_CPU_PROF=1 BENCH_SKIP=rollouts npm run bench:harness
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { databaseLabel } from "../src/server/node/harbor.js";
import { containersWith, dockerReady } from "../test/support/docker.js";
import { freePort, REPO_ROOT } from "../test/support/node-server.js";
import { startScriptedUpstream, type ScriptedAssistantReply, type ScriptedUpstream } from "../test/support/scripted-upstream.js";
import { ensureMiniSweTask, MINI_AGENT_COMMAND, MINI_MODEL, MINI_SOLVING_REPLIES } from "../test/support/mini-swe-image.js";
import { agentCallBody } from "./support/agent-call-body.js";
import { processTreeCpuSeconds } from "./support/process-cpu.js";

const CALLS = Number(process.env.BENCH_CALLS ?? 300);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 30);
const ROLLOUTS = Number(process.env.BENCH_ROLLOUTS ?? 2);
const PROFILE = process.env.BENCH_CPU_PROF === "1";
const SKIP = new Set((process.env.BENCH_SKIP ?? "").split(",").filter(Boolean));
const DEADLINE_S = Number(process.env.BENCH_MAX_SECONDS ?? 1200);
const CALL_TIMEOUT_MS = 30_000;
const MODEL = "scripted-model";
const FIXTURES = join(REPO_ROOT, "test/fixtures/harbor-tasks");
const PROXY_TASK = "count-errors";
const VF_PYTHON = join(REPO_ROOT, "trainer-adapter/.venv-vf04/bin/python");

// --- figures -------------------------------------------------------------------------------

function quantile(xs: number[], q: number): number {
  if (!xs.length) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  if (q === 0.5) return s.length % 2 ? (s[(s.length - 1) / 2] as number) : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2;
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] as number;
}
const p50 = (xs: number[]) => quantile(xs, 0.5);
const p99 = (xs: number[]) => quantile(xs, 0.99);
const ms = (x: number, digits = 2) => (Number.isNaN(x) ? "–" : `${x.toFixed(digits)} ms`);
const secs = (x: number) => (Number.isNaN(x) ? "–" : `${(x / 1000).toFixed(1)} s`);
const ratio = (a: number, b: number) => (Number.isFinite(a / b) ? `${(a / b).toFixed(2)}×` : "–");
const pad = (s: string, n: number) => s.padEnd(n);
function table(head: string[], rows: string[][]): void {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => pad(c, widths[i] as number)).join(" | ")} |`;
  console.log(line(head));
  console.log(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`);
  for (const r of rows) console.log(line(r));
}

// --- processes -------------------------------------------------------------------------------

interface Child {
  proc: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

function child(command: string, args: string[], env: Record<string, string>, onLine?: (line: string) => void): Child {
  const proc = spawn(command, args, { cwd: REPO_ROOT, env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] });
  let log = "";
  const keep = (d: Buffer) => (log = (log + d.toString()).slice(-20_000));
  proc.stderr?.on("data", keep);
  if (onLine) createInterface({ input: proc.stdout as NodeJS.ReadableStream }).on("line", (l) => (keep(Buffer.from(`${l}\n`)), onLine(l)));
  else proc.stdout?.on("data", keep);
  return {
    proc,
    output: () => log,
    stop: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
        proc.once("exit", () => resolve());
        proc.stdin?.end();
        proc.kill("SIGTERM");
        setTimeout(() => proc.kill("SIGKILL"), 15_000).unref();
      }),
  };
}

async function startEdgegym(dir: string, upstreams: Record<string, string>, harborDirs: string[]): Promise<{ url: string; server: Child; dbPath: string; profileDir: string }> {
  const port = await freePort();
  const dbPath = join(dir, "edgegym.db");
  const profileDir = join(dir, "cpu-prof");
  const nodeFlags = PROFILE ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`, "--cpu-prof-interval=100"] : [];
  const server = child(
    process.execPath,
    [...nodeFlags, "bin/edgegym.js", "serve", "--port", String(port), "--host", "127.0.0.1", "--db", dbPath, ...harborDirs.flatMap((d) => ["--env", `harbor:${d}`])],
    {
      EDGEGYM_API_KEYS: "",
      EDGEGYM_MODEL_UPSTREAMS: JSON.stringify(Object.fromEntries(Object.entries(upstreams).map(([name, base_url]) => [name, { base_url }]))),
      // Its own proxy port: servers sharing one (SO_REUSEPORT) share callers, and this one has its own database.
      EDGEGYM_SANDBOX_EGRESS_PORT: String(await freePort()),
      EDGEGYM_AGENT_MAX_CALLS: "100000",
      EDGEGYM_AGENT_MAX_TOKENS: "2000000000",
      EDGEGYM_QUOTA_EPISODE_BYTES: "off",
    },
  );
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (server.proc.exitCode !== null) throw new Error(`edgegym exited with ${server.proc.exitCode}:\n${server.output()}`);
    try {
      if ((await fetch(`${url}/health`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`edgegym did not answer /health within 90 s:\n${server.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url, server, dbPath, profileDir };
}

/** verifiers' interception server (bench/vf_interception.py) in front of `upstream`: its base URL and the rollout's secret. */
async function startInterception(upstream: string): Promise<{ child: Child; baseUrl: string; key: string; version: string; python: string; pid: number }> {
  let resolveReady: (v: { base_url: string; api_key: string; verifiers: string; python: string; pid: number }) => void = () => undefined;
  const ready = new Promise<{ base_url: string; api_key: string; verifiers: string; python: string; pid: number }>((r) => (resolveReady = r));
  const proc = child(VF_PYTHON, ["-u", "bench/vf_interception.py", upstream, MODEL], { VF_RUN_ID: `edgegym-bench-harness-${process.pid}` }, (line) => {
    if (line.startsWith("{")) resolveReady(JSON.parse(line));
  });
  const exited = new Promise<never>((_, reject) => proc.proc.once("exit", (code) => reject(new Error(`vf_interception.py exited (${code}):\n${proc.output()}`))));
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`vf_interception.py not ready in 120 s:\n${proc.output()}`)), 120_000).unref());
  const info = await Promise.race([ready, exited, timeout]);
  exited.catch(() => undefined);
  return { child: proc, baseUrl: info.base_url, key: info.api_key, version: info.verifiers, python: info.python, pid: info.pid };
}

/** The floor of a Node proxy hop (bench/support/bare-proxy.mjs: node:http in, `fetch` or node:http out, nothing else) in front of `upstream`. */
async function startBareProxy(upstream: string, mode: "fetch" | "http"): Promise<{ child: Child; baseUrl: string; pid: number }> {
  let resolveReady: (v: { base_url: string; pid: number }) => void = () => undefined;
  const ready = new Promise<{ base_url: string; pid: number }>((r) => (resolveReady = r));
  const proc = child(process.execPath, ["bench/support/bare-proxy.mjs", upstream, mode], {}, (line) => {
    if (line.startsWith("{")) resolveReady(JSON.parse(line));
  });
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`bare-proxy.mjs not ready in 30 s:\n${proc.output()}`)), 30_000).unref());
  const info = await Promise.race([ready, timeout]);
  return { child: proc, baseUrl: info.base_url, pid: info.pid };
}

/** verifiers' mini_swe_agent rollouts on its Docker runtime (bench/vf_mini_rollout.py), one JSON request per line. */
class VerifiersRollouts {
  private readonly c: Child;
  private readonly waiting = new Map<number, (v: Record<string, unknown>) => void>();
  private seq = 0;
  constructor(runId: string) {
    this.c = child(VF_PYTHON, ["-u", "bench/vf_mini_rollout.py", MINI_MODEL], { VF_RUN_ID: runId }, (line) => {
      if (!line.startsWith("{")) return;
      const answer = JSON.parse(line) as { id: number };
      this.waiting.get(answer.id)?.(answer);
      this.waiting.delete(answer.id);
    });
    this.c.proc.once("exit", (code) => {
      for (const w of this.waiting.values()) w({ ok: false, error: `vf_mini_rollout.py exited (${code}): ${this.c.output().slice(-2000)}` });
      this.waiting.clear();
    });
  }
  request<T>(op: string, args: Record<string, unknown> = {}, timeoutMs = 300_000): Promise<T> {
    const id = ++this.seq;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => (this.waiting.delete(id), reject(new Error(`verifiers: ${op} took over ${timeoutMs} ms`))), timeoutMs);
      this.waiting.set(id, (answer) => {
        clearTimeout(timer);
        if (answer.ok) resolve(answer as T);
        else reject(new Error(`verifiers ${op}: ${String(answer.error)}`));
      });
      this.c.proc.stdin?.write(`${JSON.stringify({ id, op, ...args })}\n`);
    });
  }
  stop(): Promise<void> {
    return new Promise((resolve) => {
      const p = this.c.proc;
      if (p.exitCode !== null || p.signalCode !== null) return resolve();
      p.once("exit", () => resolve());
      p.stdin?.end();
      setTimeout(() => p.kill("SIGKILL"), 60_000).unref();
    });
  }
}

// --- HTTP --------------------------------------------------------------------------------------

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function api(base: string, method: string, path: string, body?: unknown, timeoutMs = 300_000): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text) as Json };
  } catch {
    return { status: res.status, body: { text } };
  }
}

interface Target {
  name: string;
  url: string;
  key: string;
  ms: number[];
}

/** One Chat Completions call; its latency (request sent → whole answer read), checked to be a completion. */
async function callOnce(target: Target, body: string): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(target.url, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${target.key}` },
    body,
    signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
  });
  const text = await res.text();
  const t1 = performance.now();
  if (res.status !== 200 || !text.includes('"chat.completion"')) throw new Error(`${target.name}: ${res.status} ${text.slice(0, 400)}`);
  return t1 - t0;
}

// --- CPU profile -------------------------------------------------------------------------------

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

/** Where the server's samples inside [fromUs, toUs] (monotonic clock, µs) went: self time by area and function, inclusive time of edgegym's own functions. */
function summariseProfile(profileDir: string, fromUs: number, toUs: number, calls: number): void {
  let files: string[] = [];
  try {
    files = readdirSync(profileDir).filter((f) => f.endsWith(".cpuprofile"));
  } catch {
    // none written
  }
  if (!files.length) {
    console.log(`no .cpuprofile was written in ${profileDir}`);
    return;
  }
  const kept = join(tmpdir(), "edgegym-bench-harness.cpuprofile");
  copyFileSync(join(profileDir, files[0] as string), kept);
  console.log(`\n(the whole profile: ${kept}, for Chrome DevTools' Performance panel)`);
  const profile = JSON.parse(readFileSync(kept, "utf8")) as { nodes: ProfileNode[]; startTime: number; samples: number[]; timeDeltas: number[] };
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const label = (n: ProfileNode) => {
    const url = n.callFrame.url.replace(`file://${REPO_ROOT}`, "").replace(/^\//, "");
    return `${n.callFrame.functionName || "(anonymous)"} ${url ? `${url.replace(/^.*node_modules\//, "")}:${n.callFrame.lineNumber + 1}` : ""}`.trim();
  };
  const area = (n: ProfileNode) => {
    const { url, functionName } = n.callFrame;
    if (!url) return functionName.startsWith("(") ? functionName : `${functionName || "(native)"} [V8/native]`;
    const pkg = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
    if (pkg) return `npm: ${pkg[1]}`;
    if (url.includes("deps/undici")) return "node: undici (fetch to the upstream)";
    if (url.startsWith("node:internal/")) return `node: ${url.slice(5).split("/").slice(0, 2).join("/")}`;
    if (url.startsWith("node:")) return `node: ${url.slice(5)}`;
    const rel = url.replace(`file://${REPO_ROOT}`, "").replace(/^\//, "");
    return rel.startsWith("dist/") ? rel.split("/").slice(0, 3).join("/") : rel;
  };
  // Each sample to the first of these its stack meets from the leaf up: what the time was spent on.
  const stages: [string, (url: string) => boolean][] = [
    ["fetch() to the upstream (undici: request write, response parse, body read)", (u) => u.includes("deps/undici")],
    ["SQLite (read the head, group commit of the turn)", (u) => /better-sqlite3|drizzle-orm|\/dist\/server\/db\//.test(u)],
    ["zod (state and message parsing)", (u) => u.includes("node_modules/zod")],
    ["@hono/node-server (Request in, writing the answer out)", (u) => u.includes("@hono/node-server")],
    ["hono routing and middleware", (u) => u.includes("node_modules/hono/")],
    ["edgegym endpoint code (JSON, key hash, turn record)", (u) => /\/dist\/server\/(model-endpoint|routes\/model-endpoint)/.test(u)],
    ["other edgegym code (middleware)", (u) => u.includes("/dist/")],
    ["node:http server (parsing the incoming request)", (u) => /^node:_http_(server|common|incoming)/.test(u)],
  ];
  const stageOf = (leaf: ProfileNode): string => {
    if (leaf.callFrame.functionName === "(garbage collector)") return "garbage collector";
    for (let id: number | undefined = leaf.id; id !== undefined; id = parent.get(id)) {
      const url = (byId.get(id) as ProfileNode).callFrame.url;
      for (const [name, test] of stages) if (url && test(url)) return name;
    }
    return "other (event loop, streams and sockets outside the above, native)";
  };
  const byStage = new Map<string, number>();
  const self = new Map<string, number>();
  const areas = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let t = profile.startTime;
  let total = 0;
  let idle = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] as number;
    if (t < fromUs || t > toUs) continue;
    const dt = (profile.timeDeltas[i + 1] ?? 0) / 1000;
    const node = byId.get(profile.samples[i] as number);
    if (!node) continue;
    if (node.callFrame.functionName === "(idle)") {
      idle += dt;
      continue;
    }
    total += dt;
    byStage.set(stageOf(node), (byStage.get(stageOf(node)) ?? 0) + dt);
    self.set(label(node), (self.get(label(node)) ?? 0) + dt);
    areas.set(area(node), (areas.get(area(node)) ?? 0) + dt);
    const seen = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const n = byId.get(id) as ProfileNode;
      if (!n.callFrame.url.includes("/dist/")) continue;
      const l = label(n);
      if (seen.has(l)) continue;
      seen.add(l);
      inclusive.set(l, (inclusive.get(l) ?? 0) + dt);
    }
  }
  const top = (m: Map<string, number>, k: number) => [...m].sort((a, b) => b[1] - a[1]).slice(0, k);
  console.log(`\nedgegym server CPU profile over the measured window: ${total.toFixed(0)} ms on CPU (${(total / calls).toFixed(2)} ms per proxied call, counting all ${calls} rounds; the profiler's 100 µs sampling inflates it: read the shares), ${idle.toFixed(0)} ms idle`);
  console.log("\nwhere the time goes (each sample to the first stage its stack meets from the leaf up):");
  table(["stage", "% of CPU", "ms/call"], top(byStage, 20).map(([k, v]) => [k, `${((100 * v) / total).toFixed(1)}%`, (v / calls).toFixed(3)]));
  console.log("\nself time by area:");
  table(["area", "ms", "% of CPU", "ms/call"], top(areas, 12).map(([k, v]) => [k, v.toFixed(0), `${((100 * v) / total).toFixed(1)}%`, (v / calls).toFixed(3)]));
  console.log("\nself time by function:");
  table(["function", "ms", "%"], top(self, 15).map(([k, v]) => [k, v.toFixed(0), `${((100 * v) / total).toFixed(1)}%`]));
  console.log("\ninclusive time of edgegym's own functions (dist/):");
  table(["function", "ms", "% of CPU", "ms/call"], top(inclusive, 16).map(([k, v]) => [k, v.toFixed(0), `${((100 * v) / total).toFixed(1)}%`, (v / calls).toFixed(3)]));
}

// --- the run -------------------------------------------------------------------------------------

if (!dockerReady()) throw new Error("bench:harness needs a Docker daemon with edgegym/base:bookworm (bash scripts/sandbox-base-image.sh)");
const dir = mkdtempSync(join(tmpdir(), "edgegym-bench-harness-"));
const vfRunId = `edgegym-bench-harness-${process.pid}-${Date.now()}`;
const upstreams: ScriptedUpstream[] = [];
let edgegym: Child | undefined;
let interception: Child | undefined;
const bareProxies: Child[] = [];
let vfRollouts: VerifiersRollouts | undefined;
let dbLabel: string | undefined;
let cleaned = false;

async function cleanup(): Promise<void> {
  if (cleaned) return;
  cleaned = true;
  await vfRollouts?.stop().catch(() => undefined);
  await interception?.stop().catch(() => undefined);
  for (const b of bareProxies) await b.stop().catch(() => undefined);
  await edgegym?.stop().catch(() => undefined);
  for (const u of upstreams) await u.close().catch(() => undefined);
  let removed = 0;
  for (const label of [`verifiers.run=${vfRunId}`, ...(dbLabel ? [`edgegym.db=${dbLabel}`] : [])]) {
    const ids = containersWith(label);
    if (ids.length) execFileSync("docker", ["rm", "-f", ...ids], { stdio: "ignore", timeout: 120_000 });
    removed += ids.length;
  }
  if (removed) console.error(`removed ${removed} container(s) the run left`);
  if (!PROFILE) rmSync(dir, { recursive: true, force: true });
}
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => void cleanup().finally(() => process.exit(130)));
const watchdog = setTimeout(() => {
  console.error(`bench:harness: past BENCH_MAX_SECONDS=${DEADLINE_S}; stopping`);
  void cleanup().finally(() => process.exit(1));
}, DEADLINE_S * 1000);
watchdog.unref();

const cpuModel = readFileSync("/proc/cpuinfo", "utf8").match(/model name\s*:\s*(.*)/)?.[1] ?? "unknown CPU";
console.log(`# bench:harness — ${cpus().length} cores (${cpuModel}), load average ${loadavg()[0]?.toFixed(1)} at start; Node ${process.version}`);

try {
  // The mini-swe-agent task (its wheels from the host's cache or PyPI): without it, part 2 is skipped.
  let mini: { taskDir: string } | null = null;
  let miniSkipped = SKIP.has("rollouts") ? "BENCH_SKIP=rollouts" : "";
  if (!miniSkipped) {
    try {
      mini = await ensureMiniSweTask();
    } catch (err) {
      miniSkipped = `the mini-swe-agent task cannot be prepared: ${(err as Error).message.slice(0, 400)}`;
    }
  }

  // Upstreams: one for part 1 (the three paths share it), one per edgegym rollout (each its own script).
  const reply: ScriptedAssistantReply = { content: "THOUGHT: run the tests again.", tool_calls: [{ function: { name: "bash", arguments: { command: "python3 -m pytest -q tests" } } }] };
  const proxyUpstream = await startScriptedUpstream({ replies: Array.from({ length: (WARMUP + CALLS) * 5 }, () => reply) });
  upstreams.push(proxyUpstream);
  const named: Record<string, string> = { scripted: proxyUpstream.url };
  const egRolloutUpstreams: ScriptedUpstream[] = [];
  if (mini) {
    for (let i = 0; i <= ROLLOUTS; i++) {
      const u = await startScriptedUpstream({ replies: [...MINI_SOLVING_REPLIES] });
      upstreams.push(u);
      egRolloutUpstreams.push(u);
      named[`mini${i}`] = u.url;
    }
  }

  const [eg, vf, bare, bareHttp] = await Promise.all([
    startEdgegym(dir, named, [FIXTURES, ...(mini ? [dirname(mini.taskDir)] : [])]),
    startInterception(proxyUpstream.url),
    startBareProxy(proxyUpstream.url, "fetch"),
    startBareProxy(proxyUpstream.url, "http"),
  ]);
  edgegym = eg.server;
  interception = vf.child;
  bareProxies.push(bare.child, bareHttp.child);
  dbLabel = databaseLabel(eg.dbPath);
  const edgegymPid = eg.server.proc.pid as number;
  console.log(`edgegym: ${eg.url} (pid ${edgegymPid}${PROFILE ? ", --cpu-prof" : ""}); verifiers ${vf.version} interception server on Python ${vf.python}: ${vf.baseUrl} (pid ${vf.pid})`);

  // ------------------------------------------------------------------ 1. per-call overhead
  const reset = await api(eg.url, "POST", "/v1/envs/harbor/episodes", {
    args: { task: PROXY_TASK },
    agent: { command: "sleep 600", upstream: "scripted", model: MODEL, timeout_seconds: 900, limits: { max_calls: 100_000 } },
  });
  if (reset.status !== 201) throw new Error(`edgegym reset: ${reset.status} ${JSON.stringify(reset.body).slice(0, 500)}`);
  const episodeId = reset.body.episode_id as string;
  const endpoint = reset.body.model_endpoint as { openai_base_url: string; api_key: string };
  const body = agentCallBody(MODEL);
  const targets: Target[] = [
    { name: "direct", url: `${proxyUpstream.url}/chat/completions`, key: "sk-direct", ms: [] },
    { name: "edgegym", url: `${endpoint.openai_base_url}/chat/completions`, key: endpoint.api_key, ms: [] },
    { name: "verifiers", url: `${vf.baseUrl}/chat/completions`, key: vf.key, ms: [] },
    { name: "bare proxy (fetch)", url: `${bare.baseUrl}/chat/completions`, key: "sk-bare", ms: [] },
    { name: "bare proxy (node:http)", url: `${bareHttp.baseUrl}/chat/completions`, key: "sk-bare", ms: [] },
  ];
  const [direct, viaEdgegym, viaVerifiers, viaBare, viaBareHttp] = targets as [Target, Target, Target, Target, Target];
  console.log(`\n## 1. Per-call proxy overhead: ${CALLS} rounds (after ${WARMUP} warm-up rounds) of one sequential call to each of 5 paths, order rotating; body ${(body.length / 1024).toFixed(1)} KB (${JSON.parse(body).messages.length} messages + bash tool)`);
  for (let r = 0; r < WARMUP; r++) for (const target of targets) await callOnce(target, body);
  const cpu0 = { eg: processTreeCpuSeconds(edgegymPid), vf: processTreeCpuSeconds(vf.pid), bare: processTreeCpuSeconds(bare.pid), bareHttp: processTreeCpuSeconds(bareHttp.pid) };
  const window0 = process.hrtime.bigint();
  const started = performance.now();
  for (let r = 0; r < CALLS; r++) {
    for (let k = 0; k < targets.length; k++) {
      const target = targets[(r + k) % targets.length] as Target;
      target.ms.push(await callOnce(target, body));
    }
  }
  const window1 = process.hrtime.bigint();
  const elapsed = performance.now() - started;
  const cpu1 = { eg: processTreeCpuSeconds(edgegymPid), vf: processTreeCpuSeconds(vf.pid), bare: processTreeCpuSeconds(bare.pid), bareHttp: processTreeCpuSeconds(bareHttp.pid) };
  const cpuPerCall = (a: number | null, b: number | null) => (a === null || b === null ? Number.NaN : ((b - a) * 1000) / CALLS);

  // What each proxy recorded: every call of the warm-up and the run.
  const episode = await api(eg.url, "GET", `/v1/episodes/${episodeId}`);
  const egCalls = episode.body.agent?.calls as number;
  await api(eg.url, "DELETE", `/v1/episodes/${episodeId}`);

  const paired = (t: Target) => t.ms.map((x, i) => x - (direct.ms[i] as number));
  const over = (t: Target) => ({ p50: p50(t.ms) - p50(direct.ms), p99: p99(t.ms) - p99(direct.ms), paired50: p50(paired(t)) });
  const egOver = over(viaEdgegym);
  const vfOver = over(viaVerifiers);
  const bareOver = over(viaBare);
  const bareHttpOver = over(viaBareHttp);
  table(
    ["path", "p50", "p99", "overhead p50 (vs direct)", "overhead p99", "median of paired differences", "server CPU per call"],
    [
      ["(a) direct to the scripted upstream", ms(p50(direct.ms)), ms(p99(direct.ms)), "–", "–", "–", "–"],
      ["(b) edgegym episode endpoint", ms(p50(viaEdgegym.ms)), ms(p99(viaEdgegym.ms)), ms(egOver.p50), ms(egOver.p99), ms(egOver.paired50), ms(cpuPerCall(cpu0.eg, cpu1.eg))],
      ["(c) verifiers 0.4.0 interception", ms(p50(viaVerifiers.ms)), ms(p99(viaVerifiers.ms)), ms(vfOver.p50), ms(vfOver.p99), ms(vfOver.paired50), ms(cpuPerCall(cpu0.vf, cpu1.vf))],
      ["(d) floor: bare Node proxy, fetch out", ms(p50(viaBare.ms)), ms(p99(viaBare.ms)), ms(bareOver.p50), ms(bareOver.p99), ms(bareOver.paired50), ms(cpuPerCall(cpu0.bare, cpu1.bare))],
      ["(e) floor: bare Node proxy, node:http out", ms(p50(viaBareHttp.ms)), ms(p99(viaBareHttp.ms)), ms(bareHttpOver.p50), ms(bareHttpOver.p99), ms(bareHttpOver.paired50), ms(cpuPerCall(cpu0.bareHttp, cpu1.bareHttp))],
    ],
  );
  const goal = egOver.p50 <= 2 && egOver.p50 < vfOver.p50;
  console.log(
    `\nedgegym overhead / verifiers overhead: p50 ${ratio(egOver.p50, vfOver.p50)}, p99 ${ratio(egOver.p99, vfOver.p99)}; ` +
      `goal (edgegym overhead p50 ≤ 2 ms and below verifiers'): ${goal ? "MET" : "NOT MET"} (${ms(egOver.p50)} vs ${ms(vfOver.p50)})`,
  );
  console.log(`edgegym above the bare-proxy floor (b−d): p50 ${ms(egOver.p50 - bareOver.p50)}, p99 ${ms(egOver.p99 - bareOver.p99)}; the floors themselves (one more Node HTTP hop, nothing else): ${ms(bareOver.p50)} with fetch out, ${ms(bareHttpOver.p50)} with node:http out, at p50`);
  console.log(`recorded: edgegym episode ${egCalls} calls (expected ${WARMUP + CALLS}); the scripted upstream answered ${proxyUpstream.received.length}; ${(elapsed / 1000).toFixed(1)} s for the measured rounds`);

  // ------------------------------------------------------------------ 2. whole rollouts
  console.log(`\n## 2. Whole rollout: mini-swe-agent 2.4.6 on write-greeting (3 scripted calls, reward from tests/test.sh)`);
  if (!mini) {
    console.log(`skipped: ${miniSkipped}`);
  } else {
    const instruction = readFileSync(join(mini.taskDir, "instruction.md"), "utf8");
    // When each rollout's upstream got its calls (wall clock, ms): splits the agent phase into its start-up, its calls, its exit.
    const callTimes = new Map<ScriptedUpstream, number[]>();
    const stamp = (u: ScriptedUpstream): ScriptedUpstream => {
      const times: number[] = [];
      callTimes.set(u, times);
      const push = u.received.push.bind(u.received);
      u.received.push = (...items) => (times.push(Date.now()), push(...items));
      return u;
    };
    egRolloutUpstreams.forEach(stamp);
    const split = (times: number[] | undefined, agentStart: number, agentEnd: number) => ({
      toFirstCall: times?.length ? (times[0] as number) - agentStart : Number.NaN,
      firstToLastCall: times?.length ? (times.at(-1) as number) - (times[0] as number) : Number.NaN,
      lastCallToExit: times?.length ? agentEnd - (times.at(-1) as number) : Number.NaN,
    });
    const egRollout = async (i: number) => {
      const t0 = performance.now();
      const res = await api(eg.url, "POST", "/v1/envs/harbor/episodes", {
        args: { task: "write-greeting" },
        agent: { command: MINI_AGENT_COMMAND, upstream: `mini${i}`, model: MINI_MODEL, timeout_seconds: 240 },
      }, 900_000);
      if (res.status !== 201) throw new Error(`edgegym reset: ${res.status} ${JSON.stringify(res.body).slice(0, 500)}`);
      const t1 = performance.now();
      const t1Wall = Date.now();
      const id = res.body.episode_id as string;
      let view: Json;
      for (;;) {
        view = (await api(eg.url, "GET", `/v1/episodes/${id}`)).body;
        if (view.status !== "active" && view.agent?.status !== "running") break;
        if (performance.now() - t1 > 300_000) throw new Error(`edgegym episode ${id} still active after 300 s`);
        await new Promise((r) => setTimeout(r, 50));
      }
      const t2 = performance.now();
      const t2Wall = Date.now();
      const [container] = containersWith(`edgegym.episode=${id}`);
      const image = container ? execFileSync("docker", ["inspect", "--format", "{{.Config.Image}}", container], { encoding: "utf8" }).trim() : null;
      const score = await api(eg.url, "POST", `/v1/episodes/${id}/score`);
      const t3 = performance.now();
      return { ms: t3 - t0, reset: t1 - t0, agent: t2 - t1, score: t3 - t2, reward: score.body.score?.reward as number, calls: view.agent?.calls as number, stop: view.stop_reason as string, agentSeconds: view.agent?.seconds as number, image, ...split(callTimes.get(egRolloutUpstreams[i] as ScriptedUpstream), t1Wall, t2Wall) };
    };
    // Warm-up: edgegym builds (or finds) the task's image; verifiers runs on that image.
    const warm = await egRollout(0);
    if (!warm.image) throw new Error("the edgegym warm-up rollout left no container to read the image from");
    console.log(`warm-up: edgegym reward ${warm.reward} in ${secs(warm.ms)} (image ${warm.image})`);
    vfRollouts = new VerifiersRollouts(vfRunId);
    const vfUpstreams: ScriptedUpstream[] = [];
    for (let i = 0; i <= ROLLOUTS; i++) {
      const u = stamp(await startScriptedUpstream({ replies: [...MINI_SOLVING_REPLIES] }));
      upstreams.push(u);
      vfUpstreams.push(u);
    }
    interface VfResult { ms: number; reward: number | null; ok: boolean; errors: string[]; calls: number; stop: string; timing: Record<string, number | null>; agent_span: [number, number] | null }
    const vfRollout = async (i: number) => {
      const u = vfUpstreams[i] as ScriptedUpstream;
      const r = await vfRollouts!.request<VfResult>("rollout", { image: warm.image, task_dir: mini!.taskDir, instruction, upstream: u.url });
      return { ...r, ...split(callTimes.get(u), (r.agent_span?.[0] ?? Number.NaN) * 1000, (r.agent_span?.[1] ?? Number.NaN) * 1000) };
    };
    const vfWarm = await vfRollout(0);
    console.log(`warm-up: verifiers reward ${vfWarm.reward} in ${secs(vfWarm.ms)}${vfWarm.errors.length ? ` (errors: ${vfWarm.errors.join("; ")})` : ""}`);
    const egRuns: Awaited<ReturnType<typeof egRollout>>[] = [];
    const vfRuns: Awaited<ReturnType<typeof vfRollout>>[] = [];
    for (let i = 1; i <= ROLLOUTS; i++) {
      if (i % 2) {
        egRuns.push(await egRollout(i));
        vfRuns.push(await vfRollout(i));
      } else {
        vfRuns.push(await vfRollout(i));
        egRuns.push(await egRollout(i));
      }
    }
    const med = (xs: (number | null | undefined)[]) => p50(xs.filter((x): x is number => typeof x === "number"));
    const vfPhase = (names: string[]) => med(vfRuns.map((r) => names.reduce((s, n) => s + (r.timing[n] ?? 0), 0)));
    table(
      ["system (medians of " + ROLLOUTS + ")", "whole rollout", "start (box + agent launched)", "agent (to its exit)", "score (+ teardown)", "rewards", "calls"],
      [
        ["edgegym: reset → done → score", secs(med(egRuns.map((r) => r.ms))), secs(med(egRuns.map((r) => r.reset))), secs(med(egRuns.map((r) => r.agent))), secs(med(egRuns.map((r) => r.score))), egRuns.map((r) => r.reward).join(","), egRuns.map((r) => r.calls).join(",")],
        [
          "verifiers: Agent.run (mini_swe_agent, Docker)",
          secs(med(vfRuns.map((r) => r.ms))),
          secs(vfPhase(["boot", "setup"])),
          secs(vfPhase(["agent"])),
          secs(med(vfRuns.map((r) => r.ms - ["boot", "setup", "agent"].reduce((s, n) => s + (r.timing[n] ?? 0), 0)))),
          vfRuns.map((r) => r.reward).join(","),
          vfRuns.map((r) => r.calls).join(","),
        ],
      ],
    );
    console.log(`\nedgegym / verifiers whole rollout: ${ratio(med(egRuns.map((r) => r.ms)), med(vfRuns.map((r) => r.ms)))}; agent phase ${ratio(med(egRuns.map((r) => r.agent)), vfPhase(["agent"]))}`);
    console.log("\nthe agent phase (medians): from the agent's launch to its first model call, first to last call, last call to the agent's exit seen");
    table(
      ["system", "launch → first call", "first → last call", "last call → exit"],
      [
        ["edgegym", secs(med(egRuns.map((r) => r.toFirstCall))), secs(med(egRuns.map((r) => r.firstToLastCall))), secs(med(egRuns.map((r) => r.lastCallToExit)))],
        ["verifiers", secs(med(vfRuns.map((r) => r.toFirstCall))), secs(med(vfRuns.map((r) => r.firstToLastCall))), secs(med(vfRuns.map((r) => r.lastCallToExit)))],
      ],
    );
    console.log(`edgegym agent.seconds (server-side): ${egRuns.map((r) => r.agentSeconds).join(", ")}; stop reasons ${egRuns.map((r) => r.stop).join(", ")}`);
    console.log(`verifiers phases (ms): ${vfRuns.map((r) => JSON.stringify(Object.fromEntries(Object.entries(r.timing).filter(([, v]) => v !== null).map(([k, v]) => [k, Math.round(v as number)])))).join(" ")}`);
    const bad = vfRuns.filter((r) => !r.ok || r.reward !== 1);
    if (bad.length) console.log(`verifiers rollouts not solved: ${bad.map((r) => `${r.stop} ${r.errors.join("; ")}`).join(" | ")}`);
  }

  await cleanup();
  if (PROFILE) summariseProfile(eg.profileDir, Number(window0 / 1000n), Number(window1 / 1000n), CALLS);
  console.log(`\nload average ${loadavg()[0]?.toFixed(1)} at the end (the machine is shared: compare rows of one run, not runs)`);
  if (PROFILE) rmSync(dir, { recursive: true, force: true });
} catch (err) {
  console.error(err);
  if (edgegym) console.error(`--- edgegym output (tail) ---\n${edgegym.output().slice(-3000)}`);
  process.exitCode = 1;
} finally {
  await cleanup();
}
