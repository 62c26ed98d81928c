import type { EdgegymDb } from "./database.js";
import { EpisodeStore } from "./episode-store.js";
import { EvalStore, sqliteEvalStore } from "./eval-store.js";

/**
 * What the services need of episode persistence: every public method of the SQLite store
 * (`EpisodeStore`, better-sqlite3 on Node and D1 on Workers). Other engines (PostgreSQL,
 * one Durable Object per episode) implement the same methods with the same guarantees:
 * every racing write guarded in the database, a step applied at most once, a retry
 * answered from the stored reply. The conformance suite runs against each.
 */
export type EpisodeStorage = { [K in keyof EpisodeStore]: EpisodeStore[K] };

/** What the eval service needs of job persistence: `EvalStore`'s public methods (one class on SQLite, D1 and PostgreSQL). */
export type EvalStorage = { [K in keyof EvalStore]: EvalStore[K] };

/** The two stores a server runs on. */
export interface Stores {
  episodes: EpisodeStorage;
  evals: EvalStorage;
}

/** The embedded default: both stores on one drizzle SQLite database (better-sqlite3 or D1). */
export function sqliteStores(db: EdgegymDb): Stores {
  return { episodes: new EpisodeStore(db), evals: sqliteEvalStore(db) };
}
