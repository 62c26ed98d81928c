/**
 * `npm run bench:worker-sandbox`: the same Harbor task through both sandbox providers in one
 * run. The Docker provider is the Node server, started in this process. The Containers
 * provider is the Worker under `wrangler dev` (EDGEGYM_HARBOR_TASKS, one Cloudflare
 * Container per episode, the local work-arounds of scripts/dev-worker/). Rounds
 * alternate between the two.
 *
 * Rows: cold start (reset until the first `bash true` reply, and the reset alone); warm
 * start (Node's pool; the Worker has none); command round trip (30 `true` per episode, and a
 * raw `docker exec` on the Node box as the floor); destroy (DELETE until the reply, and
 * until the container is gone); a whole oracle trial; and 4 cold starts at once. Then the
 * cost of a sandboxed episode-hour on Cloudflare for the task's instance type, from
 * Cloudflare's published rates.
 *
 * Under `wrangler dev` the container runs on this machine's Docker behind a stand-in
 * sidecar, so the Worker's figures are local workerd plus Docker, not Cloudflare's network.
 * Environment: BENCH_ROUNDS (default 8), BENCH_COMMANDS (default 30), BENCH_TASKS (default
 * count-errors,fix-median: an oracle row each), BENCH_MAX_SECONDS (default 1800: past it the
 * run stops and cleans up).
 *
 * Every request has a timeout and the run a deadline. At the end, after a failure, at the
 * deadline or on Ctrl-C, the episodes still open are DELETEd on both servers, `wrangler dev`
 * is stopped (it removes its containers), both Node servers are closed, and any container
 * still left that this run made (Node's by its database label, the Worker's by a name first
 * seen during the run) is removed.
 */
import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { loadHarborTasks } from "../src/envs/builtin/harbor/task-dir.node.js";
import { databaseLabel } from "../src/server/node/harbor.js";
import { startNodeServer, type RunningServer } from "../src/server/node/serve.js";
import { INSTANCE_TYPES, instanceTypeFor } from "../src/server/worker/instance-type.js";
import type { ChildServer } from "../test/support/child-server.js";
import { startDevWorker } from "../test/support/dev-worker.js";
import { REPO_ROOT } from "../test/support/node-server.js";
import { HarborEpisodes } from "./support/harbor-http.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);
const COMMANDS = Number(process.env.BENCH_COMMANDS ?? 30);
/** The task of the start, command and destroy rows; every task in BENCH_TASKS gets an oracle row. */
const TASK = "count-errors";
const TASKS = (process.env.BENCH_TASKS ?? "count-errors,fix-median").split(",").filter(Boolean);
const WORKER_NAME = "edgegym-bench";
const DEADLINE_S = Number(process.env.BENCH_MAX_SECONDS ?? 1800);
const run = promisify(execFile);

/** Cloudflare Containers' published rates (developers.cloudflare.com/containers/pricing, read 2026-11). */
const RATES = { vcpuSecond: 0.00002, gibSecond: 0.0000025, gbDiskSecond: 0.00000007 };

