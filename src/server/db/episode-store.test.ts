import { sql } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { EpisodeStore, type StepWrite } from "./episode-store.js";
import { openNodeDatabase, type NodeDatabase } from "./node-sqlite.js";
import type { NewEpisodeRow } from "./schema.js";

const opened: NodeDatabase[] = [];
afterEach(() => {
  while (opened.length) opened.pop()?.close();
});

function store() {
  const database = openNodeDatabase(":memory:");
  opened.push(database);
  return { db: database.db, store: new EpisodeStore(database.db) };
}

const OPENING = [{ role: "user", content: "hi" }];

/** A step's write with everything but what a test varies. */
function stepWrite(id: string, expectedTurn: number, extra: Partial<StepWrite> = {}): StepWrite {
  return {
    id,
    expectedTurn,
    turn: expectedTurn + 1,
    state: { n: expectedTurn + 1 },
    message: { role: "assistant", content: `a${expectedTurn}` },
    reply: JSON.stringify({ turn: expectedTurn + 1, messages: [{ role: "user", content: `r${expectedTurn}` }] }),
    sampled: null,
    templateHash: null,
    templateChanges: null,
    tallies: null,
    status: "active",
    stopReason: null,
    truncated: false,
    error: null,
    now: 2,
    expiresAt: 60_002,
    addedBytes: 10,
    maxEpisodeBytes: 1_000_000,
    ...extra,
  };
}

function row(id: string, extra: Partial<NewEpisodeRow> = {}): NewEpisodeRow {
  return {
    id,
    envId: "e",
    envVersion: "1",
    split: "train",
    taskIndex: 3,
    seed: 7,
    args: { level: 2 },
    metadata: { run: "r1" },
    state: null,
    promptLength: 1,
    turn: 0,
    status: "active",
    stopReason: null,
    truncated: false,
    error: null,
    score: null,
    scoredAt: null,
    idempotencyKey: null,
    requestHash: "{}",
    ttlSeconds: 60,
    createdAt: 1,
    updatedAt: 1,
    expiresAt: 60_001,
    ...extra,
  };
}

