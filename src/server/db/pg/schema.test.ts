import { getTableConfig as pgTableConfig } from "drizzle-orm/pg-core";
import { getTableConfig as sqliteTableConfig } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import * as sqlite from "../schema.js";
import * as pg from "./schema.js";

/**
 * What must be the same in both schemas, as data: the stores' shared SQL (episode-lifecycle.ts,
 * reaper.ts, eval-store.ts) names tables and columns once for both engines. Only the
 * column types may differ (int8 for times, boolean, JSON as text: pg/schema.ts says why).
 */
function shape(config: { name: string; columns: { name: string; notNull: boolean; primary: boolean; isUnique: boolean; hasDefault: boolean }[]; indexes: { config: { name?: string; columns: unknown[] } }[]; primaryKeys: { columns: { name: string }[] }[] }) {
  return {
    name: config.name,
    columns: config.columns.map((c) => ({ name: c.name, notNull: c.notNull, primary: c.primary, unique: c.isUnique, hasDefault: c.hasDefault })),
    indexes: config.indexes.map((i) => ({ name: i.config.name, columns: i.config.columns.map((c) => (c as { name: string }).name) })),
    primaryKeys: config.primaryKeys.map((k) => k.columns.map((c) => c.name)),
  };
}

const TABLES = ["episodes", "episodeTurns", "episodeLineage", "evalJobs", "evalRollouts"] as const;

describe("PostgreSQL schema", () => {
  it("has the SQLite schema's tables", () => {
    const tables = (schema: object) => Object.keys(schema).filter((k) => TABLES.includes(k as (typeof TABLES)[number]));
    expect(tables(pg).sort()).toEqual(tables(sqlite).sort());
    expect(tables(pg)).toHaveLength(TABLES.length);
  });

  it.each(TABLES)("mirrors %s: columns in order, nullability, keys, defaults and indexes", (table) => {
    expect(shape(pgTableConfig(pg[table]))).toEqual(shape(sqliteTableConfig(sqlite[table])));
  });
});
