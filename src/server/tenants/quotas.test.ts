import { afterEach, describe, expect, it } from "vitest";
import { builtinEnvs, EnvRegistry } from "../../envs/index.js";
import { jsonInit, readReply, type HttpReply } from "../../../test/support/reply.js";
import { reverseLastUser, startScriptedModel } from "../../../test/support/scripted-model.js";
import { inProcessApp } from "../../../test/support/in-process.js";
import { createApp } from "../app.js";
import { DEFAULT_CONFIG } from "../context.js";
import { openNodeDatabase } from "../db/node-sqlite.js";
import { DEFAULT_QUOTAS, utf8Length, type TenantQuotas } from "./quotas.js";

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()?.();
});

/** An in-process app (its clock moves only when told) with tenants a and b, everything but `quotas` at the defaults. */
function withQuotas(quotas: Partial<TenantQuotas>) {
  const app = inProcessApp({ config: { apiKeys: ["a:sk-a", "b:sk-b"], quotas: { ...DEFAULT_QUOTAS, ...quotas } } });
  cleanup.push(() => app.close());
  const as = (tenant: "a" | "b") => (method: string, path: string, body?: unknown) => app.call(method, path, body, { authorization: `Bearer sk-${tenant}` });
  return { ...app, a: as("a"), b: as("b") };
}

const reset = (body: Record<string, unknown> = { index: 0 }) => ["POST", "/v1/envs/reverse-text/episodes", body] as const;

function expectQuota(res: HttpReply, quota: string, limit: number, inUse: number, retryAfter: string): void {
  expect([res.status, res.json?.error?.code, res.headers.get("retry-after")], res.text).toEqual([429, "rate_limited", retryAfter]);
  expect(res.json.error.details).toEqual({ quota, limit, in_use: inUse });
}

describe("per-tenant quotas", () => {
  it("defaults every quota on, at the documented numbers", () => {
    expect(DEFAULT_CONFIG.quotas).toEqual({
      maxOpenEpisodes: 10_000,
      resetsPerSecond: 250,
      resetBurst: 5_000,
      maxConcurrentEvals: 8,
      maxStoredBytes: 2 * 1024 ** 3,
      maxEpisodeBytes: 8 * 1024 ** 2,
      maxMetadataBytes: 64 * 1024,
      maxEventStreams: 16,
      maxSockets: 1024,
      maxSandboxes: 32,
    });
  });

  it("resets per second: a token bucket per tenant (burst, then the rate), 429 with Retry-After", async () => {
    const { a, b, advance } = withQuotas({ resetsPerSecond: 2, resetBurst: 3 });
    for (let i = 0; i < 3; i++) expect((await a(...reset())).status).toBe(201);
    expectQuota(await a(...reset()), "resets_per_second", 2, 2, "1");
    expect((await b(...reset())).status).toBe(201); // another tenant has its own bucket
    advance(500); // half a second: one token back
    expect((await a(...reset())).status).toBe(201);
    expect((await a(...reset())).status).toBe(429);
  });

  it("open episodes: counted in the database; closing, finishing or expiring one frees a place", async () => {
    const { a, b, advance } = withQuotas({ maxOpenEpisodes: 2 });
    const first = (await a(...reset({ index: 0, ttl_seconds: 60 }))).json.episode_id as string;
    const second = (await a(...reset({ index: 1 }))).json.episode_id as string;
    expectQuota(await a(...reset()), "open_episodes", 2, 2, "5");
    expect((await b(...reset())).status).toBe(201);
    await a("DELETE", `/v1/episodes/${first}`);
    const third = (await a(...reset())).json.episode_id as string;
    expect(third).toMatch(/^ep_/);
    await a("POST", `/v1/episodes/${second}/score`); // scoring ends it
    expect((await a(...reset({ index: 2, ttl_seconds: 60 }))).status).toBe(201);
    expect((await a(...reset())).status).toBe(429);
    advance(61_000); // the two 60 s episodes expire (reaped or not)
    expect((await a(...reset())).status).toBe(201);
  });

  it("stored bytes: what a tenant's unexpired episodes hold, counted at reset", async () => {
    const metadata = { note: "x".repeat(1000) };
    const { a, b, advance } = withQuotas({ maxStoredBytes: 5_000 });
    let made = 0;
    let last: HttpReply | undefined;
    for (; made < 10; made++) {
      last = await a(...reset({ index: 0, metadata, ttl_seconds: 60 }));
      if (last.status !== 201) break;
    }
    expect(made).toBeGreaterThanOrEqual(2);
    expect(made).toBeLessThan(5);
    expect([last?.status, last?.json.error.details.quota, last?.headers.get("retry-after")]).toEqual([429, "stored_bytes", "30"]);
    expect(last?.json.error.details.limit).toBe(5_000);
    expect(last?.json.error.details.in_use).toBeGreaterThan(made * 1000);
    expect((await b(...reset({ index: 0, metadata }))).status).toBe(201);
    advance(61_000);
    expect((await a(...reset({ index: 0, metadata }))).status).toBe(201);
  });

  it("stored bytes: a step that would bring the tenant past it is refused too (429), the episode unchanged", async () => {
    const { a } = withQuotas({ maxStoredBytes: 3_000 });
    const id = (await a(...reset({ index: 0 }))).json.episode_id as string;
    const long = await a("POST", `/v1/episodes/${id}/step`, { turn: 0, message: { role: "assistant", content: `<answer>${"y".repeat(2_500)}</answer>` } });
    expect([long.status, long.json.error.code, long.json.error.details.quota, long.headers.get("retry-after")]).toEqual([429, "rate_limited", "stored_bytes", "30"]);
    expect((await a("GET", `/v1/episodes/${id}`)).json).toMatchObject({ turn: 0, status: "active" });
    expect((await a("POST", `/v1/episodes/${id}/step`, { turn: 0, message: { role: "assistant", content: "<answer>short</answer>" } })).status).toBe(200);
  });

  it("the reaper drops an expired episode's metadata and stored bytes with its transcript (the tombstone keeps neither)", async () => {
    const { a, store, advance, now } = withQuotas({});
    const id = (await a(...reset({ index: 0, ttl_seconds: 60, metadata: { note: "x".repeat(10_000) } }))).json.episode_id as string;
    expect((await store.get(id))?.storedBytes).toBeGreaterThan(10_000);
    advance(61_000);
    await store.reapExpired(now());
    expect(await store.get(id)).toMatchObject({ status: "expired", metadata: {}, storedBytes: 0, state: null });
    expect(await store.readTurns([{ episodeId: id, from: 0, to: 10 }])).toEqual([]);
    expect((await a("GET", `/v1/episodes/${id}`)).status).toBe(410);
  });

  it("metadata bytes: one reset's metadata past the cap is 413 (not retryable), nothing stored", async () => {
    const { a } = withQuotas({ maxMetadataBytes: 100 });
    const res = await a(...reset({ index: 0, metadata: { note: "é".repeat(60) } }));
    expect([res.status, res.json.error.code]).toEqual([413, "payload_too_large"]);
    expect(res.json.error.details).toEqual({ quota: "metadata_bytes", limit: 100, in_use: utf8Length(JSON.stringify({ note: "é".repeat(60) })) });
    expect((await a(...reset({ index: 0, metadata: { run: "r1" } }))).status).toBe(201);
  });

  it("episode bytes: a step that would pass the cap is refused (413) inside the step's conditional UPDATE", async () => {
    const { a } = withQuotas({ maxEpisodeBytes: 2_000 });
    const id = (await a(...reset({ index: 0 }))).json.episode_id as string;
    const long = await a("POST", `/v1/episodes/${id}/step`, { turn: 0, message: { role: "assistant", content: `<answer>${"y".repeat(3_000)}</answer>` } });
    expect([long.status, long.json.error.code, long.json.error.details.quota, long.json.error.details.limit]).toEqual([413, "payload_too_large", "episode_bytes", 2_000]);
    expect((await a("GET", `/v1/episodes/${id}`)).json).toMatchObject({ turn: 0, status: "active" });
    expect((await a("POST", `/v1/episodes/${id}/step`, { turn: 0, message: { role: "assistant", content: "<answer>short</answer>" } })).status).toBe(200);
  });

  it("off: a null quota is not checked", async () => {
    const { a } = withQuotas({ maxOpenEpisodes: null, resetsPerSecond: null, maxStoredBytes: null });
    for (let i = 0; i < 30; i++) expect((await a(...reset())).status).toBe(201);
  });
});

