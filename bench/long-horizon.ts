// `npm run bench:long`: one client steps a 1,000-turn episode (bench/long/long-env.js: 4 KB
// observations) with 2 KB assistant messages, sequentially, against the Node server
// (better-sqlite3) and the Worker in workerd (wrangler dev, local D1). Reports, around
// turns 10, 100, 500 and 1,000, the median step latency seen by the client (loopback) and
// the server's CPU time per step (the server's whole process tree, from /proc).
//
// --root DIR runs another checkout's server (built, with bench/long copied in) for a
// before/after comparison: the client and the figures stay the same.
import { readdirSync, readFileSync, mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { freePort, startChildServer, type ChildServer } from "../test/support/child-server.js";

const { values } = parseArgs({
  options: {
    root: { type: "string", default: "." },
    turns: { type: "string", default: "1000" },
    episodes: { type: "string", default: "3" },
    targets: { type: "string", default: "node,worker" },
  },
});
const root = resolve(values.root);
const turns = Number(values.turns);
const episodes = Number(values.episodes);
const targets = values.targets.split(",");
if (!(Number.isInteger(turns) && turns >= 10 && turns <= 1000) || !(Number.isInteger(episodes) && episodes >= 1 && episodes <= 10)) {
  throw new Error("--turns must be an integer in [10, 1000], --episodes in [1, 10]");
}
if (!targets.every((t) => t === "node" || t === "worker")) throw new Error("--targets is a comma-separated list of node, worker");

/** The turns reported: each figure is over the steps that reached turn t-WINDOW+1 .. t. */
const MARKS = [10, 100, 500, 1000].filter((t) => t <= turns);
const WINDOW = 10;
const MESSAGE = `<think>${"x".repeat(2000)}</think>`; // 2,015 characters

function ticksPerSecond(): number {
  return 100; // Linux USER_HZ; getconf CLK_TCK says 100 on every kernel this runs on.
}

/**
 * CPU ticks of a process and each of its descendants (npm → wrangler → workerd included),
 * by pid: a window's CPU is the growth of the pids alive at both ends plus what new ones
 * used, so a helper process that exits mid-window does not take its ticks with it.
 */
function treeCpuTicks(pid: number): Map<number, number> {
  const parent = new Map<number, number>();
  const ticks = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const text = readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
      parent.set(Number(entry), Number(fields[1]));
      ticks.set(Number(entry), Number(fields[11]) + Number(fields[12]));
    } catch {
      // exited meanwhile
    }
  }
  const tree = new Map<number, number>();
  for (const [p, t] of ticks) {
    for (let q: number | undefined = p, depth = 0; q !== undefined && q > 1 && depth < 64; q = parent.get(q), depth++) {
      if (q === pid) {
        tree.set(p, t);
        break;
      }
    }
  }
  return tree;
}

/** CPU seconds the tree used between two readings. */
function cpuSecondsBetween(before: Map<number, number>, after: Map<number, number>): number {
  let ticks = 0;
  for (const [p, t] of after) ticks += t - (before.get(p) ?? 0);
  return ticks / ticksPerSecond();
}

async function post(url: string, body: unknown): Promise<{ status: number; json: { turn?: number; done?: boolean; episode_id?: string }; ms: number }> {
  const started = performance.now();
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const json = (await res.json()) as { turn?: number; done?: boolean; episode_id?: string };
  return { status: res.status, json, ms: performance.now() - started };
}

interface Window {
  latencyMs: number[];
  cpuMsPerStep: number[];
}

/** Steps of an unrecorded first episode, so the JIT and the database's caches are warm when figures are taken. */
const WARMUP_STEPS = 50;

