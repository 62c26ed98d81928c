import { builtinEnvs, EnvRegistry, type AnyEnvironment } from "../../src/envs/index.js";
import { createApp } from "../../src/server/app.js";
import type { ServerConfig } from "../../src/server/context.js";
import type { StaticAssets } from "../../src/server/console/static-assets.js";
import { openNodeDatabase } from "../../src/server/db/node-sqlite.js";
import { jsonInit, readReply } from "./reply.js";

/** A whole app on an in-memory SQLite database, with a clock the test moves. */
export function inProcessApp(opts: { config?: Partial<ServerConfig>; envs?: AnyEnvironment[]; runtime?: "node" | "worker"; assets?: StaticAssets } = {}) {
  const database = openNodeDatabase(":memory:");
  let now = Date.parse("2026-11-22T12:00:00Z");
  const registry = new EnvRegistry(opts.runtime ?? "node", opts.envs ?? builtinEnvs);
  const built = createApp({ db: database.db, registry, config: opts.config ?? {}, clock: () => now, ...(opts.assets ? { assets: opts.assets } : {}) });
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    readReply(await built.app.request(path, jsonInit(method, body, headers)));
  return {
    ...built,
    call,
    advance: (ms: number) => {
      now += ms;
    },
    now: () => now,
    close: () => database.close(),
  };
}
