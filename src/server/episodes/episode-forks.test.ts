import { afterEach, describe, expect, it } from "vitest";
import { sql } from "drizzle-orm";
import { z } from "zod";
import { ForkList } from "../../protocol/index.js";
import { openNodeDatabase } from "../db/node-sqlite.js";
import { decodeForkCursor, encodeForkCursor } from "./episode-forks.js";
import { DEFAULT_QUOTAS } from "../tenants/quotas.js";
import { inProcessApp } from "../../../test/support/in-process.js";
import { counterEnv as counter } from "../../../test/support/counter-env.js";

// GET /v1/episodes/{id}/forks in process: paging, bounds, hostile cursors, tenants, and
// that the query is a range of the index rather than a scan.

const apps: ReturnType<typeof inProcessApp>[] = [];
afterEach(() => {
  while (apps.length) apps.pop()?.close();
});


const KEYS = { alice: "sk-alice-forks", bob: "sk-bob-forks", admin: "sk-admin-forks" };

function setup() {
  const app = inProcessApp({
    envs: [counter],
    config: { quotas: { ...DEFAULT_QUOTAS, maxOpenEpisodes: null }, apiKeys: [`alice:${KEYS.alice}`, `bob:${KEYS.bob}`], adminApiKeys: [`ops:${KEYS.admin}`] },
  });
  apps.push(app);
  const as = (key: string) => (method: string, path: string, body?: unknown) => app.call(method, path, body, { authorization: `Bearer ${key}` });
  return { ...app, alice: as(KEYS.alice), bob: as(KEYS.bob), admin: as(KEYS.admin) };
}

const say = (text: string) => ({ role: "assistant", content: text });

