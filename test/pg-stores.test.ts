import { readFileSync } from "node:fs";
import pg from "pg";
import { sql } from "drizzle-orm";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { openPostgres, type PostgresDatabase } from "../src/server/db/pg/open.js";
import type { PgEpisodeStore } from "../src/server/db/pg/episode-store.js";
import { describeStoreConformance } from "./conformance/store-conformance.js";
import { episodeRow as row, OPENING, stepWrite } from "./support/episode-rows.js";
import { postgresMissing, startPostgres, type TestPostgres } from "./support/postgres.js";

const PG_MIGRATIONS = (JSON.parse(readFileSync("drizzle-pg/meta/_journal.json", "utf8")) as { entries: unknown[] }).entries.length;

// The PostgreSQL stores on a real server: the store contract shared with SQLite
// (test/conformance/store-conformance.ts), plus what only PostgreSQL has to show: one
// migration run by two processes, int8 seeds, NULs in text, and races between two
// connection pools (two processes).
const missing = postgresMissing();

/** One episode's own turn rows. */
const turnsIn = async (database: PostgresDatabase, id: string) =>
  (await database.db.execute<{ turn: number }>(sql`select turn from episode_turns where episode_id = ${id} order by turn`)).rows.map((r) => r.turn);

describe.skipIf(missing !== undefined)(`PostgreSQL stores${missing ? ` (skipped: ${missing})` : ""}`, () => {
  let postgres: TestPostgres;
  let url: string;
  // Two pools on one database: two server processes.
  let a: PostgresDatabase;
  let b: PostgresDatabase;
  let ep: PgEpisodeStore;

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

  // The store contract shared with SQLite: each test on a new database, through two pools.
  const fresh: PostgresDatabase[] = [];
  let databases = 0;
  afterEach(async () => {
    await Promise.all(fresh.splice(0).map((d) => d.close()));
  });
  describeStoreConformance("PostgreSQL", async () => {
    const dbUrl = await postgres.createDatabase(`conformance_${++databases}`);
    const [one, two] = await Promise.all([openPostgres(dbUrl), openPostgres(dbUrl)]);
    fresh.push(one, two);
    return { a: one.stores, b: two.stores, turnsOf: (id) => turnsIn(one, id) };
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
    expect(await turnsIn(a, "ep_race")).toEqual([0, 1]);
    const winner = results.findIndex(Boolean);
    expect((await ep.turnForRetry("ep_race", 1))?.reply).toBe(`r${winner}`);
    expect(await ep.commitStep(stepWrite("ep_race", 1, { addedBytes: 100, maxEpisodeBytes: 50 }))).toBe(false);
    expect(await turnsIn(a, "ep_race")).toEqual([0, 1]);
  });

  it("creates one episode for an idempotency key raced from two processes", async () => {
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).stores.episodes.insert(row(`ep_k${i}`, { idempotencyKey: "key-1" }), OPENING)),
    );
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(results.map((r) => r.row.id)).size).toBe(1);
  });

});
