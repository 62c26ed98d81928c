/**
 * `npm run bench:abuse`: does the server keep answering while a client sends the worst
 * requests it can? For each attack a fresh Node server (the real CLI, SQLite file) is
 * started; attackers send the request over and over for a bounded time while a prober
 * sends GET /health every few milliseconds on its own connection. The table gives the
 * /health latency p50/p99/max (a probe that gets no answer within the probe timeout
 * counts at that timeout), and the status codes the attack itself got. A server that
 * died (out of memory) is reported as such and the next attack gets a new one.
 *
 * With directories as arguments each is a built checkout, run one after the other (a
 * `git archive` of main with node_modules linked and `npm run build`, then this one):
 *
 *   BENCH_SECONDS=5 BENCH_ATTACKERS=2 npm run bench:abuse -- /tmp/edgegym-main .
 *
 * The servers get NODE_OPTIONS=--max-old-space-size=512, so an attack that allocates
 * without bound ends the server in seconds instead of taking the machine's memory. What
 * the heap cap does not see (Buffers of unsent replies) the RSS column does: the server's
 * resident memory is sampled every probe interval from /proc, and a server past
 * BENCH_RSS_MB (2048) is killed and reported as such.
 *
 * The socket attacks (bench/socket-attacks.ts) run in the same table: clients that ask
 * for ~61 kB replies and do not read them (session socket, HTTP/1.1 pipelining), one that
 * does, and a tenant that hoards sockets (its figures also in a table of their own).
 */
import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { Pool } from "undici";
import { LCS_MAX_CHARS } from "../src/envs/builtin/reverse-text/lcs.js";
import { REPO_ROOT, startNodeServer, type ChildServer } from "../test/support/node-server.js";
import { socketAttacks, type HoardingFigures, type SocketAttack } from "./socket-attacks.js";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ATTACKERS = Number(process.env.BENCH_ATTACKERS ?? 2);
/** Pause between two /health probes. */
const PROBE_EVERY_MS = Number(process.env.BENCH_PROBE_MS ?? 10);
/** A probe unanswered after this counts at this latency. */
const PROBE_TIMEOUT_MS = Number(process.env.BENCH_PROBE_TIMEOUT_MS ?? 2000);
const HEAP_MB = Number(process.env.BENCH_HEAP_MB ?? 512);
/** A server whose resident memory passes this is killed: unsent replies live outside the heap cap. */
const RSS_CAP_MB = Number(process.env.BENCH_RSS_MB ?? 2048);

interface HttpAttack {
  name: string;
  method: "GET" | "POST";
  path: string;
  body?: unknown;
}

type Attack = HttpAttack | SocketAttack;

const reversed = <T>(xs: T[]): T[] => [...xs].reverse();
const big = "ab".repeat(15_000);
const numbers1600 = Array.from({ length: 1600 }, (_, i) => `x^2+${i}`);
// Items at the LCS cap on both sides, as many as fit in a 1 MB body: the most LCS work one request can ask for.
const lcsBatch = Array.from({ length: Math.floor(950_000 / (2 * LCS_MAX_CHARS + 100)) }, (_, k) => {
  const text = Array.from({ length: LCS_MAX_CHARS }, (_, i) => String.fromCharCode(97 + ((i * 7919 + k) % 26))).join("");
  return { prompt: "p", completion: `<answer>${text}</answer>`, answer: reversed([...text]).join("") };
});

