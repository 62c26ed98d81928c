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
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { REPO_ROOT, startNodeServer } from "../test/support/node-server.js";
import { openenvPython, startPeerServer } from "./support/peer-server.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 1);
const LEVELS = (process.env.BENCH_LEVELS ?? "1,16,64,256").split(",").map(Number);
const IDLE_EPISODES = Number(process.env.BENCH_IDLE_EPISODES ?? 1000);
/** Substrings of path names to leave out, comma-separated (e.g. "httpx" to skip the slow httpx client). */
const SKIP = (process.env.BENCH_SKIP ?? "").split(",").filter(Boolean);

async function main(): Promise<void> {
  const { python, version } = openenvPython();
  const dir = mkdtempSync(join(tmpdir(), "edgegym-bench-peers-"));
  const edgegym = await startNodeServer({
    db: join(dir, "bench.db"),
    args: ["--env", "./bench/echo-env.js"],
    env: { EDGEGYM_QUOTA_OPEN_EPISODES: "off", EDGEGYM_QUOTA_RESETS_PER_SECOND: "off" },
  });
  const echo = await startPeerServer("openenv echo server", python, join(REPO_ROOT, "bench/support/openenv_echo.py"));
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
