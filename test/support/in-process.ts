import { builtinEnvs, EnvRegistry, type AnyEnvironment } from "../../src/envs/index.js";
import { createApp } from "../../src/server/app.js";
import type { ServerConfig } from "../../src/server/context.js";
import { openNodeDatabase } from "../../src/server/db/node-sqlite.js";

/** A whole app on an in-memory SQLite database, with a clock the test moves. */
export function inProcessApp(opts: { config?: Partial<ServerConfig>; envs?: AnyEnvironment[]; runtime?: "node" | "worker" } = {}) {
  const database = openNodeDatabase(":memory:");
  let now = Date.parse("2026-11-22T12:00:00Z");
  const registry = new EnvRegistry(opts.runtime ?? "node", opts.envs ?? builtinEnvs);
  const built = createApp({ db: database.db, registry, config: opts.config ?? {}, clock: () => now });
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const init: RequestInit = { method, headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers } };
    if (body !== undefined) init.body = typeof body === "string" ? body : JSON.stringify(body);
    const res = await built.app.request(path, init);
    const text = await res.text();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return { status: res.status, headers: res.headers, text, json: json as any };
  };
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
