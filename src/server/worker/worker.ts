import type { D1Database, DurableObjectNamespace, ExecutionContext, Fetcher, ScheduledController } from "@cloudflare/workers-types/index.ts";
import { upgradeWebSocket } from "hono/cloudflare-workers";
import { createMathDatasetEnv, EnvRegistry, mathDatasetConfigFromVar, type AnyEnvironment } from "../../envs/index.js";
import { createApp, type EdgegymApp } from "../app.js";
import { serverConfigFromVars, type ConfigVars } from "../config-vars.js";
import { openD1Database } from "../db/d1.js";
import { sqliteEvalStore } from "../db/eval-store.js";
import { sqliteStores, type Stores } from "../db/stores.js";
import { WORKER_SETTINGS } from "../settings.js";
import { DurableEpisodeStore } from "./durable/durable-episode-store.js";
import type { StaticAssets } from "../console/static-assets.js";
import { useBundledMathjs } from "../../envs/math/mathjs-bundled.js";

// The math checker and calculator build mathjs from statically imported factories here
// (Node requires them on first use instead: envs/math/mathjs.ts).
useBundledMathjs();

/** What wrangler.jsonc binds: the D1 database, plus vars and secrets (EDGEGYM_API_KEYS is a secret). */
export interface WorkerBindings extends ConfigVars {
  DB: D1Database;
  /** One SQLite-backed Durable Object per episode (durable/episode-object.ts), used when EDGEGYM_EPISODE_STORE=durable-objects. */
  EPISODES?: DurableObjectNamespace;
  /** The episode index object (durable/episode-index-object.ts) that goes with EPISODES. */
  EPISODE_INDEX?: DurableObjectNamespace;
  /** The console's built files (wrangler.jsonc `assets`, dist/console); absent, /ui and /docs answer 404. */
  ASSETS?: Fetcher;
}

/**
 * The console's files through the static-assets binding. Every request reaches the Worker
 * first (`run_worker_first`), so /ui gets the same request ids, headers and path checks as
 * on Node; the binding only hands back bytes.
 */
function consoleFilesFromBinding(assets: Fetcher): StaticAssets {
  return {
    async read(path) {
      const res = await assets.fetch(`https://assets.invalid/${path}`);
      if (res.status === 404) return null;
      if (!res.ok) throw new Error(`static assets binding answered ${res.status} for ${path}`);
      return new Uint8Array(await res.arrayBuffer());
    },
  };
}

/**
 * The `math-dataset` environment `EDGEGYM_MATH_DATASET` names (none when it is unset).
 * A Worker reads no files, so its sources must be URLs; the rows are fetched on the first
 * reset or hash (a Worker may not fetch while its module loads), then kept by the isolate.
 */
export function mathDatasetEnvs(raw: string | undefined): AnyEnvironment[] {
  const config = mathDatasetConfigFromVar(raw);
  if (!config) return [];
  const sources = typeof config.source === "string" ? [config.source] : [config.source.train, ...(config.source.eval ? [config.source.eval] : [])];
  const path = sources.find((s) => !/^(https?|data):/i.test(s));
  if (path !== undefined) throw new Error(`EDGEGYM_MATH_DATASET: a Worker reads no files; "${path}" must be an http(s) URL`);
  return [createMathDatasetEnv(config)];
}

/**
 * The stores `EDGEGYM_EPISODE_STORE` picks: `d1` (default) keeps episodes in D1 beside the
 * eval jobs; `durable-objects` keeps each episode in its own Durable Object and the eval
 * jobs in D1 (docs/worker.md, "Durable Objects").
 */
export function workerStores(bindings: WorkerBindings): Stores {
  const db = openD1Database(bindings.DB);
  const raw = bindings.EDGEGYM_EPISODE_STORE?.trim();
  const choice = raw ? WORKER_SETTINGS.episodeStore.parse(raw) : "d1";
  if (choice === "d1") return sqliteStores(db);
  if (!bindings.EPISODES || !bindings.EPISODE_INDEX) {
    throw new Error("EDGEGYM_EPISODE_STORE=durable-objects needs the EPISODES and EPISODE_INDEX Durable Object bindings (wrangler.jsonc)");
  }
  return { episodes: new DurableEpisodeStore(bindings.EPISODES, bindings.EPISODE_INDEX), evals: sqliteEvalStore(db) };
}

