/**
 * `npm run bench`: persisted steps per second and latency of the Node server under
 * load, next to GET /health on the same run as the ceiling. The server runs as its
 * own process (the real CLI, SQLite file in WAL mode); the load comes from this
 * process over keep-alive connections on 127.0.0.1, for a bounded time per level.
 * It also reports the CPU the server and this load generator used (from /proc, on
 * Linux), and, when `wrk` is installed, GET /health through wrk: the undici client
 * can be the slower side on /health, and the output says so when it is.
 * The same episodes are also played over the session socket `/v1/ws` (one socket per
 * level carrying every episode, frames matched by id), with the server's CPU per step
 * beside the HTTP row, so both transports are read off one run (BENCH_WS=0 skips it).
 *
 *   BENCH_SECONDS=5 BENCH_LEVELS=1,16,64,256 BENCH_WORKERS=1 BENCH_WARMUP=2 npm run bench
 *   BENCH_SERVER_NODE_OPTIONS="--cpu-prof --cpu-prof-dir=/tmp/prof" npm run bench   # profile the server
 */
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { Pool } from "undici";
import { REPO_ROOT, startNodeServer } from "../test/support/node-server.js";
import { httpEpisodes } from "./support/http-episodes.js";
import { ownCpuSeconds, processTreeCpuSeconds } from "./support/process-cpu.js";
import { SessionSocket, socketEpisodes } from "./support/session-socket.js";
import { runWrk, wrkAvailable, type WrkResult } from "./support/wrk.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const LEVELS = (process.env.BENCH_LEVELS ?? "1,16,64,256").split(",").map(Number);
const WORKERS = process.env.BENCH_WORKERS ?? "1";
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP ?? 2);
/** Below this share of a core the server was not the only thing setting the pace. */
const BUSY = 0.85;
const WS = process.env.BENCH_WS !== "0";


interface Result {
  count: number;
  errors: number;
  perSecond: number;
  p50: number;
  p99: number;
  /** CPU seconds per wall second of the server (all its processes) and of this process. */
  serverBusy: number;
  clientBusy: number;
  /** Server CPU per request, microseconds. */
  serverCpuUs: number;
}

type Worker = (record: (ms: number) => void, until: number) => Promise<number>;

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

async function measure(serverPid: number, concurrency: number, seconds: number, worker: Worker): Promise<Result> {
  const latencies: number[] = [];
  const server0 = processTreeCpuSeconds(serverPid);
  const client0 = ownCpuSeconds();
  const start = performance.now();
  const until = start + seconds * 1000;
  const errors = (await Promise.all(Array.from({ length: concurrency }, () => worker((ms) => latencies.push(ms), until)))).reduce((a, b) => a + b, 0);
  const elapsed = (performance.now() - start) / 1000;
  const server1 = processTreeCpuSeconds(serverPid);
  const serverCpu = server0 === null || server1 === null ? Number.NaN : server1 - server0;
  latencies.sort((a, b) => a - b);
  return {
    count: latencies.length,
    errors,
    perSecond: latencies.length / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    serverBusy: serverCpu / elapsed,
    clientBusy: (ownCpuSeconds() - client0) / elapsed,
    serverCpuUs: (1e6 * serverCpu) / Math.max(1, latencies.length),
  };
}

