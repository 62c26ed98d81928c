import type { BaseSQLiteDatabase } from "drizzle-orm/sqlite-core";
import type * as schema from "./schema.js";

/**
 * A drizzle database over either driver: better-sqlite3 (sync) on Node, D1 (async) on
 * Workers. Every query is awaited, which works for both, so the store has one code path.
 */
export type EdgegymDb = BaseSQLiteDatabase<"sync" | "async", unknown, typeof schema>;
