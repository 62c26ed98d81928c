import { readFileSync } from "node:fs";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StepWrite } from "../src/server/db/episode-store.js";
import { openPostgres, type PostgresDatabase } from "../src/server/db/pg/open.js";
import type { PgEpisodeStore } from "../src/server/db/pg/episode-store.js";
import type { NewEpisodeRow } from "../src/server/db/schema.js";
import type { EvalRollout } from "../src/protocol/index.js";
import { postgresMissing, startPostgres, type TestPostgres } from "./support/postgres.js";

const PG_MIGRATIONS = (JSON.parse(readFileSync("drizzle-pg/meta/_journal.json", "utf8")) as { entries: unknown[] }).entries.length;

// The PostgreSQL stores' own guarantees, on a real server: what src/server/db/episode-store.test.ts
// checks of the SQLite store, plus races between two connection pools (two processes).
const missing = postgresMissing();
const OPENING = [{ role: "user", content: "hi" }];

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

describe.skipIf(missing !== undefined)(`PostgreSQL stores${missing ? ` (skipped: ${missing})` : ""}`, () => {
  let postgres: TestPostgres;
  let url: string;
  // Two pools on one database: two server processes.
  let a: PostgresDatabase;
  let b: PostgresDatabase;
  let ep: PgEpisodeStore;
  const turnsOf = async (id: string) => (await a.db.execute<{ turn: number }>(`select turn from episode_turns where episode_id = '${id}' order by turn`)).rows.map((r) => r.turn);

  beforeAll(async () => {
    postgres = await startPostgres({ settings: { fsync: "off" } });
    url = await postgres.createDatabase("stores");
    [a, b] = await Promise.all([openPostgres(url), openPostgres(url)]);
    ep = a.stores.episodes as PgEpisodeStore;
  }, 60_000);
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await postgres?.stop();
  });

  it("migrates once when two processes open a new database together", async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query("SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations");
      // Each migration of ./drizzle-pg once, though two processes ran the migrator.
      expect(rows[0].n).toBe(PG_MIGRATIONS);
    } finally {
      await client.end();
    }
  });

  it("reads back what it stored: JSON columns, SQL NULLs, the largest seed and index", async () => {
    const { row: inserted, created } = await ep.insert(row("ep_1", { seed: 2 ** 32 - 1, taskIndex: 2 ** 32 - 1 }), OPENING);
    expect(created).toBe(true);
    const read = await b.stores.episodes.get("ep_1");
    expect(read).toEqual(inserted);
    expect(read).toMatchObject({ args: { level: 2 }, state: null, score: null, truncated: false, seed: 2 ** 32 - 1, templateChanges: [], storedBytes: 0, tenant: "public" });
    expect(await ep.readTurns([{ episodeId: "ep_1", from: 0, to: 5 }])).toEqual([{ turn: 0, message: null, replyMessages: OPENING, sampled: null, createdAt: 1 }]);
  });

  it("stores a reply byte for byte, lone surrogates and NULs included, and reads the transcript", async () => {
    await ep.insert(row("ep_r"), OPENING);
    const bodies = [
      '{"turn":1,"messages":[{"role":"user","content":"a \\"quoted\\" line\\n","z":1,"a":2}]}',
      '{"turn":2,"messages":[{"role":"user","content":"é 😀 \\ud800 \\u0000"}]}',
      '{"turn":3,  "spaced": true}',
    ];
    for (const [i, reply] of bodies.entries()) expect(await ep.commitStep(stepWrite("ep_r", i, { reply, error: i === 1 ? "nul \u0000 here" : null }))).toBe(true);
    for (const [i, reply] of bodies.entries()) expect((await b.stores.episodes.turnForRetry("ep_r", i + 1))?.reply).toBe(reply);
    const turns = await b.stores.episodes.readTurns([{ episodeId: "ep_r", from: 1, to: 3 }]);
    expect(turns.map((t) => t.replyMessages)).toEqual([[{ role: "user", content: 'a "quoted" line\n', z: 1, a: 2 }], [{ role: "user", content: "é 😀 \ud800 \u0000" }], []]);
    // Key order as the reply held it (jsonb would sort keys).
    expect(Object.keys((turns[0]?.replyMessages[0] ?? {}) as object)).toEqual(["role", "content", "z", "a"]);
  });

  it("applies one of many racing steps from two processes, and refuses a step past the byte quota", async () => {
    await ep.insert(row("ep_race"), OPENING);
    const stores = [a.stores.episodes, b.stores.episodes];
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => stores[i % 2]?.commitStep(stepWrite("ep_race", 0, { reply: `r${i}` }))));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await turnsOf("ep_race")).toEqual([0, 1]);
    const winner = results.findIndex(Boolean);
    expect((await ep.turnForRetry("ep_race", 1))?.reply).toBe(`r${winner}`);
    expect(await ep.commitStep(stepWrite("ep_race", 1, { addedBytes: 100, maxEpisodeBytes: 50 }))).toBe(false);
    expect(await turnsOf("ep_race")).toEqual([0, 1]);
  });

  it("creates one episode for an idempotency key raced from two processes", async () => {
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).stores.episodes.insert(row(`ep_k${i}`, { idempotencyKey: "key-1" }), OPENING)),
    );
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.row.id)).size).toBe(1);
  });

  it("answers a stale cached head only with a lost write", async () => {
    await ep.insert(row("ep_x"), OPENING);
    const head = await ep.getForStep("ep_x", 0);
    expect(await ep.commitStep({ ...stepWrite("ep_x", 0), before: head })).toBe(true);
    expect(await b.stores.episodes.commitStep(stepWrite("ep_x", 1, { reply: "theirs" }))).toBe(true);
    const stale = await ep.getForStep("ep_x", 1);
    expect(stale?.turn).toBe(1);
    expect(await ep.commitStep({ ...stepWrite("ep_x", 1, { reply: "ours" }), before: stale })).toBe(false);
    expect((await ep.getForStep("ep_x", 1))?.turn).toBe(2);
    expect((await ep.turnForRetry("ep_x", 2))?.reply).toBe("theirs");
    // The cached head equals the row as another process reads it.
    const h2 = await ep.getForStep("ep_x", 2);
    expect(await ep.commitStep({ ...stepWrite("ep_x", 2), before: h2 })).toBe(true);
    expect(await ep.getForStep("ep_x", 3)).toEqual(await b.stores.episodes.getForStep("ep_x"));
  });

  it("keeps an expired parent's turns while a live fork names them; two reapers at once do not collide", async () => {
    await ep.insert(row("ep_p", { expiresAt: 100 }), OPENING);
    for (let i = 0; i < 4; i++) expect(await ep.commitStep(stepWrite("ep_p", i, { expiresAt: 100 }))).toBe(true);
    const forkRow = row("", { parentId: "ep_p", forkTurn: 2, turn: 2, expiresAt: 1_000 });
    expect(await ep.insertForks(forkRow, [{ id: "ep_f", idempotencyKey: "fk#0" }], [{ ancestorId: "ep_p", toTurn: 2 }])).toEqual(["ep_f"]);
    expect(await ep.insertForks(forkRow, [{ id: "ep_g", idempotencyKey: "fk#0" }], [{ ancestorId: "ep_p", toTurn: 2 }])).toEqual([]);
    expect(await ep.lineage("ep_f")).toEqual([{ ancestorId: "ep_p", toTurn: 2 }]);
    // Reaping at 200 expires ep_p (and ep_1.. stay: they expire at 60,001).
    const both = await Promise.all([a.stores.episodes.reapExpired(200), b.stores.episodes.reapExpired(200)]);
    expect(both.reduce((n, r) => n + r.expired, 0)).toBe(1);
    expect(await turnsOf("ep_p")).toEqual([0, 1, 2]);
    expect(await ep.reapExpired(2_000)).toEqual({ expired: 1, deleted: 0 });
    expect(await turnsOf("ep_p")).toEqual([]);
    expect((await ep.get("ep_p"))?.status).toBe("expired");
  });

  it("eval jobs: one process holds a lease, a rollout is stored once, counts are numbers", async () => {
    const now = 1_000;
    await a.stores.evals.insertJob({
      id: "ev_1", envId: "e", envVersion: "1", model: "m", status: "queued", request: { n: 1 }, split: "eval",
      numExamples: 2, totalRollouts: 2, summary: null, error: null, cancelRequested: false, leaseOwner: null, leaseExpiresAt: null,
      runMs: 0, createdAt: now, updatedAt: now, startedAt: null, finishedAt: null, tenant: "public",
    });
    const claims = await Promise.all([a.stores.evals.claim("ev_1", "proc_a", now, 1_000), b.stores.evals.claim("ev_1", "proc_b", now, 1_000)]);
    expect(claims.filter((c) => c !== null)).toHaveLength(1);
    const holder = claims[0] ? "proc_a" : "proc_b";
    expect(await a.stores.evals.countLive("public")).toBe(1);
    const rollout = { example_id: 0, rollout_index: 0, reward: 0.5 } as unknown as EvalRollout;
    await Promise.all([a.stores.evals.insertRollout("ev_1", rollout, now), b.stores.evals.insertRollout("ev_1", rollout, now)]);
    expect(await a.stores.evals.progress("ev_1")).toEqual({ done: 1, errors: 0, meanReward: 0.5 });
    // The lease lapses: the other process takes the job over.
    const other = holder === "proc_a" ? "proc_b" : "proc_a";
    expect(await b.stores.evals.claim("ev_1", other, now + 500, 1_000)).toBeNull();
    expect((await b.stores.evals.claim("ev_1", other, now + 1_500, 1_000))?.leaseOwner).toBe(other);
    expect(await a.stores.evals.finish("ev_1", holder, { status: "completed", summary: null, error: null, now: now + 2_000, runMs: 10 })).toBe(false);
    expect(await a.stores.evals.finish("ev_1", other, { status: "completed", summary: { ok: true }, error: null, now: now + 2_000, runMs: 10.4 })).toBe(true);
    expect(await a.stores.evals.getJob("ev_1")).toMatchObject({ status: "completed", summary: { ok: true }, runMs: 10, leaseOwner: null });
    expect(await a.stores.evals.deleteEnded("ev_1")).toEqual({ rollouts: 1 });
    expect(await a.stores.evals.getJob("ev_1")).toBeUndefined();
  });
});