async function runEpisodes(baseUrl: string, pid: number): Promise<Map<number, Window>> {
  const windows = new Map<number, Window>(MARKS.map((m) => [m, { latencyMs: [], cpuMsPerStep: [] }]));
  for (let e = -1; e < episodes; e++) {
    const reset = await post(`${baseUrl}/v1/envs/bench-long/episodes`, { seed: e + 1 });
    if (reset.status !== 201) throw new Error(`reset: ${reset.status} ${JSON.stringify(reset.json)}`);
    const id = reset.json.episode_id as string;
    let cpuAtWindowStart = new Map<number, number>();
    if (e < 0) {
      for (let turn = 0; turn < Math.min(turns, WARMUP_STEPS); turn++) await post(`${baseUrl}/v1/episodes/${id}/step`, { turn, message: { role: "assistant", content: MESSAGE } });
      continue;
    }
    for (let turn = 0; turn < turns; turn++) {
      const reached = turn + 1;
      const mark = MARKS.find((m) => reached > m - WINDOW && reached <= m);
      if (mark !== undefined && reached === mark - WINDOW + 1) cpuAtWindowStart = treeCpuTicks(pid);
      const step = await post(`${baseUrl}/v1/episodes/${id}/step`, { turn, message: { role: "assistant", content: MESSAGE } });
      if (step.status !== 200) throw new Error(`step ${turn}: ${step.status} ${JSON.stringify(step.json)}`);
      if (mark !== undefined) {
        const w = windows.get(mark) as Window;
        w.latencyMs.push(step.ms);
        if (reached === mark) w.cpuMsPerStep.push((cpuSecondsBetween(cpuAtWindowStart, treeCpuTicks(pid)) * 1000) / WINDOW);
      }
      if (step.json.done && reached < turns) throw new Error(`episode ended at turn ${reached}`);
    }
    process.stderr.write(`  episode ${e + 1}/${episodes} done\n`);
  }
  return windows;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
};

const mean = (xs: number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

async function measure(name: string, start: (dir: string, port: number) => Promise<ChildServer>): Promise<{ name: string; windows: Map<number, Window> }> {
  const dir = mkdtempSync(join(tmpdir(), "edgegym-bench-long-"));
  const port = await freePort();
  process.stderr.write(`${name}: starting on 127.0.0.1:${port} from ${root}\n`);
  const server = await start(dir, port);
  try {
    if (server.pid === undefined) throw new Error("no server pid");
    return { name, windows: await runEpisodes(`http://127.0.0.1:${port}`, server.pid) };
  } catch (err) {
    process.stderr.write(`${name} failed; the server's last output:\n${server.output().slice(-3000)}\n`);
    throw err;
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const results: { name: string; windows: Map<number, Window> }[] = [];
if (targets.includes("node")) {
  results.push(
    await measure("Node (better-sqlite3, WAL)", (dir, port) =>
      startChildServer({
        cwd: root,
        command: process.execPath,
        args: ["bin/edgegym.js", "serve", "--port", String(port), "--db", join(dir, "edgegym.db"), "--env", "./bench/long/long-env.js"],
        env: { EDGEGYM_QUOTA_EPISODE_BYTES: "off" },
        healthUrl: `http://127.0.0.1:${port}/health`,
      }),
    ),
  );
}
if (targets.includes("worker")) {
  results.push(
    await measure("Worker (workerd via wrangler dev, local D1)", (dir, port) =>
      startChildServer({
        cwd: root,
        command: "npm",
        args: ["run", "--silent", "dev:worker", "--", "--config", "bench/long/wrangler.jsonc", "--port", String(port), "--persist-to", dir, "--log-level", "error"],
        env: { WRANGLER_SEND_METRICS: "false" },
        healthUrl: `http://127.0.0.1:${port}/health`,
        startTimeoutMs: 120_000,
      }),
    ),
  );
}

const wranglerVersion = (JSON.parse(readFileSync(join(root, "node_modules/wrangler/package.json"), "utf8")) as { version: string }).version;
console.log(`\n${turns} turns × ${episodes} episodes, one client, sequential; 4 KB observations, 2 KB assistant messages; server from ${root}`);
console.log(`machine: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, node ${process.version}, wrangler ${wranglerVersion}; client on the same machine`);
console.log(`each figure: over the ${WINDOW} steps up to that turn in every episode, after a ${WARMUP_STEPS}-step warm-up episode (latency: median step; CPU: the server's process tree, mean per step)\n`);
console.log(`| server | figure | ${MARKS.map((m) => `turn ${m}`).join(" | ")} | turn ${MARKS.at(-1)} / turn ${MARKS[0]} |`);
console.log(`|---|---|${MARKS.map(() => "---:|").join("")}---:|`);
for (const r of results) {
  const lat = MARKS.map((m) => median(r.windows.get(m)?.latencyMs ?? []));
  // CPU is read in clock ticks (10 ms): a mean over every episode's window, not a median of coarse figures.
  const cpu = MARKS.map((m) => mean(r.windows.get(m)?.cpuMsPerStep ?? []));
  console.log(`| ${r.name} | step latency, ms | ${lat.map((x) => x.toFixed(2)).join(" | ")} | ${((lat.at(-1) as number) / (lat[0] as number)).toFixed(2)}× |`);
  console.log(`| ${r.name} | server CPU per step, ms | ${cpu.map((x) => x.toFixed(2)).join(" | ")} | ${((cpu.at(-1) as number) / (cpu[0] as number)).toFixed(2)}× |`);
}
