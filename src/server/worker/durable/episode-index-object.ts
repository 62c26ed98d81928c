import { DurableObject } from "cloudflare:workers";
import type { TenantUsage } from "../../db/episode-store.js";
import { TOMBSTONE_MS } from "../../db/episode-store.js";
import { INDEX_REAP_BATCH, type IndexEntry } from "./index-entries.js";

/**
 * The one directory object of the Durable Object store (named "index"): which episode a
 * scoped idempotency key made, and each episode's tenant, status, bytes and expiry for
 * the tenant quotas. It is written on resets, forks and status changes, never on an
 * ordinary step, so it is not the serialization point D1 is for every step.
 *
 * Why an object rather than D1: a claim of several keys (a fork's n) is one synchronous
 * transaction on local SQLite, and the schema lives here, beside its only reader, instead
 * of in the ./drizzle migrations every engine applies.
 */
export class EpisodeIndexObject extends DurableObject<object> {
  private ready = false;

  /** The object's SQLite, its table made on first use (idempotent DDL: the object's own migrations; docs/worker.md). */
  private get sql() {
    const sql = this.ctx.storage.sql;
    if (this.ready) return sql;
    sql.exec(`CREATE TABLE IF NOT EXISTS episode_index (
      id TEXT PRIMARY KEY, tenant TEXT NOT NULL, idempotency_key TEXT UNIQUE, status TEXT NOT NULL,
      stored_bytes INTEGER NOT NULL, expires_at INTEGER NOT NULL)`);
    sql.exec("CREATE INDEX IF NOT EXISTS episode_index_usage ON episode_index (tenant, expires_at, status, stored_bytes)");
    sql.exec("CREATE INDEX IF NOT EXISTS episode_index_expiry ON episode_index (expires_at)");
    this.ready = true;
    return sql;
  }

  /**
   * Records new episodes, all or none. When any of their keys is taken already, records
   * nothing and answers, for each entry, the id its key made (empty when the key is free).
   */
  claim(entries: IndexEntry[]): { claimed: boolean; ids: string[] } {
    return this.ctx.storage.transactionSync(() => {
      const ids = entries.map((e) => (e.idempotencyKey === null ? "" : String(this.sql.exec("SELECT id FROM episode_index WHERE idempotency_key = ?", e.idempotencyKey).toArray()[0]?.id ?? "")));
      if (ids.some((id) => id !== "")) return { claimed: false, ids };
      for (const e of entries) {
        this.sql.exec(
          "INSERT INTO episode_index (id, tenant, idempotency_key, status, stored_bytes, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
          e.id, e.tenant, e.idempotencyKey, e.status, e.storedBytes, e.expiresAt,
        );
      }
      return { claimed: true, ids: entries.map((e) => e.id) };
    });
  }

  /** The episode ids these keys made, in order ("" for a free key). */
  idsByKeys(keys: string[]): string[] {
    return keys.map((k) => String(this.sql.exec("SELECT id FROM episode_index WHERE idempotency_key = ?", k).toArray()[0]?.id ?? ""));
  }

  /** An episode's object reports its status, bytes and expiry (an unknown id is ignored: the reaper dropped it). */
  report(id: string, status: string, storedBytes: number, expiresAt: number): void {
    this.sql.exec("UPDATE episode_index SET status = ?, stored_bytes = ?, expires_at = ? WHERE id = ?", status, storedBytes, expiresAt, id);
  }

  /** What the tenant's unexpired episodes hold, as last reported (docs/worker.md: quotas on Durable Objects). */
  usage(tenant: string, now: number): TenantUsage {
    const row = this.sql
      .exec(
        `SELECT coalesce(sum(CASE WHEN status = 'active' THEN 1 ELSE 0 END), 0) AS open, coalesce(sum(stored_bytes), 0) AS bytes
         FROM episode_index WHERE tenant = ? AND expires_at > ? AND status IN ('active', 'done', 'closed')`,
        tenant, now,
      )
      .toArray()[0];
    return { openEpisodes: Number(row?.open ?? 0), storedBytes: Number(row?.bytes ?? 0) };
  }

  /** Drops the entries of episodes past their tombstone week (their objects delete themselves); a bounded batch per call. */
  reap(now: number): number {
    const gone = this.sql
      .exec("DELETE FROM episode_index WHERE id IN (SELECT id FROM episode_index WHERE expires_at < ? LIMIT ?) RETURNING id", now - TOMBSTONE_MS, INDEX_REAP_BATCH)
      .toArray();
    return gone.length;
  }
}
