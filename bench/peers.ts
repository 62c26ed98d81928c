/**
 * `npm run bench:peers`: edgegym (every step persisted in SQLite) side by side with
 * openenv-core's own server (state in memory) on this machine, in one run, driven by one
 * Python asyncio load generator (bench/peers_load.py, aiohttp) at 1, 16, 64 and 256
 * concurrent 20-turn echo episodes:
 *
 *   - OpenEnv with a new WebSocket session per episode, and with one session reused;
 *   - edgegym over HTTP and over its session socket /v1/ws;
 *   - edgegym's Python AsyncClient over the socket and over HTTP (what the client costs).
 *
 * Both servers run the same environment: bench/echo-env.js for edgegym, its equivalent
 * bench/support/openenv_echo.py on openenv-core's create_app under uvicorn (one process).
 * Prints steps/s, p50/p99, server CPU per step, the ratios, and the server memory each
 * open episode holds. The venv is scripts/openenv-venv.sh's (openenv-core and aiohttp from
 * PyPI, pinned). Tenant quotas are off on the bench server: it measures steps, not limits.
 *
 *   BENCH_SECONDS=3 BENCH_LEVELS=1,16,64,256 npm run bench:peers
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, REPO_ROOT, startNodeServer } from "../test/support/node-server.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 1);
const LEVELS = (process.env.BENCH_LEVELS ?? "1,16,64,256").split(",").map(Number);
const IDLE_EPISODES = Number(process.env.BENCH_IDLE_EPISODES ?? 1000);
/** Substrings of path names to leave out, comma-separated (e.g. "httpx" to skip the slow httpx client). */
const SKIP = (process.env.BENCH_SKIP ?? "").split(",").filter(Boolean);

async function startOpenEnvEcho(python: string): Promise<{ url: string; child: ChildProcess; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawn(python, [join(REPO_ROOT, "bench/support/openenv_echo.py"), String(port)], { stdio: ["ignore", "inherit", "inherit"] });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`openenv echo server exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/health`)).ok) break;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) throw new Error("openenv echo server did not answer /health within 60 s");
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    child,
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
        setTimeout(() => child.kill("SIGKILL"), 5_000).unref();
      }),
  };
}

async function main(): Promise<void> {
  const python = execFileSync("bash", ["scripts/openenv-venv.sh"], { cwd: REPO_ROOT, encoding: "utf8" }).trim().split("\n").at(-1) as string;
  const version = execFileSync(python, ["-c", "import importlib.metadata as m; print(m.version('openenv-core'))"], { encoding: "utf8" }).trim();
  const dir = mkdtempSync(join(tmpdir(), "edgegym-bench-peers-"));
  const edgegym = await startNodeServer({
    db: join(dir, "bench.db"),
    args: ["--env", "./bench/echo-env.js"],
    env: { EDGEGYM_QUOTA_OPEN_EPISODES: "off", EDGEGYM_QUOTA_RESETS_PER_SECOND: "off" },
  });
  const echo = await startOpenEnvEcho(python);
  const model = readFileSync("/proc/cpuinfo", "utf8").match(/model name\s*:\s*(.*)/)?.[1] ?? "unknown CPU";
  console.log(`# bench:peers — ${cpus().length} cores (${model}), load average ${loadavg()[0]?.toFixed(1)} at start`);
  const config = {
    levels: LEVELS,
    seconds: SECONDS,
    warmup: WARMUP,
    idle_episodes: IDLE_EPISODES,
    skip: SKIP,
    client_path: join(REPO_ROOT, "trainer-adapter/src"),
    edgegym: { url: edgegym.url, pid: edgegym.process.pid },
    openenv: { url: echo.url, pid: echo.child.pid, version, max_sessions: 256 },
  };
  try {
    execFileSync(python, [join(REPO_ROOT, "bench/peers_load.py"), JSON.stringify(config)], { stdio: "inherit", cwd: REPO_ROOT });
  } finally {
    await Promise.all([edgegym.stop(), echo.stop()]);
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`\nload average ${loadavg()[0]?.toFixed(1)} at the end (the machine is shared: compare rows of one run, not runs)`);
}

await main();
