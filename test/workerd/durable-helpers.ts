import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import type { WorkerBindings } from "../../src/server/worker/worker.js";
import worker from "../../src/server/worker/index.js";

// What the Durable Object store's workerd tests share: the Worker on that store, and the
// episode objects' stubs.

/** One bindings object, so the Worker builds its app once (it keeps one per bindings object). */
export const bindings: WorkerBindings = { ...env, EDGEGYM_EPISODE_STORE: "durable-objects" };

export const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}, on: WorkerBindings = bindings) => {
  const init: RequestInit = { method, headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers } };
  if (body !== undefined) init.body = JSON.stringify(body);
  const ctx = createExecutionContext();
  const res = await worker.fetch(new Request(`http://edgegym.test${path}`, init), on, ctx);
  await waitOnExecutionContext(ctx);
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- assertions walk the body freely
  return { status: res.status, headers: res.headers, json: (await res.json()) as any };
};

export const episodesNamespace = () => {
  const ns = env.EPISODES;
  if (!ns) throw new Error("wrangler.jsonc binds EPISODES");
  return ns;
};

export const stubOf = (id: string) => {
  const ns = episodesNamespace();
  return ns.get(ns.idFromName(id));
};
