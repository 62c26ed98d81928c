import { sql } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { atomicRunner } from "./database.js";
import { openNodeDatabase, type NodeDatabase } from "./node-sqlite.js";

const opened: NodeDatabase[] = [];
afterEach(() => {
  while (opened.length) opened.pop()?.close();
});

function open() {
  const database = openNodeDatabase(":memory:");
  opened.push(database);
  const client = (database.db as unknown as { $client: { prepare(s: string): { run(): unknown } } }).$client;
  client.prepare("CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)").run();
  return { db: database.db, runner: atomicRunner(database.db) };
}

describe("group commit on better-sqlite3", () => {
  it("writes units asked for together in one transaction, each unit atomic and failing alone", async () => {
    const { db, runner } = open();
    const results = await Promise.allSettled([
      runner.run([{ sql: "INSERT INTO t (k, v) VALUES (?, ?)", params: ["a", 1] }]),
      // Two statements: the second fails (NOT NULL), so the first of this unit must be rolled back too.
      runner.run([
        { sql: "INSERT INTO t (k, v) VALUES (?, ?)", params: ["b", 2] },
        { sql: "INSERT INTO t (k, v) VALUES (?, ?)", params: ["c", null] },
      ]),
      // A conditional write that finds its guard false: not an error, just no rows.
      runner.run([{ sql: "UPDATE t SET v = v + 1 WHERE k = ? AND v = ? RETURNING k", params: ["a", 5] }]),
      runner.run([{ sql: "UPDATE t SET v = v + 1 WHERE k = ? AND v = ? RETURNING k", params: ["a", 1] }]),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled", "fulfilled"]);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ code: "SQLITE_CONSTRAINT_NOTNULL" });
    expect((results[2] as PromiseFulfilledResult<unknown>).value).toEqual([[]]);
    expect((results[3] as PromiseFulfilledResult<unknown>).value).toEqual([[{ k: "a" }]]);
    expect(await db.all(sql`select k, v from t order by k`)).toEqual([{ k: "a", v: 2 }]);
    // Nothing left open: a later unit gets its own transaction.
    expect(await runner.run([{ sql: "INSERT INTO t (k, v) VALUES (?, ?)", params: ["d", 4] }])).toEqual([[]]);
  });

  it("answers a counted statement with the rows it changed, not its rows", async () => {
    const { runner } = open();
    await runner.run([{ sql: "INSERT INTO t (k, v) VALUES (?, ?), (?, ?)", params: ["a", 1, "b", 1] }]);
    const [applied, missed, both] = await Promise.all([
      runner.run([{ sql: "UPDATE OR FAIL t SET v = v + 1 WHERE k = ? AND v = ?", params: ["a", 1], count: true }]),
      // The same guard again, in the same group: the head moved, so nothing changes.
      runner.run([{ sql: "UPDATE OR FAIL t SET v = v + 1 WHERE k = ? AND v = ?", params: ["a", 1], count: true }]),
      runner.run([{ sql: "UPDATE t SET v = 9", params: [], count: true }]),
    ]);
    expect(applied).toEqual([[{ changes: 1 }]]);
    expect(missed).toEqual([[{ changes: 0 }]]);
    expect(both).toEqual([[{ changes: 2 }]]);
  });

  it("rolls back a unit whose later statement fails, after an earlier OR FAIL write of it succeeded", async () => {
    const { db, runner } = open();
    const results = await Promise.allSettled([
      runner.run([
        { sql: "INSERT OR FAIL INTO t (k, v) VALUES (?, ?)", params: ["a", 1] },
        { sql: "UPDATE OR FAIL t SET v = NULL WHERE k = ?", params: ["a"], count: true },
      ]),
      runner.run([{ sql: "INSERT OR FAIL INTO t (k, v) VALUES (?, ?)", params: ["b", 2] }]),
    ]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "fulfilled"]);
    expect(await db.all(sql`select k, v from t order by k`)).toEqual([{ k: "b", v: 2 }]);
  });

  it("answers a unit only after the group's COMMIT", async () => {
    const { db, runner } = open();
    const pending = runner.run([{ sql: "INSERT INTO t (k, v) VALUES (?, ?)", params: ["x", 1] }]);
    // Not yet run: the group is written after this round of the event loop.
    expect(await db.all(sql`select k from t`)).toEqual([]);
    await pending;
    const client = (db as unknown as { $client: { inTransaction: boolean } }).$client;
    expect(client.inTransaction).toBe(false);
    expect(await db.all(sql`select k from t`)).toEqual([{ k: "x" }]);
  });

  it("splits a long queue into bounded groups and still answers every unit", async () => {
    const { db, runner } = open();
    const units = Array.from({ length: 600 }, (_, i) => runner.run([{ sql: "INSERT INTO t (k, v) VALUES (?, ?)", params: [`k${i}`, i] }]));
    await Promise.all(units);
    expect(await db.all(sql`select count(*) as n from t`)).toEqual([{ n: 600 }]);
  });
});

describe("EDGEGYM_SQLITE_SYNCHRONOUS", () => {
  it("takes NORMAL or FULL (default NORMAL) and sets the pragma; anything else is refused", async () => {
    const { parseSqliteSynchronous } = await import("./node-sqlite.js");
    expect(parseSqliteSynchronous(undefined)).toBe("NORMAL");
    expect(parseSqliteSynchronous("full")).toBe("FULL");
    expect(() => parseSqliteSynchronous("OFF")).toThrow(/NORMAL or FULL/);
    const database = openNodeDatabase(":memory:", { synchronous: "FULL" });
    opened.push(database);
    const client = (database.db as unknown as { $client: { pragma(s: string, o: { simple: true }): unknown } }).$client;
    expect(client.pragma("synchronous", { simple: true })).toBe(2);
  });
});