/** The worst requests found, each as one client would send it; then the socket attacks. */
const ATTACKS: Attack[] = [
  { name: "none (baseline)", method: "GET", path: "/health" },
  { name: "examples offset 2^53−1, limit 100", method: "GET", path: "/v1/envs/math/examples?offset=9007199254740991&limit=100" },
  { name: "eval 10^9 rows × 1,024 rollouts", method: "POST", path: "/v1/evals", body: { env_id: "math", model: "m", num_examples: 1_000_000_000, rollouts_per_example: 1024 } },
  {
    name: "reverse-text LCS, 30k chars each side",
    method: "POST",
    path: "/v1/envs/reverse-text/score",
    body: { items: [{ prompt: big, completion: `<answer>${big}</answer>`, answer: big }] },
  },
  {
    name: `reverse-text, ${lcsBatch.length} items at the ${LCS_MAX_CHARS}-char cap`,
    method: "POST",
    path: "/v1/envs/reverse-text/score",
    body: { items: lcsBatch },
  },
  {
    name: "math set, 1,600 elements vs reversed",
    method: "POST",
    path: "/v1/envs/math/score",
    body: { items: [{ prompt: "p", completion: `<answer>{${numbers1600.join(",")}}</answer>`, answer: `{${reversed(numbers1600).join(",")}}` }] },
  },
  {
    name: "math ((10^400)^400)^400",
    method: "POST",
    path: "/v1/envs/math/score",
    body: { items: [{ prompt: "p", completion: "<answer>((10^400)^400)^400</answer>", answer: "1" }] },
  },
  {
    // Not an attack: a body the size of the next one, to tell its cost from a large body's.
    name: "control: 480 KB plain completion",
    method: "POST",
    path: "/v1/envs/reverse-text/score",
    body: { items: [{ prompt: "p", completion: "x".repeat(480_000), answer: "x" }] },
  },
  {
    name: "reverse-text, 60,000 unclosed <answer> tags",
    method: "POST",
    path: "/v1/envs/reverse-text/score",
    body: { items: [{ prompt: "p", completion: "<answer>".repeat(60_000), answer: "x" }] },
  },
  {
    name: "countdown, 30,000-factor product",
    method: "POST",
    path: "/v1/envs/reasoning/score",
    body: {
      items: [
        {
          prompt: "p",
          completion: `<answer>${"99999999*".repeat(30_000)}1</answer>`,
          answer: "65",
          info: { family: "countdown", difficulty: "medium", data: { numbers: [9, 2, 7], target: 65 } },
        },
      ],
    },
  },
  ...socketAttacks(ATTACKERS),
];

