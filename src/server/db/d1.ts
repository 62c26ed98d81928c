import type { D1Database } from "@cloudflare/workers-types/index.ts";
import { drizzle } from "drizzle-orm/d1";
import type { EdgegymDb } from "./database.js";
import * as schema from "./schema.js";

/**
 * The Worker's database: a D1 binding behind drizzle. Unlike the Node driver this runs
 * no migrations — `wrangler d1 migrations apply` applies the same ./drizzle files ahead
 * of time and tracks them in `d1_migrations`, so a request never pays for a schema check.
 * Cheap to call: drizzle only wraps the binding, so a Worker may call it per isolate.
 */
export function openD1Database(binding: D1Database): EdgegymDb {
  return drizzle(binding, { schema }) as unknown as EdgegymDb;
}
