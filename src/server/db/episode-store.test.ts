import { sql } from "drizzle-orm";
import { describe, expect, it, onTestFinished } from "vitest";
import { describeStoreConformance } from "../../../test/conformance/store-conformance.js";
import { episodeRow, OPENING } from "../../../test/support/episode-rows.js";
import { EpisodeStore } from "./episode-store.js";
import { openNodeDatabase } from "./node-sqlite.js";
import { sqliteStores } from "./stores.js";

/** A new in-memory database, closed when the test ends. */
function open() {
  const database = openNodeDatabase(":memory:");
  onTestFinished(() => database.close());
  return database.db;
}

// The store contract shared with PostgreSQL; `b` is a second process on the same file (its own step-head cache).
describeStoreConformance("SQLite", async () => {
  const db = open();
  const turnsOf = async (id: string) => (await db.all<{ turn: number }>(sql`select turn from episode_turns where episode_id = ${id} order by turn`)).map((r) => r.turn);
  return { a: sqliteStores(db), b: sqliteStores(db), turnsOf };
});

describe("EpisodeStore on SQLite", () => {
  it("stores a new episode's absent state and score as SQL NULL", async () => {
    const db = open();
    await new EpisodeStore(db).insert(episodeRow("ep_1"), OPENING);
    const raw = await db.get<{ state: null; score: null }>(sql`select state is null as state, score is null as score from episodes where id = 'ep_1'`);
    expect(raw).toEqual({ state: 1, score: 1 });
  });
});
