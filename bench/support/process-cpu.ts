// CPU time of a process and its direct children (a --workers server is a cluster primary
// with one child per worker), read from /proc. Linux only: elsewhere it reports null and
// the benchmark leaves the CPU columns empty.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

let ticksPerSecond: number | undefined;

function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** utime + stime in ticks, and the parent pid, of one /proc/<pid>/stat line. */
function readStat(pid: string): { ppid: number; ticks: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name may hold spaces and parentheses: the fields start after the last ")".
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return null;
  }
}

/** Seconds of CPU used so far by `pid` and the processes it started; null where /proc is missing. */
export function processTreeCpuSeconds(pid: number): number | null {
  const own = readStat(String(pid));
  if (!own) return null;
  let ticks = own.ticks;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry) || entry === String(pid)) continue;
    const stat = readStat(entry);
    if (stat?.ppid === pid) ticks += stat.ticks;
  }
  return ticks / clockTicks();
}

/** Seconds of CPU this process has used (all its threads). */
export function ownCpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}
