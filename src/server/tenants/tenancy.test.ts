import { afterEach, describe, expect, it } from "vitest";
import { builtinEnvs, EnvRegistry } from "../../envs/index.js";
import { ERROR_STATUS } from "../../protocol/index.js";
import { jsonInit, readReply, type HttpReply } from "../../../test/support/reply.js";
import { reverseLastUser, startScriptedModel, type ScriptedPolicy } from "../../../test/support/scripted-model.js";
import { createApp } from "../app.js";
import type { ServerConfig } from "../context.js";
import { openNodeDatabase } from "../db/node-sqlite.js";
import { deriveTenantName } from "./keys.js";

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()?.();
});

const KEYS = { alice: "sk-alice-1", bob: "sk-bob-1", bare: "sk-bare-1", admin: "sk-admin-1" };

/** An app with two named tenants, one bare key and an admin key; `as(key)` sends requests with that key. */
async function tenants(config: Partial<ServerConfig> = {}, policy: ScriptedPolicy = reverseLastUser) {
  const model = await startScriptedModel(policy);
  const database = openNodeDatabase(":memory:");
  const built = createApp({
    db: database.db,
    registry: new EnvRegistry("node", builtinEnvs),
    config: { apiKeys: [`alice:${KEYS.alice}`, `bob:${KEYS.bob}`, KEYS.bare], adminApiKeys: [`ops:${KEYS.admin}`], evalBaseUrl: model.baseUrl, ...config },
  });
  built.evals.start(200);
  cleanup.push(async () => {
    await built.evals.stop();
    database.close();
    await model.close();
  });
  const as =
    (key: string) =>
    async (method: string, path: string, body?: unknown): Promise<HttpReply> =>
      readReply(await built.app.request(path, jsonInit(method, body, { authorization: `Bearer ${key}` })));
  const waitEnded = async (id: string): Promise<void> => {
    for (const until = Date.now() + 20_000; Date.now() < until; await new Promise((r) => setTimeout(r, 25))) {
      const job = await as(KEYS.admin)("GET", `/v1/evals/${id}`);
      if (["completed", "failed", "cancelled"].includes(job.json.status)) return;
    }
    throw new Error(`job ${id} did not end`);
  };
  return { ...built, database, as, waitEnded };
}

/** The 404 an unknown id gets, with the request id (which differs per request) taken out. */
function notFoundBody(res: HttpReply, id: string): unknown {
  expect(res.status, res.text).toBe(404);
  return { ...res.json.error, request_id: "-", message: res.json.error.message.replaceAll(id, "<id>") };
}

