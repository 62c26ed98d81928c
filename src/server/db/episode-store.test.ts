import { sql } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { EpisodeStore } from "./episode-store.js";
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
    messages: [{ role: "user", content: "hi" }],
    promptLength: 1,
    replies: [],
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
    const { row: inserted, created } = await s.insert(row("ep_1"));
    expect(created).toBe(true);
    expect(inserted).toMatchObject({ id: "ep_1", args: { level: 2 }, metadata: { run: "r1" }, state: null, score: null, messages: [{ role: "user", content: "hi" }], truncated: false });
    const raw = await db.get<{ state: null; score: null }>(sql`select state is null as state, score is null as score from episodes where id = 'ep_1'`);
    expect(raw).toEqual({ state: 1, score: 1 });
    const withState = await s.insert(row("ep_2", { state: { n: 1 } }));
    expect((await s.get("ep_2"))?.state).toEqual({ n: 1 });
    expect(withState.row.state).toEqual({ n: 1 });
  });

  it("returns the earlier episode for a repeated idempotency key", async () => {
    const { store: s } = store();
    await s.insert(row("ep_a", { idempotencyKey: "k1" }));
    const again = await s.insert(row("ep_b", { idempotencyKey: "k1" }));
    expect([again.created, again.row.id]).toEqual([false, "ep_a"]);
    await expect(s.insert(row("ep_a"))).rejects.toThrow(/collision/);
  });

  it("commits a step only at the expected turn of an active episode", async () => {
    const { store: s } = store();
    await s.insert(row("ep_s"));
    const step = { id: "ep_s", turn: 1, state: { n: 1 }, messages: [], reply: "{}", status: "active" as const, stopReason: null, truncated: false, error: null, now: 2, expiresAt: 60_002, addedBytes: 10, maxEpisodeBytes: 1_000_000 };
    expect(await s.commitStep({ ...step, expectedTurn: 0 })).toBe(true);
    expect(await s.commitStep({ ...step, expectedTurn: 0 })).toBe(false);
    await s.close("ep_s", 3);
    expect(await s.commitStep({ ...step, turn: 2, expectedTurn: 1 })).toBe(false);
    expect(await s.get("ep_s")).toMatchObject({ turn: 1, status: "closed", replies: ["{}"] });
  });

  it("appends each step's reply text unchanged, and leaves replies out of the step's read", async () => {
    const { store: s } = store();
    await s.insert(row("ep_r"));
    // Quotes, escapes, non-ASCII and a lone surrogate's escape: stored and read back byte for byte.
    const bodies = ['{"turn":1,"messages":[{"role":"user","content":"a \\"quoted\\" line\\n"}]}', '{"turn":2,"content":"é 😀 \\ud800"}', "{}"];
    for (const [i, reply] of bodies.entries()) {
      const step = { id: "ep_r", expectedTurn: i, turn: i + 1, state: { n: i }, messages: [{ role: "user", content: `m${i}` }], reply, status: "active" as const, stopReason: null, truncated: false, error: null, now: 2, expiresAt: 60_002, addedBytes: 10, maxEpisodeBytes: 1_000_000 };
      expect(await s.commitStep(step)).toBe(true);
    }
    expect((await s.get("ep_r"))?.replies).toEqual(bodies);
    const forStep = await s.getForStep("ep_r");
    expect(forStep).toMatchObject({ id: "ep_r", turn: 3, state: { n: 2 }, messages: [{ role: "user", content: "m2" }] });
    expect(forStep).not.toHaveProperty("replies");
  });
});
