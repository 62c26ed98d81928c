import { EvalStore } from "../eval-store.js";
import { pgEngine } from "./engine.js";
import type { PgDb } from "./open.js";
import { evalJobs } from "./schema.js";

/**
 * Evaluation jobs on PostgreSQL: the SQLite store's statements (../eval-store.ts says why
 * each is safe to race, and in which order a job is deleted), run on the cluster, so a
 * lease is held by one process of it at a time and a rollout is stored once per key.
 */
export function pgEvalStore(db: PgDb): EvalStore {
  return new EvalStore(pgEngine(db), evalJobs);
}
