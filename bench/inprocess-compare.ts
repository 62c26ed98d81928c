/**
 * `npm run bench:inproc -- DIR_A DIR_B …`: the server CPU of a persisted step without the
 * transport, for two or more builds in ONE process. Each DIR is a checkout with
 * `npm run build` done (`.` for this one). Each build gets its own SQLite file and
 * its own EpisodeService over the real store (group commit, head cache, quotas), and
 * plays bench-echo episodes (reset, then steps until done) at one concurrency, calling
 * the service directly: no HTTP, no socket, no second process. Rounds alternate the
 * builds, so the machine's load, which comes and goes, falls on all of them alike; the
 * figure is this process's CPU per step (user + system, so SQLite's WAL writes count), as
 * medians over rounds, and the median of each round's ratio to the first build.
 *
 * Why beside `bench:compare`: on a shared 2-core machine the server, the load generator
 * and the kernel's loopback share the cores, and a 10% change to the step path drowns in
 * their noise. Here the only work is the step path itself.
 *
 *   BENCH_ROUNDS=12 BENCH_SECONDS=1.5 BENCH_CONCURRENCY=64 npm run bench:inproc -- ../base .
 */
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 12);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 1.5);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64);
const MESSAGE = { role: "assistant", content: "one two three four five" } as const;
const VIEWER = { name: "public", admin: false };

/** What this bench calls on a build: the service's reset and step (their shapes are the protocol's). */
interface Service {
  reset(viewer: typeof VIEWER, envId: string, body: object, key: undefined): Promise<{ response: { episode_id: string } }>;
  step(viewer: typeof VIEWER, id: string, req: { turn: number; message: typeof MESSAGE }): Promise<string>;
}

async function load(dir: string, dbPath: string): Promise<{ service: Service; close(): void }> {
  const from = (path: string) => import(pathToFileURL(join(resolve(dir), path)).href);
  const [envs, context, store, sqlite, episodes, echo] = await Promise.all([
    from("dist/envs/index.js"),
    from("dist/server/context.js"),
    from("dist/server/db/episode-store.js"),
    from("dist/server/db/node-sqlite.js"),
    // Builds from before the episodes/ folder (issue 28) kept the service at the server's root.
    from("dist/server/episodes/episode-service.js").catch(() => from("dist/server/episode-service.js")),
    from("bench/echo-env.js"),
  ]);
  const database = sqlite.openNodeDatabase(dbPath);
  // The reset rate and open-episode quotas are lifted: a bench ends rounds mid-episode and resets faster than a tenant may.
  const config = { ...context.DEFAULT_CONFIG, quotas: { ...context.DEFAULT_CONFIG.quotas, resetsPerSecond: null, maxOpenEpisodes: null } };
  const registry = new envs.EnvRegistry("node", [...envs.builtinEnvs, echo.benchEcho]);
  return { service: new episodes.EpisodeService(new store.EpisodeStore(database.db), registry, config, Date.now) as Service, close: () => database.close() };
}

/** One round: `CONCURRENCY` players for `SECONDS`; returns this process's CPU µs per step. */
async function round(service: Service): Promise<number> {
  let steps = 0;
  const cpu0 = process.cpuUsage();
  const until = performance.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < until) {
        const { response } = await service.reset(VIEWER, "bench-echo", {}, undefined);
        let turn = 0;
        let done = false;
        while (!done && performance.now() < until) {
          ({ turn, done } = JSON.parse(await service.step(VIEWER, response.episode_id, { turn, message: MESSAGE })) as { turn: number; done: boolean });
          steps++;
        }
      }
    }),
  );
  const cpu = process.cpuUsage(cpu0);
  return (cpu.user + cpu.system) / Math.max(1, steps);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;

async function main(): Promise<void> {
  const dirs = process.argv.slice(2);
  if (dirs.length < 1) throw new Error("usage: npm run bench:inproc -- DIR_A [DIR_B …] (checkouts with npm run build done)");
  const tmp = mkdtempSync(join(tmpdir(), "edgegym-inproc-"));
  const builds = await Promise.all(dirs.map(async (dir, i) => ({ dir, ...(await load(dir, join(tmp, `${i}.db`))), rounds: [] as number[] })));
  try {
    for (const b of builds) await round(b.service); // JIT warm-up, not counted
    for (let r = 0; r < ROUNDS; r++) {
      // Alternate which build goes first, so neither always follows the other's garbage.
      for (const b of r % 2 ? [...builds].reverse() : builds) {
        const us = await round(b.service);
        b.rounds.push(us);
        console.error(`round ${r + 1} ${b.dir}: ${us.toFixed(1)} µs per step`);
      }
    }
  } finally {
    for (const b of builds) b.close();
    rmSync(tmp, { recursive: true, force: true });
  }
  const base = builds[0]?.rounds ?? [];
  console.log(
    `\n${ROUNDS} rounds of ${SECONDS} s, ${CONCURRENCY} concurrent bench-echo episodes, service called in-process (no transport); ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, load average ${loadavg()[0]?.toFixed(2)} at the end.\n`,
  );
  console.log("| build | CPU per persisted step (µs, median) | ÷ first build (median of rounds' ratios) | rounds (µs) |");
  console.log("|---|---:|---:|---|");
  for (const b of builds) {
    const ratio = median(b.rounds.map((us, i) => us / (base[i] ?? Number.NaN)));
    console.log(`| ${b.dir} | ${median(b.rounds).toFixed(1)} | ${ratio.toFixed(2)}× | ${b.rounds.map((us) => us.toFixed(0)).join(" · ")} |`);
  }
}

await main();