describe("per-tenant quotas on eval jobs", () => {
  async function evalServer(quotas: Partial<TenantQuotas>) {
    const model = await startScriptedModel(async (req, n) => {
      await new Promise((r) => setTimeout(r, 150));
      return reverseLastUser(req, n);
    });
    const database = openNodeDatabase(":memory:");
    const built = createApp({
      db: database.db,
      registry: new EnvRegistry("node", builtinEnvs),
      config: { apiKeys: ["a:sk-a", "b:sk-b"], evalBaseUrl: model.baseUrl, evalRetryAfterSeconds: 7, quotas: { ...DEFAULT_QUOTAS, ...quotas } },
    });
    built.evals.start(200);
    cleanup.push(async () => {
      await built.evals.stop();
      database.close();
      await model.close();
    });
    const request = (tenant: string, method: string, path: string, body?: unknown) => built.app.request(path, jsonInit(method, body, { authorization: `Bearer sk-${tenant}` }));
    const call = async (tenant: string, method: string, path: string, body?: unknown) => readReply(await request(tenant, method, path, body));
    return { ...built, request, call };
  }
  const job = { env_id: "reverse-text", model: "m", num_examples: 10, rollouts_per_example: 1, max_concurrent: 1 };

  it("concurrent evals: queued + running jobs counted in the database, 429 with the eval Retry-After", async () => {
    const { call } = await evalServer({ maxConcurrentEvals: 1 });
    const first = await call("a", "POST", "/v1/evals", job);
    expect(first.status).toBe(201);
    expectQuota(await call("a", "POST", "/v1/evals", job), "concurrent_evals", 1, 1, "7");
    expect((await call("b", "POST", "/v1/evals", job)).status).toBe(201);
    await call("a", "POST", `/v1/evals/${first.json.eval_id}/cancel`);
    expect((await call("a", "POST", "/v1/evals", job)).status).toBe(201);
  });

  it("event streams: open streams per tenant in this process; a closed stream gives its place back", async () => {
    const { call, request } = await evalServer({ maxEventStreams: 1 });
    const id = (await call("a", "POST", "/v1/evals", job)).json.eval_id as string;
    const open = await request("a", "GET", `/v1/evals/${id}/events`);
    expect(open.status).toBe(200);
    const reader = open.body?.getReader();
    await reader?.read(); // the first progress event: the stream is live
    expectQuota(await call("a", "GET", `/v1/evals/${id}/events`), "event_streams", 1, 1, "5");
    await reader?.cancel();
    for (let tries = 0; ; tries++) {
      const again = await request("a", "GET", `/v1/evals/${id}/events`);
      if (again.status === 200) {
        await again.body?.cancel();
        break;
      }
      await again.text();
      if (tries > 50) throw new Error("the stream's place was never given back");
      await new Promise((r) => setTimeout(r, 20));
    }
  });
});