describe("episodes belong to the tenant that started them", () => {
  it("answers another tenant's episode exactly as an unknown id, on every route", async () => {
    const { as } = await tenants();
    const alice = as(KEYS.alice);
    const bob = as(KEYS.bob);
    const id = (await alice("POST", "/v1/envs/reverse-text/episodes", { index: 0 })).json.episode_id as string;
    const unknown = "ep_0123456789abcdef0123456789abcdef";
    const routes: [string, (episode: string) => string, unknown][] = [
      ["GET", (e) => `/v1/episodes/${e}`, undefined],
      ["POST", (e) => `/v1/episodes/${e}/step`, { turn: 0, message: { role: "assistant", content: "<answer>x</answer>" } }],
      ["POST", (e) => `/v1/episodes/${e}/score`, undefined],
      ["DELETE", (e) => `/v1/episodes/${e}`, undefined],
    ];
    for (const [method, path, body] of routes) {
      const theirs = await bob(method, path(id), body);
      const none = await bob(method, path(unknown), body);
      expect(notFoundBody(theirs, id), `${method} ${path(id)}`).toEqual(notFoundBody(none, unknown));
      expect(theirs.json.error.code).toBe("episode_not_found");
    }
    // Nothing bob tried touched it: alice's episode is still active at turn 0.
    const mine = await alice("GET", `/v1/episodes/${id}`);
    expect(mine.json).toMatchObject({ status: "active", turn: 0 });
    expect((await alice("POST", `/v1/episodes/${id}/step`, { turn: 0, message: { role: "assistant", content: "<answer>x</answer>" } })).status).toBe(200);
    expect((await alice("POST", `/v1/episodes/${id}/score`)).status).toBe(200);
    expect((await alice("DELETE", `/v1/episodes/${id}`)).json).toMatchObject({ status: "closed" });
  });

  it("lets an admin key read, step, score and close any tenant's episode", async () => {
    const { as } = await tenants();
    const id = (await as(KEYS.bob)("POST", "/v1/envs/reverse-text/episodes", { index: 1 })).json.episode_id as string;
    const admin = as(KEYS.admin);
    expect((await admin("GET", `/v1/episodes/${id}`)).status).toBe(200);
    expect((await admin("POST", `/v1/episodes/${id}/step`, { turn: 0, message: { role: "assistant", content: "<answer>x</answer>" } })).status).toBe(200);
    expect((await admin("POST", `/v1/episodes/${id}/score`)).status).toBe(200);
    expect((await admin("DELETE", `/v1/episodes/${id}`)).status).toBe(200);
  });

  it("scopes Idempotency-Key by tenant: the same key from another tenant starts its own episode", async () => {
    const { app } = await tenants();
    const reset = async (key: string) =>
      readReply(await app.request("/v1/envs/reverse-text/episodes", jsonInit("POST", { index: 0 }, { authorization: `Bearer ${key}`, "idempotency-key": "run-1-task-0" })));
    const a = await reset(KEYS.alice);
    const again = await reset(KEYS.alice);
    const b = await reset(KEYS.bob);
    expect(again.json.episode_id).toBe(a.json.episode_id);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(b.status).toBe(201);
    expect(b.json.episode_id).not.toBe(a.json.episode_id);
    expect(b.headers.get("idempotent-replayed")).toBeNull();
  });

  it("stores the tenant's name, never the key: a bare key is named key_ + a SHA-256 prefix", async () => {
    const { as, database } = await tenants();
    const id = (await as(KEYS.bare)("POST", "/v1/envs/reverse-text/episodes", { index: 0 })).json.episode_id as string;
    const raw = (database.db as unknown as { $client: { prepare(s: string): { get(...a: unknown[]): unknown } } }).$client;
    const row = raw.prepare("SELECT tenant FROM episodes WHERE id = ?").get(id) as { tenant: string };
    expect(row.tenant).toBe(await deriveTenantName(KEYS.bare));
    expect(row.tenant).toMatch(/^key_[0-9a-f]{12}$/);
    const all = JSON.stringify(raw.prepare("SELECT * FROM episodes").get());
    for (const key of Object.values(KEYS)) expect(all).not.toContain(key);
  });

  it("gives rows made before tenancy (tenant \"public\" by the migration's default) to admin keys only", async () => {
    const { as, database } = await tenants();
    const raw = (database.db as unknown as { $client: { prepare(s: string): { run(...a: unknown[]): unknown } } }).$client;
    // An episode row with no tenant named, as a server before migration 0002 wrote it (its
    // transcript columns moved to episode_turns in 0004; test/migrate-long-horizon.test.ts covers those).
    raw
      .prepare(
        "INSERT INTO episodes (id, env_id, env_version, split, task_index, seed, args, metadata, prompt_length, turn, status, truncated, ttl_seconds, created_at, updated_at, expires_at) VALUES (?, 'reverse-text', '1.0.0', 'train', 0, 0, '{}', '{}', 0, 0, 'active', 0, 3600, ?, ?, ?)",
      )
      .run("ep_legacy", Date.now(), Date.now(), Date.now() + 3_600_000);
    expect((await as(KEYS.alice)("GET", "/v1/episodes/ep_legacy")).status).toBe(404);
    expect((await as(KEYS.admin)("GET", "/v1/episodes/ep_legacy")).status).toBe(200);
  });

  it("keeps a server with no keys open, as one tenant", async () => {
    const { app } = await tenants({ apiKeys: [], adminApiKeys: [] });
    const reset = await readReply(await app.request("/v1/envs/reverse-text/episodes", jsonInit("POST", { index: 0 })));
    expect(reset.status).toBe(201);
    expect((await readReply(await app.request(`/v1/episodes/${reset.json.episode_id}`))).status).toBe(200);
  });

  it("asks for a key when only admin keys are configured", async () => {
    const { app, as } = await tenants({ apiKeys: [] });
    expect((await app.request("/v1/envs")).status).toBe(ERROR_STATUS.unauthorized);
    expect((await as(KEYS.admin)("GET", "/v1/envs")).status).toBe(200);
  });
});

