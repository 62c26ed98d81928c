import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DO_MIGRATIONS_FILE, drizzleMigrations, durableMigrationsModule, episodeMigrationSets, episodeSchema, type MigrationSet } from "../scripts/do-migrations.js";

/** A set's statements in order, as drizzle's migrator splits them. */
const statementsOf = (set: MigrationSet): string[] =>
  set.journal.entries.flatMap((e) => (set.migrations[`m${String(e.idx).padStart(4, "0")}`] ?? "").split("--> statement-breakpoint"));

describe("the episode objects' migrations", () => {
  const all = drizzleMigrations();
  const { fresh, upgrade } = episodeMigrationSets();
  const full = episodeSchema(all.flatMap((m) => m.statements));

  it("are made from ./drizzle and current (npm run db:generate regenerates them)", () => {
    expect(readFileSync(DO_MIGRATIONS_FILE, "utf8")).toBe(durableMigrationsModule());
  });

  it("give a new object the episode tables ./drizzle gives, in one migration dated as ./drizzle's last, and no eval table", () => {
    expect(full.filter((sql) => sql.startsWith("CREATE TABLE")).length).toBe(3);
    expect(episodeSchema(statementsOf(fresh))).toEqual(full);
    expect(fresh.journal.entries.map((e) => e.when)).toEqual([all.at(-1)?.entry.when]);
    expect(statementsOf(fresh).join("\n")).not.toMatch(/eval_/);
  });

  it("bring an object of any earlier release to the same tables, keeping ./drizzle's dates", () => {
    expect(episodeSchema(statementsOf(upgrade))).toEqual(full);
    expect(statementsOf(upgrade).join("\n")).not.toMatch(/`eval_/);
    // An object made at each earlier migration catches up with the entries dated after it.
    for (const [i, m] of all.entries()) {
      const before = all.slice(0, i + 1).flatMap((x) => x.statements);
      const later = upgrade.journal.entries.filter((e) => e.when > m.entry.when);
      const rest = statementsOf({ journal: { entries: later }, migrations: upgrade.migrations });
      expect(episodeSchema([...before, ...rest])).toEqual(full);
    }
  });
});
