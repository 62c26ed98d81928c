import { and, eq, inArray, isNull, lt, sql } from "drizzle-orm";
import type { EdgegymDb } from "./database.js";
import { episodes, type EpisodeRow, type NewEpisodeRow } from "./schema.js";

/** How long an expired episode's tombstone is kept, so it answers 410 rather than 404. */
export const TOMBSTONE_MS = 7 * 24 * 3600 * 1000;

export interface StepWrite {
  id: string;
  /** The turn the episode must still be at: the optimistic-concurrency check. */
  expectedTurn: number;
  turn: number;
  state: unknown;
  messages: unknown[];
  replies: string[];
  status: "active" | "done";
  stopReason: string | null;
  truncated: boolean;
  error: string | null;
  now: number;
  expiresAt: number;
}

/**
 * Episode persistence. Every write that races with another is one conditional
 * statement whose RETURNING tells the caller whether it won.
 */
export class EpisodeStore {
  constructor(private readonly db: EdgegymDb) {}

  /** Inserts a new episode; with an idempotency key already used, returns the earlier row instead. */
  async insert(row: NewEpisodeRow): Promise<{ row: EpisodeRow; created: boolean }> {
    const inserted = await this.db.insert(episodes).values(row).onConflictDoNothing().returning();
    if (inserted[0]) return { row: inserted[0], created: true };
    if (row.idempotencyKey == null) throw new Error(`episode id collision on ${row.id}`);
    const existing = await this.db.select().from(episodes).where(eq(episodes.idempotencyKey, row.idempotencyKey)).limit(1);
    if (!existing[0]) throw new Error("idempotency key conflict without a row");
    return { row: existing[0], created: false };
  }

  async get(id: string): Promise<EpisodeRow | undefined> {
    const rows = await this.db.select().from(episodes).where(eq(episodes.id, id)).limit(1);
    return rows[0];
  }

  /** Applies a step if the episode is still active at `expectedTurn`; false when another write got there first. */
  async commitStep(w: StepWrite): Promise<boolean> {
    const rows = await this.db
      .update(episodes)
      .set({
        turn: w.turn,
        state: w.state,
        messages: w.messages,
        replies: w.replies,
        status: w.status,
        stopReason: w.stopReason,
        truncated: w.truncated,
        error: w.error,
        updatedAt: w.now,
        expiresAt: w.expiresAt,
      })
      .where(and(eq(episodes.id, w.id), eq(episodes.turn, w.expectedTurn), eq(episodes.status, "active")))
      .returning({ id: episodes.id });
    return rows.length === 1;
  }

  /** Stores a score once; a second call leaves the first in place. Ends an active episode. */
  async saveScore(id: string, score: unknown, now: number, expiresAt: number): Promise<void> {
    await this.db
      .update(episodes)
      .set({
        score,
        scoredAt: now,
        updatedAt: now,
        expiresAt,
        status: sql`CASE WHEN ${episodes.status} = 'active' THEN 'done' ELSE ${episodes.status} END`,
        stopReason: sql`COALESCE(${episodes.stopReason}, 'scored')`,
      })
      .where(and(eq(episodes.id, id), isNull(episodes.score)));
  }

  /** Marks an episode closed; closing twice, or closing a finished one, is harmless. */
  async close(id: string, now: number): Promise<void> {
    await this.db
      .update(episodes)
      .set({ status: "closed", updatedAt: now })
      .where(and(eq(episodes.id, id), inArray(episodes.status, ["active", "done"])));
  }

  /**
   * Expires episodes past their TTL: their state and transcript are dropped and a
   * tombstone stays for a week (so clients get 410, not 404), then the row goes.
   */
  async reapExpired(now: number): Promise<{ expired: number; deleted: number }> {
    const expired = await this.db
      .update(episodes)
      .set({ status: "expired", state: null, messages: [], replies: [], updatedAt: now })
      .where(and(lt(episodes.expiresAt, now), inArray(episodes.status, ["active", "done", "closed"])))
      .returning({ id: episodes.id });
    const deleted = await this.db
      .delete(episodes)
      .where(and(eq(episodes.status, "expired"), lt(episodes.expiresAt, now - TOMBSTONE_MS)))
      .returning({ id: episodes.id });
    return { expired: expired.length, deleted: deleted.length };
  }
}
