// GET /health through wrk (a C load generator, Debian package `wrk`), when it is
// installed: the undici client of the benchmark runs in Node on the same cores and can
// be slower than the server's /health route, so wrk shows what the route itself can do.
import { spawnSync } from "node:child_process";

export interface WrkResult {
  perSecond: number;
  p50: number;
  p99: number;
}

/** Milliseconds from wrk's "1.23ms", "850.00us" or "1.05s". */
function toMs(text: string): number {
  const match = /^([\d.]+)(us|ms|s)$/.exec(text);
  if (!match) return Number.NaN;
  const value = Number(match[1]);
  return match[2] === "us" ? value / 1000 : match[2] === "s" ? value * 1000 : value;
}

export function wrkAvailable(): boolean {
  return spawnSync("wrk", ["--version"], { encoding: "utf8" }).error === undefined;
}

/** One wrk thread, `connections` keep-alive connections, for `seconds`. */
export function runWrk(url: string, connections: number, seconds: number): WrkResult | null {
  const run = spawnSync("wrk", ["-t1", `-c${connections}`, `-d${seconds}s`, "--latency", url], { encoding: "utf8", timeout: (seconds + 30) * 1000 });
  if (run.status !== 0) return null;
  const perSecond = Number(/Requests\/sec:\s+([\d.]+)/.exec(run.stdout)?.[1]);
  const p50 = /^\s+50%\s+(\S+)/m.exec(run.stdout)?.[1];
  const p99 = /^\s+99%\s+(\S+)/m.exec(run.stdout)?.[1];
  if (!Number.isFinite(perSecond) || !p50 || !p99) return null;
  return { perSecond, p50: toMs(p50), p99: toMs(p99) };
}