interface Row {
  build: string;
  attack: string;
  probes: number;
  p50: number;
  p99: number;
  max: number;
  unanswered: number;
  attackStatuses: string;
  /** Server RSS (MB) when the attack began and the most sampled during it; null off Linux. */
  rssStart: number | null;
  rssPeak: number | null;
  server: "up" | "died" | "killed at RSS cap";
  hoarding?: HoardingFigures;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

/** Resident memory of `pid` in MB, from /proc; null where there is none (not Linux, or it has exited). */
function rssMb(pid: number | undefined): number | null {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

/** Samples the server's RSS every PROBE_EVERY_MS until stopped, and kills it past RSS_CAP_MB. */
function watchRss(child: ChildProcess): { capped: () => boolean; stop: () => { start: number | null; peak: number | null } } {
  const start = rssMb(child.pid);
  let peak = start;
  let capped = false;
  const sample = (): void => {
    const mb = rssMb(child.pid);
    if (mb === null) return;
    peak = Math.max(peak ?? 0, mb);
    if (mb > RSS_CAP_MB && !capped) {
      capped = true;
      child.kill("SIGKILL");
    }
  };
  const timer = setInterval(sample, PROBE_EVERY_MS);
  return {
    capped: () => capped,
    stop: () => {
      sample();
      clearInterval(timer);
      return { start, peak };
    },
  };
}

/** Sends `attack` in a loop until `until`; counts each answer's status (or error name). */
async function attackLoop(pool: Pool, attack: HttpAttack, until: number, statuses: Map<string, number>): Promise<void> {
  const body = attack.body === undefined ? undefined : JSON.stringify(attack.body);
  while (performance.now() < until) {
    let key: string;
    try {
      const res = await pool.request({
        method: attack.method,
        path: attack.path,
        ...(body === undefined ? {} : { body, headers: { "content-type": "application/json" } }),
        headersTimeout: SECONDS * 1000 + 5000,
        bodyTimeout: SECONDS * 1000 + 5000,
      });
      await res.body.dump();
      key = String(res.statusCode);
    } catch (err) {
      key = (err as { code?: string }).code ?? (err as Error).name;
      // A refused connection is a dead server: stop hammering it.
      if (key === "ECONNREFUSED") {
        statuses.set(key, (statuses.get(key) ?? 0) + 1);
        return;
      }
    }
    statuses.set(key, (statuses.get(key) ?? 0) + 1);
  }
}

/** GET /health every PROBE_EVERY_MS until `done()`; unanswered probes count at PROBE_TIMEOUT_MS. */
async function probeLoop(pool: Pool, done: () => boolean, latencies: number[]): Promise<number> {
  let unanswered = 0;
  while (!done()) {
    const start = performance.now();
    try {
      const res = await pool.request({ method: "GET", path: "/health", headersTimeout: PROBE_TIMEOUT_MS, bodyTimeout: PROBE_TIMEOUT_MS });
      await res.body.dump();
      latencies.push(performance.now() - start);
    } catch {
      unanswered++;
      latencies.push(Math.max(PROBE_TIMEOUT_MS, performance.now() - start));
      if (performance.now() - start < PROBE_TIMEOUT_MS) await new Promise((r) => setTimeout(r, PROBE_TIMEOUT_MS));
    }
    await new Promise((r) => setTimeout(r, PROBE_EVERY_MS));
  }
  return unanswered;
}

/**
 * Rebuilds `dir` here if its src/ changed since its build (someone edited the checkout
 * mid-run): left to the server's CLI, tsc would run under the server's heap cap and die.
 */
async function ensureBuilt(dir: string): Promise<void> {
  const script = join(dir, "bin", "ensure-build.js");
  if (!existsSync(script)) return;
  const { ensureBuild } = (await import(pathToFileURL(script).href)) as { ensureBuild: () => void };
  ensureBuild();
}

async function runAttack(dir: string, attack: Attack): Promise<Omit<Row, "build">> {
  await ensureBuilt(dir);
  const tmp = mkdtempSync(join(tmpdir(), "edgegym-abuse-"));
  let server: ChildServer | undefined;
  try {
    server = await startNodeServer({
      db: join(tmp, "abuse.db"),
      cwd: dir,
      env: {
        NODE_OPTIONS: `--max-old-space-size=${HEAP_MB}`,
        // Evaluation jobs on, against a port nothing listens on: admission is what is measured.
        EDGEGYM_EVAL_BASE_URL: "http://127.0.0.1:9/v1",
        EDGEGYM_EVAL_MODEL: "m",
        ...("run" in attack ? attack.serverEnv : {}),
      },
    });
    const probes = new Pool(server.url, { connections: 1 });
    const attackers = new Pool(server.url, { connections: ATTACKERS });
    // Warm-up: first use of mathjs and the routes is not what is measured.
    await (await probes.request({ method: "GET", path: "/health" })).body.dump();
    const rss = watchRss(server.process);
    const until = performance.now() + SECONDS * 1000;
    const statuses = new Map<string, number>();
    const latencies: number[] = [];
    let unanswered: number;
    let answers: string;
    let hoarding: HoardingFigures | undefined;
    if ("run" in attack) {
      // Probed until the window ends and the attack is done (opening thousands of sockets may take longer).
      let attackDone = false;
      const run = attack
        .run(server.url, until)
        .catch((err: Error) => ({ answers: `attack failed: ${err.message.slice(0, 200)}`, hoarding: undefined }))
        .finally(() => (attackDone = true));
      const [probed, result] = await Promise.all([probeLoop(probes, () => attackDone && performance.now() >= until, latencies), run]);
      [unanswered, answers, hoarding] = [probed, result.answers, result.hoarding];
    } else {
      [unanswered] = await Promise.all([
        probeLoop(probes, () => performance.now() >= until, latencies),
        ...(attack.path === "/health" ? [] : Array.from({ length: ATTACKERS }, () => attackLoop(attackers, attack, until, statuses))),
      ]);
      answers = attack.path === "/health" ? "–" : [...statuses].map(([k, n]) => `${k}×${n}`).join(" ") || "none answered";
    }
    const { start: rssStart, peak: rssPeak } = rss.stop();
    // A kill at the RSS cap may not have been reaped yet.
    if (rss.capped() && server.process.exitCode === null && server.process.signalCode === null) await Promise.race([once(server.process, "exit"), new Promise((r) => setTimeout(r, 5000))]);
    const died = server.process.exitCode !== null || server.process.signalCode !== null;
    if (died && !rss.capped()) console.error(`server died (${server.process.signalCode ?? `exit ${server.process.exitCode}`}): …${server.output().trim().split("\n").slice(-3).join(" | ").slice(-300)}`);
    await Promise.all([probes.destroy(), attackers.destroy()]);
    latencies.sort((a, b) => a - b);
    return {
      attack: attack.name,
      probes: latencies.length,
      p50: percentile(latencies, 50),
      p99: percentile(latencies, 99),
      max: latencies.at(-1) ?? Number.NaN,
      unanswered,
      attackStatuses: answers,
      rssStart,
      rssPeak,
      server: rss.capped() ? "killed at RSS cap" : died ? "died" : "up",
      ...(hoarding ? { hoarding } : {}),
    };
  } finally {
    // stop() waits for an exit that a server killed by a signal (out of memory) already had.
    if (server && server.process.exitCode === null && server.process.signalCode === null) await server.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}

const ms = (n: number): string => (Number.isNaN(n) ? "–" : n >= 100 ? n.toFixed(0) : n.toFixed(1));
const mb = (n: number | null): string => (n === null ? "–" : n.toFixed(0));

async function main(): Promise<void> {
  const dirs = process.argv.slice(2).map((d) => resolve(d));
  if (dirs.length === 0) dirs.push(REPO_ROOT);
  const only = process.env.BENCH_ATTACKS?.split(",").map((s) => s.trim().toLowerCase());
  const attacks = only ? ATTACKS.filter((a) => only.some((o) => a.name.toLowerCase().includes(o))) : ATTACKS;
  const rows: Row[] = [];
  for (const dir of dirs) {
    for (const attack of attacks) {
      const row = { build: dir, ...(await runAttack(dir, attack)) };
      console.error(`${dir} | ${row.attack}: /health p50 ${ms(row.p50)} ms, p99 ${ms(row.p99)} ms, max ${ms(row.max)} ms, RSS ${mb(row.rssStart)} → ${mb(row.rssPeak)} MB, attack ${row.attackStatuses}${row.server === "up" ? "" : `, SERVER ${row.server.toUpperCase()}`}`);
      rows.push(row);
    }
  }
  console.log(`\n${SECONDS} s per attack, ${ATTACKERS} attackers in a loop (or sockets), /health probed every ${PROBE_EVERY_MS} ms on its own connection (unanswered after ${PROBE_TIMEOUT_MS} ms counts as ${PROBE_TIMEOUT_MS} ms); server heap ${HEAP_MB} MB, killed past ${RSS_CAP_MB} MB RSS.\n`);
  console.log("| build | attack | /health p50 (ms) | p99 (ms) | max (ms) | probes (unanswered) | attack answers | server RSS MB (start → peak) | server |");
  console.log("|---|---|---|---|---|---|---|---|---|");
  for (const r of rows) {
    console.log(`| ${r.build} | ${r.attack} | ${ms(r.p50)} | ${ms(r.p99)} | ${ms(r.max)} | ${r.probes} (${r.unanswered}) | ${r.attackStatuses} | ${mb(r.rssStart)} → ${mb(r.rssPeak)} | ${r.server} |`);
  }
  const hoards = rows.filter((r) => r.hoarding);
  if (hoards.length > 0) {
    console.log(`\nSocket hoarding: tenant A opens /v1/ws sockets until its first refusals and keeps them; then tenant B asks for ${hoards[0]?.hoarding?.bTried}. Open-file limit (ulimit -n, the server's too): ${hoards[0]?.hoarding?.fdLimit ?? "unknown"}.\n`);
    console.log("| build | A tried | A opened | A refused | B opened | B refused |");
    console.log("|---|---|---|---|---|---|");
    for (const { build, hoarding: h } of hoards) if (h) console.log(`| ${build} | ${h.aTried} | ${h.aOpened} | ${h.aRefused} | ${h.bOpened} of ${h.bTried} | ${h.bRefused} |`);
  }
}

await main();
