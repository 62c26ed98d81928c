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
 * Environment: BENCH_ROUNDS (default 6), BENCH_COMMANDS (default 30), BENCH_TASKS (default
 * count-errors,fix-median: an oracle row each).
 */
import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { loadHarborTasks } from "../src/envs/builtin/harbor/task-dir.node.js";
import { startNodeServer, type RunningServer } from "../src/server/node/serve.js";
import { INSTANCE_TYPES, instanceTypeFor } from "../src/server/worker/instance-type.js";
import type { ChildServer } from "../test/support/child-server.js";
import { startDevWorker } from "../test/support/dev-worker.js";
import { REPO_ROOT } from "../test/support/node-server.js";
import { HarborEpisodes } from "./support/harbor-http.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const COMMANDS = Number(process.env.BENCH_COMMANDS ?? 30);
/** The task of the start, command and destroy rows; every task in BENCH_TASKS gets an oracle row. */
const TASK = "count-errors";
const TASKS = (process.env.BENCH_TASKS ?? "count-errors,fix-median").split(",").filter(Boolean);
const WORKER_NAME = "edgegym-bench";
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

async function names(filter: string): Promise<string[]> {
  const { stdout } = await run("docker", ["ps", "--format", "{{.Names}}", "--filter", filter], { timeout: 30_000 });
  return stdout.split("\n").filter((n) => n && !n.endsWith("-proxy"));
}

/** Polls until `gone()` holds; the time it took. */
async function until(gone: () => Promise<boolean>, t0: number): Promise<number> {
  const deadline = Date.now() + 60_000;
  while (!(await gone())) {
    if (Date.now() > deadline) return Number.NaN;
    await new Promise((r) => setTimeout(r, 20));
  }
  return performance.now() - t0;
}

interface Side {
  name: string;
  api: HarborEpisodes;
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
}

const dir = mkdtempSync(join(tmpdir(), "edgegym-bench-worker-sandbox-"));
const tasksDir = join(dir, "tasks");
for (const task of new Set([TASK, ...TASKS])) cpSync(join(REPO_ROOT, "test/fixtures/harbor-tasks", task), join(tasksDir, task), { recursive: true });
let node: RunningServer | undefined;
let warmNode: RunningServer | undefined;
let worker: ChildServer | undefined;
const started = performance.now();
const loadStart = loadavg().map((l) => l.toFixed(1)).join(" / ");

try {
  node = await startNodeServer({ port: 0, host: "127.0.0.1", dbPath: join(dir, "node.db"), reapIntervalMs: 0, harborDirs: [tasksDir], config: { sandboxMaxLive: 16 } });
  warmNode = await startNodeServer({ port: 0, host: "127.0.0.1", dbPath: join(dir, "warm.db"), reapIntervalMs: 0, harborDirs: [tasksDir], config: { sandboxMaxLive: 16, sandboxWarm: 1 } });
  const devWorker = await startDevWorker({ persistTo: join(dir, "worker-state"), env: { EDGEGYM_HARBOR_TASKS: tasksDir, EDGEGYM_WORKER_NAME: WORKER_NAME }, startTimeoutMs: 900_000, stopGraceMs: 60_000 });
  worker = devWorker.server;
  const nodeApi = new HarborEpisodes(node.url);
  const sides: Side[] = [
    { name: "Docker provider (Node server)", api: nodeApi, boxes: () => names("label=edgegym.role=episode") },
    { name: "Containers provider (Worker, wrangler dev)", api: new HarborEpisodes(devWorker.baseUrl), boxes: () => names(`name=workerd-${WORKER_NAME}-HarborBox`) },
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
  for (let r = 0; r < Math.min(3, ROUNDS); r++) for (const [i, side] of sides.entries()) await concurrent(side, figures[i] as Figures);

  // Warm start: a box claimed from the Node server's pool; the pool refills between rounds.
  const warm: number[] = [];
  const warmApi = new HarborEpisodes(warmNode.url);
  for (let r = 0; r <= ROUNDS; r++) {
    await until(async () => (await names("label=edgegym.role=warm")).length >= 1, performance.now());
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
  await worker?.stop();
  await warmNode?.close();
  await node?.close();
  rmSync(dir, { recursive: true, force: true });
  const left = await names(`name=workerd-${WORKER_NAME}-`).catch(() => []);
  if (left.length) console.error(`left behind: ${left.join(", ")}`);
}
