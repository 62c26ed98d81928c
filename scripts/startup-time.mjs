#!/usr/bin/env node
/* global process, console, fetch, setTimeout, clearTimeout -- a plain Node script outside the TypeScript build */
// Start-up time of the built server: what `node <root>/bin/edgegym.js serve` (`edgegym serve`,
// `npm start`) runs, started N times (port 0, a fresh temporary SQLite file each run, no EDGEGYM_* variables from the
// caller's shell), timed from spawn to the first 200 from GET /health. Prints the median
// (and min/max) per root, so a build kept elsewhere compares with this one in one run:
//
//   npm run build && node scripts/startup-time.mjs                 # this checkout, 9 runs
//   node scripts/startup-time.mjs --runs 15 /tmp/old-checkout .    # before/after, interleaved
//
// By default it runs dist/server/node/cli.js with the resolve hook bin/edgegym.js installs
// (dist/server/node/resolve-hooks.js, where the root has it) but without bin's check that dist/
// is newer than src/, which would compile when src/ changes during the runs; `--bin` runs
// bin/edgegym.js itself, check included, and refuses a root whose dist/ is stale.
//
// A root is a directory with bin/ and dist/ (built), node_modules/ and package.json; a copy of
// an older bin/ and dist/ works with node_modules, package.json and drizzle/ linked in beside
// it. Runs of the roots alternate, so load on the machine falls on each alike. Wall times on a busy
// machine vary a lot; the server's CPU time by its first answer (Linux) varies less.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const { values, positionals } = parseArgs({
  options: { runs: { type: "string", default: "9" }, timeout: { type: "string", default: "30000" }, bin: { type: "boolean", default: false } },
  allowPositionals: true,
});
const runs = Number(values.runs);
const timeoutMs = Number(values.timeout);
const roots = (positionals.length ? positionals : ["."]).map((r) => resolve(r));
for (const root of roots) {
  if (!existsSync(join(root, "dist", "server", "node", "cli.js")) || !existsSync(join(root, "bin", "edgegym.js"))) {
    console.error(`${root}: no bin/edgegym.js or dist/server/node/cli.js (run \`npm run build\` there)`);
    process.exit(2);
  }
  const { staleReason } = await import(pathToFileURL(join(root, "bin", "ensure-build.js")).href);
  const stale = values.bin ? staleReason() : null;
  if (stale) {
    console.error(`${root}: ${stale}; run \`npm run build\` there first (a start would compile it)`);
    process.exit(2);
  }
}

/**
 * CPU time the process has used (all its threads, user + system) in ms, from /proc on Linux
 * (clock ticks of 10 ms); null elsewhere. Steadier than wall time on a busy machine.
 */
function cpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").replace(/^.*\) /s, "").split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

/** The command line that starts the server in `root`. */
function serverArgs(root, dbPath) {
  const serve = ["serve", "--port", "0", "--host", "127.0.0.1", "--db", dbPath];
  if (values.bin) return [join(root, "bin", "edgegym.js"), ...serve];
  const hooks = join(root, "dist", "server", "node", "resolve-hooks.js");
  const preload = existsSync(hooks) ? ["--import", `data:text/javascript,import { installResolveHooks } from ${JSON.stringify(pathToFileURL(hooks).href)}; installResolveHooks();`] : [];
  return [...preload, join(root, "dist", "server", "node", "cli.js"), ...serve];
}

/** Milliseconds from spawn to the first 200 from /health, and the server's CPU time by then. */
async function startOnce(root) {
  const dir = mkdtempSync(join(tmpdir(), "edgegym-startup-"));
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("EDGEGYM_")));
  const t0 = performance.now();
  const child = spawn(process.execPath, serverArgs(root, join(dir, "edgegym.sqlite")), {
    cwd: dir,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stderr.on("data", (d) => (err += d));
  try {
    const url = await new Promise((res, rej) => {
      const timer = setTimeout(() => rej(new Error(`no "listening on" line in ${timeoutMs} ms\n${out}${err}`)), timeoutMs);
      child.stdout.on("data", (d) => {
        out += d;
        const m = /listening on (http:\/\/\S+?)[\s(]/.exec(out);
        if (m) {
          clearTimeout(timer);
          res(m[1]);
        }
      });
      child.once("exit", (code) => {
        clearTimeout(timer);
        rej(new Error(`server exited (${code}) before listening\n${out}${err}`));
      });
    });
    for (;;) {
      const r = await fetch(`${url}/health`).catch(() => null);
      if (r?.status === 200) {
        const wall = performance.now() - t0;
        await r.arrayBuffer();
        return { wall, cpu: cpuMs(child.pid) };
      }
      if (performance.now() - t0 > timeoutMs) throw new Error(`/health never answered 200 (last: ${r?.status ?? "no answer"})`);
      await new Promise((r) => setTimeout(r, 5));
    }
  } finally {
    const exited = child.exitCode === null ? new Promise((r) => child.once("exit", r)) : Promise.resolve();
    child.kill("SIGTERM");
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

const times = new Map(roots.map((r) => [r, []]));
const cpus = new Map(roots.map((r) => [r, []]));
await startOnce(roots[0]); // warm the file cache; not counted
for (let i = 0; i < runs; i++) {
  for (const root of roots) {
    const { wall, cpu } = await startOnce(root);
    times.get(root).push(wall);
    if (cpu !== null) cpus.get(root).push(cpu);
  }
}
console.log(`start-up to first 200 from /health, ${runs} runs each (node ${process.version}):`);
for (const root of roots) {
  const t = times.get(root);
  const c = cpus.get(root);
  const cpu = c.length ? `; server CPU time median ${median(c).toFixed(0)} ms` : "";
  console.log(`  ${root}: median ${median(t).toFixed(0)} ms (min ${Math.min(...t).toFixed(0)}, max ${Math.max(...t).toFixed(0)})${cpu}`);
}
