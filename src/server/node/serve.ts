import { serve, upgradeWebSocket, type ServerType } from "@hono/node-server";
import { nodeUpstreamPost } from "./upstream-post.js";
import { getRequestListener } from "@hono/node-server";
import { AgentRunner } from "./agent-runner.js";
import { MODEL_PREFIX } from "../routes/model-endpoint.js";
import { WebSocketServer } from "ws";
import type { AddressInfo } from "node:net";
import { builtinEnvs, EnvRegistry, type AnyEnvironment } from "../../envs/index.js";
import { createNodeOnlyEnvs, type PyodideSandboxOptions } from "../../envs/builtin/node-only.js";
import { createApp } from "../app.js";
import { DEFAULT_CONFIG, type ServerConfig } from "../context.js";
import { openNodeDatabase, type SqliteSynchronous } from "../db/node-sqlite.js";
import { isPostgresUrl } from "../db/pg/url.js";
import { sqliteStores, type Stores } from "../db/stores.js";
import { coalesceFrameWrites } from "./coalesce-frame-writes.js";
import { consoleFilesOnDisk } from "./console-files.js";
import { ScoringThreads } from "./scoring-threads.js";
import { serveHarbor } from "./harbor.js";
import { answerRefusedUpgrades } from "./upgrade-rejections.js";
import { wsSocketFlow } from "./ws-flow.js";

/** How long close() lets requests in flight finish before it cuts their connections. */
const CLOSE_GRACE_MS = 5_000;

export interface NodeServerOptions {
  port: number;
  host: string;
  /** SQLite file path, ":memory:", or a postgres:// URL (PostgreSQL, shared by many processes). */
  dbPath: string;
  /** What an answered write survives: NORMAL a process crash, FULL power loss too (node-sqlite.ts). */
  synchronous?: SqliteSynchronous;
  /** PostgreSQL connections this process keeps (default 10). */
  pgPoolSize?: number;
  config?: Partial<ServerConfig>;
  /** Environments beside the built-ins (from `--env`). */
  extraEnvs?: AnyEnvironment[];
  /** Directories of Harbor tasks served as the `harbor` environment on Docker (`--env harbor:DIR`). */
  harborDirs?: readonly string[];
  /** How often expired episodes (and, with a retention set, old ended eval jobs) are reaped; 0 turns the reaper off. */
  reapIntervalMs?: number;
}

export interface RunningServer {
  url: string;
  close(): Promise<void>;
}

/** The stores a Node server runs on: PostgreSQL for a postgres:// URL, else the SQLite file (the default). */
async function openStores(options: NodeServerOptions): Promise<{ stores: Stores; close(): Promise<void> }> {
  if (isPostgresUrl(options.dbPath)) {
    // Loaded only when asked for: a SQLite server never loads the PostgreSQL driver.
    const { openPostgres } = await import("../db/pg/open.js");
    return openPostgres(options.dbPath, options.pgPoolSize === undefined ? {} : { poolSize: options.pgPoolSize });
  }
  const database = openNodeDatabase(options.dbPath, { synchronous: options.synchronous ?? "NORMAL" });
  return { stores: sqliteStores(database.db), close: async () => database.close() };
}

/** The python sandbox's pool and isolation from the server's settings (EDGEGYM_PYTHON_*). */
export function pythonSandboxOptions(settings: Pick<ServerConfig, "pythonAllowWeakSandbox" | "pythonWorkers" | "pythonSpares">): PyodideSandboxOptions {
  return { allowWeakIsolation: settings.pythonAllowWeakSandbox, workers: settings.pythonWorkers, spares: settings.pythonSpares };
}

