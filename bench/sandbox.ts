/**
 * `npm run bench:sandbox`: the same Harbor tasks on Docker through edgegym's HTTP API and
 * through verifiers 0.4.0's Docker runtime, in one run, on this machine (issue 29):
 *
 *   1. cold reset to first command reply: edgegym `POST …/episodes` then a `bash` step `true`;
 *      verifiers `DockerRuntime.start()` then `run(["true"])` (the image exists, the
 *      container is new); and warm: a second edgegym server (its own database) with
 *      EDGEGYM_SANDBOX_WARM=2, each reset claiming a started box (verifiers' Docker runtime
 *      has no pool, so its cold figure is the comparison).
 *   2. per-command overhead: `true` through each, and raw `docker exec C true` (the CLI) on
 *      each one's container, interleaved; ratios to the raw exec.
 *   3. Harbor's oracle trial (create, solution/ uploaded and solve.sh run, tests/test.sh,
 *      reward, container removed) for count-errors and fix-median, rewards checked to agree.
 *   4. 16 and 64 concurrent count-errors oracle episodes through edgegym (errors by status
 *      and code, containers left), and 16 through verifiers (asyncio.gather).
 *
 * edgegym is the real Node server started in this process from src/ (startNodeServer with
 * `harborDirs: ["test/fixtures/harbor-tasks"]`, a SQLite file, 127.0.0.1, sandboxMaxLive 64 and
 * the tenant's sandboxes quota 64,
 * the reaper on), driven over HTTP; no build is needed. verifiers runs in a Python child
 * (bench/vf_docker_runtime.py, the venv of scripts/verifiers-venv.sh vf04) on the image
 * edgegym built for each task: HarborTaskset itself needs Python 3.12 and the harbor CLI and
 * rejects Dockerfile-only tasks. Rounds interleave the systems, so load drift hits both.
 * Every request has a timeout, the whole run a deadline; every container either system
 * made is removed by its labels at the end, also after a failure or Ctrl-C.
 *
 *   BENCH_ROUNDS=8 BENCH_COMMANDS=30 BENCH_LEVELS=16,64 BENCH_VF_CONCURRENT=16 npm run bench:sandbox
 */
import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { databaseLabel } from "../src/server/node/harbor.js";
import { containersWith, dockerReady } from "../test/support/docker.js";
import { startNodeServer, type RunningServer } from "../src/server/node/serve.js";
import { DEFAULT_QUOTAS } from "../src/server/tenants/quotas.js";
import { REPO_ROOT } from "../test/support/node-server.js";
import { HarborEpisodes, HttpFailure, type OracleTrial } from "./support/harbor-http.js";
import { verifiersPython, VerifiersDockerRuntime, type ColdResult, type TrialResult, type TrialsResult } from "./support/vf-docker-runtime.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 8);
const COMMANDS = Number(process.env.BENCH_COMMANDS ?? 30);
const LEVELS = (process.env.BENCH_LEVELS ?? "16,64").split(",").map(Number);
const VF_CONCURRENT = Number(process.env.BENCH_VF_CONCURRENT ?? 16);
const DEADLINE_S = Number(process.env.BENCH_MAX_SECONDS ?? 1200);
const FIXTURES = join(REPO_ROOT, "test/fixtures/harbor-tasks");
const TASKS = ["count-errors", "fix-median"];
const CONCURRENT_TASK = "count-errors";
const run = promisify(execFile);

// --- figures -------------------------------------------------------------------------------

