import type { BaseSQLiteDatabase } from "drizzle-orm/sqlite-core";
import type * as schema from "./schema.js";

/**
 * A drizzle database over either driver: better-sqlite3 (sync) on Node, D1 (async) on
 * Workers. Every query is awaited, which works for both, so the store has one code path.
 */
export type EdgegymDb = BaseSQLiteDatabase<"sync" | "async", unknown, typeof schema>;

export type SqlValue = string | number | null;

export interface SqlStatement {
  sql: string;
  params: SqlValue[];
}

/**
 * Runs several statements as one atomic unit and returns each one's rows (empty for a
 * statement without RETURNING). D1 has no interactive transactions, so the unit is a
 * list fixed in advance: a later statement cannot branch on an earlier one's result, only
 * guard itself with a condition in SQL.
 */
export interface AtomicRunner {
  run(statements: SqlStatement[]): Promise<Record<string, unknown>[][]>;
}

/** The parts of a better-sqlite3 Database the runner uses (typed here, so this file imports no driver). */
interface SyncClient {
  prepare(sql: string): { reader: boolean; all(...params: SqlValue[]): unknown[]; run(...params: SqlValue[]): unknown };
  transaction<A, T>(fn: (arg: A) => T): { immediate(arg: A): T };
}

/** The parts of a D1 binding the runner uses. */
interface D1Client {
  prepare(sql: string): { bind(...params: SqlValue[]): unknown };
  batch(statements: unknown[]): Promise<{ results?: unknown[] }[]>;
}

function isD1(client: unknown): client is D1Client {
  return typeof (client as { batch?: unknown }).batch === "function";
}

/**
 * The atomic runner for a database made by either driver: on D1 one `batch` (a single
 * implicit transaction), on better-sqlite3 one synchronous transaction over statements
 * prepared once and reused (a step's two statements would otherwise be re-prepared on
 * every step).
 */
export function atomicRunner(db: EdgegymDb): AtomicRunner {
  const client = (db as unknown as { $client: unknown }).$client;
  if (isD1(client)) {
    return {
      async run(statements) {
        const results = await client.batch(statements.map((s) => client.prepare(s.sql).bind(...s.params)));
        return results.map((r) => (r.results ?? []) as Record<string, unknown>[]);
      },
    };
  }
  const sync = client as SyncClient;
  const cache = new Map<string, ReturnType<SyncClient["prepare"]>>();
  const prepared = (sql: string) => {
    let stmt = cache.get(sql);
    if (!stmt) {
      stmt = sync.prepare(sql);
      // Bounded: the store's SQL is a fixed set of texts (one per shape); a runaway would be a bug.
      if (cache.size < 256) cache.set(sql, stmt);
    }
    return stmt;
  };
  // One transaction function for every call (better-sqlite3 builds its wrappers per
  // `transaction()` call; a step would otherwise pay for five closures each time).
  const transaction = sync.transaction((statements: SqlStatement[]) =>
    statements.map((s) => {
      const stmt = prepared(s.sql);
      if (stmt.reader) return stmt.all(...s.params) as Record<string, unknown>[];
      stmt.run(...s.params);
      return [];
    }),
  );
  return {
    run(statements) {
      try {
        // IMMEDIATE takes the write lock up front: with several processes on one file, a
        // deferred transaction that reads then writes can fail to upgrade its lock (SQLITE_BUSY
        // without waiting), where an immediate one queues on the busy timeout.
        return Promise.resolve(transaction.immediate(statements));
      } catch (err) {
        return Promise.reject(err as Error);
      }
    },
  };
}
