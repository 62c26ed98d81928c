import { sql } from "drizzle-orm";
import { reapExpired, type Reaped } from "./reaper.js";
import type { SqlEngine } from "./sql-engine.js";

/** A tenant's unexpired episodes: how many are open (active) and what all of them store. */
export interface TenantUsage {
  openEpisodes: number;
  storedBytes: number;
}

/** The statuses of an episode that has not expired. */
const UNEXPIRED = sql`('active', 'done', 'closed')`;

/**
 * What happens to an episode's row after its steps: scored, closed, counted against its
 * tenant, expired and deleted. The SQL is the same on SQLite and PostgreSQL, so it is
 * written once here over an engine (sql-engine.ts); each store extends this class and
 * keeps only what its engine does differently (inserts, the step path, transcripts).
 */
export abstract class EpisodeLifecycle {
  constructor(private readonly engine: SqlEngine) {}

  /** Drops the cached step head of an episode whose row is about to change. */
  protected abstract forgetHead(id: string): void;

  /**
   * A tenant's usage, from the database (so it holds across processes and isolates): one
   * range scan of the covering index episodes_expiry_usage (expires_at > now, all tenants'
   * unexpired rows, the tenant compared in the index), no row read. Rows past their
   * TTL not yet reaped are not counted (the next reap drops what they hold).
   */
  async usage(tenant: string, now: number): Promise<TenantUsage> {
    const [row] = await this.engine.rows<{ open_episodes: unknown; stored_bytes: unknown }>(sql`
      SELECT coalesce(sum(CASE WHEN status = 'active' THEN 1 ELSE 0 END), 0) AS open_episodes, coalesce(sum(stored_bytes), 0) AS stored_bytes
      FROM episodes WHERE tenant = ${tenant} AND expires_at > ${now} AND status IN ${UNEXPIRED}`);
    // Number(): PostgreSQL's sum() is bigint or numeric, which node-postgres hands over as a string.
    return { openEpisodes: Number(row?.open_episodes ?? 0), storedBytes: Number(row?.stored_bytes ?? 0) };
  }

  /** Stores a score once; a second call leaves the first in place. Ends an active episode. */
  async saveScore(id: string, score: unknown, now: number, expiresAt: number): Promise<void> {
    this.forgetHead(id);
    await this.engine.run(sql`UPDATE episodes SET ${scored(score, now, expiresAt)} WHERE id = ${id} AND score IS NULL`);
  }

  /**
   * Replaces the stored score (a rescore asked to save it), as saveScore stores a first
   * one, if the episode is still at the turn that was scored and not expired; false otherwise.
   */
  async replaceScore(id: string, expectedTurn: number, score: unknown, now: number, expiresAt: number): Promise<boolean> {
    this.forgetHead(id);
    const rows = await this.engine.rows(sql`
      UPDATE episodes SET ${scored(score, now, expiresAt)} WHERE id = ${id} AND turn = ${expectedTurn} AND status IN ${UNEXPIRED} RETURNING id`);
    return rows.length === 1;
  }

  /** Marks an episode closed; closing twice, or closing a finished one, is harmless. */
  async close(id: string, now: number): Promise<void> {
    this.forgetHead(id);
    await this.engine.run(sql`UPDATE episodes SET status = 'closed', updated_at = ${now} WHERE id = ${id} AND status IN ('active', 'done')`);
  }

  /**
   * Writes a harness episode's state without a turn (its agent's totals or end), and with
   * `end` ends it (the agent exited, a limit was hit): only while it is still at
   * `expectedTurn` and not closed or expired; false when another write moved it first (a
   * model call recorded, a close). Ending needs it active.
   */
  async settleHead(id: string, expectedTurn: number, state: unknown, end: { stopReason: string; truncated: boolean } | null, now: number): Promise<boolean> {
    this.forgetHead(id);
    const stateJson = JSON.stringify(state ?? null);
    const rows = end
      ? await this.engine.rows(sql`
          UPDATE episodes SET state = ${stateJson}, status = 'done', stop_reason = ${end.stopReason}, truncated = ${end.truncated ? 1 : 0}, updated_at = ${now}
          WHERE id = ${id} AND turn = ${expectedTurn} AND status = 'active' RETURNING id`)
      : await this.engine.rows(sql`
          UPDATE episodes SET state = ${stateJson}, updated_at = ${now}
          WHERE id = ${id} AND turn = ${expectedTurn} AND status IN ('active', 'done') RETURNING id`);
    return rows.length === 1;
  }

  /** reaper.ts says what is kept and for how long. */
  async reapExpired(now: number): Promise<Reaped> {
    return reapExpired(this.engine, now, (id) => this.forgetHead(id));
  }
}

/** A score's SET clause: the score (JSON text, as both schemas store it) and its time; an active episode ends ("scored"). */
function scored(score: unknown, now: number, expiresAt: number) {
  return sql`score = ${score == null ? null : JSON.stringify(score)}, scored_at = ${now}, updated_at = ${now}, expires_at = ${expiresAt},
    status = CASE WHEN status = 'active' THEN 'done' ELSE status END, stop_reason = COALESCE(stop_reason, 'scored')`;
}
