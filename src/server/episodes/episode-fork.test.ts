import { afterEach, describe, expect, it } from "vitest";
import { DEFAULT_QUOTAS } from "../tenants/quotas.js";
import { inProcessApp } from "../../../test/support/in-process.js";
import { counterEnv as counter } from "../../../test/support/counter-env.js";

// The fork route's bounds and races, in process (the HTTP behaviour both runtimes share is
// in test/conformance/long-horizon-conformance.ts).

const apps: ReturnType<typeof inProcessApp>[] = [];
afterEach(() => {
  while (apps.length) apps.pop()?.close();
});


function setup(quotas: Partial<typeof DEFAULT_QUOTAS> = {}) {
  const app = inProcessApp({ envs: [counter], config: { quotas: { ...DEFAULT_QUOTAS, ...quotas } } });
  apps.push(app);
  return app;
}

const say = (text: string) => ({ role: "assistant", content: text });

describe("POST /v1/episodes/{id}/fork", () => {
  it("makes n episodes once when the same keyed request arrives several times at once", async () => {
    const { call, store, now } = setup();
    const parent = (await call("POST", "/v1/envs/counter/episodes", {})).json.episode_id as string;
    await call("POST", `/v1/episodes/${parent}/step`, { turn: 0, message: say("a") });
    const headers = { "idempotency-key": "race" };
    const replies = await Promise.all(Array.from({ length: 5 }, () => call("POST", `/v1/episodes/${parent}/fork`, { n: 4 }, headers)));
    expect(replies.map((r) => r.status)).toEqual(Array(5).fill(201));
    const ids = new Set(replies.flatMap((r) => r.json.episodes.map((e: { episode_id: string }) => e.episode_id)));
    expect(ids.size).toBe(4);
    // The parent and its four forks: the racing twins inserted nothing.
    expect(await store.usage("public", now())).toMatchObject({ openEpisodes: 5 });
  });

  it("refuses a keyed fork retried after some of its episodes were deleted (409), inserting nothing", async () => {
    const { call, store, now, advance } = setup({ maxOpenEpisodes: null });
    const day = 24 * 3600 * 1000;
    const week = 7 * 24 * 3600;
    const parent = (await call("POST", "/v1/envs/counter/episodes", { ttl_seconds: week })).json.episode_id as string;
    const headers = { "idempotency-key": "old" };
    const forked = await call("POST", `/v1/episodes/${parent}/fork`, { n: 2, ttl_seconds: week }, headers);
    const [kept, gone] = (forked.json.episodes as { episode_id: string }[]).map((e) => e.episode_id);
    // Day 6: the parent and the first fork step (their TTLs move on); the second fork expires on day 7 and is deleted a week later.
    advance(6 * day);
    await call("POST", `/v1/episodes/${parent}/step`, { turn: 0, message: say("a") });
    await call("POST", `/v1/episodes/${kept}/step`, { turn: 0, message: say("b") });
    advance(6 * day);
    await call("POST", `/v1/episodes/${parent}/step`, { turn: 1, message: say("c") });
    advance(2 * day + 1000);
    await store.reapExpired(now());
    expect((await call("GET", `/v1/episodes/${gone}`)).status).toBe(404);
    // One of the two rows is left, made two weeks ago: not a try that stored only some forks, but a key whose episodes are partly deleted.
    const retry = await call("POST", `/v1/episodes/${parent}/fork`, { n: 2, ttl_seconds: week }, headers);
    expect([retry.status, retry.json.error.code]).toEqual([409, "idempotency_key_reused"]);
    expect((await call("GET", `/v1/episodes/${parent}/forks`)).json.forks).toHaveLength(1);
  });

  it("counts the n new episodes against the open-episodes quota", async () => {
    const { call } = setup({ maxOpenEpisodes: 5 });
    const parent = (await call("POST", "/v1/envs/counter/episodes", {})).json.episode_id as string;
    const tooMany = await call("POST", `/v1/episodes/${parent}/fork`, { n: 5 });
    expect([tooMany.status, tooMany.json.error.code, tooMany.json.error.details.quota]).toEqual([429, "rate_limited", "open_episodes"]);
    expect((await call("POST", `/v1/episodes/${parent}/fork`, { n: 4 })).status).toBe(201);
    expect((await call("POST", `/v1/episodes/${parent}/fork`, {})).status).toBe(429);
  });

  it("bounds forks of forks at 32 ancestors, and each one still reads the whole transcript", async () => {
    const { call } = setup({ maxOpenEpisodes: null });
    let id = (await call("POST", "/v1/envs/counter/episodes", {})).json.episode_id as string;
    const said: string[] = [];
    for (let depth = 0; depth < 32; depth++) {
      await call("POST", `/v1/episodes/${id}/step`, { turn: depth, message: say(`m${depth}`) });
      said.push(`m${depth}`);
      const fork = await call("POST", `/v1/episodes/${id}/fork`, {});
      expect(fork.status, fork.text).toBe(201);
      id = fork.json.episodes[0].episode_id as string;
    }
    const deepest = await call("GET", `/v1/episodes/${id}`);
    expect(deepest.json.messages.filter((m: { role: string }) => m.role === "assistant").map((m: { content: string }) => m.content)).toEqual(said);
    await call("POST", `/v1/episodes/${id}/step`, { turn: 32, message: say("m32") });
    const refused = await call("POST", `/v1/episodes/${id}/fork`, {});
    expect([refused.status, refused.json.error.code, refused.json.error.details.reason]).toEqual([409, "fork_unavailable", "too_deep"]);
    // Forking where the prefix needs fewer ancestors is still fine.
    expect((await call("POST", `/v1/episodes/${id}/fork`, { turn: 3 })).status).toBe(201);
  });

  it("replays the parent exactly: the same messages from the fork turn give the same transcript, seeded randomness included", async () => {
    const { call } = setup();
    const parent = (await call("POST", "/v1/envs/counter/episodes", { seed: 9 })).json.episode_id as string;
    for (let turn = 0; turn < 6; turn++) await call("POST", `/v1/episodes/${parent}/step`, { turn, message: say(`p${turn}`) });
    const forks = (await call("POST", `/v1/episodes/${parent}/fork`, { turn: 2, n: 3 })).json.episodes.map((e: { episode_id: string }) => e.episode_id) as string[];
    for (const fork of forks) for (let turn = 2; turn < 6; turn++) await call("POST", `/v1/episodes/${fork}/step`, { turn, message: say(`p${turn}`) });
    const want = (await call("GET", `/v1/episodes/${parent}`)).json.messages;
    for (const fork of forks) expect((await call("GET", `/v1/episodes/${fork}`)).json.messages).toEqual(want);
  });
});
