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
  /**
   * Answer `[{ changes: n }]`, the number of rows the statement changed, instead of its
   * rows. For a guarded write that only needs to know whether it applied: `RETURNING`
   * makes SQLite collect the returned rows in an ephemeral table first (the step's head
   * UPDATE cost 1.45x with `RETURNING id` than without, in a statement-level benchmark).
   */
  count?: boolean;
}

/** What a statement with `count` answers. */
export type ChangeCount = [{ changes: number }];

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
  prepare(sql: string): { reader: boolean; all(...params: SqlValue[]): unknown[]; run(...params: SqlValue[]): { changes: number } };
  transaction<A, T>(fn: (arg: A) => T): { immediate(arg: A): T };
  readonly inTransaction: boolean;
}

/** The parts of a D1 binding the runner uses. */
interface D1Client {
  prepare(sql: string): { bind(...params: SqlValue[]): unknown };
  batch(statements: unknown[]): Promise<{ results?: unknown[]; meta?: { changes?: number } }[]>;
}

function isD1(client: unknown): client is D1Client {
  return typeof (client as { batch?: unknown }).batch === "function";
}

/** The parts of a Durable Object's storage the runner uses (drizzle's durable-sqlite driver wraps it). */
interface DurableClient {
  sql: { exec(sql: string, ...params: SqlValue[]): { toArray(): unknown[] } };
  transactionSync<T>(fn: () => T): T;
}

function isDurable(client: unknown): client is DurableClient {
  return typeof (client as { transactionSync?: unknown }).transactionSync === "function";
}

/**
 * The atomic runner for a database made by either driver: on D1 one `batch` (a single
 * implicit transaction), on better-sqlite3 a group commit (below) over statements
 * prepared once and reused (a step's two statements would otherwise be re-prepared on
 * every step). In a Durable Object, one `transactionSync`: the object's SQLite is local
 * and synchronous, and its requests are already serialized, so there is nothing to group.
 */
export function atomicRunner(db: EdgegymDb): AtomicRunner {
  const client = (db as unknown as { $client: unknown }).$client;
  if (isDurable(client)) {
    return {
      // async: a failed statement rolls the transaction back and rejects, as on the other drivers.
      async run(statements) {
        return client.transactionSync(() =>
          statements.map((s) => {
            const rows = client.sql.exec(s.sql, ...s.params).toArray() as Record<string, unknown>[];
            // The cursor has no changes count of its own (rowsWritten counts index rows too): ask SQLite.
            return s.count ? (client.sql.exec("SELECT changes() AS changes").toArray() as ChangeCount) : rows;
          }),
        );
      },
    };
  }
  if (isD1(client)) {
    return {
      async run(statements) {
        const results = await client.batch(statements.map((s) => client.prepare(s.sql).bind(...s.params)));
        return results.map((r, i) => (statements[i]?.count ? [{ changes: r.meta?.changes ?? 0 }] : ((r.results ?? []) as Record<string, unknown>[])));
      },
    };
  }
  return groupCommitRunner(client as SyncClient);
}

/** One caller's statements waiting for the group's transaction, and how to answer it. */
interface PendingUnit {
  statements: SqlStatement[];
  resolve(rows: Record<string, unknown>[][]): void;
  reject(err: unknown): void;
}

/** A unit's own error, carried out of the group's transaction so that the group is rolled back. */
class UnitFailed extends Error {
  constructor(readonly cause: unknown) {
    super("a unit of the group failed");
  }
}

/** Units per transaction: bounds how long one commit holds the event loop and the write lock. */
const MAX_GROUP = 256;

/**
 * Group commit on better-sqlite3: every unit asked for while the event loop handles one
 * round of I/O (all the steps whose requests arrived together) is written in ONE
 * `BEGIN IMMEDIATE … COMMIT`, run on `setImmediate`, i.e. right after that round. A
 * commit costs SQLite a WAL append of every page it touched plus the lock and header
 * work, so sixty-four steps that touch the same table and index pages pay for them once
 * instead of sixty-four times.
 *
 * Units are independent by construction, since every write guards itself in SQL (a
 * conditional UPDATE / INSERT … WHERE EXISTS on the head): two steps of one episode in
 * the same group are applied in order and the second finds the head moved, exactly as it
 * would in its own transaction. A caller's promise resolves only after COMMIT returned,
 * so an answered step is as durable as the `synchronous` setting makes any commit
 * (docs/performance.md).
 *
 * A unit's statements run bare inside the group's transaction, with no SAVEPOINT of its
 * own: a SAVEPOINT and its RELEASE are two more statements per unit (without them, 0.97x
 * the server CPU per persisted step, in-process A/B at 64 concurrent). When a unit
 * throws (a bug or a constraint the SQL does not guard; never a guard that finds the
 * head moved, which is just no rows), the whole group is rolled back and its units run
 * again one transaction each, in the same order: the unit that threw fails alone, the
 * others commit, as if each had been alone all along. When BEGIN or COMMIT itself fails
 * (busy past the timeout, disk full) every unit of the group is rejected and nothing of
 * it was written.
 */
function groupCommitRunner(sync: SyncClient): AtomicRunner {
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
  const apply = (statements: SqlStatement[]): Record<string, unknown>[][] =>
    statements.map((s) => {
      const stmt = prepared(s.sql);
      if (stmt.reader) return stmt.all(...s.params) as Record<string, unknown>[];
      const { changes } = stmt.run(...s.params);
      return s.count ? [{ changes }] : [];
    });
  // Transaction functions are built once (better-sqlite3 builds its wrappers per
  // `transaction()` call; a step would otherwise pay for five closures each time).
  const alone = sync.transaction(apply);
  const group = sync.transaction((units: PendingUnit[]) =>
    units.map((u) => {
      try {
        return apply(u.statements);
      } catch (error) {
        // Thrown out of `group`, which rolls the whole transaction back.
        throw new UnitFailed(error);
      }
    }),
  );
  let queue: PendingUnit[] = [];
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    const units = queue.length > MAX_GROUP ? queue.splice(0, MAX_GROUP) : queue;
    if (units === queue) queue = [];
    if (queue.length > 0) schedule();
    let rows: Record<string, unknown>[][][];
    try {
      // IMMEDIATE takes the write lock up front: with several processes on one file, a
      // deferred transaction that reads then writes can fail to upgrade its lock (SQLITE_BUSY
      // without waiting), where an immediate one queues on the busy timeout.
      rows = group.immediate(units);
    } catch (err) {
      if (err instanceof UnitFailed) oneByOne(units);
      else for (const u of units) u.reject(err);
      return;
    }
    units.forEach((u, i) => u.resolve(rows[i] as Record<string, unknown>[][]));
  };
  const oneByOne = (units: PendingUnit[]): void => {
    for (const u of units) {
      try {
        u.resolve(alone.immediate(u.statements));
      } catch (error) {
        u.reject(error);
      }
    }
  };
  const schedule = (): void => {
    scheduled = true;
    setImmediate(flush);
  };
  return {
    run(statements) {
      return new Promise((resolve, reject) => {
        queue.push({ statements, resolve, reject });
        if (!scheduled) schedule();
      });
    },
  };
}
