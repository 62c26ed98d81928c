/**
 * `npm run bench`: persisted steps per second and latency of the Node server under
 * load, next to GET /health on the same run as the ceiling. The server runs as its
 * own process (the real CLI, SQLite file in WAL mode); the load comes from this
 * process over keep-alive connections on 127.0.0.1, for a bounded time per level.
 *
 *   BENCH_SECONDS=5 BENCH_LEVELS=1,16,64,256 BENCH_WORKERS=1 npm run bench
 */
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { Pool } from "undici";
import { REPO_ROOT, startNodeServer } from "../test/support/node-server.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const LEVELS = (process.env.BENCH_LEVELS ?? "1,16,64,256").split(",").map(Number);
const WORKERS = process.env.BENCH_WORKERS ?? "1";

interface Result {
  count: number;
  errors: number;
  perSecond: number;
  p50: number;
  p99: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

async function measure(concurrency: number, worker: (record: (ms: number) => void, until: number) => Promise<number>): Promise<Result> {
  const latencies: number[] = [];
  const start = performance.now();
  const until = start + SECONDS * 1000;
  const errors = (await Promise.all(Array.from({ length: concurrency }, () => worker((ms) => latencies.push(ms), until)))).reduce((a, b) => a + b, 0);
  const elapsed = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  return { count: latencies.length, errors, perSecond: latencies.length / elapsed, p50: percentile(latencies, 50), p99: percentile(latencies, 99) };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "edgegym-bench-"));
  const server = await startNodeServer({ db: join(dir, "bench.db"), args: ["--env", join(REPO_ROOT, "bench/echo-env.js"), "--workers", WORKERS] });
  const rows: string[] = [];
  try {
    for (const concurrency of LEVELS) {
      const pool = new Pool(server.url, { connections: concurrency, pipelining: 1 });
      const call = async (method: "GET" | "POST", path: string, body?: unknown) => {
        const res = await pool.request({ method, path, headers: body === undefined ? {} : { "content-type": "application/json" }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
        const text = await res.body.text();
        return { status: res.statusCode, text };
      };

      const health = await measure(concurrency, async (record, until) => {
        let errors = 0;
        while (performance.now() < until) {
          const t = performance.now();
          const res = await call("GET", "/health");
          if (res.status === 200) record(performance.now() - t);
          else errors++;
        }
        return errors;
      });

      // Each worker plays its own episodes: reset (not counted), then steps until done.
      const steps = await measure(concurrency, async (record, until) => {
        let errors = 0;
        while (performance.now() < until) {
          const reset = await call("POST", "/v1/envs/bench-echo/episodes", {});
          if (reset.status !== 201) {
            errors++;
            continue;
          }
          const id = (JSON.parse(reset.text) as { episode_id: string }).episode_id;
          let turn = 0;
          let done = false;
          while (!done && performance.now() < until) {
            const t = performance.now();
            const res = await call("POST", `/v1/episodes/${id}/step`, { turn, message: { role: "assistant", content: "one two three four five" } });
            if (res.status !== 200) {
              errors++;
              break;
            }
            record(performance.now() - t);
            const body = JSON.parse(res.text) as { turn: number; done: boolean };
            turn = body.turn;
            done = body.done;
          }
        }
        return errors;
      });
      await pool.close();

      const fmt = (n: number) => (Number.isFinite(n) ? n.toFixed(n < 10 ? 2 : 0) : "-");
      rows.push(
        `| ${concurrency} | ${fmt(health.perSecond)} | ${fmt(health.p50)} / ${fmt(health.p99)} | ${fmt(steps.perSecond)} | ${fmt(steps.p50)} / ${fmt(steps.p99)} | ${((100 * steps.perSecond) / health.perSecond).toFixed(0)}% | ${health.errors + steps.errors} |`,
      );
      console.error(`concurrency ${concurrency}: health ${fmt(health.perSecond)}/s, steps ${fmt(steps.perSecond)}/s`);
    }
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`\nNode ${process.version}, ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB; ${SECONDS} s per level; ${WORKERS} server process(es); server and load generator share the machine.\n`);
  console.log("| concurrent episodes | /health req/s | /health p50 / p99 ms | persisted steps/s | step p50 / p99 ms | steps ÷ health | errors |");
  console.log("|---|---|---|---|---|---|---|");
  for (const row of rows) console.log(row);
}

await main();