function quantile(xs: number[], q: number): number {
  if (!xs.length) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  if (q === 0.5) return s.length % 2 ? (s[(s.length - 1) / 2] as number) : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2;
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] as number;
}
const p50 = (xs: number[]) => quantile(xs, 0.5);
const p90 = (xs: number[]) => quantile(xs, 0.9);
const fmt = (ms: number) => (Number.isNaN(ms) ? "–" : ms >= 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`);
const ratio = (a: number, b: number) => (Number.isNaN(a / b) ? "–" : `${(a / b).toFixed(2)}×`);
const tally = (xs: (string | number)[]) => {
  const counts = new Map<string | number, number>();
  for (const x of xs) counts.set(x, (counts.get(x) ?? 0) + 1);
  return [...counts].map(([k, n]) => `${k} ×${n}`).join(", ") || "none";
};

// --- Docker ----------------------------------------------------------------------------------

async function rawExec(container: string): Promise<number> {
  const t = performance.now();
  await run("docker", ["exec", container, "true"], { timeout: 30_000 });
  return performance.now() - t;
}

function removeLabelled(label: string): number {
  const ids = containersWith(label);
  if (ids.length) execFileSync("docker", ["rm", "-f", ...ids], { stdio: "ignore", timeout: 120_000 });
  return ids.length;
}

function inspect(container: string, format: string): string {
  return execFileSync("docker", ["inspect", "--format", format, container], { encoding: "utf8", timeout: 20_000 }).trim();
}

// --- the run ---------------------------------------------------------------------------------

if (!dockerReady()) throw new Error("bench:sandbox needs a Docker daemon with edgegym/base:bookworm (bash scripts/sandbox-base-image.sh)");
const dir = mkdtempSync(join(tmpdir(), "edgegym-bench-sandbox-"));
const runId = `edgegym-bench-sandbox-${process.pid}-${Date.now()}`;
const load0 = loadavg();
const started = performance.now();
let server: RunningServer | undefined;
let warmServer: RunningServer | undefined;
let warmDbLabel: string | undefined;
let vf: VerifiersDockerRuntime | undefined;
let dbLabel: string | undefined;
let cleaned = false;

async function cleanup(): Promise<void> {
  if (cleaned) return;
  cleaned = true;
  await vf?.stop().catch(() => undefined);
  await server?.close().catch(() => undefined);
  await warmServer?.close().catch(() => undefined);
  let removed = 0;
  for (const label of [`verifiers.run=${runId}`, ...[dbLabel, warmDbLabel].flatMap((l) => (l ? [`edgegym.db=${l}`] : []))]) removed += removeLabelled(label);
  if (removed) console.error(`removed ${removed} container(s) the run left`);
  rmSync(dir, { recursive: true, force: true });
}
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => void cleanup().finally(() => process.exit(130)));
const watchdog = setTimeout(() => {
  console.error(`bench:sandbox: past BENCH_MAX_SECONDS=${DEADLINE_S}; stopping`);
  void cleanup().finally(() => process.exit(1));
}, DEADLINE_S * 1000);
watchdog.unref();

try {
  const dbPath = join(dir, "edgegym.db");
  // One keyless client drives 64 at once: the per-tenant cap (32 by default) is raised with the server's, so the run measures capacity, not the quota.
  server = await startNodeServer({ port: 0, host: "127.0.0.1", dbPath, harborDirs: [FIXTURES], config: { sandboxMaxLive: 64, quotas: { ...DEFAULT_QUOTAS, maxSandboxes: 64 } } });
  dbLabel = databaseLabel(dbPath);
  const edgegym = new HarborEpisodes(server.url);
  vf = new VerifiersDockerRuntime(verifiersPython(), runId);
  const versions = await vf.request<{ python: string; verifiers: string }>("ping");
  const docker = execFileSync("docker", ["version", "--format", "{{.Server.Version}}"], { encoding: "utf8" }).trim();

  // Warm-up: edgegym builds (or finds) each task's image; verifiers then runs on that image.
  const images = new Map<string, string>();
  for (const task of TASKS) {
    const id = await edgegym.reset(task);
    const [container] = containersWith(`edgegym.episode=${id}`);
    if (!container) throw new Error(`no container carries edgegym.episode=${id}`);
    images.set(task, inspect(container, "{{.Config.Image}}"));
    const label = inspect(container, '{{index .Config.Labels "edgegym.db"}}');
    if (label !== dbLabel) throw new Error(`the server labels its containers edgegym.db=${label}, not ${dbLabel}`);
    await edgegym.bash(id, 0, "true");
    await edgegym.close(id);
    await vf.request<ColdResult>("cold", { image: images.get(task), task_dir: join(FIXTURES, task) });
  }
  const taskArgs = (task: string) => ({ image: images.get(task), task_dir: join(FIXTURES, task) });
  const tags = [...images.values()].map((image) => execFileSync("docker", ["image", "inspect", "--format", "{{index .RepoTags 0}}", image], { encoding: "utf8" }).trim());
  console.log(`images: ${tags.join(", ")}; verifiers ${versions.verifiers} on Python ${versions.python}; Docker ${docker}`);

  // 1. Cold reset to the first command's reply.
  const cold = { eg: [] as number[], egReset: [] as number[], egClose: [] as number[], vf: [] as number[], vfCreate: [] as number[], vfDestroy: [] as number[] };
  for (let r = 0; r < ROUNDS; r++) {
    const edgegymFirst = async () => {
      const t0 = performance.now();
      const id = await edgegym.reset(CONCURRENT_TASK);
      cold.egReset.push(performance.now() - t0);
      await edgegym.bash(id, 0, "true");
      cold.eg.push(performance.now() - t0);
      const t1 = performance.now();
      await edgegym.close(id);
      cold.egClose.push(performance.now() - t1);
    };
    const verifiersFirst = async () => {
      const c = await (vf as VerifiersDockerRuntime).request<ColdResult>("cold", taskArgs(CONCURRENT_TASK));
      cold.vf.push(c.first_ms);
      cold.vfCreate.push(c.create_ms);
      cold.vfDestroy.push(c.destroy_ms);
    };
    for (const step of r % 2 ? [verifiersFirst, edgegymFirst] : [edgegymFirst, verifiersFirst]) await step();
  }
  console.log(`cold: ${ROUNDS} rounds done (${Math.round((performance.now() - started) / 1000)} s)`);

  // 1b. Warm: a server of its own keeps two started boxes per task; each round waits until the pool is full again, as a trainer's next reset would find it.
  const warm = { eg: [] as number[], egReset: [] as number[] };
  {
    const warmDb = join(dir, "warm.db");
    warmServer = await startNodeServer({ port: 0, host: "127.0.0.1", dbPath: warmDb, reapIntervalMs: 0, harborDirs: [FIXTURES], config: { sandboxMaxLive: 64, sandboxWarm: 2 } });
    warmDbLabel = databaseLabel(warmDb);
    const pooled = new HarborEpisodes(warmServer.url);
    const unclaimed = (): number =>
      execFileSync("docker", ["ps", "--filter", `label=edgegym.db=${warmDbLabel}`, "--filter", "label=edgegym.role=warm", "--filter", `label=edgegym.task=edgegym/${CONCURRENT_TASK}`, "--filter", "status=running", "--format", "{{.Names}}"], { encoding: "utf8" })
        .split("\n")
        .filter((name) => name.startsWith("edgegym-warm-")).length;
    const poolFull = async (): Promise<void> => {
      const until = Date.now() + 60_000;
      while (unclaimed() < 2) {
        if (Date.now() > until) throw new Error("the warm pool did not fill in 60 s");
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    for (let r = 0; r < ROUNDS + 1; r++) {
      await poolFull();
      const t0 = performance.now();
      const id = await pooled.reset(CONCURRENT_TASK);
      const resetMs = performance.now() - t0;
      await pooled.bash(id, 0, "true");
      // The first round warms the server's own paths (database, image lookup), as the cold rounds' warm-up did.
      if (r > 0) {
        warm.egReset.push(resetMs);
        warm.eg.push(performance.now() - t0);
      }
      await pooled.close(id);
    }
    await warmServer.close();
    warmServer = undefined;
  }
  console.log(`warm: ${ROUNDS} rounds done (${Math.round((performance.now() - started) / 1000)} s)`);

  // 2. Per-command overhead, interleaved in a rotating order.
  const cmd = { eg: [] as number[], vf: [] as number[], rawEg: [] as number[], rawVf: [] as number[] };
  {
    const id = await edgegym.reset(CONCURRENT_TASK);
    const egContainer = containersWith(`edgegym.episode=${id}`)[0] as string;
    const box = await vf.request<{ handle: number; container: string }>("open", taskArgs(CONCURRENT_TASK));
    let turn = 0;
    const paths: [number[], () => Promise<number>][] = [
      [cmd.eg, async () => {
        const t = performance.now();
        turn = await edgegym.bash(id, turn, "true");
        return performance.now() - t;
      }],
      [cmd.vf, async () => (await (vf as VerifiersDockerRuntime).request<{ ms: number }>("exec_true", { handle: box.handle })).ms],
      [cmd.rawEg, () => rawExec(egContainer)],
      [cmd.rawVf, () => rawExec(box.container)],
    ];
    for (const [, once] of paths) for (let i = 0; i < 3; i++) await once(); // warm-up, not counted
    for (let i = 0; i < COMMANDS; i++) {
      for (let j = 0; j < paths.length; j++) {
        const [into, once] = paths[(i + j) % paths.length] as [number[], () => Promise<number>];
        into.push(await once());
      }
    }
    await edgegym.close(id);
    await vf.request("close", { handle: box.handle });
  }
  console.log(`per command: ${COMMANDS} × 4 paths done (${Math.round((performance.now() - started) / 1000)} s)`);

  // 3. Oracle trials, both systems, alternating which goes first.
  const trials = new Map(TASKS.map((t) => [t, { eg: [] as OracleTrial[], vf: [] as TrialResult[] }]));
  for (let r = 0; r < ROUNDS; r++) {
    for (const task of TASKS) {
      const into = trials.get(task) as { eg: OracleTrial[]; vf: TrialResult[] };
      const one = async (system: "eg" | "vf") => {
        if (system === "eg") into.eg.push(await edgegym.oracleTrial(task, join(FIXTURES, task)));
        else into.vf.push(await (vf as VerifiersDockerRuntime).request<TrialResult>("trial", taskArgs(task)));
      };
      for (const system of r % 2 ? (["vf", "eg"] as const) : (["eg", "vf"] as const)) await one(system);
    }
  }
  console.log(`oracle trials: ${ROUNDS} rounds × ${TASKS.length} tasks done (${Math.round((performance.now() - started) / 1000)} s)`);

  // 4. Concurrent oracle episodes.
  interface Level { system: string; n: number; completed: number; rewardOne: number; errors: string[]; wallMs: number; each: number[]; left: number }
  /** The first message of each kind of error, printed under the table. */
  const errorSamples = new Map<string, string>();
  const failure = (err: unknown): string => {
    const key = err instanceof HttpFailure ? `${err.status} ${err.code}` : "exception";
    if (!errorSamples.has(key)) errorSamples.set(key, (err as Error).message.slice(0, 300));
    return key;
  };
  const levels: Level[] = [];
  for (const n of LEVELS) {
    const before = containersWith(`edgegym.db=${dbLabel}`).length;
    if (before) throw new Error(`${before} edgegym container(s) alive before the ${n}-episode level`);
    const t0 = performance.now();
    const results = await Promise.all(
      Array.from({ length: n }, () =>
        edgegym.oracleTrial(CONCURRENT_TASK, join(FIXTURES, CONCURRENT_TASK)).catch(failure),
      ),
    );
    const wallMs = performance.now() - t0;
    const left = containersWith(`edgegym.db=${dbLabel}`).length;
    const done = results.filter((r): r is OracleTrial => typeof r !== "string");
    levels.push({ system: "edgegym (HTTP)", n, completed: done.length, rewardOne: done.filter((d) => d.reward === 1).length, errors: results.filter((r): r is string => typeof r === "string"), wallMs, each: done.map((d) => d.ms), left });
    removeLabelled(`edgegym.db=${dbLabel}`);
    console.log(`edgegym ${n} concurrent: ${done.length} completed in ${fmt(wallMs)} (${Math.round((performance.now() - started) / 1000)} s)`);
  }
  if (VF_CONCURRENT > 0) {
    const t = await vf.request<TrialsResult>("trials", { ...taskArgs(CONCURRENT_TASK), n: VF_CONCURRENT }, 400_000);
    const left = containersWith(`verifiers.run=${runId}`).length;
    levels.push({ system: "verifiers DockerRuntime (asyncio)", n: VF_CONCURRENT, completed: t.completed, rewardOne: t.rewards.filter((r) => r === 1).length, errors: t.errors, wallMs: t.wall_ms, each: t.trial_ms, left });
    console.log(`verifiers ${VF_CONCURRENT} concurrent: ${t.completed} completed in ${fmt(t.wall_ms)}`);
  }

  // --- the table -------------------------------------------------------------------------------
  const load1 = loadavg();
  const out: string[] = [];
  out.push(
    `bench:sandbox, ${new Date().toISOString().slice(0, 16)}Z: ${cpus().length} cores, load average ${load0.map((l) => l.toFixed(1)).join(" / ")} at the start, ${load1.map((l) => l.toFixed(1)).join(" / ")} at the end; ` +
      `Docker ${docker}; verifiers ${versions.verifiers} (Python ${versions.python}); BENCH_ROUNDS=${ROUNDS}, BENCH_COMMANDS=${COMMANDS}; whole run ${Math.round((performance.now() - started) / 1000)} s`,
    "",
    "| 1. reset to first command reply (`true`), image present | edgegym p50 / p90 | verifiers p50 / p90 | edgegym ÷ verifiers (p50) | n each |",
    "|---|---|---|---|---|",
    `| cold: new container, then \`true\` answered | ${fmt(p50(cold.eg))} / ${fmt(p90(cold.eg))} | ${fmt(p50(cold.vf))} / ${fmt(p90(cold.vf))} | ${ratio(p50(cold.eg), p50(cold.vf))} | ${ROUNDS} |`,
    `| of which reset / \`start()\` alone | ${fmt(p50(cold.egReset))} / ${fmt(p90(cold.egReset))} | ${fmt(p50(cold.vfCreate))} / ${fmt(p90(cold.vfCreate))} | ${ratio(p50(cold.egReset), p50(cold.vfCreate))} | ${ROUNDS} |`,
    `| close / \`stop()\` (container removed) | ${fmt(p50(cold.egClose))} / ${fmt(p90(cold.egClose))} | ${fmt(p50(cold.vfDestroy))} / ${fmt(p90(cold.vfDestroy))} | ${ratio(p50(cold.egClose), p50(cold.vfDestroy))} | ${ROUNDS} |`,
    `| warm: a started box claimed from the pool (EDGEGYM_SANDBOX_WARM=2), then \`true\` answered | ${fmt(p50(warm.eg))} / ${fmt(p90(warm.eg))} | no pool: cold above, ${fmt(p50(cold.vf))} | ${ratio(p50(warm.eg), p50(cold.vf))} | ${ROUNDS} |`,
    `| of which reset alone (claim) | ${fmt(p50(warm.egReset))} / ${fmt(p90(warm.egReset))} | – | – | ${ROUNDS} |`,
    "",
    `| 2. per command, \`true\` (${COMMANDS} each, interleaved) | p50 | p90 | ÷ raw \`docker exec\` on its own container (p50) |`,
    "|---|---|---|---|",
    `| raw \`docker exec C true\` (CLI), edgegym's container | ${fmt(p50(cmd.rawEg))} | ${fmt(p90(cmd.rawEg))} | 1.00× |`,
    `| raw \`docker exec C true\` (CLI), verifiers' container | ${fmt(p50(cmd.rawVf))} | ${fmt(p90(cmd.rawVf))} | 1.00× |`,
    `| edgegym: HTTP step, \`bash\` tool \`true\` (Engine API exec) | ${fmt(p50(cmd.eg))} | ${fmt(p90(cmd.eg))} | **${ratio(p50(cmd.eg), p50(cmd.rawEg))}** |`,
    `| verifiers: \`DockerRuntime.run(["true"])\` (docker CLI exec) | ${fmt(p50(cmd.vf))} | ${fmt(p90(cmd.vf))} | ${ratio(p50(cmd.vf), p50(cmd.rawVf))} |`,
    "",
    "| 3. oracle trial (create, solve.sh, tests, reward, remove) | edgegym p50 / p90 | verifiers p50 / p90 | edgegym ÷ verifiers (p50) | edgegym p50: reset / oracle step / score | verifiers p50: start / oracle / verify / stop | rewards edgegym | rewards verifiers |",
    "|---|---|---|---|---|---|---|---|",
  );
  let agree = true;
  for (const [task, t] of trials) {
    const egRewards = t.eg.map((x) => x.reward);
    const vfRewards = t.vf.map((x) => x.reward);
    agree &&= [...egRewards, ...vfRewards].every((r) => r === 1);
    const e = t.eg.map((x) => x.ms);
    const v = t.vf.map((x) => x.ms);
    out.push(
      `| ${task} | ${fmt(p50(e))} / ${fmt(p90(e))} | ${fmt(p50(v))} / ${fmt(p90(v))} | **${ratio(p50(e), p50(v))}** | ${fmt(p50(t.eg.map((x) => x.resetMs)))} / ${fmt(p50(t.eg.map((x) => x.oracleMs)))} / ${fmt(p50(t.eg.map((x) => x.scoreMs)))} | ` +
        `${fmt(p50(t.vf.map((x) => x.create_ms)))} / ${fmt(p50(t.vf.map((x) => x.oracle_ms)))} / ${fmt(p50(t.vf.map((x) => x.verify_ms)))} / ${fmt(p50(t.vf.map((x) => x.destroy_ms)))} | ${tally(egRewards)} | ${tally(vfRewards)} |`,
    );
  }
  out.push(
    "",
    `| 4. concurrent ${CONCURRENT_TASK} oracle episodes | at once | completed | reward 1 | errors (status code ×n) | wall | per episode p50 / p90 | containers left |`,
    "|---|---|---|---|---|---|---|---|",
    ...levels.map((l) => `| ${l.system} | ${l.n} | ${l.completed} | ${l.rewardOne} | ${tally(l.errors)} | ${fmt(l.wallMs)} | ${fmt(p50(l.each))} / ${fmt(p90(l.each))} | ${l.left} |`),
    ...[...errorSamples].map(([key, message]) => `\nfirst ${key}: ${message}`),
    ...(levels.find((l) => l.system.startsWith("verifiers"))?.errors.slice(0, 1).map((e) => `\nfirst verifiers error: ${e}`) ?? []),
    "",
    `rewards agree (every oracle trial scored 1 on both): ${agree ? "yes" : "NO"}`,
    "",
    "issue 29's goals, against this run:",
    `- warm reset to first reply p50 ≤ 100 ms: ${fmt(p50(warm.eg))}, ${p50(warm.eg) <= 100 ? "met" : "not met"} (cold: ${fmt(p50(cold.eg))})`,
    `- per command ≤ 1.2× raw docker exec: ${ratio(p50(cmd.eg), p50(cmd.rawEg))}, ${p50(cmd.eg) <= 1.2 * p50(cmd.rawEg) ? "met" : "not met"}`,
    ...levels
      .filter((l) => l.system.startsWith("edgegym") && l.n === 64)
      .map((l) => `- 64 concurrent with 0 errors and 0 left: ${l.errors.length} errors, ${l.left} left, ${l.errors.length === 0 && l.left === 0 && l.completed === 64 ? "met" : "not met"}`),
    ...[...trials].map(([task, t]) => {
      const r = p50(t.eg.map((x) => x.ms)) / p50(t.vf.map((x) => x.ms));
      return `- oracle trial faster than verifiers', ${task}: ${r.toFixed(2)}× its time, ${r < 1 ? "met" : "not met"}`;
    }),
  );
  console.log(`\n${out.join("\n")}`);
  if (!agree) process.exitCode = 1;
} finally {
  await cleanup();
  clearTimeout(watchdog);
}
