// `npm run bench:worker`: the same load against the Node server (better-sqlite3), the
// Worker in workerd with episodes in D1 (wrangler dev, local D1) and the Worker with one
// Durable Object per episode (EDGEGYM_EPISODE_STORE=durable-objects), one server after the
// other, each at every concurrency of --concurrency (default 1,16,64,256), on 127.0.0.1 only.
// Each virtual client loops reset → step on reverse-text for a bounded time: N clients keep
// N episodes in flight.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { freePort, startChildServer, type ChildServer } from "../test/support/child-server.js";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "5" },
    warmup: { type: "string", default: "1" },
    concurrency: { type: "string", default: "1,16,64,256" },
  },
});
const seconds = Number(values.seconds);
const warmupSeconds = Number(values.warmup);
const levels = values.concurrency.split(",").map(Number);
if (!(seconds > 0 && seconds <= 120) || !(warmupSeconds >= 0 && warmupSeconds <= 30) || levels.length > 8 || !levels.every((c) => Number.isInteger(c) && c >= 1 && c <= 256)) {
  throw new Error("--seconds must be in (0, 120], --warmup in [0, 30], --concurrency up to 8 comma-separated integers in [1, 256]");
}

interface Result {
  steps: number;
  errors: number;
  elapsedMs: number;
  stepMs: number[];
  resetMs: number[];
}

const reversed = (text: string): string => Array.from(text).reverse().join("");

async function post(url: string, body: unknown): Promise<{ status: number; json: unknown; ms: number }> {
  const started = performance.now();
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const json: unknown = await res.json();
  return { status: res.status, json, ms: performance.now() - started };
}

/** Virtual clients loop reset → step until the deadline; only what ends after the warm-up counts. */
async function drive(baseUrl: string, concurrency: number): Promise<Result> {
  const result: Result = { steps: 0, errors: 0, elapsedMs: 0, stepMs: [], resetMs: [] };
  const warmEnd = performance.now() + warmupSeconds * 1000;
  const end = warmEnd + seconds * 1000;
  let task = 0;
  const client = async (): Promise<void> => {
    while (performance.now() < end) {
      const index = task++ % 198;
      const reset = await post(`${baseUrl}/v1/envs/reverse-text/episodes`, { index });
      const counted = performance.now() > warmEnd;
      if (reset.status !== 201) {
        if (counted) result.errors++;
        continue;
      }
      const episode = reset.json as { episode_id: string; messages: { content: string }[] };
      const prompt = episode.messages.at(-1)?.content ?? "";
      const step = await post(`${baseUrl}/v1/episodes/${episode.episode_id}/step`, { turn: 0, message: { role: "assistant", content: `<answer>${reversed(prompt)}</answer>` } });
      if (performance.now() <= warmEnd) continue;
      result.resetMs.push(reset.ms);
      if (step.status !== 200) {
        result.errors++;
        continue;
      }
      result.steps++;
      result.stepMs.push(step.ms);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  result.elapsedMs = performance.now() - warmEnd;
  return result;
}

const percentile = (values: number[], p: number): number => {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
};

type Row = Result & { name: string; concurrency: number };

/** One server, started once, measured at each concurrency in turn. */
async function measure(name: string, start: (dir: string, port: number) => Promise<ChildServer>): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), "edgegym-bench-"));
  const port = await freePort();
  process.stderr.write(`${name}: starting on 127.0.0.1:${port}\n`);
  const server = await start(dir, port);
  try {
    const rows: Row[] = [];
    for (const concurrency of levels) {
      process.stderr.write(`  ${concurrency} clients: ${warmupSeconds} s warm-up + ${seconds} s… `);
      rows.push({ name, concurrency, ...(await drive(`http://127.0.0.1:${port}`, concurrency)) });
      process.stderr.write("done\n");
    }
    return rows;
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const node = await measure("Node (better-sqlite3, WAL)", (dir, port) =>
  startChildServer({
    command: process.execPath,
    args: ["bin/edgegym.js", "serve", "--port", String(port), "--db", join(dir, "edgegym.db")],
    healthUrl: `http://127.0.0.1:${port}/health`,
  }),
);
const workerWith = (store: "d1" | "durable-objects") => (dir: string, port: number) =>
  startChildServer({
    command: "npm",
    // --log-level error: wrangler dev otherwise prints a line per request from its Node process.
    args: ["run", "--silent", "dev:worker", "--", "--port", String(port), "--persist-to", dir, "--log-level", "error", "--var", `EDGEGYM_EPISODE_STORE:${store}`],
    env: { WRANGLER_SEND_METRICS: "false" },
    healthUrl: `http://127.0.0.1:${port}/health`,
    startTimeoutMs: 90_000,
  });
const d1 = await measure("Worker, episodes in D1 (workerd, local D1)", workerWith("d1"));
const durable = await measure("Worker, a Durable Object per episode (workerd)", workerWith("durable-objects"));

const rate = (r: Result): number => r.steps / (r.elapsedMs / 1000);
const ms = (n: number): string => n.toFixed(1);
const wranglerVersion = (JSON.parse(readFileSync("node_modules/wrangler/package.json", "utf8")) as { version: string }).version;

console.log(`\nreset → step on reverse-text, ${seconds} s measured after ${warmupSeconds} s warm-up per concurrency, each server alone`);
console.log(`machine: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, node ${process.version}, wrangler ${wranglerVersion}; client in the same machine\n`);
console.log("| server | clients | steps | steps/s | step p50 ms | step p99 ms | reset p50 ms | reset p99 ms | errors |");
console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
for (const r of [...node, ...d1, ...durable]) {
  console.log(`| ${r.name} | ${r.concurrency} | ${r.steps} | ${rate(r).toFixed(0)} | ${ms(percentile(r.stepMs, 50))} | ${ms(percentile(r.stepMs, 99))} | ${ms(percentile(r.resetMs, 50))} | ${ms(percentile(r.resetMs, 99))} | ${r.errors} |`);
}
console.log("");
levels.forEach((c, i) => {
  const [n, d, o] = [node[i], d1[i], durable[i]] as [Row, Row, Row];
  console.log(`${c} clients: Worker D1 / Node ${(rate(d) / rate(n)).toFixed(2)}×, Worker DO / Node ${(rate(o) / rate(n)).toFixed(2)}×, DO / D1 ${(rate(o) / rate(d)).toFixed(2)}× the steps per second`);
});
