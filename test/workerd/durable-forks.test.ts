import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { WorkerBindings } from "../../src/server/worker/worker.js";
import { bindings, call, episodesNamespace, stubOf } from "./durable-helpers.js";

// Forks on the Durable Object store: a fork whose object insert fails after the index
// claimed its keys is recovered by a keyed retry, and an ancestor keeps one key per fork
// that holds its turns (any number of them, no duplicates).

type Namespace = NonNullable<WorkerBindings["EPISODES"]>;

/**
 * The real EPISODES namespace, except that the first `insertFork` RPC after `arm()` is
 * refused before it reaches the object: the failure a Worker sees when an object is
 * unreachable or overloaded, between the index's claim and the fork's row.
 */
const refusingFirstInsert = (ns: Namespace) => {
  let armed = false;
  const wrapped = {
    idFromName: (name: string) => ns.idFromName(name),
    get: (id: ReturnType<Namespace["idFromName"]>) => {
      const stub = ns.get(id) as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
      return new Proxy(stub, {
        get: (target, method: string) => (...args: unknown[]) => {
          if (method === "insertFork" && armed) {
            armed = false;
            return Promise.reject(new Error("the fork's object refused the insert (injected by the test binding)"));
          }
          return target[method]?.(...args);
        },
      });
    },
  };
  return { ns: wrapped as unknown as Namespace, arm: () => (armed = true) };
};

const fault = refusingFirstInsert(episodesNamespace());
/** The Worker on the Durable Object store with the refusing binding (its own bindings object: its own app). */
const faulty: WorkerBindings = { ...bindings, EPISODES: fault.ns };

/** The keys an object keeps under a prefix. */
const keysOf = (id: string, prefix: string) =>
  runInDurableObject(stubOf(id), async (_i, state) => [...(await state.storage.list({ prefix })).keys()]);

describe("forks on Durable Objects", () => {
  it("recovers a keyed fork whose object insert failed after the claim: the retry stores the missing forks under the claimed ids", async () => {
    const reset = await call("POST", "/v1/envs/reverse-text/episodes", { index: 11 }, {}, faulty);
    const parent = reset.json.episode_id as string;
    const headers = { "idempotency-key": "do-fork-recover-1" };
    fault.arm();
    const failed = await call("POST", `/v1/episodes/${parent}/fork`, { n: 3, metadata: { run: 1 } }, headers, faulty);
    expect(failed.status).toBe(500);
    // A different body under the same key is still refused, before and after the recovery.
    const other = await call("POST", `/v1/episodes/${parent}/fork`, { n: 3, metadata: { run: 2 } }, headers, faulty);
    expect([other.status, other.json.error.code]).toEqual([409, "idempotency_key_reused"]);

    const retry = await call("POST", `/v1/episodes/${parent}/fork`, { n: 3, metadata: { run: 1 } }, headers, faulty);
    expect([retry.status, retry.headers.get("idempotent-replayed")]).toEqual([201, "true"]);
    const ids = (retry.json.episodes as { episode_id: string }[]).map((e) => e.episode_id);
    expect(ids).toHaveLength(3);
    for (const id of ids) {
      const read = await call("GET", `/v1/episodes/${id}`, undefined, {}, faulty);
      expect([read.status, read.json.parent?.episode_id, read.json.messages]).toEqual([200, parent, reset.json.messages]);
    }
    // Listed once each, held once each, and the retry's rows carry the first try's time.
    const listed = await call("GET", `/v1/episodes/${parent}/forks`, undefined, {}, faulty);
    expect((listed.json.forks as { episode_id: string }[]).map((f) => f.episode_id).sort()).toEqual([...ids].sort());
    expect(new Set((listed.json.forks as { created_at: string }[]).map((f) => f.created_at)).size).toBe(1);
    expect((await keysOf(parent, "holder:")).sort()).toEqual(ids.map((id) => `holder:${id}`).sort());

    const again = await call("POST", `/v1/episodes/${parent}/fork`, { n: 3, metadata: { run: 1 } }, headers, faulty);
    expect(again.json.episodes).toEqual(retry.json.episodes);
    const different = await call("POST", `/v1/episodes/${parent}/fork`, { n: 3, metadata: { run: 2 } }, headers, faulty);
    expect([different.status, different.json.error.code]).toEqual([409, "idempotency_key_reused"]);
  });

  it("keeps one key per holding fork: held twice is held once, and hundreds fit", async () => {
    const reset = await call("POST", "/v1/envs/reverse-text/episodes", { index: 12 });
    const parent = reset.json.episode_id as string;
    const dead = Array.from({ length: 300 }, (_, i) => `ep_!gone-${String(i).padStart(3, "0")}`);
    await runInDurableObject(stubOf(parent), async (instance) => {
      const object = instance as unknown as { hold(ids: string[]): Promise<void> };
      await object.hold(dead);
      await object.hold(dead.slice(0, 10));
    });
    expect(await keysOf(parent, "holder:")).toHaveLength(300);
  });

  it("asks hundreds of holding forks over several alarms, forgets the gone ones and keeps the turns for a live one", async () => {
    const reset = await call("POST", "/v1/envs/reverse-text/episodes", { index: 13 });
    const parent = reset.json.episode_id as string;
    const fork = await call("POST", `/v1/episodes/${parent}/fork`, { ttl_seconds: 3600 });
    const child = fork.json.episodes[0].episode_id as string;
    // Forks that no longer exist, sorted before the live one; some as an older object kept them (one "holders" array, with a duplicate).
    const dead = Array.from({ length: 300 }, (_, i) => `ep_!gone-${String(i).padStart(3, "0")}`);
    await runInDurableObject(stubOf(parent), async (instance, state) => {
      await (instance as unknown as { hold(ids: string[]): Promise<void> }).hold(dead.slice(0, 290));
      await state.storage.put("holders", [...dead.slice(280), dead[299]]);
      // The TTL passed (set in the past rather than waited for, so no alarm fires on its own during the test).
      state.storage.sql.exec("UPDATE episodes SET expires_at = ?", Date.now() - 1000);
    });
    // The alarm expires the parent and asks 8 rounds of 32 forks, all gone: it comes back for the rest.
    expect(await runDurableObjectAlarm(stubOf(parent))).toBe(true);
    expect((await keysOf(parent, "holder:")).length).toBe(301 - 256);
    expect(await keysOf(parent, "holders")).toEqual([]);
    expect((await call("GET", `/v1/episodes/${parent}`)).status).toBe(410);
    const alarm = await runInDurableObject(stubOf(parent), (_i, state) => state.storage.getAlarm());
    expect(alarm).toBeLessThan(Date.now() + 60_000);
    // The next one (run now; it is due within seconds) finds the live fork, so the turns stay.
    await runDurableObjectAlarm(stubOf(parent));
    expect(await keysOf(parent, "holder:")).toEqual([`holder:${child}`]);
    const read = await call("GET", `/v1/episodes/${child}`);
    expect([read.status, read.json.messages]).toEqual([200, reset.json.messages]);
  });
});
