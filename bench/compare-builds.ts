/**
 * `npm run bench:compare -- DIR_A DIR_B …`: persisted steps of two or more builds side
 * by side, to tell whether a change helped on a machine whose load comes and goes. Each
 * DIR is a checkout with `npm run build` done (a `git worktree` of the commit to compare,
 * with its own node_modules). Rounds alternate the builds: a fresh server per build and
 * round, a warm-up, then steps at one concurrency for a bounded time; the figures are
 * medians over rounds, and the server's CPU per step (from /proc) is the steadier one.
 * Each round also measures GET /health on the same server (BENCH_HEALTH=0 skips it), so a
 * change in what every request costs shows apart from the step path. BENCH_TRANSPORT=ws
 * plays the episodes over the session socket /v1/ws instead (one socket, frames by id).
 *
 *   BENCH_SECONDS=4 BENCH_ROUNDS=4 BENCH_CONCURRENCY=32 npm run bench:compare -- ../main .
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Pool } from "undici";
import { startNodeServer } from "../test/support/node-server.js";
import { processTreeCpuSeconds } from "./support/process-cpu.js";
import { SessionSocket, socketEpisodes } from "./support/session-socket.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP ?? 3);
const HEALTH = process.env.BENCH_HEALTH !== "0";
const TRANSPORT = process.env.BENCH_TRANSPORT ?? "http";

/** The same episodes over one /v1/ws socket; returns the steps answered. */
async function driveSocket(url: string, concurrency: number, seconds: number): Promise<number> {
  const socket = await SessionSocket.open(url);
  const until = performance.now() + seconds * 1000;
  let steps = 0;
  const errors = (await Promise.all(Array.from({ length: concurrency }, () => socketEpisodes(socket, until, () => steps++)))).reduce((a, b) => a + b, 0);
  await socket.close();
  if (errors > 0) throw new Error(`${errors} socket requests failed`);
  return steps;
}

/** GET /health at `concurrency` for `seconds`; returns the requests answered. */
async function driveHealth(url: string, concurrency: number, seconds: number): Promise<number> {
  const pool = new Pool(url, { connections: concurrency, pipelining: 1 });
  const until = performance.now() + seconds * 1000;
  let count = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        const res = await pool.request({ method: "GET", path: "/health" });
        await res.body.text();
        if (res.statusCode !== 200) throw new Error(`/health answered ${res.statusCode}`);
        count++;
      }
    }),
  );
  await pool.close();
  return count;
}

/** Requests per second and server CPU µs per request of one measured drive. */
async function measured(pid: number, run: () => Promise<number>): Promise<{ perSecond: number; cpuUs: number }> {
  const cpu0 = processTreeCpuSeconds(pid) ?? Number.NaN;
  const start = performance.now();
  const count = await run();
  const elapsed = (performance.now() - start) / 1000;
  const cpu = (processTreeCpuSeconds(pid) ?? Number.NaN) - cpu0;
  return { perSecond: count / elapsed, cpuUs: (1e6 * cpu) / Math.max(1, count) };
}

/** Episodes of bench-echo at `concurrency`, for `seconds`; returns the steps answered. */
async function drive(url: string, concurrency: number, seconds: number): Promise<number> {
  const pool = new Pool(url, { connections: concurrency, pipelining: 1 });
  const post = async (path: string, body: unknown) => {
    const res = await pool.request({ method: "POST", path, headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    return { status: res.statusCode, text: await res.body.text() };
  };
  const until = performance.now() + seconds * 1000;
  let steps = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) {
        const id = (JSON.parse((await post("/v1/envs/bench-echo/episodes", {})).text) as { episode_id: string }).episode_id;
        let turn = 0;
        let done = false;
        while (!done && performance.now() < until) {
          const res = await post(`/v1/episodes/${id}/step`, { turn, message: { role: "assistant", content: "one two three four five" } });
          if (res.status !== 200) throw new Error(`step answered ${res.status}: ${res.text}`);
          ({ turn, done } = JSON.parse(res.text) as { turn: number; done: boolean });
          steps++;
        }
      }
    }),
  );
  await pool.close();
  return steps;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

async function main(): Promise<void> {
  const dirs = process.argv.slice(2).map((d) => resolve(d));
  if (dirs.length < 2) throw new Error("usage: npm run bench:compare -- DIR_A DIR_B [DIR …] (each a built checkout)");
  const results = new Map(dirs.map((d) => [d, [] as { perSecond: number; cpuUs: number }[]]));
  const health = new Map(dirs.map((d) => [d, [] as { perSecond: number; cpuUs: number }[]]));
  for (let round = 1; round <= ROUNDS; round++) {
    for (const dir of dirs) {
      const tmp = mkdtempSync(join(tmpdir(), "edgegym-compare-"));
      const server = await startNodeServer({ db: join(tmp, "bench.db"), cwd: dir, args: ["--env", join(dir, "bench/echo-env.js")] });
      try {
        const steps$ = TRANSPORT === "ws" ? driveSocket : drive;
        await steps$(server.url, CONCURRENCY, WARMUP_SECONDS);
        const pid = server.process.pid as number;
        const steps = await measured(pid, () => steps$(server.url, CONCURRENCY, SECONDS));
        results.get(dir)?.push(steps);
        let line = `round ${round} ${dir}: ${steps.perSecond.toFixed(0)} steps/s, ${steps.cpuUs.toFixed(0)} µs server CPU per step`;
        if (HEALTH) {
          const h = await measured(pid, () => driveHealth(server.url, CONCURRENCY, SECONDS));
          health.get(dir)?.push(h);
          line += `; /health ${h.perSecond.toFixed(0)} req/s, ${h.cpuUs.toFixed(0)} µs`;
        }
        console.error(line);
      } finally {
        await server.stop();
        rmSync(tmp, { recursive: true, force: true });
      }
    }
  }
  console.log(`\n${ROUNDS} rounds, ${SECONDS} s of ${TRANSPORT === "ws" ? "/v1/ws" : "HTTP"} steps at ${CONCURRENCY} concurrent episodes after ${WARMUP_SECONDS} s warm-up; medians.\n`);
  console.log("| build | persisted steps/s | server CPU per step (µs) | rounds (µs per step) | /health req/s | server CPU per /health (µs) | rounds (µs per /health) |");
  console.log("|---|---|---|---|---|---|---|");
  for (const [dir, rs] of results) {
    const hs = health.get(dir) ?? [];
    const h = (f: (r: { perSecond: number; cpuUs: number }) => number) => (hs.length ? median(hs.map(f)).toFixed(0) : "-");
    console.log(
      `| ${dir} | ${median(rs.map((r) => r.perSecond)).toFixed(0)} | ${median(rs.map((r) => r.cpuUs)).toFixed(0)} | ${rs.map((r) => r.cpuUs.toFixed(0)).join(" ")} | ${h((r) => r.perSecond)} | ${h((r) => r.cpuUs)} | ${hs.map((r) => r.cpuUs.toFixed(0)).join(" ") || "-"} |`,
    );
  }
}

await main();
