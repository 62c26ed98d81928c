import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * One row per episode, holding everything needed to serve its next request. A step is
 * one conditional UPDATE of this row (`WHERE id = ? AND turn = ?`): atomic on SQLite
 * and on D1 alike, with no transaction, so one code path is correct on both.
 */
export const episodes = sqliteTable(
  "episodes",
  {
    id: text("id").primaryKey(),
    envId: text("env_id").notNull(),
    envVersion: text("env_version").notNull(),
    split: text("split", { enum: ["train", "eval"] }).notNull(),
    taskIndex: integer("task_index").notNull(),
    seed: integer("seed").notNull(),
    args: text("args", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    metadata: text("metadata", { mode: "json" }).notNull().$type<Record<string, unknown>>(),
    /** Environment state (JSON, validated by the environment's schema); null once expired. */
    state: text("state", { mode: "json" }).$type<unknown>(),
    /** The whole transcript as chat messages. */
    messages: text("messages", { mode: "json" }).notNull().$type<unknown[]>(),
    promptLength: integer("prompt_length").notNull(),
    /** The exact JSON body of each step's response, by turn, so a retry is answered byte for byte. */
    replies: text("replies", { mode: "json" }).notNull().$type<string[]>(),
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
  },
  (t) => [index("episodes_expires_at").on(t.expiresAt), index("episodes_env_status").on(t.envId, t.status)],
);

export type EpisodeRow = typeof episodes.$inferSelect;
export type NewEpisodeRow = typeof episodes.$inferInsert;
