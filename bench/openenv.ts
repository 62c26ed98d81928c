/**
 * `npm run bench:openenv`: steps per second and step latency, at 1, 16, 64 and 256
 * concurrent sessions, of three paths on this machine in one run:
 *
 *   - edgegym's OpenEnv WebSocket session (`/openenv/bench-echo/ws`),
 *   - edgegym's native HTTP protocol (`POST /v1/episodes/{id}/step`), same environment,
 *   - openenv-core's own echo server: the environment `openenv init` generates, served
 *     by openenv-core's `create_app` under uvicorn (one process), over its `/ws`.
 *
 * edgegym runs the real CLI with a SQLite file and `bench/echo-env.js` (twenty turns of
 * short feedback); each session resets, steps until done, resets again. The echo server's
 * sessions reset every twenty steps too. Its state lives in the process's memory, edgegym's
 * in SQLite: that difference is what the figures show. The load comes from this process
 * (`ws` and undici), for a bounded time per level, to 127.0.0.1 only.
 *
 *   BENCH_SECONDS=5 BENCH_LEVELS=1,16,64,256 npm run bench:openenv
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { Pool } from "undici";
import { WebSocket } from "ws";
import { startNodeServer } from "../test/support/node-server.js";
import { openenvPython, startPeerServer, type PeerServer } from "./support/peer-server.js";
import { processTreeCpuSeconds } from "./support/process-cpu.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const LEVELS = (process.env.BENCH_LEVELS ?? "1,16,64,256").split(",").map(Number);
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP ?? 1);
const ECHO_TURNS = 20;

interface Result {
  steps: number;
  errors: number;
  perSecond: number;
  p50: number;
  p99: number;
  serverBusy: number;
}

/** One session's loop until `until`; records each step's latency, returns its error count. */
type Session = (record: (ms: number) => void, until: number) => Promise<number>;

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

async function measure(serverPid: number, concurrency: number, seconds: number, session: Session): Promise<Result> {
  const latencies: number[] = [];
  const cpu0 = processTreeCpuSeconds(serverPid);
  const start = performance.now();
  const until = start + seconds * 1000;
  const errors = (await Promise.all(Array.from({ length: concurrency }, () => session((ms) => latencies.push(ms), until)))).reduce((a, b) => a + b, 0);
  const elapsed = (performance.now() - start) / 1000;
  const cpu1 = processTreeCpuSeconds(serverPid);
  latencies.sort((a, b) => a - b);
  return {
    steps: latencies.length,
    errors,
    perSecond: latencies.length / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    serverBusy: cpu0 === null || cpu1 === null ? Number.NaN : (cpu1 - cpu0) / elapsed,
  };
}

/** A socket that answers one frame per frame sent. */
async function openSocket(url: string): Promise<{ ask(message: unknown): Promise<{ type: string; data: { done?: boolean } }>; close(): Promise<void> }> {
  const socket = new WebSocket(url);
  await new Promise((resolve, reject) => {
    socket.once("open", resolve);
    socket.once("error", reject);
  });
  const waiting: ((text: string) => void)[] = [];
  socket.on("message", (raw) => waiting.shift()?.(String(raw)));
  return {
    ask: (message) =>
      new Promise((resolve, reject) => {
        waiting.push((text) => resolve(JSON.parse(text)));
        socket.send(JSON.stringify(message), (err) => err && reject(err));
      }),
    // OpenEnv's goodbye, then the close handshake: its server logs a traceback for a socket that just vanishes.
    close: () =>
      new Promise<void>((resolve) => {
        socket.once("close", () => resolve());
        socket.send(JSON.stringify({ type: "close" }));
        setTimeout(() => socket.terminate(), 2_000).unref();
      }),
  };
}

/** A socket session stepping until `until`: `stepData` is the action, reset when done (or every ECHO_TURNS steps). */
function socketSession(url: string, resetData: unknown, stepData: unknown): Session {
  return async (record, until) => {
    const ws = await openSocket(url);
    let errors = 0;
    try {
      while (performance.now() < until) {
        const reset = await ws.ask({ type: "reset", data: resetData });
        if (reset.type !== "observation") errors++;
        for (let turn = 0; turn < ECHO_TURNS && performance.now() < until; turn++) {
          const t0 = performance.now();
          const reply = await ws.ask({ type: "step", data: stepData });
          record(performance.now() - t0);
          if (reply.type !== "observation") errors++;
          if (reply.data.done) break;
        }
      }
    } finally {
      await ws.close();
    }
    return errors;
  };
}