export interface WorkerOptions {
  /** Environments that need the Worker's bindings to exist (the Harbor build's, src/server/worker/harbor.ts). */
  envsFor?: (bindings: WorkerBindings) => AnyEnvironment[];
}

/** The Worker's module export: HTTP requests and the cron trigger that reaps expired episodes and old eval jobs. */
export interface EdgegymWorker {
  fetch(request: Request, env: WorkerBindings, ctx: ExecutionContext): Promise<Response>;
  scheduled(controller: ScheduledController, env: WorkerBindings, ctx: ExecutionContext): Promise<void>;
}

/**
 * The Cloudflare Workers runtime over the shared app: D1 for the database, the Worker's
 * vars and secrets for configuration, a cron trigger instead of the Node server's timer.
 * Environments that declare only `runtimes: ["node"]` are kept in the registry so a reset
 * of one answers 422 `env_unavailable` rather than 404.
 *
 * @example export default createWorker(builtinEnvs);
 */
export function createWorker(envs: readonly AnyEnvironment[], options: WorkerOptions = {}): EdgegymWorker {
  // The registry depends on one var, EDGEGYM_MATH_DATASET, which arrives with the bindings;
  // kept per value so the dataset it names is downloaded once per isolate, not per request.
  let registry: { mathDataset: string; registry: EnvRegistry } | null = null;
  // Environments made from bindings (the Harbor build's container classes): once per isolate.
  let bound: AnyEnvironment[] | null = null;
  const registryFor = (bindings: WorkerBindings): EnvRegistry => {
    const mathDataset = bindings.EDGEGYM_MATH_DATASET?.trim() ?? "";
    bound ??= options.envsFor?.(bindings) ?? [];
    if (registry?.mathDataset !== mathDataset) registry = { mathDataset, registry: new EnvRegistry("worker", [...envs, ...bound, ...mathDatasetEnvs(mathDataset)]) };
    return registry.registry;
  };
  // Bindings arrive with every event but stay the same object within an isolate, so the
  // app (routes, OpenAPI registry) is built once per isolate, not once per request.
  const apps = new WeakMap<WorkerBindings, EdgegymApp>();
  const appFor = (bindings: WorkerBindings): EdgegymApp => {
    let built = apps.get(bindings);
    if (!built) {
      built = createApp({ db: openD1Database(bindings.DB), stores: workerStores(bindings), registry: registryFor(bindings), config: serverConfigFromVars(bindings), upgradeWebSocket, ...(bindings.ASSETS ? { assets: consoleFilesFromBinding(bindings.ASSETS) } : {}) });
      apps.set(bindings, built);
    }
    return built;
  };

  return {
    async fetch(request, bindings, ctx) {
      let built: EdgegymApp;
      try {
        built = appFor(bindings);
      } catch (err) {
        // A bad var (e.g. EDGEGYM_TTL_SECONDS=abc) is the operator's to fix: say which.
        console.error("edgegym: invalid Worker configuration:", err);
        const message = `server misconfigured: ${err instanceof Error ? err.message : String(err)}`;
        return Response.json({ error: { code: "internal_error", message, request_id: "unknown" } }, { status: 500 });
      }
      return built.app.fetch(request, bindings, ctx);
    },

    async scheduled(controller, bindings) {
      const built = appFor(bindings);
      const { expired, deleted } = await built.store.reapExpired(Date.now());
      console.log(`reaper (cron "${controller.cron}"): expired ${expired} episode(s), removed ${deleted} old tombstone(s)`);
      // EDGEGYM_EVAL_RETENTION_DAYS: a bounded batch of old ended eval jobs per run (null: keep forever).
      const evalsReaped = await built.evals.reapEnded(Date.now());
      if (evalsReaped) console.log(`reaper (cron "${controller.cron}"): deleted ${evalsReaped.jobs} ended eval job(s) past retention, with ${evalsReaped.rollouts} rollout(s)`);
    },
  };
}
