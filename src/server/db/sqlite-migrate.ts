import type Database from "better-sqlite3";
import { readMigrationFiles } from "drizzle-orm/migrator";

/**
 * Applies the pending migrations of `folder` inside one `BEGIN IMMEDIATE` transaction,
 * recording them in drizzle's own `__drizzle_migrations` table (same columns, hashes and
 * ordering, so files migrated by drizzle's migrator before stay valid).
 *
 * Why not drizzle's `migrate()`: it reads the last applied migration before its plain
 * `BEGIN`, so two processes starting together on one new file both decide to migrate,
 * and the second fails on "table already exists" once the first commits. Taking the
 * write lock first (IMMEDIATE; the busy timeout queues the other process) makes the
 * check and the apply one step: the second process waits, then finds nothing to do.
 */
export function migrateSqlite(sqlite: Database.Database, folder: string): number {
  const migrations = readMigrationFiles({ migrationsFolder: folder });
  const apply = sqlite.transaction((): number => {
    sqlite.exec(`CREATE TABLE IF NOT EXISTS "__drizzle_migrations" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)`);
    const last = sqlite.prepare(`SELECT created_at FROM "__drizzle_migrations" ORDER BY created_at DESC LIMIT 1`).get() as { created_at: number | string } | undefined;
    const lastMillis = last === undefined ? -Infinity : Number(last.created_at);
    const record = sqlite.prepare(`INSERT INTO "__drizzle_migrations" ("hash", "created_at") VALUES (?, ?)`);
    let applied = 0;
    for (const migration of migrations) {
      if (migration.folderMillis <= lastMillis) continue;
      for (const statement of migration.sql) if (statement.trim() !== "") sqlite.exec(statement);
      record.run(migration.hash, migration.folderMillis);
      applied++;
    }
    return applied;
  });
  return apply.immediate();
}
