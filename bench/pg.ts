/**
 * `npm run bench:pg`: persisted steps per second with 1, 2 and 4 Node server processes
 * on one PostgreSQL database, beside one process on a SQLite file, in one run on this
 * machine (127.0.0.1 only, bounded time per row). PostgreSQL is a throwaway cluster from
 * Debian's package (test/support/postgres.ts). The load is spread over the processes
 * request by request, as a load balancer without sticky sessions would: consecutive steps
 * of one episode land on different processes.
 *
 * Durability differs by default, so both PostgreSQL settings are measured: with
 * `synchronous_commit = on` (PostgreSQL's default) an answered step has been fsynced;
 * with `off` it survives the server process being killed but not an OS crash, which is
 * what SQLite's default (`synchronous = NORMAL` in WAL mode) promises.
 *
 *   BENCH_SECONDS=5 BENCH_CONCURRENCY=64 BENCH_PROCESSES=1,2,4 BENCH_PG_POOL=10 npm run bench:pg
 */
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { Pool } from "undici";
import { REPO_ROOT, startNodeServer, type ChildServer } from "../test/support/node-server.js";
import { startPostgres } from "../test/support/postgres.js";
import { httpEpisodes } from "./support/http-episodes.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP ?? 2);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64);
const PROCESSES = (process.env.BENCH_PROCESSES ?? "1,2,4").split(",").map(Number);
/** EDGEGYM_PG_POOL_SIZE for the PostgreSQL servers (default: the server's, 10). */
const POOL = process.env.BENCH_PG_POOL;
const envArgs = ["--env", join(REPO_ROOT, "bench/echo-env.js")];

interface Row {
  engine: string;
  processes: number;
  perSecond: number;
  p50: number;
  p99: number;
  errors: number;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;

/** CONCURRENCY clients, each playing its own episodes (reset not counted, steps counted), for `seconds`. */
async function load(servers: ChildServer[], seconds: number): Promise<Omit<Row, "engine" | "processes">> {
  const pools = servers.map((s) => new Pool(s.url, { connections: Math.ceil(CONCURRENCY / servers.length) + 1, pipelining: 1 }));
  let next = 0;
  // Round robin over the processes, request by request.
  const call = async (method: "POST", path: string, body: unknown) => {
    const pool = pools[next++ % pools.length] as Pool;
    const res = await pool.request({ method, path, headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    return { status: res.statusCode, text: await res.body.text() };
  };
  const latencies: number[] = [];
  const start = performance.now();
  const until = start + seconds * 1000;
  const errors = (await Promise.all(Array.from({ length: CONCURRENCY }, () => httpEpisodes(call, until, (ms) => latencies.push(ms))))).reduce((a, b) => a + b, 0);
  const elapsed = (performance.now() - start) / 1000;
  await Promise.all(pools.map((p) => p.close()));
  latencies.sort((a, b) => a - b);
  return { perSecond: latencies.length / elapsed, p50: percentile(latencies, 50), p99: percentile(latencies, 99), errors };
}

async function measure(engine: string, db: string, processes: number): Promise<Row> {
  // One after another: on a loaded machine four node processes starting at once can miss the start timeout.
  const servers: ChildServer[] = [];
  try {
    for (let i = 0; i < processes; i++) servers.push(await startNodeServer({ db, args: envArgs, env: POOL ? { EDGEGYM_PG_POOL_SIZE: POOL } : {} }));
    if (WARMUP_SECONDS > 0) await load(servers, WARMUP_SECONDS);
    const row = { engine, processes, ...(await load(servers, SECONDS)) };
    console.error(`${engine}, ${processes} process(es): ${row.perSecond.toFixed(0)} steps/s`);
    return row;
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "edgegym-bench-pg-"));
  const postgres = await startPostgres();
  const rows: Row[] = [];
  try {
    rows.push(await measure("SQLite (NORMAL)", join(dir, "bench.db"), 1));
    for (const sync of ["off", "on"] as const) {
      for (const n of PROCESSES) {
        const url = await postgres.createDatabase(`bench_${sync}_${n}`);
        const admin = new pg.Client({ connectionString: url });
        await admin.connect();
        await admin.query(`ALTER DATABASE bench_${sync}_${n} SET synchronous_commit = ${sync}`);
        await admin.end();
        rows.push(await measure(`PostgreSQL (synchronous_commit ${sync})`, url, n));
      }
    }
  } finally {
    await postgres.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const base = rows[0]?.perSecond ?? Number.NaN;
  console.log(
    `\nNode ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}; ${CONCURRENCY} concurrent episodes, ${POOL ?? 10} PostgreSQL connections per server process, ${SECONDS} s per row after ${WARMUP_SECONDS} s warm-up; servers, PostgreSQL and this load generator share the machine (load average ${loadavg()[0]?.toFixed(2)} at the end).\n`,
  );
  console.log("| engine | server processes | persisted steps/s | ÷ SQLite | step p50 / p99 ms | errors |");
  console.log("|---|---|---|---|---|---|");
  for (const r of rows) console.log(`| ${r.engine} | ${r.processes} | ${r.perSecond.toFixed(0)} | ${(r.perSecond / base).toFixed(2)}× | ${r.p50.toFixed(1)} / ${r.p99.toFixed(1)} | ${r.errors} |`);
}

await main();