describe("GET /v1/episodes/{id}/forks", () => {
  it("lists the direct children with fork turn, turn, status and reward, page by page", async () => {
    const { alice, advance } = setup();
    const root = (await alice("POST", "/v1/envs/counter/episodes", {})).json.episode_id as string;
    await alice("POST", `/v1/episodes/${root}/step`, { turn: 0, message: say("a") });
    await alice("POST", `/v1/episodes/${root}/step`, { turn: 1, message: say("b") });
    const empty = await alice("GET", `/v1/episodes/${root}/forks`);
    expect([empty.status, empty.json]).toEqual([200, { episode_id: root, forks: [], next_cursor: null }]);

    const made: string[] = [];
    for (const turn of [1, 2, 0]) {
      advance(1000);
      made.push(...(await alice("POST", `/v1/episodes/${root}/fork`, { turn, n: 2 })).json.episodes.map((e: { episode_id: string }) => e.episode_id));
    }
    const scored = made[0] as string;
    await alice("POST", `/v1/episodes/${scored}/step`, { turn: 1, message: say("c") });
    await alice("POST", `/v1/episodes/${scored}/score`);
    // A grandchild is its parent's fork, not the root's.
    const grandchild = (await alice("POST", `/v1/episodes/${made[1]}/fork`, { turn: 1 })).json.episodes[0].episode_id as string;

    const seen: z.infer<typeof ForkList>["forks"] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await alice("GET", `/v1/episodes/${root}/forks?limit=4${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.status).toBe(200);
      const body = ForkList.parse(page.json);
      seen.push(...body.forks);
      cursor = body.next_cursor;
      pages++;
    } while (cursor !== null && pages < 10);
    expect(pages).toBe(2);
    expect(seen.map((f) => f.episode_id).sort()).toEqual([...made].sort());
    expect(seen.map((f) => f.episode_id)).not.toContain(grandchild);
    // Oldest first: the forks after turn 1, then turn 2, then turn 0 (the order they were made).
    expect(seen.map((f) => f.fork_turn)).toEqual([1, 1, 2, 2, 0, 0]);
    const first = seen.find((f) => f.episode_id === scored);
    expect(first).toMatchObject({ fork_turn: 1, turn: 2, status: "done", reward: 2 });
    expect(seen.filter((f) => f.episode_id !== scored).every((f) => f.status === "active" && f.reward === null && f.turn === f.fork_turn)).toBe(true);

    const children = await alice("GET", `/v1/episodes/${made[1]}/forks`);
    expect(children.json.forks.map((f: { episode_id: string }) => f.episode_id)).toEqual([grandchild]);
  });

  it("answers 404 for another tenant's episode and never lists its forks; an admin sees them", async () => {
    const { alice, bob, admin } = setup();
    const root = (await alice("POST", "/v1/envs/counter/episodes", {})).json.episode_id as string;
    await alice("POST", `/v1/episodes/${root}/fork`, { n: 3 });
    const probe = await bob("GET", `/v1/episodes/${root}/forks`);
    expect([probe.status, probe.json.error.code]).toEqual([404, "episode_not_found"]);
    expect((await bob("GET", `/v1/episodes/ep_unknown/forks`)).json.error.code).toBe("episode_not_found");
    expect((await admin("GET", `/v1/episodes/${root}/forks`)).json.forks).toHaveLength(3);
  });

  it("filters the tenant in the query, so a row of another tenant under this parent is never returned", async () => {
    const { alice, store } = setup();
    const root = (await alice("POST", "/v1/envs/counter/episodes", {})).json.episode_id as string;
    await alice("POST", `/v1/episodes/${root}/fork`, { n: 2 });
    // No route makes such a row (forks belong to the parent's tenant): the store is asked directly.
    expect(await store.forksOf(root, "bob", 10, null)).toEqual([]);
    expect(await store.forksOf(root, "alice", 10, null)).toHaveLength(2);
  });

  it("validates limit and cursor", async () => {
    const { alice } = setup();
    const root = (await alice("POST", "/v1/envs/counter/episodes", {})).json.episode_id as string;
    for (const q of ["limit=0", "limit=201", "limit=x", "limit=1.5", "cursor=", "cursor=a%2Fb", `cursor=${"A".repeat(201)}`, "cursor=bm90LWEtY3Vyc29y", "cursor=_w", "other=1"]) {
      const r = await alice("GET", `/v1/episodes/${root}/forks?${q}`);
      expect([q, r.status, r.json.error.code]).toEqual([q, 400, "invalid_request"]);
    }
    expect((await alice("GET", `/v1/episodes/${root}/forks?limit=200`)).status).toBe(200);
  });

  it("keeps listing an expired parent's forks while its tombstone is kept", async () => {
    const { alice, advance } = setup();
    const root = (await alice("POST", "/v1/envs/counter/episodes", { ttl_seconds: 60 })).json.episode_id as string;
    const fork = (await alice("POST", `/v1/episodes/${root}/fork`, { ttl_seconds: 3600 })).json.episodes[0].episode_id as string;
    advance(120_000);
    expect((await alice("GET", `/v1/episodes/${root}`)).status).toBe(410);
    const list = await alice("GET", `/v1/episodes/${root}/forks`);
    expect([list.status, list.json.forks.map((f: { episode_id: string; status: string }) => [f.episode_id, f.status])]).toEqual([200, [[fork, "active"]]]);
  });

  it("reads a range of the episodes_parent index, in its order (no scan, no sort)", async () => {
    const database = openNodeDatabase(":memory:");
    try {
      const plan = await database.db.all<{ detail: string }>(
        sql`EXPLAIN QUERY PLAN SELECT id, json_extract(score, '$.reward') FROM episodes
            WHERE parent_id = ${"ep_x"} AND tenant = ${"alice"} AND (created_at, id) > (${0}, ${""}) ORDER BY created_at, id LIMIT 5`,
      );
      const text = plan.map((r) => r.detail).join("\n");
      expect(text).toMatch(/SEARCH episodes USING INDEX episodes_parent/);
      expect(text).not.toMatch(/TEMP B-TREE|SCAN episodes/);
    } finally {
      database.close();
    }
  });
});

describe("fork cursors", () => {
  it("round-trip any id and refuse what the server did not make", () => {
    for (const id of ["ep_0123", "é/ü?&=", "x".repeat(64)]) expect(decodeForkCursor(encodeForkCursor({ createdAt: 1_764_000_000_000, id }))).toEqual({ createdAt: 1_764_000_000_000, id });
    for (const bad of ["", "!!!", encodeForkCursor({ createdAt: 1, id: "" }), btoa("abc:id").replaceAll("=", ""), btoa("1:" + "x".repeat(65))]) {
      expect(() => decodeForkCursor(bad)).toThrow(/cursor/);
    }
  });
});
