import { sql } from "drizzle-orm";
import { bigint, boolean, customType, doublePrecision, index, integer, pgTable, primaryKey, text } from "drizzle-orm/pg-core";

/**
 * JSON kept as text, as on SQLite: `jsonb` would reorder keys and drop duplicates, and
 * `json` costs a parse per write for nothing (nothing here queries inside it but the
 * reply's `messages`, read with a cast). Text also keeps every value byte for byte what
 * the SQLite store gives back, so both engines answer the same JSON.
 */
const jsonText = <T>(name: string) =>
  customType<{ data: T; driverData: string }>({
    dataType: () => "text",
    toDriver: (value) => JSON.stringify(value),
    fromDriver: (value) => JSON.parse(value) as T,
  })(name);

/** Milliseconds since the epoch (and other counters past 2^31): int8, read as a JavaScript number. */
const ms = (name: string) => bigint(name, { mode: "number" });

/**
 * The PostgreSQL mirror of ../schema.ts (same tables, columns and indexes; see there for
 * what each holds). Types differ only where PostgreSQL is stricter: booleans are
 * `boolean`, times and byte counts `int8`, JSON `text` (jsonText above).
 */
export const episodes = pgTable(
  "episodes",
  {
    id: text("id").primaryKey(),
    envId: text("env_id").notNull(),
    envVersion: text("env_version").notNull(),
    envHash: text("env_hash"),
    split: text("split", { enum: ["train", "eval"] }).notNull(),
    // int8 like the seed: an unseeded reset draws its index from the whole seed range.
    taskIndex: ms("task_index").notNull(),
    seed: ms("seed").notNull(),
    args: jsonText<Record<string, unknown>>("args").notNull(),
    metadata: jsonText<Record<string, unknown>>("metadata").notNull(),
    state: jsonText<unknown>("state"),
    promptLength: integer("prompt_length").notNull(),
    turn: integer("turn").notNull(),
    status: text("status", { enum: ["active", "done", "closed", "expired"] }).notNull(),
    stopReason: text("stop_reason"),
    truncated: boolean("truncated").notNull(),
    error: text("error"),
    score: jsonText<unknown>("score"),
    scoredAt: ms("scored_at"),
    idempotencyKey: text("idempotency_key").unique(),
    requestHash: text("request_hash"),
    ttlSeconds: integer("ttl_seconds").notNull(),
    createdAt: ms("created_at").notNull(),
    updatedAt: ms("updated_at").notNull(),
    expiresAt: ms("expires_at").notNull(),
    tenant: text("tenant").notNull().default("public"),
    storedBytes: ms("stored_bytes").notNull().default(0),
    parentId: text("parent_id"),
    forkTurn: integer("fork_turn"),
    templateHash: text("template_hash"),
    stopTallies: jsonText<number[]>("stop_tallies"),
    templateChanges: jsonText<{ turn: number; from: string; to: string }[]>("template_changes")
      .notNull()
      // A SQL literal: drizzle-kit cannot print a custom type's default value.
      .default(sql`'[]'`),
  },
  (t) => [
    index("episodes_expiry_usage").on(t.expiresAt, t.tenant, t.status, t.storedBytes),
    index("episodes_env_status").on(t.envId, t.status),
    // An episode's forks a page at a time (GET /v1/episodes/{id}/forks), as on SQLite.
    index("episodes_parent").on(t.parentId, t.createdAt, t.id),
  ],
);

export const episodeTurns = pgTable(
  "episode_turns",
  {
    episodeId: text("episode_id").notNull(),
    turn: integer("turn").notNull(),
    message: jsonText<unknown>("message"),
    replyMessages: jsonText<unknown[]>("reply_messages"),
    reply: text("reply"),
    state: jsonText<unknown>("state"),
    done: boolean("done").notNull(),
    sampled: jsonText<unknown>("sampled"),
    templateHash: text("template_hash"),
    stopTallies: jsonText<number[]>("stop_tallies"),
    createdAt: ms("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.episodeId, t.turn] })],
);

export const episodeLineage = pgTable(
  "episode_lineage",
  {
    episodeId: text("episode_id").notNull(),
    ancestorId: text("ancestor_id").notNull(),
    toTurn: integer("to_turn").notNull(),
  },
  (t) => [primaryKey({ columns: [t.episodeId, t.ancestorId] }), index("episode_lineage_ancestor").on(t.ancestorId, t.toTurn)],
);

export const evalJobs = pgTable(
  "eval_jobs",
  {
    id: text("id").primaryKey(),
    envId: text("env_id").notNull(),
    envVersion: text("env_version").notNull(),
    model: text("model").notNull(),
    status: text("status", { enum: ["queued", "running", "completed", "failed", "cancelled"] }).notNull(),
    request: jsonText<Record<string, unknown>>("request").notNull(),
    split: text("split", { enum: ["train", "eval"] }).notNull(),
    numExamples: integer("num_examples").notNull(),
    totalRollouts: integer("total_rollouts").notNull(),
    summary: jsonText<unknown>("summary"),
    error: text("error"),
    cancelRequested: boolean("cancel_requested").notNull(),
    leaseOwner: text("lease_owner"),
    leaseExpiresAt: ms("lease_expires_at"),
    runMs: ms("run_ms").notNull(),
    createdAt: ms("created_at").notNull(),
    updatedAt: ms("updated_at").notNull(),
    startedAt: ms("started_at"),
    finishedAt: ms("finished_at"),
    tenant: text("tenant").notNull().default("public"),
  },
  (t) => [
    index("eval_jobs_status").on(t.status, t.leaseExpiresAt),
    index("eval_jobs_created").on(t.createdAt),
    index("eval_jobs_tenant").on(t.tenant, t.status, t.createdAt),
  ],
);

export const evalRollouts = pgTable(
  "eval_rollouts",
  {
    jobId: text("job_id").notNull(),
    exampleId: integer("example_id").notNull(),
    rolloutIndex: integer("rollout_index").notNull(),
    reward: doublePrecision("reward").notNull(),
    errorCode: text("error_code"),
    row: jsonText<unknown>("row").notNull(),
    createdAt: ms("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.jobId, t.exampleId, t.rolloutIndex] })],
);