const quantile = (xs: number[], q: number): number => {
  if (!xs.length) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] as number;
};
const p50 = (xs: number[]) => quantile(xs, 0.5);
const p90 = (xs: number[]) => quantile(xs, 0.9);
const fmt = (ms: number) => (Number.isNaN(ms) ? "–" : ms >= 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`);
const ratio = (a: number, b: number) => (Number.isFinite(a / b) ? `${(a / b).toFixed(2)}×` : "–");

/** Running containers matching every filter (not the Worker's `-proxy` sidecars). */
async function names(...filters: string[]): Promise<string[]> {
  const { stdout } = await run("docker", ["ps", "--format", "{{.Names}}", ...filters.flatMap((f) => ["--filter", f])], { timeout: 30_000 });
  return stdout.split("\n").filter((n) => n && !n.endsWith("-proxy"));
}

/** Every container (running or not, sidecars too) whose name contains `part`. */
async function allNamed(part: string): Promise<string[]> {
  const { stdout } = await run("docker", ["ps", "-a", "--format", "{{.Names}}", "--filter", `name=${part}`], { timeout: 30_000 });
  return stdout.split("\n").filter(Boolean);
}

/** Polls until `done()` holds (60 s at most); the time since `t0`, or NaN past the 60 s. */
async function until(done: () => Promise<boolean>, t0: number): Promise<number> {
  const deadline = Date.now() + 60_000;
  while (!(await done())) {
    if (Date.now() > deadline) return Number.NaN;
    await new Promise((r) => setTimeout(r, 20));
  }
  return performance.now() - t0;
}

/** HarborEpisodes that remembers its open episodes, so clean-up can DELETE them after a failure. */
class TrackedEpisodes extends HarborEpisodes {
  readonly open = new Set<string>();
  override async reset(task: string): Promise<string> {
    const id = await super.reset(task);
    this.open.add(id);
    return id;
  }
  override async close(id: string): Promise<unknown> {
    const reply = await super.close(id);
    this.open.delete(id);
    return reply;
  }
  /** DELETEs every episode still open; how many would not go. */
  async closeAll(): Promise<number> {
    const results = await Promise.allSettled([...this.open].map((id) => this.close(id)));
    return results.filter((r) => r.status === "rejected").length;
  }
}

interface Side {
  name: string;
  api: TrackedEpisodes;
  /** The running containers of this side's episodes. */
  boxes(): Promise<string[]>;
}

interface Figures {
  first: number[];
  reset: number[];
  command: number[];
  close: number[];
  gone: number[];
  oracle: Record<string, number[]>;
  concurrent: number[];
}

const empty = (): Figures => ({ first: [], reset: [], command: [], close: [], gone: [], oracle: {}, concurrent: [] });

async function round(side: Side, tasksDir: string, into: Figures): Promise<void> {
  const before = new Set(await side.boxes());
  const t0 = performance.now();
  const id = await side.api.reset(TASK);
  into.reset.push(performance.now() - t0);
  await side.api.bash(id, 0, "true");
  into.first.push(performance.now() - t0);
  for (let i = 1; i <= COMMANDS; i++) {
    const t = performance.now();
    await side.api.bash(id, i, "true");
    into.command.push(performance.now() - t);
  }
  const mine = (await side.boxes()).filter((n) => !before.has(n));
  const t1 = performance.now();
  await side.api.close(id);
  into.close.push(performance.now() - t1);
  into.gone.push(await until(async () => !(await side.boxes()).some((n) => mine.includes(n)), t1));
  for (const task of TASKS) {
    const trial = await side.api.oracleTrial(task, join(tasksDir, task));
    if (trial.reward !== 1) throw new Error(`${side.name}: ${task}'s oracle scored ${trial.reward}`);
    (into.oracle[task] ??= []).push(trial.ms);
  }
}

async function concurrent(side: Side, into: Figures): Promise<void> {
  const t0 = performance.now();
  const ids = await Promise.all(Array.from({ length: 4 }, () => side.api.reset(TASK)));
  await Promise.all(ids.map((id) => side.api.bash(id, 0, "true")));
  into.concurrent.push(performance.now() - t0);
  await Promise.all(ids.map((id) => side.api.close(id)));
  // The next run starts cold on an empty machine.
  if (Number.isNaN(await until(async () => (await side.boxes()).length === 0, performance.now()))) throw new Error(`${side.name}: containers still running 60 s after their DELETE`);
}

const dir = mkdtempSync(join(tmpdir(), "edgegym-bench-worker-sandbox-"));
const tasksDir = join(dir, "tasks");
for (const task of new Set([TASK, ...TASKS])) cpSync(join(REPO_ROOT, "test/fixtures/harbor-tasks", task), join(tasksDir, task), { recursive: true });
const nodeDb = join(dir, "node.db");
const warmDb = join(dir, "warm.db");
let node: RunningServer | undefined;
let warmNode: RunningServer | undefined;
let worker: ChildServer | undefined;
const apis: TrackedEpisodes[] = [];
/** The Worker's containers (sidecars too) that were there before this run's `wrangler dev` started: not this run's to remove. */
let foreignWorkerBoxes = new Set<string>();
const started = performance.now();
const loadStart = loadavg().map((l) => l.toFixed(1)).join(" / ");