/** GET /health through wrk, with the server's CPU over the same seconds. */
function measureWrk(serverPid: number, url: string, concurrency: number): (WrkResult & { serverBusy: number; serverCpuUs: number }) | null {
  const server0 = processTreeCpuSeconds(serverPid);
  const start = performance.now();
  const result = runWrk(`${url}/health`, concurrency, SECONDS);
  const elapsed = (performance.now() - start) / 1000;
  const server1 = processTreeCpuSeconds(serverPid);
  if (!result) return null;
  const serverCpu = server0 === null || server1 === null ? Number.NaN : server1 - server0;
  return { ...result, serverBusy: serverCpu / elapsed, serverCpuUs: (1e6 * serverCpu) / (result.perSecond * SECONDS) };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "edgegym-bench-"));
  const server = await startNodeServer({ db: join(dir, "bench.db"), args: ["--env", join(REPO_ROOT, "bench/echo-env.js"), "--workers", WORKERS],
    // Node options for the server alone (e.g. --cpu-prof: the profile is written when the bench stops it).
    ...(process.env.BENCH_SERVER_NODE_OPTIONS ? { env: { NODE_OPTIONS: process.env.BENCH_SERVER_NODE_OPTIONS } } : {}),
  });
  const pid = server.process.pid as number;
  const withWrk = wrkAvailable();
  const rows: string[] = [];
  const cpuRows: string[] = [];
  const wsRows: string[] = [];
  const notes: string[] = [];
  const fmt = (n: number) => (Number.isFinite(n) ? n.toFixed(n < 10 ? 2 : 0) : "-");
  const pct = (n: number) => (Number.isFinite(n) ? `${(100 * n).toFixed(0)}%` : "-");
  try {
    for (const [i, concurrency] of [...(WARMUP_SECONDS > 0 ? [16] : []), ...LEVELS].entries()) {
      const warmup = WARMUP_SECONDS > 0 && i === 0;
      const pool = new Pool(server.url, { connections: concurrency, pipelining: 1 });
      const call = async (method: "GET" | "POST", path: string, body?: unknown) => {
        const res = await pool.request({ method, path, headers: body === undefined ? {} : { "content-type": "application/json" }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
        const text = await res.body.text();
        return { status: res.statusCode, text };
      };

      const healthWorker: Worker = async (record, until) => {
        let errors = 0;
        while (performance.now() < until) {
          const t = performance.now();
          const res = await call("GET", "/health");
          if (res.status === 200) record(performance.now() - t);
          else errors++;
        }
        return errors;
      };

      // Each worker plays its own episodes: reset (not counted), then steps until done.
      const stepWorker: Worker = (record, until) => httpEpisodes(call, until, record);

      // The same episodes over the session socket: one socket for the level, frames tagged by id.
      const socket = WS ? await SessionSocket.open(server.url) : null;
      const wsWorker: Worker = (record, until) => (socket ? socketEpisodes(socket, until, record) : Promise.resolve(0));

      if (warmup) {
        // JIT warm-up, so the first level is not measured on cold code.
        await measure(pid, concurrency, WARMUP_SECONDS, stepWorker);
        if (socket) await measure(pid, concurrency, WARMUP_SECONDS, wsWorker);
        await measure(pid, concurrency, WARMUP_SECONDS / 2, healthWorker);
        await pool.close();
        await socket?.close();
        continue;
      }
      const health = await measure(pid, concurrency, SECONDS, healthWorker);
      const wrk = withWrk ? measureWrk(pid, server.url, concurrency) : null;
      const steps = await measure(pid, concurrency, SECONDS, stepWorker);
      await pool.close();
      const wsSteps = socket ? await measure(pid, concurrency, SECONDS, wsWorker) : null;
      await socket?.close();
      if (wsSteps) {
        wsRows.push(
          `| ${concurrency} | ${fmt(steps.perSecond)} | ${fmt(steps.p50)} / ${fmt(steps.p99)} | ${fmt(steps.serverCpuUs)} | ${fmt(wsSteps.perSecond)} | ${fmt(wsSteps.p50)} / ${fmt(wsSteps.p99)} | ${pct(wsSteps.serverBusy)} / ${pct(wsSteps.clientBusy)} | ${fmt(wsSteps.serverCpuUs)} | ${(wsSteps.serverCpuUs / steps.serverCpuUs).toFixed(2)}× | ${wsSteps.errors} |`,
        );
      }

      rows.push(
        `| ${concurrency} | ${fmt(health.perSecond)} | ${fmt(health.p50)} / ${fmt(health.p99)} | ${fmt(steps.perSecond)} | ${fmt(steps.p50)} / ${fmt(steps.p99)} | ${((100 * steps.perSecond) / health.perSecond).toFixed(0)}% | ${health.errors + steps.errors} |`,
      );
      cpuRows.push(
        `| ${concurrency} | ${pct(health.serverBusy)} / ${pct(health.clientBusy)} | ${fmt(health.serverCpuUs)} | ${wrk ? `${fmt(wrk.perSecond)} (${fmt(wrk.p50)} / ${fmt(wrk.p99)})` : "-"} | ${wrk ? `${pct(wrk.serverBusy)}, ${fmt(wrk.serverCpuUs)}` : "-"} | ${pct(steps.serverBusy)} / ${pct(steps.clientBusy)} | ${fmt(steps.serverCpuUs)} | ${wrk ? `${((100 * steps.perSecond) / wrk.perSecond).toFixed(0)}%` : "-"} |`,
      );
      if (wrk && wrk.perSecond > 1.2 * health.perSecond) {
        notes.push(
          `At ${concurrency}: this load generator, not the server, bounds /health: wrk drew ${fmt(wrk.perSecond)} req/s (${(wrk.perSecond / health.perSecond).toFixed(1)}×) from the same route, the server ${pct(wrk.serverBusy)} busy.`,
        );
      } else if (!wrk && health.clientBusy >= health.serverBusy) {
        notes.push(`At ${concurrency}: the load generator used as much CPU as the server on /health (${pct(health.clientBusy)} vs ${pct(health.serverBusy)} of a core), so it is part of that ceiling; wrk would show the route alone.`);
      }
      if (steps.serverBusy < BUSY) {
        notes.push(`At ${concurrency}: the server was ${pct(steps.serverBusy)} busy during steps (generator ${pct(steps.clientBusy)}): the rest of the cores went to other processes.`);
      }
      console.error(
        `concurrency ${concurrency}: health ${fmt(health.perSecond)}/s${wrk ? ` (wrk ${fmt(wrk.perSecond)}/s)` : ""}, steps ${fmt(steps.perSecond)}/s at ${fmt(steps.serverCpuUs)} µs${wsSteps ? `, /v1/ws steps ${fmt(wsSteps.perSecond)}/s at ${fmt(wsSteps.serverCpuUs)} µs` : ""}`,
      );
    }
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(
    `\nNode ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB; ${SECONDS} s per level after ${WARMUP_SECONDS} s warm-up; ${WORKERS} server process(es); server and load generator share the machine (load average ${loadavg()[0]?.toFixed(2)} at the end).\n`,
  );
  console.log("| concurrent episodes | /health req/s | /health p50 / p99 ms | persisted steps/s | step p50 / p99 ms | steps ÷ health | errors |");
  console.log("|---|---|---|---|---|---|---|");
  for (const row of rows) console.log(row);
  console.log("\nCPU, as a share of one core: server (all its processes) / this load generator; server CPU per request in µs.\n");
  console.log("| concurrent episodes | /health: server / generator busy | server µs per /health | /health with wrk: req/s (p50 / p99 ms) | under wrk: server busy, µs per /health | steps: server / generator busy | server µs per step | steps ÷ wrk /health |");
  console.log("|---|---|---|---|---|---|---|---|");
  for (const row of cpuRows) console.log(row);
  if (wsRows.length) {
    console.log("\nPersisted steps over HTTP and over the session socket /v1/ws (one socket per level carrying every episode), same server; server CPU per step in µs.\n");
    console.log("| concurrent episodes | HTTP steps/s | HTTP p50 / p99 ms | HTTP server µs per step | /v1/ws steps/s | /v1/ws p50 / p99 ms | /v1/ws: server / generator busy | /v1/ws server µs per step | /v1/ws ÷ HTTP server CPU | /v1/ws errors |");
    console.log("|---|---|---|---|---|---|---|---|---|---|");
    for (const row of wsRows) console.log(row);
  }
  if (!withWrk) notes.push("wrk is not installed (Debian: apt-get install wrk), so /health was only measured with this process's undici client.");
  if (notes.length) console.log(`\n${notes.map((n) => `- ${n}`).join("\n")}`);
}

await main();
