import type { TenantUsage } from "../db/episode-store.js";

/**
 * A tenant's episode usage as this process last read it from the database, plus what it
 * has admitted since (episodes started, bytes that steps added). Reading it is one scan
 * of the covering index episodes_expiry_usage over every unexpired episode (all
 * tenants; ~0.9 ms over 10,000): done on every reset, that scan cost a trainer with
 * thousands of episodes 15% more server CPU per step in `npm run bench:compare`.
 *
 * So a request that fits the cached figure is admitted without a read for up to
 * `maxAgeMs`. One that does not fit is read again first unless the figure is younger
 * than `rereadMs`: a tenant at its limit that keeps asking costs at most one scan per
 * `rereadMs`, not one per request. `released` takes one episode off the figure when this
 * process sees one of the tenant's episodes end, so its place is free at the next reset. What the cache
 * can miss is other processes' admissions and releases (with `--workers N`, or other
 * isolates on Workers) within `maxAgeMs`: a database-counted quota can be passed by at
 * most what they admit in that time, and a place they free is seen within `rereadMs`.
 */
export class UsageCache {
  private readonly entries = new Map<string, { at: number; usage: TenantUsage }>();
  /**
   * The read under way per tenant: requests that find the figure stale together wait for
   * one scan. Without it, the 64 resets of a trainer's batch that all came due in the
   * same second each scanned the index (~50 scans a second instead of one: 6% of the
   * server CPU per persisted step in the in-process step benchmark).
   */
  private readonly reading = new Map<string, Promise<{ at: number; usage: TenantUsage }>>();

  constructor(
    private readonly maxAgeMs: number,
    private readonly rereadMs: number,
    private readonly clock: () => number,
  ) {}

  /**
   * Admits `add` (one more episode at reset, or a step's bytes) if `fits` says the usage
   * with it stays within the limits, counting it; otherwise throws what `refuse` makes of
   * the usage. `read` is the database query.
   */
  async admit(tenant: string, add: TenantUsage, fits: (usage: TenantUsage) => boolean, read: () => Promise<TenantUsage>, refuse: (usage: TenantUsage) => Error): Promise<void> {
    if (this.tryRemembered(tenant, add, fits)) return;
    const now = this.clock();
    let entry = this.entries.get(tenant);
    if (!entry || now - entry.at >= this.maxAgeMs || (!fits(entry.usage) && now - entry.at >= this.rereadMs)) {
      entry = await this.readOnce(tenant, now, read);
    }
    if (!fits(entry.usage)) throw refuse(entry.usage);
    entry.usage = { openEpisodes: entry.usage.openEpisodes + add.openEpisodes, storedBytes: entry.usage.storedBytes + add.storedBytes };
  }

  /** One database read for every caller that needs the tenant's figure while it runs; the figure read is shared, each caller then adds its own. */
  private readOnce(tenant: string, now: number, read: () => Promise<TenantUsage>): Promise<{ at: number; usage: TenantUsage }> {
    let pending = this.reading.get(tenant);
    if (!pending) {
      pending = read()
        .then((usage) => {
          const entry = { at: now, usage };
          this.entries.set(tenant, entry);
          return entry;
        })
        .finally(() => this.reading.delete(tenant));
      this.reading.set(tenant, pending);
    }
    return pending;
  }

  /**
   * The common case without a promise: admits `add` and returns true when the remembered
   * figure is fresh and fits; false when `admit` must decide (a step calls this first, so
   * it pays no await for the check).
   */
  tryRemembered(tenant: string, add: TenantUsage, fits: (usage: TenantUsage) => boolean): boolean {
    const entry = this.entries.get(tenant);
    if (!entry || this.clock() - entry.at >= this.maxAgeMs || !fits(entry.usage)) return false;
    entry.usage = { openEpisodes: entry.usage.openEpisodes + add.openEpisodes, storedBytes: entry.usage.storedBytes + add.storedBytes };
    return true;
  }

  /**
   * One of the tenant's open episodes ended in this process: one place fewer in the
   * remembered figure (its bytes stay counted: a finished episode is still stored until
   * its TTL). Dropping the figure instead cost a usage scan on the reset after every
   * finished episode, +13% server CPU per step in the in-process step benchmark.
   */
  released(tenant: string): void {
    const entry = this.entries.get(tenant);
    if (entry) entry.usage = { ...entry.usage, openEpisodes: Math.max(0, entry.usage.openEpisodes - 1) };
  }
}