let cleaning: Promise<void> | undefined;
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    const refused = (await Promise.all(apis.map((api) => api.closeAll()))).reduce((a, b) => a + b, 0);
    if (refused) console.error(`${refused} episode(s) would not close`);
    await worker?.stop().catch((err: unknown) => console.error("stopping wrangler dev:", err));
    await warmNode?.close().catch(() => undefined);
    await node?.close().catch(() => undefined);
    // What the servers' own clean-up left: Node's containers by this run's database labels, the Worker's by name.
    const left = new Set<string>();
    for (const db of [nodeDb, warmDb]) {
      const { stdout } = await run("docker", ["ps", "-aq", "--filter", `label=edgegym.db=${databaseLabel(db)}`], { timeout: 30_000 }).catch(() => ({ stdout: "" }));
      for (const id of stdout.split("\n").filter(Boolean)) left.add(id);
    }
    for (const name of await allNamed(`workerd-${WORKER_NAME}-`).catch(() => [])) if (!foreignWorkerBoxes.has(name)) left.add(name);
    if (left.size) {
      console.error(`removing ${left.size} container(s) the run left: ${[...left].join(", ")}`);
      await run("docker", ["rm", "-f", ...left], { timeout: 120_000 }).catch((err: unknown) => console.error("docker rm:", err));
    }
    rmSync(dir, { recursive: true, force: true });
  })();
  return cleaning;
}
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => void cleanup().finally(() => process.exit(130)));
const watchdog = setTimeout(() => {
  console.error(`bench:worker-sandbox: past BENCH_MAX_SECONDS=${DEADLINE_S}; stopping`);
  void cleanup().finally(() => process.exit(1));
}, DEADLINE_S * 1000);
watchdog.unref();

