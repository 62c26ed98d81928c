import { describe, expect, it } from "vitest";
import type { EvalRollout } from "../../src/protocol/index.js";
import { TOMBSTONE_MS } from "../../src/server/db/episode-store.js";
import type { Stores } from "../../src/server/db/stores.js";
import { episodeRow, evalJobRow, OPENING, stepWrite } from "../support/episode-rows.js";

/** A fresh, empty database for one test, as two processes see it. */
export interface StoreHarness {
  /** The stores under test. */
  a: Stores;
  /** Stores on the same database with their own caches: another server process. */
  b: Stores;
  /** One episode's own turn rows, read from the database. */
  turnsOf(id: string): Promise<number[]>;
}

/**
 * What every SQL store guarantees, run against SQLite (src/server/db/episode-store.test.ts)
 * and PostgreSQL (test/pg-stores.test.ts): the store methods' contract, below the HTTP
 * suites. `open` gives each test its own empty database.
 */
export function describeStoreConformance(name: string, open: () => Promise<StoreHarness>): void {
  describe(`episode store: ${name}`, () => {
    it("reads back what it stored: JSON columns, absent state and score as null, turn 0's opening messages", async () => {
      const { a, b } = await open();
      const { row: inserted, created } = await a.episodes.insert(episodeRow("ep_1"), OPENING);
      expect(created).toBe(true);
      expect(inserted).toMatchObject({ id: "ep_1", args: { level: 2 }, metadata: { run: "r1" }, state: null, score: null, truncated: false });
      expect(await b.episodes.get("ep_1")).toEqual(inserted);
      expect(await a.episodes.readTurns([{ episodeId: "ep_1", from: 0, to: 5 }])).toEqual([{ turn: 0, message: null, replyMessages: OPENING, sampled: null, createdAt: inserted.createdAt }]);
      const withState = await a.episodes.insert(episodeRow("ep_2", { state: { n: 1 } }), OPENING);
      expect((await a.episodes.get("ep_2"))?.state).toEqual({ n: 1 });
      expect(withState.row.state).toEqual({ n: 1 });
    });

    it("returns the earlier episode for a repeated idempotency key", async () => {
      const { a } = await open();
      await a.episodes.insert(episodeRow("ep_a", { idempotencyKey: "k1" }), OPENING);
      const again = await a.episodes.insert(episodeRow("ep_b", { idempotencyKey: "k1" }), OPENING);
      expect([again.created, again.row.id]).toEqual([false, "ep_a"]);
      await expect(a.episodes.insert(episodeRow("ep_a"), OPENING)).rejects.toThrow(/collision/);
    });

    it("commits a step only at the expected turn of an active episode, turn row and head together", async () => {
      const { a } = await open();
      const s = a.episodes;
      await s.insert(episodeRow("ep_s"), OPENING);
      expect(await s.commitStep(stepWrite("ep_s", 0))).toBe(true);
      expect(await s.commitStep(stepWrite("ep_s", 0, { reply: "other" }))).toBe(false);
      await s.close("ep_s", 3);
      expect(await s.commitStep(stepWrite("ep_s", 1))).toBe(false);
      expect(await s.get("ep_s")).toMatchObject({ turn: 1, status: "closed", state: { n: 1 } });
      expect(await s.turnForRetry("ep_s", 1)).toEqual({ message: { role: "assistant", content: "a0" }, reply: stepWrite("ep_s", 0).reply });
      // The refused writes left no turn row behind.
      expect(await s.turnForRetry("ep_s", 2)).toBeUndefined();
    });

    it("settles a head without a turn: ends it only while active at the expected turn, writes state after it ended, never after a close", async () => {
      const { a, b } = await open();
      const s = a.episodes;
      await s.insert(episodeRow("ep_h"), OPENING);
      expect(await s.commitStep(stepWrite("ep_h", 0))).toBe(true);
      // Behind by a turn (a model call was recorded meanwhile): refused.
      expect(await s.settleHead("ep_h", 0, { agent: 1 }, { stopReason: "agent_exit", truncated: false }, 5)).toBe(false);
      expect(await b.episodes.settleHead("ep_h", 1, { agent: 2 }, { stopReason: "call_limit", truncated: true }, 5)).toBe(true);
      expect(await s.get("ep_h")).toMatchObject({ turn: 1, status: "done", stopReason: "call_limit", truncated: true, state: { agent: 2 }, updatedAt: 5 });
      // Ended already: a second end is refused, a state write (the agent's result) is taken.
      expect(await s.settleHead("ep_h", 1, { agent: 3 }, { stopReason: "agent_exit", truncated: false }, 6)).toBe(false);
      expect(await s.settleHead("ep_h", 1, { agent: 4 }, null, 7)).toBe(true);
      expect(await s.get("ep_h")).toMatchObject({ status: "done", stopReason: "call_limit", state: { agent: 4 } });
      // The next step's head is read again, not taken from a cache that predates the write.
      expect(await s.commitStep(stepWrite("ep_h", 1))).toBe(false);
      await s.close("ep_h", 8);
      expect(await s.settleHead("ep_h", 1, { agent: 5 }, null, 9)).toBe(false);
      expect(await b.episodes.get("ep_h")).toMatchObject({ status: "closed", state: { agent: 4 } });
    });

    it("refuses a step past the byte quota without writing its turn", async () => {
      const { a } = await open();
      const s = a.episodes;
      await s.insert(episodeRow("ep_q", { storedBytes: 90 }), OPENING);
      expect(await s.commitStep(stepWrite("ep_q", 0, { addedBytes: 20, maxEpisodeBytes: 100 }))).toBe(false);
      expect(await s.turnForRetry("ep_q", 1)).toBeUndefined();
      expect(await s.commitStep(stepWrite("ep_q", 0, { addedBytes: 10, maxEpisodeBytes: 100 }))).toBe(true);
      expect((await s.get("ep_q"))?.storedBytes).toBe(100);
    });

    it("stores each step's reply text unchanged, and reads only the head for a step", async () => {
      const { a } = await open();
      const s = a.episodes;
      await s.insert(episodeRow("ep_r"), OPENING);
      // Quotes, escapes, non-ASCII and a lone surrogate's escape: stored and read back byte for byte.
      const bodies = ['{"turn":1,"messages":[{"role":"user","content":"a \\"quoted\\" line\\n"}]}', '{"turn":2,"content":"é 😀 \\ud800"}', "{}"];
      for (const [i, reply] of bodies.entries()) expect(await s.commitStep(stepWrite("ep_r", i, { reply }))).toBe(true);
      for (const [i, reply] of bodies.entries()) expect((await s.turnForRetry("ep_r", i + 1))?.reply).toBe(reply);
      const forStep = await s.getForStep("ep_r");
      expect(forStep).toMatchObject({ id: "ep_r", turn: 3, state: { n: 3 } });
      expect(Object.keys(forStep ?? {})).not.toContain("metadata");
      // A turn's reply messages are read out of its stored body (and none when it has none).
      const turns = await s.readTurns([{ episodeId: "ep_r", from: 1, to: 3 }]);
      expect(turns.map((t) => [t.turn, t.message, t.replyMessages])).toEqual([
        [1, { role: "assistant", content: "a0" }, [{ role: "user", content: 'a "quoted" line\n' }]],
        [2, { role: "assistant", content: "a1" }, []],
        [3, { role: "assistant", content: "a2" }, []],
      ]);
    });

    it("scores once, replaces a score only at the scored turn, and counts a tenant's usage", async () => {
      const { a } = await open();
      const s = a.episodes;
      await s.insert(episodeRow("ep_u", { storedBytes: 40, tenant: "t1" }), OPENING);
      await s.insert(episodeRow("ep_v", { storedBytes: 2, tenant: "t1", status: "closed" }), OPENING);
      await s.insert(episodeRow("ep_w", { storedBytes: 1_000, tenant: "t1", expiresAt: 50 }), OPENING);
      expect(await s.usage("t1", 100)).toEqual({ openEpisodes: 1, storedBytes: 42 });
      expect(await s.usage("t2", 100)).toEqual({ openEpisodes: 0, storedBytes: 0 });
      await s.saveScore("ep_u", { reward: 1 }, 5, 70_000);
      await s.saveScore("ep_u", { reward: 0 }, 6, 80_000);
      expect(await s.get("ep_u")).toMatchObject({ score: { reward: 1 }, scoredAt: 5, updatedAt: 5, expiresAt: 70_000, status: "done", stopReason: "scored" });
      expect(await s.replaceScore("ep_u", 1, { reward: 2 }, 7, 90_000)).toBe(false);
      expect(await s.replaceScore("ep_u", 0, { reward: 2 }, 7, 90_000)).toBe(true);
      expect(await s.get("ep_u")).toMatchObject({ score: { reward: 2 }, scoredAt: 7, expiresAt: 90_000, status: "done" });
      // A closed episode keeps its status and stop reason when scored.
      await s.saveScore("ep_v", { reward: 0.5 }, 8, 70_000);
      expect(await s.get("ep_v")).toMatchObject({ status: "closed", stopReason: "scored", score: { reward: 0.5 } });
      expect(await s.usage("t1", 100)).toEqual({ openEpisodes: 0, storedBytes: 42 });
    });

    it("keeps an expired parent's turns while a live fork's prefix names them, and frees them after; two reapers at once do not collide", async () => {
      const { a, b, turnsOf } = await open();
      const s = a.episodes;
      await s.insert(episodeRow("ep_p", { expiresAt: 100 }), OPENING);
      for (let i = 0; i < 4; i++) expect(await s.commitStep(stepWrite("ep_p", i, { expiresAt: 100 }))).toBe(true);
      const forkRow = episodeRow("", { parentId: "ep_p", forkTurn: 2, turn: 2, expiresAt: 1_000 });
      expect(await s.insertForks(forkRow, [{ id: "ep_f", idempotencyKey: "fk#0" }], [{ ancestorId: "ep_p", toTurn: 2 }])).toEqual(["ep_f"]);
      // The same key again inserts nothing (the caller reads the earlier rows).
      expect(await s.insertForks(forkRow, [{ id: "ep_g", idempotencyKey: "fk#0" }], [{ ancestorId: "ep_p", toTurn: 2 }])).toEqual([]);
      expect(await s.lineage("ep_f")).toEqual([{ ancestorId: "ep_p", toTurn: 2 }]);
      expect(await s.lineage("ep_g")).toEqual([]);
      // Two processes reap at once: the parent is expired once.
      const both = await Promise.all([s.reapExpired(200), b.episodes.reapExpired(200)]);
      expect(both.reduce((n, r) => n + r.expired, 0)).toBe(1);
      expect(await turnsOf("ep_p")).toEqual([0, 1, 2]);
      expect(await s.get("ep_p")).toMatchObject({ status: "expired", state: null, metadata: {}, storedBytes: 0, updatedAt: 200 });
      expect(await s.reapExpired(2_000)).toEqual({ expired: 1, deleted: 0 });
      expect(await turnsOf("ep_p")).toEqual([]);
    });

    it("stores each fork's own state where one is given (a sandboxed fork names its own container), the base's otherwise", async () => {
      const { a } = await open();
      const s = a.episodes;
      await s.insert(episodeRow("ep_sp"), OPENING);
      const base = episodeRow("", { parentId: "ep_sp", forkTurn: 0, turn: 0, state: { box: "parent" } });
      const forks = [
        { id: "ep_s1", idempotencyKey: null, state: { box: "one", files: ["a", "b"] } },
        { id: "ep_s2", idempotencyKey: null, state: { box: "two" } },
        { id: "ep_s3", idempotencyKey: null },
      ];
      expect((await s.insertForks(base, forks, [{ ancestorId: "ep_sp", toTurn: 0 }])).sort()).toEqual(["ep_s1", "ep_s2", "ep_s3"]);
      expect((await s.get("ep_s1"))?.state).toEqual({ box: "one", files: ["a", "b"] });
      expect((await s.get("ep_s2"))?.state).toEqual({ box: "two" });
      expect((await s.get("ep_s3"))?.state).toEqual({ box: "parent" });
      expect((await s.getForStep("ep_s2"))?.state).toEqual({ box: "two" });
    });

    it("reaps in bounded passes: holds last until the last holder expires, then tombstones go with their lineage", async () => {
      const { a, turnsOf } = await open();
      const s = a.episodes;
      // More forks than one pass takes (reaper.ts: 500), all holding the root's turn 0.
      const n = 1_100;
      await s.insert(episodeRow("ep_root", { expiresAt: 100 }), OPENING);
      const forks = Array.from({ length: n }, (_, i) => ({ id: `ep_b${String(i).padStart(4, "0")}`, idempotencyKey: null }));
      expect(await s.insertForks(episodeRow("", { parentId: "ep_root", forkTurn: 0, expiresAt: 500 }), forks, [{ ancestorId: "ep_root", toTurn: 0 }])).toHaveLength(n);
      expect(await s.reapExpired(200)).toEqual({ expired: 1, deleted: 0 });
      expect(await turnsOf("ep_root")).toEqual([0]);
      // Three passes: the root's turn goes with the pass that expires its last holder.
      expect(await s.reapExpired(1_000)).toEqual({ expired: n, deleted: 0 });
      expect(await turnsOf("ep_root")).toEqual([]);
      expect(await s.reapExpired(1_000)).toEqual({ expired: 0, deleted: 0 });
      // A week on, every tombstone goes (the root's first: it expired first), and the forks' lineage with them.
      expect(await s.reapExpired(499 + TOMBSTONE_MS)).toEqual({ expired: 0, deleted: 1 });
      expect(await s.lineage("ep_b0000")).toEqual([{ ancestorId: "ep_root", toTurn: 0 }]);
      expect(await s.reapExpired(501 + TOMBSTONE_MS)).toEqual({ expired: 0, deleted: n });
      expect(await s.get("ep_b1099")).toBeUndefined();
      expect(await s.lineage("ep_b0000")).toEqual([]);
    });
  });

  describe(`episode store step-head cache: ${name}`, () => {
    it("answers the next step's head from what this store wrote, equal to the row read back", async () => {
      const { a, b } = await open();
      const s = a.episodes;
      // b never saw the writes: it reads the database.
      const fresh = b.episodes;
      await s.insert(episodeRow("ep_c", { state: { n: 0 } }), OPENING);
      let head = await s.getForStep("ep_c", 0);
      expect(head).toEqual(await fresh.getForStep("ep_c"));
      for (let i = 0; i < 3; i++) {
        expect(await s.commitStep({ ...stepWrite("ep_c", i), before: head })).toBe(true);
        head = await s.getForStep("ep_c", i + 1);
        expect(head).toEqual(await fresh.getForStep("ep_c"));
      }
      expect(head).toMatchObject({ turn: 3, storedBytes: 30, state: { n: 3 }, expiresAt: 60_002 });
      // The cached state is what the JSON text written reads back as, not the object the environment returned.
      const returned = { n: 4, gone: undefined, at: new Date(0) };
      expect(await s.commitStep({ ...stepWrite("ep_c", 3, { state: returned }), before: head })).toBe(true);
      const next = await s.getForStep("ep_c", 4);
      expect(next?.state).toEqual({ n: 4, at: "1970-01-01T00:00:00.000Z" });
      expect(next?.state).not.toBe(returned);
      expect(Object.keys(next?.state as object)).toEqual(["n", "at"]);
    });

    it("keeps no head for a turn it did not write, and a stale head only loses its conditional write", async () => {
      const { a, b } = await open();
      const s = a.episodes;
      const other = b.episodes;
      await s.insert(episodeRow("ep_x"), OPENING);
      const head = await s.getForStep("ep_x", 0);
      expect(await s.commitStep({ ...stepWrite("ep_x", 0), before: head })).toBe(true);
      // The other process moves the episode on; this store still holds turn 1.
      expect(await other.commitStep(stepWrite("ep_x", 1, { reply: "theirs" }))).toBe(true);
      const stale = await s.getForStep("ep_x", 1);
      expect(stale?.turn).toBe(1);
      expect(await s.commitStep({ ...stepWrite("ep_x", 1, { reply: "ours" }), before: stale })).toBe(false);
      // The losing write dropped the entry: the next read is the row.
      expect((await s.getForStep("ep_x", 1))?.turn).toBe(2);
      expect((await s.turnForRetry("ep_x", 2))?.reply).toBe("theirs");
      // The cached head equals the row as another process reads it.
      const h2 = await s.getForStep("ep_x", 2);
      expect(await s.commitStep({ ...stepWrite("ep_x", 2), before: h2 })).toBe(true);
      expect(await s.getForStep("ep_x", 3)).toEqual(await other.getForStep("ep_x"));
      // Closing drops it too; a closed episode is read from the row.
      await s.close("ep_x", 5);
      expect(await s.getForStep("ep_x", 3)).toMatchObject({ turn: 3, status: "closed" });
    });
  });

  describe(`eval store: ${name}`, () => {
    it("one process holds a lease, a rollout is stored once, counts are numbers", async () => {
      const { a, b } = await open();
      const now = 1_000;
      await a.evals.insertJob(evalJobRow("ev_1", now));
      const claims = await Promise.all([a.evals.claim("ev_1", "proc_a", now, 1_000), b.evals.claim("ev_1", "proc_b", now, 1_000)]);
      expect(claims.filter((c) => c !== null)).toHaveLength(1);
      const holder = claims[0] ? "proc_a" : "proc_b";
      expect(await a.evals.countLive("public")).toBe(1);
      const rollout = { example_id: 0, rollout_index: 0, reward: 0.5 } as unknown as EvalRollout;
      await Promise.all([a.evals.insertRollout("ev_1", rollout, now), b.evals.insertRollout("ev_1", rollout, now)]);
      expect(await a.evals.progress("ev_1")).toEqual({ done: 1, errors: 0, meanReward: 0.5 });
      // The lease lapses: the other process takes the job over.
      const other = holder === "proc_a" ? "proc_b" : "proc_a";
      expect(await b.evals.claim("ev_1", other, now + 500, 1_000)).toBeNull();
      expect((await b.evals.claim("ev_1", other, now + 1_500, 1_000))?.leaseOwner).toBe(other);
      expect(await a.evals.finish("ev_1", holder, { status: "completed", summary: null, error: null, now: now + 2_000, runMs: 10 })).toBe(false);
      expect(await a.evals.finish("ev_1", other, { status: "completed", summary: { ok: true }, error: null, now: now + 2_000, runMs: 10.4 })).toBe(true);
      expect(await a.evals.getJob("ev_1")).toMatchObject({ status: "completed", summary: { ok: true }, runMs: 10, leaseOwner: null });
      expect(await a.evals.deleteEnded("ev_1")).toEqual({ rollouts: 1 });
      expect(await a.evals.getJob("ev_1")).toBeUndefined();
    });

    it("lists, cancels, fails, pages rollouts and deletes ended jobs oldest first", async () => {
      const { a } = await open();
      const e = a.evals;
      expect(await e.insertJob(evalJobRow("ev_a", 10))).toEqual({ ...evalJobRow("ev_a", 10) });
      await e.insertJob(evalJobRow("ev_b", 20, { tenant: "t2" }));
      await e.insertJob(evalJobRow("ev_c", 30));
      const ids = (jobs: { id: string }[]) => jobs.map((j) => j.id);
      expect(ids(await e.listJobs({ limit: 10, tenant: null }))).toEqual(["ev_c", "ev_b", "ev_a"]);
      expect(ids(await e.listJobs({ limit: 10, tenant: "public" }))).toEqual(["ev_c", "ev_a"]);
      expect(ids(await e.listJobs({ status: "queued", limit: 1, tenant: null }))).toEqual(["ev_c"]);
      expect(ids(await e.unclaimedJobs(100, 10))).toEqual(["ev_a", "ev_b", "ev_c"]);
      // A queued job nobody holds is cancelled at once; a running one is only flagged.
      await e.requestCancel("ev_a", 100);
      expect(await e.getJob("ev_a")).toMatchObject({ status: "cancelled", cancelRequested: true, finishedAt: 100 });
      expect(await e.deleteEnded("ev_b")).toBeNull();
      expect(await e.claim("ev_b", "p", 100, 1_000)).toMatchObject({ status: "running", leaseOwner: "p", startedAt: 100, leaseExpiresAt: 1_100 });
      await e.requestCancel("ev_b", 110);
      expect(await e.renew("ev_b", "p", 120, 1_000)).toEqual({ held: true, cancelRequested: true });
      expect(await e.renew("ev_b", "q", 120, 1_000)).toEqual({ held: false, cancelRequested: false });
      await e.release("ev_b", "p", 130, 7.6);
      expect(await e.getJob("ev_b")).toMatchObject({ status: "running", leaseOwner: null, leaseExpiresAt: null, runMs: 8 });
      // A cancel was asked for: nobody takes the job over.
      expect(await e.claim("ev_b", "q", 5_000, 1_000)).toBeNull();
      await e.fail("ev_b", "no endpoint", 140);
      expect(await e.getJob("ev_b")).toMatchObject({ status: "failed", error: "no endpoint", finishedAt: 140 });
      // Rollouts come back in (row, rollout index) order, a page at a time.
      expect((await e.claim("ev_c", "p", 150, 1_000))?.startedAt).toBe(150);
      const rollout = (index: number, reward: number, error?: string) => ({ example_id: 0, rollout_index: index, reward, ...(error ? { error: { error } } : {}) }) as unknown as EvalRollout;
      await e.insertRollout("ev_c", rollout(1, 0, "model_error"), 160);
      await e.insertRollout("ev_c", rollout(0, 1), 170);
      expect(await e.rollouts("ev_c", 0, 10)).toEqual([rollout(0, 1), rollout(1, 0, "model_error")]);
      expect(await e.rollouts("ev_c", 1, 1)).toEqual([rollout(1, 0, "model_error")]);
      expect((await e.doneKeys("ev_c")).sort((x, y) => x.rolloutIndex - y.rolloutIndex)).toEqual([
        { exampleId: 0, rolloutIndex: 0 },
        { exampleId: 0, rolloutIndex: 1 },
      ]);
      expect(await e.progress("ev_c")).toEqual({ done: 2, errors: 1, meanReward: 0.5 });
      expect(await e.finish("ev_c", "p", { status: "completed", summary: { n: 2 }, error: null, now: 200, runMs: 50 })).toBe(true);
      // An ended job's rollouts no longer change.
      await e.insertRollout("ev_c", rollout(2, 1), 210);
      expect((await e.progress("ev_c")).done).toBe(2);
      // Retention: jobs ended before the cutoff, oldest first, at most `limit` a pass.
      expect(await e.deleteEndedBefore(150, 1)).toEqual({ jobs: 1, rollouts: 0 });
      expect(await e.getJob("ev_a")).toBeUndefined();
      expect(await e.deleteEndedBefore(150, 10)).toEqual({ jobs: 1, rollouts: 0 });
      expect(await e.deleteEndedBefore(150, 10)).toEqual({ jobs: 0, rollouts: 0 });
      expect(await e.deleteEndedBefore(1_000, 10)).toEqual({ jobs: 1, rollouts: 2 });
      expect(await e.listJobs({ limit: 10, tenant: null })).toEqual([]);
    });
  });
}
