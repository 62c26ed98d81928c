import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { WorkerBindings } from "../../src/server/worker/worker.js";
import { bindings, call, stubOf } from "./durable-helpers.js";

// The Durable Object store (EDGEGYM_EPISODE_STORE=durable-objects) inside workerd: what
// the HTTP conformance suite cannot see from outside — where the rows are, the alarms that
// expire episodes, and that probing ids stores nothing. The whole protocol runs against
// this store in test/conformance-worker-do.test.ts.

/** The head and turn rows as the episode's own object stores them. */
const objectRows = (id: string) =>
  runInDurableObject(stubOf(id), (_instance, state) => {
    const tables = state.storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'episodes'").toArray();
    if (tables.length === 0) return null;
    const head = state.storage.sql.exec("SELECT status, state, turn, expires_at FROM episodes").toArray()[0];
    const turns = state.storage.sql.exec("SELECT count(*) AS n FROM episode_turns").one().n;
    return { head, turns };
  });

const reverse = (s: string) => Array.from(s).reverse().join("");

describe("episodes in Durable Objects", () => {
  it("keeps each episode in its own object, and none in D1", async () => {
    const reset = await call("POST", "/v1/envs/reverse-text/episodes", { index: 3 });
    expect(reset.status).toBe(201);
    const id = reset.json.episode_id as string;
    const step = await call("POST", `/v1/episodes/${id}/step`, { turn: 0, message: { role: "assistant", content: `<answer>${reverse(reset.json.messages.at(-1).content)}</answer>` } });
    expect(step.status).toBe(200);
    expect(await objectRows(id)).toMatchObject({ head: { status: "done", turn: 1 }, turns: 2 });
    expect(await env.DB.prepare("SELECT count(*) AS n FROM episodes WHERE id = ?").bind(id).first("n")).toBe(0);
    // Only the episode tables, made by one migration (migrations.gen.ts `fresh`): no eval tables.
    const made = await runInDurableObject(stubOf(id), (_i, state) => ({
      tables: state.storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite%' ORDER BY name").toArray().map((r) => r.name),
      migrations: state.storage.sql.exec("SELECT count(*) AS n FROM __drizzle_migrations").one().n,
    }));
    expect(made).toEqual({ tables: ["episode_lineage", "episode_turns", "episodes"], migrations: 1 });
  });

  it("stores nothing for an id a client only asks about", async () => {
    const probe = await call("GET", "/v1/episodes/ep_probe_only_nothing_here");
    expect(probe.status).toBe(404);
    const tables = await runInDurableObject(stubOf("ep_probe_only_nothing_here"), (_i, state) => state.storage.sql.exec("SELECT count(*) AS n FROM sqlite_master").one().n);
    expect(tables).toBe(0);
  });

  it("expires an episode by its alarm (410, transcript dropped), then deletes it a week later (404)", async () => {
    const reset = await call("POST", "/v1/envs/reverse-text/episodes", { index: 4, ttl_seconds: 1 });
    const id = reset.json.episode_id as string;
    // Before the TTL has passed the alarm finds nothing to do and sleeps until the expiry.
    await new Promise((r) => setTimeout(r, 1100));
    expect(await runDurableObjectAlarm(stubOf(id))).toBe(true);
    expect(await objectRows(id)).toMatchObject({ head: { status: "expired", state: null }, turns: 0 });
    const gone = await call("POST", `/v1/episodes/${id}/step`, { turn: 0, message: { role: "assistant", content: "late" } });
    expect([gone.status, gone.json.error.code]).toEqual([410, "episode_expired"]);
    // A week on: the tombstone's alarm deletes the object's storage.
    await runInDurableObject(stubOf(id), (_i, state) => {
      state.storage.sql.exec("UPDATE episodes SET expires_at = ?", Date.now() - 8 * 24 * 3600 * 1000);
    });
    expect(await runDurableObjectAlarm(stubOf(id))).toBe(true);
    expect(await objectRows(id)).toBeNull();
    expect((await call("GET", `/v1/episodes/${id}`)).status).toBe(404);
  });

  it("moves the alarm on when steps refresh the TTL instead of expiring the episode", async () => {
    const reset = await call("POST", "/v1/envs/reverse-text/episodes", { index: 5 });
    const id = reset.json.episode_id as string;
    expect(await runDurableObjectAlarm(stubOf(id))).toBe(true);
    expect(await objectRows(id)).toMatchObject({ head: { status: "active" }, turns: 1 });
    const alarm = await runInDurableObject(stubOf(id), (_i, state) => state.storage.getAlarm());
    expect(alarm).toBeGreaterThan(Date.now());
  });

  it("keeps an expired parent's turns while a live fork reads them", async () => {
    const reset = await call("POST", "/v1/envs/reverse-text/episodes", { index: 6, ttl_seconds: 1 });
    const parent = reset.json.episode_id as string;
    const fork = await call("POST", `/v1/episodes/${parent}/fork`, { ttl_seconds: 3600 });
    expect(fork.status).toBe(201);
    const child = fork.json.episodes[0].episode_id as string;
    await new Promise((r) => setTimeout(r, 1100));
    expect(await runDurableObjectAlarm(stubOf(parent))).toBe(true);
    expect(await objectRows(parent)).toMatchObject({ head: { status: "expired" }, turns: 1 });
    const read = await call("GET", `/v1/episodes/${child}`);
    expect(read.status).toBe(200);
    expect(read.json.messages).toEqual(reset.json.messages);
  });

  it("answers a replayed keyed reset with the episode the key made", async () => {
    const headers = { "idempotency-key": "do-replay-1" };
    const first = await call("POST", "/v1/envs/reverse-text/episodes", { index: 7 }, headers);
    const again = await call("POST", "/v1/envs/reverse-text/episodes", { index: 7 }, headers);
    expect([first.status, again.status, again.headers.get("idempotent-replayed")]).toEqual([201, 201, "true"]);
    expect(again.json.episode_id).toBe(first.json.episode_id);
  });

  it("counts a tenant's open episodes in the index: EDGEGYM_QUOTA_OPEN_EPISODES gives 429 past it", async () => {
    const limited: WorkerBindings = { ...bindings, EDGEGYM_API_KEYS: "dora:sk-dora", EDGEGYM_QUOTA_OPEN_EPISODES: "2" };
    const auth = { authorization: "Bearer sk-dora" };
    for (let i = 0; i < 2; i++) expect((await call("POST", "/v1/envs/reverse-text/episodes", { index: i }, auth, limited)).status).toBe(201);
    const over = await call("POST", "/v1/envs/reverse-text/episodes", { index: 2 }, auth, limited);
    expect([over.status, over.json.error.details]).toEqual([429, { quota: "open_episodes", limit: 2, in_use: 2 }]);
  });

  it("refuses an unknown EDGEGYM_EPISODE_STORE with a 500 that names it", async () => {
    const res = await call("GET", "/v1/envs", undefined, {}, { ...env, EDGEGYM_EPISODE_STORE: "kv" });
    expect(res.status).toBe(500);
    expect(res.json.error.message).toContain("EDGEGYM_EPISODE_STORE");
  });
});
