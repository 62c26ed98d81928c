import { getTableColumns, sql, type SQL, type Table } from "drizzle-orm";
import type { EdgegymDb } from "./database.js";

/**
 * What the stores' shared code (episode-lifecycle.ts, reaper.ts, eval-store.ts) needs of
 * an engine: run a statement written once with drizzle's `sql` (each engine renders its
 * own placeholders), and the few pieces SQLite and PostgreSQL spell differently. The SQL
 * text itself is the same on both: plain table and column names, standard syntax.
 */
export interface SqlEngine {
  /** The statement's rows as the driver gives them (column names as keys, no decoding). */
  rows<T extends Record<string, unknown>>(statement: SQL): Promise<T[]>;
  run(statement: SQL): Promise<void>;
  /**
   * Ids bound as one parameter, as the body of a subquery (`SELECT …`) for `IN (…)`: one
   * parameter whatever their number (D1 binds at most 100).
   */
  idList(ids: readonly string[]): SQL;
  /** Ends a subquery that picks rows to change: PostgreSQL locks them and skips those a step holds (FOR UPDATE SKIP LOCKED); SQLite adds nothing. */
  readonly pickRows: SQL;
  /**
   * Runs `work` as one unit that one process at a time runs. PostgreSQL: one transaction
   * under a transaction-scoped advisory lock, null (work not run) while another process
   * holds it. SQLite: the statements in order as they are (each is atomic; D1 has no
   * transaction that spans statements chosen one after another).
   */
  exclusive<T>(lock: number, work: (engine: SqlEngine) => Promise<T>): Promise<T | null>;
  /** Text as this engine can store it (PostgreSQL text cannot hold U+0000: pg/text.ts). */
  text(value: string | null): string | null;
}

/** The SQLite engine (better-sqlite3, D1, a Durable Object's storage) through drizzle's raw queries. */
export function sqliteEngine(db: EdgegymDb): SqlEngine {
  const engine: SqlEngine = {
    rows: async <T extends Record<string, unknown>>(statement: SQL) => (await db.all<T>(statement)) as T[],
    run: async (statement) => {
      await db.run(statement);
    },
    idList: (ids) => sql`SELECT value FROM json_each(${JSON.stringify(ids)})`,
    pickRows: sql``,
    exclusive: (_lock, work) => work(engine),
    text: (value) => value,
  };
  return engine;
}

/**
 * A raw row (SQL column names) as drizzle reads it through `table`: each column's own
 * decoder (JSON text parsed, 0/1 to boolean, int8 to number), as drizzle's result mapping
 * applies it, so a raw query answers the same row a query builder would.
 */
export function decodeRow<T extends Table>(table: T, raw: Record<string, unknown>): T["$inferSelect"] {
  const out: Record<string, unknown> = {};
  for (const [key, column] of Object.entries(getTableColumns(table))) {
    const value = raw[column.name];
    out[key] = value === null || value === undefined ? null : column.mapFromDriverValue(value);
  }
  return out as T["$inferSelect"];
}

/**
 * A row's `(columns) VALUES (values)` for an INSERT, each value encoded by its column as a
 * query builder would (JSON to text, booleans to 0/1 on SQLite). Columns the row leaves
 * undefined are left out, so the table's defaults apply.
 */
export function encodeRow<T extends Table>(table: T, row: T["$inferInsert"]): SQL {
  const given = Object.entries(getTableColumns(table)).filter(([key]) => (row as Record<string, unknown>)[key] !== undefined);
  const values = given.map(([key, column]) => {
    const value = (row as Record<string, unknown>)[key];
    return sql`${value === null ? null : column.mapToDriverValue(value)}`;
  });
  return sql`(${sql.join(
    given.map(([, column]) => sql.identifier(column.name)),
    sql`, `,
  )}) VALUES (${sql.join(values, sql`, `)})`;
}
