import { index, integer, primaryKey, real, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * One row per episode: its head, everything a step needs and nothing that grows with the
 * transcript. The transcript lives in `episode_turns`, one row per turn written once, so
 * a step costs the same at turn 1,000 as at turn 10 (docs/long-horizon.md).
 */
export const episodes = sqliteTable(
  "episodes",
  {
    id: text("id").primaryKey(),
    envId: text("env_id").notNull(),
    envVersion: text("env_version").notNull(),
    /** Content hash of the environment at reset (src/envs/content-hash.ts); null on rows from before 0003, held to their version only. */
    envHash: text("env_hash"),
    split: text("split", { enum: ["train", "eval"] }).notNull(),
    taskIndex: integer("task_index").notNull(),
    seed: integer("seed").notNull(),
    args: text("args", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    metadata: text("metadata", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    /** Environment state after the current turn (JSON, validated by the environment's schema); null once expired. */
    state: text("state", { mode: "json" }).$type<unknown>(),
    promptLength: integer("prompt_length").notNull(),
    turn: integer("turn").notNull(),
    status: text("status", { enum: ["active", "done", "closed", "expired"] }).notNull(),
    stopReason: text("stop_reason"),
    truncated: integer("truncated", { mode: "boolean" }).notNull(),
    error: text("error"),
    score: text("score", { mode: "json" }).$type<unknown>(),
    scoredAt: integer("scored_at"),
    idempotencyKey: text("idempotency_key").unique(),
    requestHash: text("request_hash"),
    ttlSeconds: integer("ttl_seconds").notNull(),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    expiresAt: integer("expires_at").notNull(),
    /** The tenant (API key name) that created it; only it (or an admin key) can see it. Rows from before tenancy belong to "public". */
    tenant: text("tenant").notNull().default("public"),
    /**
     * What the episode holds in client-driven bytes, approximately: metadata, args, opening
     * messages and state at reset, plus each step's turn row. The per-episode
     * and per-tenant storage quotas count it (src/server/tenants/quotas.ts).
     */
    storedBytes: integer("stored_bytes").notNull().default(0),
    /** The episode this one was forked from, and after which of its turns; null for a reset. */
    parentId: text("parent_id"),
    forkTurn: integer("fork_turn"),
    /** The template hash of the latest step that carried sampled tokens (a fork starts with its parent's at the fork turn). */
    templateHash: text("template_hash"),
    /** The stop conditions' running totals after the current turn (engine StopTally), so a token budget needs no transcript; null until known. */
    stopTallies: text("stop_tallies", { mode: "json" }).$type<number[]>(),
    /** Every turn whose template hash differed from the one before (TemplateChange[]), prefix included. */
    templateChanges: text("template_changes", { mode: "json" }).notNull().default([]).$type<{ turn: number; from: string; to: string }[]>(),
  },
  (t) => [
    // One index serves the reaper (expires_at < now) and covers the per-tenant usage query
    // (tenant, unexpired: count open, sum stored_bytes) without touching rows. It replaced
    // episodes_expires_at rather than joining it: every step changes expires_at and
    // stored_bytes, and a second index over them cost each step ~9 µs of server CPU (~4%).
    index("episodes_expiry_usage").on(t.expiresAt, t.tenant, t.status, t.storedBytes),
    index("episodes_env_status").on(t.envId, t.status),
    // An episode's forks, a page at a time in (created_at, id) order (GET /v1/episodes/{id}/forks):
    // a range of this index, not a scan. Only reset and fork write these columns, never a step.
    index("episodes_parent").on(t.parentId, t.createdAt, t.id),
  ],
);

/**
 * One row per turn of an episode, written once by the step that made it (turn 0: the
 * opening messages, written by reset). Keyed by (episode, turn): a second write of the
 * same turn is refused by the key, whatever raced it. A fork has no rows for the turns it
 * shares with its ancestors: it reads theirs (episode_lineage says which).
 */
export const episodeTurns = sqliteTable(
  "episode_turns",
  {
    episodeId: text("episode_id").notNull(),
    turn: integer("turn").notNull(),
    /** The assistant message of this turn (null for turn 0). */
    message: text("message", { mode: "json" }).$type<unknown>(),
    /**
     * Turn 0: the opening messages. Null for a step's turn: its reply messages are the
     * `messages` of the stored response body, read from there (json_extract) rather than
     * stored twice (a 4 KB observation would cost 8 KB a turn).
     */
    replyMessages: text("reply_messages", { mode: "json" }).$type<unknown[]>(),
    /** The exact JSON body the step answered, so a retry is answered byte for byte (null for turn 0). */
    reply: text("reply"),
    /** The state after this turn, so a fork from it starts exactly there; null for turns migrated from before per-turn storage (all but the last). */
    state: text("state", { mode: "json" }).$type<unknown>(),
    /** Whether the episode ended with this turn (a fork cannot start from such a turn). */
    done: integer("done", { mode: "boolean" }).notNull(),
    /** SampledTokens as the step sent them, or null. */
    sampled: text("sampled", { mode: "json" }).$type<unknown>(),
    /** The template hash in effect after this turn (this step's, else the one before). */
    templateHash: text("template_hash"),
    /** The stop conditions' running totals after this turn, for a fork from it. */
    stopTallies: text("stop_tallies", { mode: "json" }).$type<number[]>(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.episodeId, t.turn] })],
);

export type EpisodeTurnRow = typeof episodeTurns.$inferSelect;

/**
 * A fork's ancestry, flattened at fork time: (fork, ancestor, last turn of the ancestor in
 * the fork's prefix). Reading a fork's transcript is one range read per row here, with no
 * walk up the chain; the reaper keeps an expired ancestor's turns while a live fork's
 * row names them.
 */
export const episodeLineage = sqliteTable(
  "episode_lineage",
  {
    episodeId: text("episode_id").notNull(),
    ancestorId: text("ancestor_id").notNull(),
    toTurn: integer("to_turn").notNull(),
  },
  (t) => [primaryKey({ columns: [t.episodeId, t.ancestorId] }), index("episode_lineage_ancestor").on(t.ancestorId, t.toTurn)],
);

export type EpisodeLineageRow = typeof episodeLineage.$inferSelect;

export type EpisodeRow = typeof episodes.$inferSelect;
export type NewEpisodeRow = typeof episodes.$inferInsert;

/**
 * One row per evaluation job. The options are stored as sent (defaults filled in); the
 * model endpoint and key are not: they come from the server's configuration. A running
 * job holds a lease (owner + expiry) that its runner renews, so after a crash another
 * process, or the restarted one, takes the job over once the lease has lapsed.
 */
export const evalJobs = sqliteTable(
  "eval_jobs",
  {
    id: text("id").primaryKey(),
    envId: text("env_id").notNull(),
    envVersion: text("env_version").notNull(),
    model: text("model").notNull(),
    status: text("status", { enum: ["queued", "running", "completed", "failed", "cancelled"] }).notNull(),
    /** The EvalRequest, defaults filled in. */
    request: text("request", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    split: text("split", { enum: ["train", "eval"] }).notNull(),
    numExamples: integer("num_examples").notNull(),
    totalRollouts: integer("total_rollouts").notNull(),
    /** The EvalSummary once the job has ended. */
    summary: text("summary", { mode: "json" }).$type<unknown>(),
    error: text("error"),
    cancelRequested: integer("cancel_requested", { mode: "boolean" }).notNull(),
    leaseOwner: text("lease_owner"),
    leaseExpiresAt: integer("lease_expires_at"),
    /** Wall time spent running, summed over every process that ran part of the job. */
    runMs: integer("run_ms").notNull(),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
    startedAt: integer("started_at"),
    finishedAt: integer("finished_at"),
    /** The tenant (API key name) that created it; only it (or an admin key) can see it. Rows from before tenancy belong to "public". */
    tenant: text("tenant").notNull().default("public"),
  },
  (t) => [
    index("eval_jobs_status").on(t.status, t.leaseExpiresAt),
    index("eval_jobs_created").on(t.createdAt),
    // A tenant's list (newest first) and its count of live jobs (the concurrent-evals quota).
    index("eval_jobs_tenant").on(t.tenant, t.status, t.createdAt),
  ],
);

export type EvalJobRow = typeof evalJobs.$inferSelect;
export type NewEvalJobRow = typeof evalJobs.$inferInsert;

/**
 * One row per finished rollout of a job, keyed by (job, row, rollout index): a rollout
 * written twice (two runners racing after a lease lapsed) is kept once.
 */
export const evalRollouts = sqliteTable(
  "eval_rollouts",
  {
    jobId: text("job_id").notNull(),
    exampleId: integer("example_id").notNull(),
    rolloutIndex: integer("rollout_index").notNull(),
    reward: real("reward").notNull(),
    /** The rollout's error code; null when it finished. */
    errorCode: text("error_code"),
    /** The results.jsonl row (EvalRollout). */
    row: text("row", { mode: "json" }).notNull().$type<unknown>(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.jobId, t.exampleId, t.rolloutIndex] })],
);

export type EvalRolloutRow = typeof evalRollouts.$inferSelect;