/** The Node runtime: better-sqlite3 or PostgreSQL + @hono/node-server + a timer that reaps expired episodes and old eval jobs. */
export async function startNodeServer(options: NodeServerOptions): Promise<RunningServer> {
  const database = await openStores(options);
  const settings = { ...DEFAULT_CONFIG, ...options.config };
  const nodeOnly = createNodeOnlyEnvs(pythonSandboxOptions(settings));
  const python = nodeOnly.sandbox.isolation();
  console.log(`python sandbox: ${python.level} (${python.detail})${python.refusal ? "; python is refused: see GET /v1/envs/python" : ""}`);
  // Environments loaded from modules (--env) score in threads that can be stopped: a reward function that never returns holds its thread, not this one.
  const scoringThreads = new ScoringThreads({ budgetMs: settings.scoreTimeoutMs });
  const extraEnvs = (options.extraEnvs ?? []).map((env) => scoringThreads.isolate(env));
  const harbor = options.harborDirs?.length
    ? await serveHarbor({ dirs: options.harborDirs, database: options.dbPath, maxLive: settings.sandboxMaxLive, maxPerTenant: settings.quotas.maxSandboxes, createsPerMinute: settings.sandboxCreatesPerMinute, forceNoNetwork: settings.sandboxForceNoNetwork, pids: settings.sandboxPids, warm: settings.sandboxWarm, egressPort: settings.sandboxEgressPort, egressFirewall: settings.sandboxEgressFirewall })
    : undefined;
  const registry = new EnvRegistry("node", [...builtinEnvs, ...nodeOnly.envs, ...extraEnvs, ...(harbor ? [harbor.env] : [])]);
  // WebSockets (the OpenEnv /ws session) through @hono/node-server's own upgrade helper over `ws`,
  // the server the Hono docs name for Node; frames past the body limit are refused by ws itself.
  // The address it listens on goes to the app: a keyless server answers only that, localhost and IP addresses (DNS rebinding).
  const appConfig: Partial<ServerConfig> = { boundHost: options.host, ...options.config };
  // Harness episodes' agents run in their boxes and reach the server's model endpoint on the egress network's gateway.
  const agents = harbor
    ? new AgentRunner({ store: database.stores.episodes, registry, gateway: () => harbor.provider.egress.localAddress() })
    : undefined;
  const { app, store, evals, config } = createApp({
    stores: database.stores,
    registry,
    config: appConfig,
    upgradeWebSocket,
    socketFlow: wsSocketFlow,
    assets: consoleFilesOnDisk(),
    ...(agents ? { agents: (id: string, key: string) => agents.launch(id, key) } : {}),
    upstreamPost: nodeUpstreamPost,
  });
  if (harbor) {
    // Containers reach the app through the proxy's address; only the model endpoint is served there (each call carries its episode's key).
    const listener = getRequestListener((request) => (new URL(request.url).pathname.startsWith(`${MODEL_PREFIX}/`) ? app.fetch(request) : new Response("not found\n", { status: 404 })));
    harbor.provider.egress.serveLocal((req, res) => void listener(req, res));
  }
  const sockets = new WebSocketServer({ noServer: true, maxPayload: config.bodyLimitBytes });
  coalesceFrameWrites(sockets);

  // Containers whose episode no longer owns them (closed, expired, scored, unknown) go: at start-up (a crash or a kill -9
  // left them) and beside every reaper pass (an expiry closes no container by itself).
  const sweepSandboxes = async (): Promise<void> => {
    if (!harbor) return;
    try {
      const { removed } = await harbor.sweep(async (id) => {
        const row = await store.get(id);
        // Past its expiry is expired, whether or not the reaper has marked it yet (the sweep runs first at start-up).
        return row ? { status: row.status === "active" && row.expiresAt <= Date.now() ? "expired" : row.status, scored: row.score != null } : undefined;
      });
      if (removed.length) console.log(`sandbox sweep: removed ${removed.length} container(s) no live episode owns`);
    } catch (err) {
      console.error("sandbox sweep failed:", err);
    }
  };
  await sweepSandboxes();
  // Agents a previous run (or a peer process) started: watched from here on; their endpoint answers again once the proxy is up.
  if (harbor && agents) {
    try {
      const boxed = await harbor.boxedEpisodes();
      if (boxed.length) await harbor.provider.egress.start();
      for (const id of boxed) agents.watch(id);
    } catch (err) {
      console.error("agent recovery failed:", err);
    }
  }
  // After the sweep (which removes a previous run's unclaimed warm boxes): this process's pools.
  harbor?.primeWarmPools();
  const reap = async (): Promise<void> => {
    try {
      const { expired, deleted } = await store.reapExpired(Date.now());
      if (expired || deleted) console.log(`reaper: expired ${expired} episode(s), removed ${deleted} old tombstone(s)`);
    } catch (err) {
      console.error("reaper failed:", err);
    }
    await sweepSandboxes();
    try {
      const evalsReaped = await evals.reapEnded(Date.now());
      if (evalsReaped?.jobs) console.log(`reaper: deleted ${evalsReaped.jobs} ended eval job(s) past retention, with ${evalsReaped.rollouts} rollout(s)`);
    } catch (err) {
      console.error("eval retention pass failed:", err);
    }
  };
  const interval = options.reapIntervalMs ?? 60_000;
  if (interval > 0) await reap();
  const timer = interval > 0 ? setInterval(() => void reap(), interval) : undefined;
  timer?.unref();

  const fetch = answerRefusedUpgrades(app.fetch);
  const server: ServerType = await new Promise((resolve) => {
    const s = serve({ fetch, port: options.port, hostname: options.host, websocket: { server: sockets } }, () => resolve(s));
    fetch.attach(s as Parameters<typeof fetch.attach>[0]);
  });
  // Resume evaluation jobs a previous run of the server (or a crashed peer) left unfinished.
  evals.start();
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        if (timer) clearInterval(timer);
        agents?.close();
        // Running jobs are released (rollouts kept) so the next start resumes them.
        evals.stop().finally(() => {
          // Open sockets would keep server.close waiting; their episodes are durable, so clients reconnect elsewhere.
          for (const socket of sockets.clients) socket.terminate();
          sockets.close();
          // A request still in flight (a browser's pending fetch, a slow client) would keep server.close waiting
          // forever: it gets a bounded grace, then its connection is cut.
          const drain = setTimeout(() => {
            if ("closeAllConnections" in server) server.closeAllConnections();
          }, CLOSE_GRACE_MS);
          drain.unref();
          server.close((err) => {
            clearTimeout(drain);
            // Every interpreter process is killed before close resolves.
            void Promise.allSettled([database.close(), nodeOnly.sandbox.close(), nodeOnly.closeMcp(), scoringThreads.close(), harbor?.close()]).finally(() => (err ? reject(err) : resolve()));
          });
        });
      }),
  };
}