try {
  node = await startNodeServer({ port: 0, host: "127.0.0.1", dbPath: nodeDb, reapIntervalMs: 0, harborDirs: [tasksDir], config: { sandboxMaxLive: 16 } });
  foreignWorkerBoxes = new Set(await allNamed(`workerd-${WORKER_NAME}-`));
  const devWorker = await startDevWorker({ persistTo: join(dir, "worker-state"), env: { EDGEGYM_HARBOR_TASKS: tasksDir, EDGEGYM_WORKER_NAME: WORKER_NAME }, startTimeoutMs: 900_000, stopGraceMs: 60_000 });
  worker = devWorker.server;
  const nodeApi = new TrackedEpisodes(node.url);
  const workerApi = new TrackedEpisodes(devWorker.baseUrl);
  apis.push(nodeApi, workerApi);
  const nodeLabel = databaseLabel(nodeDb);
  const sides: Side[] = [
    { name: "Docker provider (Node server)", api: nodeApi, boxes: () => names(`label=edgegym.db=${nodeLabel}`, "label=edgegym.role=episode") },
    { name: "Containers provider (Worker, wrangler dev)", api: workerApi, boxes: () => names(`name=workerd-${WORKER_NAME}-HarborBox`) },
  ];
  // Warm-up: images built or found, first isolates and connections made.
  for (const side of sides) await round(side, tasksDir, empty());
  console.error(`warm-up done (${Math.round((performance.now() - started) / 1000)} s)`);

  const figures = sides.map(() => empty());
  const raw: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 ? [1, 0] : [0, 1];
    for (const i of order) await round(sides[i] as Side, tasksDir, figures[i] as Figures);
    // The floor: the docker CLI's exec on a Node box.
    const id = await nodeApi.reset(TASK);
    const [box] = await names(`label=edgegym.episode=${id}`);
    for (let i = 0; i < 10 && box; i++) {
      const t = performance.now();
      await run("docker", ["exec", box, "true"], { timeout: 30_000 });
      raw.push(performance.now() - t);
    }
    await nodeApi.close(id);
    console.error(`round ${r + 1}/${ROUNDS} (${Math.round((performance.now() - started) / 1000)} s)`);
  }
  for (let r = 0; r < Math.min(3, ROUNDS); r++) for (const i of r % 2 ? [1, 0] : [0, 1]) await concurrent(sides[i] as Side, figures[i] as Figures);

  // Warm start: a server of its own (EDGEGYM_SANDBOX_WARM=1) keeps one started box per task; each reset claims it, and the pool refills between rounds.
  const warm: number[] = [];
  warmNode = await startNodeServer({ port: 0, host: "127.0.0.1", dbPath: warmDb, reapIntervalMs: 0, harborDirs: [tasksDir], config: { sandboxMaxLive: 16, sandboxWarm: 1 } });
  const warmApi = new TrackedEpisodes(warmNode.url);
  apis.push(warmApi);
  const warmLabel = databaseLabel(warmDb);
  for (let r = 0; r <= ROUNDS; r++) {
    const filled = await until(async () => (await names(`label=edgegym.db=${warmLabel}`, "label=edgegym.role=warm", `label=edgegym.task=edgegym/${TASK}`)).length >= 1, performance.now());
    if (Number.isNaN(filled)) throw new Error("the warm pool did not fill in 60 s");
    const t0 = performance.now();
    const id = await warmApi.reset(TASK);
    await warmApi.bash(id, 0, "true");
    if (r > 0) warm.push(performance.now() - t0);
    await warmApi.close(id);
  }

  const [d, w] = figures as [Figures, Figures];
  const row = (label: string, a: number[], b: number[], q = p50) => `| ${label} | ${fmt(q(a))} | ${fmt(q(b))} | ${ratio(q(b), q(a))} |`;
  console.log(`\nbench:worker-sandbox, ${new Date().toISOString()}: 2 cores; load average ${loadStart} at the start, ${loadavg().map((l) => l.toFixed(1)).join(" / ")} at the end; tasks ${TASK} (oracles: ${TASKS.join(", ")}); ${ROUNDS} rounds, ${COMMANDS} commands each; whole run ${Math.round((performance.now() - started) / 1000)} s\n`);
  console.log(`| p50 unless said (n = ${ROUNDS} rounds) | Docker provider (Node) | Containers provider (Worker, wrangler dev) | Worker ÷ Node |`);
  console.log("|---|---|---|---|");
  console.log(row("cold start: reset until the first `true` answered", d.first, w.first));
  console.log(row("of which the reset", d.reset, w.reset));
  console.log(`| warm start: a box claimed from the pool, then \`true\` | ${fmt(p50(warm))} | n/a (no warm pool on the Worker) | – |`);
  console.log(row("command round trip, `bash true` step", d.command, w.command));
  console.log(row("command round trip, p90", d.command, w.command, p90));
  console.log(`| raw \`docker exec C true\` (CLI) on a Node box, the floor | ${fmt(p50(raw))} | – | – |`);
  console.log(row("destroy: DELETE until its reply", d.close, w.close));
  console.log(row("destroy: DELETE until the container is gone", d.gone, w.gone));
  for (const task of TASKS) console.log(row(`whole oracle trial of ${task} (reset, solve, score; reward 1 each)`, d.oracle[task] ?? [], w.oracle[task] ?? []));
  console.log(row("4 cold starts at once, wall (3 runs)", d.concurrent, w.concurrent));

  const { tasks } = await loadHarborTasks(tasksDir);
  console.log("\n| task | instance type | per episode-hour at 0 % CPU | at 100 % CPU |\n|---|---|---|---|");
  for (const task of tasks) {
    const type = instanceTypeFor([task.config.limits]);
    const idle = 3600 * ((type.memoryMb / 1024) * RATES.gibSecond + (type.diskMb / 1000) * RATES.gbDiskSecond);
    const busy = idle + 3600 * type.vcpu * RATES.vcpuSecond;
    console.log(`| ${task.name} | ${type.name} (${type.vcpu} vCPU, ${type.memoryMb / 1024} GiB, ${type.diskMb / 1000} GB) | $${idle.toFixed(4)} | $${busy.toFixed(4)} |`);
  }
  console.log(`\nAll types at 0 % / 100 % CPU: ${INSTANCE_TYPES.map((t) => `${t.name} $${(3600 * ((t.memoryMb / 1024) * RATES.gibSecond + (t.diskMb / 1000) * RATES.gbDiskSecond)).toFixed(4)} / $${(3600 * ((t.memoryMb / 1024) * RATES.gibSecond + (t.diskMb / 1000) * RATES.gbDiskSecond + t.vcpu * RATES.vcpuSecond)).toFixed(4)}`).join("; ")}`);
  console.log("Rates: CPU $0.000020 per vCPU-second (active), memory $0.0000025 per GiB-second and disk $0.00000007 per GB-second (provisioned); developers.cloudflare.com/containers/pricing.");
} finally {
  await cleanup();
  clearTimeout(watchdog);
}
