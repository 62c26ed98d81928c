import { drizzle, type NodePgDatabase } from "drizzle-orm/node-postgres";
import { migrate } from "drizzle-orm/node-postgres/migrator";
import { fileURLToPath } from "node:url";
import pg from "pg";
import type { Stores } from "../stores.js";
import { PgEpisodeStore } from "./episode-store.js";
import { pgEvalStore } from "./eval-store.js";
import * as schema from "./schema.js";

/** The PostgreSQL engine's checked-in migrations (drizzle-kit, drizzle.pg.config.ts). */
export const PG_MIGRATIONS_DIR = fileURLToPath(new URL("../../../../drizzle-pg", import.meta.url));

export type PgDb = NodePgDatabase<typeof schema>;

/** Key of the advisory lock that serializes migrations between processes starting together. */
const MIGRATION_LOCK = 0x65646765; // "edge"

export interface PostgresDatabase {
  db: PgDb;
  stores: Stores;
  close(): Promise<void>;
}

export interface OpenPostgresOptions {
  /** Connections this process keeps open (node-postgres pool size). */
  poolSize?: number;
}

/**
 * Connects to PostgreSQL (node-postgres pool), applies pending migrations, and returns
 * both stores on it. Several processes may start together on one new database: each
 * migrates under one session advisory lock, so the second waits and then finds every
 * migration applied, where a bare migrate would race on CREATE TABLE.
 */
export async function openPostgres(url: string, options: OpenPostgresOptions = {}): Promise<PostgresDatabase> {
  const pool = new pg.Pool({ connectionString: url, max: options.poolSize ?? 10, application_name: "edgegym" });
  // An idle client's connection dropping (server restart) must not crash the process: the pool replaces it.
  pool.on("error", (err) => console.error("postgres pool:", err.message));
  try {
    const client = await pool.connect();
    try {
      await client.query("SELECT pg_advisory_lock($1)", [MIGRATION_LOCK]);
      try {
        await migrate(drizzle(client, { schema }), { migrationsFolder: PG_MIGRATIONS_DIR });
      } finally {
        await client.query("SELECT pg_advisory_unlock($1)", [MIGRATION_LOCK]);
      }
    } finally {
      client.release();
    }
  } catch (err) {
    await pool.end();
    throw err;
  }
  const db = drizzle(pool, { schema });
  return { db, stores: { episodes: new PgEpisodeStore(db, pool), evals: pgEvalStore(db) }, close: () => pool.end() };
}