describe("eval jobs belong to the tenant that created them", () => {
  const job = { env_id: "reverse-text", model: "m", num_examples: 2, rollouts_per_example: 1 };

  it("answers another tenant's job exactly as an unknown id, on every route, and lists only one's own", async () => {
    const { as, waitEnded } = await tenants();
    const alice = as(KEYS.alice);
    const bob = as(KEYS.bob);
    const id = (await alice("POST", "/v1/evals", job)).json.eval_id as string;
    const bobs = (await bob("POST", "/v1/evals", job)).json.eval_id as string;
    await waitEnded(id);
    await waitEnded(bobs);
    const unknown = "ev_0123456789abcdef0123456789abcdef";
    const routes: [string, (e: string) => string][] = [
      ["GET", (e) => `/v1/evals/${e}`],
      ["GET", (e) => `/v1/evals/${e}/events`],
      ["GET", (e) => `/v1/evals/${e}/results`],
      ["POST", (e) => `/v1/evals/${e}/cancel`],
      ["DELETE", (e) => `/v1/evals/${e}`],
    ];
    for (const [method, path] of routes) {
      const theirs = await bob(method, path(id));
      const none = await bob(method, path(unknown));
      expect(notFoundBody(theirs, id), `${method} ${path(id)}`).toEqual(notFoundBody(none, unknown));
      expect(theirs.json.error.code).toBe("eval_not_found");
    }
    const listA = await alice("GET", "/v1/evals");
    const listB = await bob("GET", "/v1/evals?status=completed");
    expect(listA.json.evals.map((e: { eval_id: string }) => e.eval_id)).toEqual([id]);
    expect(listB.json.evals.map((e: { eval_id: string }) => e.eval_id)).toEqual([bobs]);
    // Bob's attempts changed nothing: alice reads, streams and deletes her job.
    expect((await alice("GET", `/v1/evals/${id}/results`)).text.trim().split("\n")).toHaveLength(2);
    expect((await alice("GET", `/v1/evals/${id}/events`)).text).toContain("event: done");
    expect((await alice("DELETE", `/v1/evals/${id}`)).json).toMatchObject({ deleted: true, rollouts_deleted: 2 });
  });

  it("lets an admin key list, read, cancel and delete every tenant's jobs", async () => {
    const slow: ScriptedPolicy = async (req, n) => {
      await new Promise((r) => setTimeout(r, 100));
      return reverseLastUser(req, n);
    };
    const { as, waitEnded } = await tenants({}, slow);
    const a = (await as(KEYS.alice)("POST", "/v1/evals", job)).json.eval_id as string;
    const b = (await as(KEYS.bob)("POST", "/v1/evals", { ...job, num_examples: 20, max_concurrent: 1 })).json.eval_id as string;
    const admin = as(KEYS.admin);
    const listed = await admin("GET", "/v1/evals");
    expect(listed.json.evals.map((e: { eval_id: string }) => e.eval_id).sort()).toEqual([a, b].sort());
    expect((await admin("GET", `/v1/evals/${b}`)).status).toBe(200);
    expect((await admin("POST", `/v1/evals/${b}/cancel`)).json.status).toBe("cancelled");
    await waitEnded(a);
    expect((await admin("GET", `/v1/evals/${a}/results`)).status).toBe(200);
    expect((await admin("DELETE", `/v1/evals/${a}`)).json.deleted).toBe(true);
    expect((await admin("DELETE", `/v1/evals/${b}`)).json.deleted).toBe(true);
  });
});
