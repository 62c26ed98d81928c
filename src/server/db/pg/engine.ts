import { sql, type SQL } from "drizzle-orm";
import type { SqlEngine } from "../sql-engine.js";
import type { PgDb } from "./open.js";
import { pgText } from "./text.js";

/** Either the pool's database or one transaction on it: both run raw statements the same way. */
type PgRunner = Pick<PgDb, "execute">;

/** The PostgreSQL engine for the stores' shared code (../sql-engine.ts says what each piece is for). */
export function pgEngine(db: PgDb): SqlEngine {
  return withRunner(db, db);
}

function withRunner(db: PgDb, runner: PgRunner): SqlEngine {
  return {
    rows: async <T extends Record<string, unknown>>(statement: SQL) => (await runner.execute(statement)).rows as T[],
    run: async (statement) => {
      await runner.execute(statement);
    },
    // One text[] parameter (sql.param: a bare array would be spread into one parameter per id).
    idList: (ids) => sql`SELECT unnest(${sql.param(ids)}::text[])`,
    pickRows: sql`FOR UPDATE SKIP LOCKED`,
    exclusive: (lock, work) =>
      db.transaction(async (tx) => {
        const got = await tx.execute<{ got: boolean }>(sql`SELECT pg_try_advisory_xact_lock(${lock}) AS got`);
        return got.rows[0]?.got ? work(withRunner(db, tx)) : null;
      }),
    text: pgText,
  };
}