function nativeSession(pool: Pool): Session {
  const post = async (path: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> => {
    const res = await pool.request({ method: "POST", path, headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    return { status: res.statusCode, json: (await res.body.json()) as Record<string, unknown> };
  };
  return async (record, until) => {
    let errors = 0;
    while (performance.now() < until) {
      const reset = await post("/v1/envs/bench-echo/episodes", {});
      if (reset.status !== 201) {
        errors++;
        continue;
      }
      const id = String(reset.json.episode_id);
      for (let turn = 0; turn < ECHO_TURNS && performance.now() < until; turn++) {
        const t0 = performance.now();
        const step = await post(`/v1/episodes/${id}/step`, { turn, message: { role: "assistant", content: "one two three" } });
        record(performance.now() - t0);
        if (step.status !== 200) errors++;
        if (step.json.done) break;
      }
    }
    return errors;
  };
}

/** openenv-core's echo server: the environment `openenv init` writes, served by its create_app with room for every session. */
async function startOpenEnvEcho(python: string, dir: string): Promise<PeerServer> {
  execFileSync(join(python, "..", "openenv"), ["init", "bench_echo", "-o", dir], { stdio: "ignore" });
  const launcher = join(dir, "serve_echo.py");
  writeFileSync(
    launcher,
    [
      "import sys, uvicorn",
      `sys.path.insert(0, ${JSON.stringify(join(dir, "bench_echo"))})`,
      "from openenv.core.env_server.http_server import create_app",
      "from models import BenchEchoAction, BenchEchoObservation",
      "from server.bench_echo_environment import BenchEchoEnvironment",
      "app = create_app(BenchEchoEnvironment, BenchEchoAction, BenchEchoObservation, env_name='bench_echo', max_concurrent_envs=1024)",
      "uvicorn.run(app, host='127.0.0.1', port=int(sys.argv[1]), log_level='warning')",
    ].join("\n"),
  );
  return startPeerServer("openenv echo server", python, launcher);
}

const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : "–");

async function main(): Promise<void> {
  const { python, version } = openenvPython();
  const dir = mkdtempSync(join(tmpdir(), "edgegym-bench-openenv-"));
  const edgegym = await startNodeServer({ db: join(dir, "bench.db"), args: ["--env", "./bench/echo-env.js"] });
  const echo = await startOpenEnvEcho(python, dir);
  const pool = new Pool(edgegym.url, { connections: 256, pipelining: 1 });
  const wsBase = edgegym.url.replace("http", "ws");
  const paths: { name: string; pid: number; session: Session }[] = [
    { name: "edgegym OpenEnv WebSocket", pid: edgegym.process.pid ?? 0, session: socketSession(`${wsBase}/openenv/bench-echo/ws`, {}, { content: "one two three" }) },
    { name: "edgegym native HTTP", pid: edgegym.process.pid ?? 0, session: nativeSession(pool) },
    { name: `openenv-core ${version} echo (WebSocket)`, pid: echo.child.pid ?? 0, session: socketSession(`${echo.url.replace("http", "ws")}/ws`, {}, { message: "one two three" }) },
  ];
  const model = readFileSync("/proc/cpuinfo", "utf8").match(/model name\s*:\s*(.*)/)?.[1] ?? "unknown CPU";
  console.log(`# bench:openenv — ${cpus().length} cores (${model}), ${SECONDS} s per level after ${WARMUP_SECONDS} s warm-up; steps of 20-turn echo episodes`);
  console.log("");
  console.log("| path | sessions | steps/s | p50 ms | p99 ms | server CPU (cores) | errors |");
  console.log("|---|---:|---:|---:|---:|---:|---:|");
  try {
    for (const level of LEVELS) {
      for (const path of paths) {
        if (WARMUP_SECONDS > 0) await measure(path.pid, Math.min(level, 16), WARMUP_SECONDS, path.session);
        const r = await measure(path.pid, level, SECONDS, path.session);
        console.log(`| ${path.name} | ${level} | ${fmt(r.perSecond, 0)} | ${fmt(r.p50, 2)} | ${fmt(r.p99, 2)} | ${fmt(r.serverBusy, 2)} | ${r.errors} |`);
      }
    }
  } finally {
    await pool.close();
    await Promise.all([edgegym.stop(), echo.stop()]);
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
