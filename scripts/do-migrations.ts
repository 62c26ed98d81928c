/**
 * The episode tables' migrations as a module the Worker bundle carries
 * (src/server/worker/durable/migrations.gen.ts): a Durable Object reads no files, and each
 * episode's object applies them to its own SQLite with drizzle's durable-sqlite migrator.
 * Made from ./drizzle, the migrations every other engine applies, keeping only what an
 * episode object holds (EPISODE_TABLES; no eval tables), in two sets:
 *
 * - `fresh`, for a new object: one migration that creates the episode tables as the whole
 *   of ./drizzle leaves them (read back from SQLite after applying it), dated as the last
 *   ./drizzle migration. A reset applies it in one pass instead of replaying every
 *   migration (the long-horizon one rebuilds the episodes table).
 * - `upgrade`, for an object that holds tables already: each ./drizzle migration's
 *   statements about the episode tables, with its date, so an object made by any earlier
 *   release (or by `fresh`) catches up with what came after (drizzle's
 *   `__drizzle_migrations` records what it applied).
 *
 * `npm run db:generate` regenerates it after drizzle-kit; a test fails when it is stale,
 * and another checks that both sets give the episode tables ./drizzle gives.
 */
import Database from "better-sqlite3";
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

interface JournalEntry {
  idx: number;
  when: number;
  tag: string;
  breakpoints: boolean;
}

/** A migration set as drizzle's durable-sqlite migrator takes it. */
export interface MigrationSet {
  journal: { entries: JournalEntry[] };
  migrations: Record<string, string>;
}

/** The tables an episode's object holds (src/server/db/schema.ts: what EpisodeStore reads and writes). */
export const EPISODE_TABLES = ["episodes", "episode_turns", "episode_lineage"];

export const DO_MIGRATIONS_FILE = fileURLToPath(new URL("../src/server/worker/durable/migrations.gen.ts", import.meta.url));
const DRIZZLE_DIR = fileURLToPath(new URL("../drizzle/", import.meta.url));
const BREAKPOINT = "--> statement-breakpoint";

/** ./drizzle's migrations in order: each one's journal entry and statements. */
export function drizzleMigrations(dir = DRIZZLE_DIR): { entry: JournalEntry; statements: string[] }[] {
  const journal = JSON.parse(readFileSync(`${dir}/meta/_journal.json`, "utf8")) as { entries: JournalEntry[] };
  return journal.entries.map(({ idx, when, tag, breakpoints }) => ({
    entry: { idx, when, tag, breakpoints },
    statements: readFileSync(`${dir}/${tag}.sql`, "utf8").split(BREAKPOINT),
  }));
}

/** Backquoted names a statement mentions (drizzle-kit quotes every table, column and index). */
const quotedNames = (statement: string): string[] => [...statement.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? "");

/** Whether a statement is about episode tables only: it names no table outside them (drizzle-kit's `__new_` rebuild copies count as their table). */
function aboutEpisodes(statement: string, otherTables: Set<string>): boolean {
  return !quotedNames(statement).some((name) => otherTables.has(name.replace(/^__new_/, "")));
}

/** The episode tables and their indexes as SQL, after applying these statements to an empty SQLite. */
export function episodeSchema(statements: string[]): string[] {
  const db = new Database(":memory:");
  try {
    for (const s of statements) if (s.trim() !== "") db.exec(s);
    const rows = db
      .prepare(`SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL AND tbl_name IN (${EPISODE_TABLES.map(() => "?").join(", ")})`)
      .all(...EPISODE_TABLES) as { type: string; name: string; sql: string }[];
    // Tables before the indexes on them; by name within each, so the text is stable.
    return rows.sort((a, b) => (a.type === b.type ? a.name.localeCompare(b.name) : a.type === "table" ? -1 : 1)).map((r) => r.sql);
  } finally {
    db.close();
  }
}

/** The two sets (see the top of this file). */
export function episodeMigrationSets(dir = DRIZZLE_DIR): { fresh: MigrationSet; upgrade: MigrationSet } {
  const all = drizzleMigrations(dir);
  const last = all.at(-1);
  if (!last) throw new Error(`no migrations in ${dir}`);
  const created = all.flatMap((m) => m.statements.flatMap((s) => [...s.matchAll(/CREATE TABLE `([^`]+)`/g)].map((c) => (c[1] ?? "").replace(/^__new_/, ""))));
  const otherTables = new Set(created.filter((t) => !EPISODE_TABLES.includes(t)));

  const fresh: MigrationSet = {
    journal: { entries: [{ idx: 0, when: last.entry.when, tag: `episode_tables_as_of_${last.entry.tag}`, breakpoints: true }] },
    migrations: { m0000: `${episodeSchema(all.flatMap((m) => m.statements)).join(`;${BREAKPOINT}\n`)};` },
  };

  const kept = all
    .map((m) => ({ entry: m.entry, statements: m.statements.filter((s) => s.trim() !== "" && aboutEpisodes(s, otherTables)) }))
    .filter((m) => m.statements.length > 0);
  const upgrade: MigrationSet = {
    journal: { entries: kept.map((m, idx) => ({ ...m.entry, idx })) },
    migrations: Object.fromEntries(kept.map((m, idx) => [`m${String(idx).padStart(4, "0")}`, m.statements.join(BREAKPOINT)])),
  };
  return { fresh, upgrade };
}

/** The module's text. */
export function durableMigrationsModule(dir = DRIZZLE_DIR): string {
  const { fresh, upgrade } = episodeMigrationSets(dir);
  return `// Generated by scripts/do-migrations.ts from ./drizzle: do not edit.
// A new episode object applies \`fresh\`; one that holds tables already applies \`upgrade\`.
export const fresh = ${JSON.stringify(fresh, null, 2)};

export const upgrade = ${JSON.stringify(upgrade, null, 2)};
`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(DO_MIGRATIONS_FILE, durableMigrationsModule());
  console.log(`wrote ${DO_MIGRATIONS_FILE}`);
}
