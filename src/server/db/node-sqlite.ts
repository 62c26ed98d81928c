import Database from "better-sqlite3";
import { drizzle } from "drizzle-orm/better-sqlite3";
import { fileURLToPath } from "node:url";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { EdgegymDb } from "./database.js";
import * as schema from "./schema.js";
import { migrateSqlite } from "./sqlite-migrate.js";

/** The checked-in migrations, shared with the Worker build (wrangler reads the same files). */
export const MIGRATIONS_DIR = fileURLToPath(new URL("../../../drizzle", import.meta.url));

/**
 * SQLite's `synchronous` in WAL mode: what a committed (answered) write survives.
 * - `NORMAL` (default): a commit is in the WAL file when the step is answered, not yet
 *   fsynced. Survives the server process crashing or being killed (the OS has the
 *   bytes); the last commits before an OS crash or power loss may be lost (the database
 *   stays consistent: whole transactions, never part of one).
 * - `FULL`: every commit fsyncs the WAL before it returns: survives power loss and OS
 *   crashes too, at one fsync per commit (per group of steps, with group commit).
 */
export type SqliteSynchronous = "NORMAL" | "FULL";

/** `EDGEGYM_SQLITE_SYNCHRONOUS`: NORMAL (default) or FULL; anything else stops the server at start. */
export function parseSqliteSynchronous(value: string | undefined): SqliteSynchronous {
  if (value === undefined || value === "") return "NORMAL";
  const upper = value.toUpperCase();
  if (upper === "NORMAL" || upper === "FULL") return upper;
  throw new Error(`EDGEGYM_SQLITE_SYNCHRONOUS must be NORMAL or FULL, got "${value}"`);
}

export interface NodeDatabase {
  db: EdgegymDb;
  close(): void;
}

/**
 * Opens (creating when missing) the SQLite file and applies pending migrations. WAL
 * lets several server processes share one file: readers never block the writer, and
 * the busy timeout queues writers instead of failing them. `synchronous` says what an
 * answered write survives (SqliteSynchronous).
 */
export function openNodeDatabase(path: string, options: { synchronous?: SqliteSynchronous } = {}): NodeDatabase {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const sqlite = new Database(path);
  sqlite.pragma("journal_mode = WAL");
  sqlite.pragma(`synchronous = ${options.synchronous ?? "NORMAL"}`);
  sqlite.pragma("busy_timeout = 5000");
  // Checkpoint every 10,000 WAL pages (~40 MB) rather than SQLite's 1,000: a checkpoint
  // runs inside whichever commit crosses the mark and fsyncs, stalling the event loop,
  // and a step rewrites the same few pages of its episode row, so a longer WAL also folds
  // more rewrites into one copy. +7% persisted steps/s at the same CPU (docs/performance.md).
  sqlite.pragma("wal_autocheckpoint = 10000");
  const db = drizzle(sqlite, { schema });
  // Under the write lock, so two processes starting on one new file never both migrate.
  migrateSqlite(sqlite, MIGRATIONS_DIR);
  return { db: db as unknown as EdgegymDb, close: () => sqlite.close() };
}