describe("EpisodeStore", () => {
  it("stores a new episode's absent state and score as SQL NULL and reads JSON columns back", async () => {
    const { db, store: s } = store();
    const { row: inserted, created } = await s.insert(row("ep_1"), OPENING);
    expect(created).toBe(true);
    expect(inserted).toMatchObject({ id: "ep_1", args: { level: 2 }, metadata: { run: "r1" }, state: null, score: null, truncated: false });
    expect(await s.readTurns([{ episodeId: "ep_1", from: 0, to: 5 }])).toEqual([{ turn: 0, message: null, replyMessages: OPENING, sampled: null, createdAt: inserted.createdAt }]);
    const raw = await db.get<{ state: null; score: null }>(sql`select state is null as state, score is null as score from episodes where id = 'ep_1'`);
    expect(raw).toEqual({ state: 1, score: 1 });
    const withState = await s.insert(row("ep_2", { state: { n: 1 } }), OPENING);
    expect((await s.get("ep_2"))?.state).toEqual({ n: 1 });
    expect(withState.row.state).toEqual({ n: 1 });
  });

  it("returns the earlier episode for a repeated idempotency key", async () => {
    const { store: s } = store();
    await s.insert(row("ep_a", { idempotencyKey: "k1" }), OPENING);
    const again = await s.insert(row("ep_b", { idempotencyKey: "k1" }), OPENING);
    expect([again.created, again.row.id]).toEqual([false, "ep_a"]);
    await expect(s.insert(row("ep_a"), OPENING)).rejects.toThrow(/collision/);
  });

  it("commits a step only at the expected turn of an active episode, turn row and head together", async () => {
    const { store: s } = store();
    await s.insert(row("ep_s"), OPENING);
    expect(await s.commitStep(stepWrite("ep_s", 0))).toBe(true);
    expect(await s.commitStep(stepWrite("ep_s", 0, { reply: "other" }))).toBe(false);
    await s.close("ep_s", 3);
    expect(await s.commitStep(stepWrite("ep_s", 1))).toBe(false);
    expect(await s.get("ep_s")).toMatchObject({ turn: 1, status: "closed", state: { n: 1 } });
    expect(await s.turnForRetry("ep_s", 1)).toEqual({ message: { role: "assistant", content: "a0" }, reply: stepWrite("ep_s", 0).reply });
    // The refused writes left no turn row behind.
    expect(await s.turnForRetry("ep_s", 2)).toBeUndefined();
  });

  it("refuses a step past the byte quota without writing its turn", async () => {
    const { store: s } = store();
    await s.insert(row("ep_q", { storedBytes: 90 }), OPENING);
    expect(await s.commitStep(stepWrite("ep_q", 0, { addedBytes: 20, maxEpisodeBytes: 100 }))).toBe(false);
    expect(await s.turnForRetry("ep_q", 1)).toBeUndefined();
    expect(await s.commitStep(stepWrite("ep_q", 0, { addedBytes: 10, maxEpisodeBytes: 100 }))).toBe(true);
    expect((await s.get("ep_q"))?.storedBytes).toBe(100);
  });

  it("stores each step's reply text unchanged, and reads only the head for a step", async () => {
    const { store: s } = store();
    await s.insert(row("ep_r"), OPENING);
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

  it("keeps an expired parent's turns while a live fork's prefix names them, and frees them after", async () => {
    const { db, store: s } = store();
    await s.insert(row("ep_p", { expiresAt: 100 }), OPENING);
    for (let i = 0; i < 4; i++) expect(await s.commitStep(stepWrite("ep_p", i, { expiresAt: 100 }))).toBe(true);
    const forkRow = row("", { parentId: "ep_p", forkTurn: 2, turn: 2, expiresAt: 1_000 });
    expect(await s.insertForks(forkRow, [{ id: "ep_f", idempotencyKey: "fk#0" }], [{ ancestorId: "ep_p", toTurn: 2 }])).toEqual(["ep_f"]);
    // The same key again inserts nothing (the caller reads the earlier rows).
    expect(await s.insertForks(forkRow, [{ id: "ep_g", idempotencyKey: "fk#0" }], [{ ancestorId: "ep_p", toTurn: 2 }])).toEqual([]);
    expect(await s.lineage("ep_f")).toEqual([{ ancestorId: "ep_p", toTurn: 2 }]);
    expect(await s.lineage("ep_g")).toEqual([]);
    expect(await s.reapExpired(200)).toEqual({ expired: 1, deleted: 0 });
    const turnsOf = async (id: string) => (await db.all<{ turn: number }>(sql`select turn from episode_turns where episode_id = ${id} order by turn`)).map((r) => r.turn);
    expect(await turnsOf("ep_p")).toEqual([0, 1, 2]);
    expect(await s.reapExpired(2_000)).toEqual({ expired: 1, deleted: 0 });
    expect(await turnsOf("ep_p")).toEqual([]);
  });
});

describe("EpisodeStore step-head cache", () => {
  it("answers the next step's head from what this store wrote, equal to the row read back", async () => {
    const { db, store: s } = store();
    await s.insert(row("ep_c", { state: { n: 0 } }), OPENING);
    const fresh = new EpisodeStore(db);
    let head = await s.getForStep("ep_c", 0);
    expect(head).toEqual(await fresh.getForStep("ep_c"));
    for (let i = 0; i < 3; i++) {
      expect(await s.commitStep({ ...stepWrite("ep_c", i), before: head })).toBe(true);
      head = await s.getForStep("ep_c", i + 1);
      // What a store that never saw the write reads from the database.
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
    const { db, store: s } = store();
    await s.insert(row("ep_x"), OPENING);
    const other = new EpisodeStore(db); // another process on the same file
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
    // Closing drops it too; a closed episode is read from the row.
    const h2 = await s.getForStep("ep_x", 2);
    expect(await s.commitStep({ ...stepWrite("ep_x", 2), before: h2 })).toBe(true);
    await s.close("ep_x", 5);
    expect(await s.getForStep("ep_x", 3)).toMatchObject({ turn: 3, status: "closed" });
  });
});
