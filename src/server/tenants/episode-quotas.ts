import type { TenantUsage } from "../db/episode-store.js";
import { ApiError } from "../errors.js";
import { quotaExceeded, type TenantQuotas } from "./quotas.js";
import { ResetRate } from "./reset-rate.js";
import { UsageCache } from "./usage-cache.js";
import type { EpisodeStorage } from "../db/stores.js";

/**
 * The quotas on a tenant's episodes, as the episode service asks for them: a reset's
 * token, what a new episode may hold, and what a step may add. Each throws the error
 * the client gets (429 `rate_limited`, or 413 for what retrying cannot cure).
 *
 * @example
 * quotas.takeResetToken("alice");
 * await quotas.admitReset("alice", metadataBytes, rowBytes);
 */
export class EpisodeQuotas {
  private readonly resetRate: ResetRate | null;
  /** Database-counted usage, re-read at most once a second per tenant while requests fit (see UsageCache). */
  private readonly usage: UsageCache;

  constructor(
    private readonly store: EpisodeStorage,
    private readonly quotas: TenantQuotas,
    private readonly clock: () => number,
  ) {
    const { resetsPerSecond, resetBurst } = quotas;
    this.resetRate = resetsPerSecond === null ? null : new ResetRate({ perSecond: resetsPerSecond, burst: resetBurst }, clock);
    this.usage = new UsageCache(1000, 200, clock);
  }

  /** The per-episode byte cap the step's conditional UPDATE enforces (no cap: the largest safe integer). */
  get maxEpisodeBytes(): number {
    return this.quotas.maxEpisodeBytes ?? Number.MAX_SAFE_INTEGER;
  }

  /** The reset rate (in memory), checked before the environment's setup runs. */
  takeResetToken(tenant: string): void {
    const rate = this.quotas.resetsPerSecond;
    const wait = this.resetRate?.take(tenant) ?? 0;
    // An empty bucket means the tenant is resetting at the limit's rate: in_use = limit.
    if (wait > 0 && rate !== null) throw quotaExceeded("resets_per_second", rate, rate, wait, `slow down: the bucket holds ${this.quotas.resetBurst} resets and refills at ${rate} per second`);
  }

  /**
   * What `count` new episodes (one reset, or a fork's n) must fit before they are stored:
   * the metadata size, each one's starting bytes, then the tenant's open episodes and stored bytes (database-counted, through
   * UsageCache). Counted before the insert, so resets racing in other processes can pass
   * a database-counted limit by what they admit within the cache's second.
   */
  async admitReset(tenant: string, metadataBytes: number, rowBytes: number, count = 1): Promise<void> {
    const q = this.quotas;
    if (q.maxMetadataBytes !== null && metadataBytes > q.maxMetadataBytes) {
      throw new ApiError("payload_too_large", `metadata is ${metadataBytes} bytes, past this server's limit of ${q.maxMetadataBytes}; keep metadata to ids and tags`, { quota: "metadata_bytes", limit: q.maxMetadataBytes, in_use: metadataBytes });
    }
    if (q.maxEpisodeBytes !== null && rowBytes > q.maxEpisodeBytes) {
      throw new ApiError("payload_too_large", `this episode would start at ${rowBytes} stored bytes, past the per-episode limit of ${q.maxEpisodeBytes}`, { quota: "episode_bytes", limit: q.maxEpisodeBytes, in_use: rowBytes });
    }
    if (q.maxOpenEpisodes === null && q.maxStoredBytes === null) return;
    const fitsOpen = (u: TenantUsage) => q.maxOpenEpisodes === null || u.openEpisodes + count <= q.maxOpenEpisodes;
    const fitsBytes = (u: TenantUsage) => q.maxStoredBytes === null || u.storedBytes + rowBytes * count <= q.maxStoredBytes;
    await this.usage.admit(
      tenant,
      { openEpisodes: count, storedBytes: rowBytes * count },
      (u) => fitsOpen(u) && fitsBytes(u),
      () => this.store.usage(tenant, this.clock()),
      (u) =>
        !fitsOpen(u)
          ? quotaExceeded("open_episodes", q.maxOpenEpisodes ?? 0, u.openEpisodes, 5, "close or score finished episodes (DELETE /v1/episodes/{id}) before starting more")
          : quotaExceeded("stored_bytes", q.maxStoredBytes ?? 0, u.storedBytes, 30, "what your unexpired episodes store is counted until their TTL passes; use shorter ttl_seconds or smaller metadata"),
    );
  }

  /**
   * The tenant's stored bytes with a step's added: checked against the usage cached in
   * this process (no database read on a step unless the figure is a second old or would
   * refuse), so a tenant cannot grow its open episodes past the quota after their resets.
   */
  admitStepBytes(tenant: string, addedBytes: number): Promise<void> | undefined {
    const max = this.quotas.maxStoredBytes;
    if (max === null) return undefined;
    const fits = (u: TenantUsage) => u.storedBytes + addedBytes <= max;
    const add = { openEpisodes: 0, storedBytes: addedBytes };
    // Undefined (nothing to await) when the remembered figure decides: the step's usual case.
    if (this.usage.tryRemembered(tenant, add, fits)) return undefined;
    return this.usage.admit(
      tenant,
      add,
      fits,
      () => this.store.usage(tenant, this.clock()),
      (u) => quotaExceeded("stored_bytes", max, u.storedBytes, 30, "what your unexpired episodes store is counted until their TTL passes; score and close episodes, and use a shorter ttl_seconds"),
    );
  }

  /** One of the tenant's active episodes ended (done, scored, closed) in this process: its place is free at the next reset. */
  episodeEnded(tenant: string): void {
    this.usage.released(tenant);
  }

  /** A step the UPDATE refused for the per-episode cap: 413, since the episode only grows. */
  episodeFull(storedBytes: number, addedBytes: number): ApiError {
    const max = this.maxEpisodeBytes;
    return new ApiError("payload_too_large", `this step would bring the episode to ${storedBytes + addedBytes} stored bytes, past the per-episode limit of ${max}; score or close it`, {
      quota: "episode_bytes",
      limit: max,
      in_use: storedBytes,
    });
  }
}
