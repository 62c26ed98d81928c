import { sql } from "drizzle-orm";
import type { SqlEngine } from "./sql-engine.js";

/** How long an expired episode's tombstone is kept, so it answers 410 rather than 404. */
export const TOMBSTONE_MS = 7 * 24 * 3600 * 1000;

/**
 * Episodes tombstoned, and tombstones deleted, per pass: bounds one statement's id list
 * and, on PostgreSQL, one transaction's locks and duration.
 */
export const REAP_BATCH = 500;
/** Passes per call at most: what is left waits for the next call. */
const REAP_PASSES = 100;
/** Key of the lock that lets one process at a time reap (two would only contend on the same rows). */
const REAP_LOCK = 0x72656170; // "reap"

export interface Reaped {
  expired: number;
  deleted: number;
}

/**
 * Expires episodes past their TTL: their state and transcript are dropped and a
 * tombstone stays for a week (so clients get 410, not 404), then the row goes. The turn
 * rows of an expired episode that a live fork's prefix still names stay until no live
 * fork names them: a parent's expiry never breaks its forks.
 *
 * Written once for every SQL engine; the engine supplies how ids are bound, how picked
 * rows are locked, and what makes a pass exclusive (sql-engine.ts). `forget` drops an
 * expired episode's cached head.
 */
export async function reapExpired(engine: SqlEngine, now: number, forget: (id: string) => void): Promise<Reaped> {
  const total = { expired: 0, deleted: 0 };
  for (let pass = 0; pass < REAP_PASSES; pass++) {
    const done = await engine.exclusive(REAP_LOCK, (tx) => reapPass(tx, now, forget));
    // Null: another process is reaping; this one leaves it the work.
    if (done === null) break;
    total.expired += done.expired;
    total.deleted += done.deleted;
    if (done.expired < REAP_BATCH && done.deleted < REAP_BATCH) break;
  }
  return total;
}

/**
 * One batch. Rows are picked oldest expiry first: a range of the index
 * episodes_expiry_usage on both engines (ordered by id, SQLite would rather walk the
 * whole table in id order than sort the range).
 */
async function reapPass(tx: SqlEngine, now: number, forget: (id: string) => void): Promise<Reaped> {
  // The metadata goes too: a tombstone only answers 410, and a client's 1 MB tag must not outlive the TTL by a week.
  const expired = await tx.rows<{ id: string }>(sql`
    UPDATE episodes SET status = 'expired', state = NULL, metadata = '{}', stored_bytes = 0, updated_at = ${now}
    WHERE id IN (SELECT id FROM episodes WHERE expires_at < ${now} AND status IN ('active', 'done', 'closed') ORDER BY expires_at LIMIT ${REAP_BATCH} ${tx.pickRows})
    RETURNING id`);
  const expiredIds = expired.map((r) => r.id);
  for (const id of expiredIds) forget(id);
  if (expiredIds.length > 0) await tx.run(deleteFreedTurns(tx, expiredIds));
  const removed = await tx.rows<{ id: string }>(sql`
    DELETE FROM episodes WHERE id IN (SELECT id FROM episodes WHERE status = 'expired' AND expires_at < ${now - TOMBSTONE_MS} ORDER BY expires_at LIMIT ${REAP_BATCH} ${tx.pickRows})
    RETURNING id`);
  const removedIds = removed.map((r) => r.id);
  // An expired fork's lineage no longer holds anything (what it held was freed when it
  // expired). The tombstone's own turns are not deleted here: a live fork may still hold them.
  if (removedIds.length > 0) await tx.run(sql`DELETE FROM episode_lineage WHERE episode_id IN (${tx.idList(removedIds)})`);
  return { expired: expiredIds.length, deleted: removedIds.length };
}

/**
 * Deletes the turn rows that the episodes just expired, and the ancestors they were
 * holding, no longer need: not their own episode's (expired or gone), nor in a live
 * fork's prefix.
 */
function deleteFreedTurns(tx: SqlEngine, expiredIds: string[]) {
  return sql`
    DELETE FROM episode_turns
    WHERE episode_id IN (${tx.idList(expiredIds)} UNION SELECT ancestor_id FROM episode_lineage WHERE episode_id IN (${tx.idList(expiredIds)}))
      AND NOT EXISTS (SELECT 1 FROM episodes e WHERE e.id = episode_turns.episode_id AND e.status <> 'expired')
      AND NOT EXISTS (SELECT 1 FROM episode_lineage l JOIN episodes d ON d.id = l.episode_id
            WHERE l.ancestor_id = episode_turns.episode_id AND l.to_turn >= episode_turns.turn AND d.status <> 'expired')`;
}
