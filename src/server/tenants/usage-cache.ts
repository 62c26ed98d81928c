import type { TenantUsage } from "../db/episode-store.js";

/**
 * A tenant's episode usage as this process last read it from the database, plus what it
 * has admitted since (episodes started, bytes that steps added). Reading it is one scan
 * of the covering index episodes_expiry_usage over every unexpired episode (all
 * tenants): done on every reset, that scan cost a trainer with thousands of episodes
 * 15% more server CPU per step in `npm run bench:compare`. So a request that fits the
 * cached figure is admitted without a read for up to `maxAgeMs`; one that does not fit
 * always reads again before it is refused, so closing an episode frees its place at once
 * and no refusal rests on stale data. What the cache can miss is other processes'
 * admissions (with `--workers N`, or other isolates on Workers) within `maxAgeMs`: a
 * database-counted quota can be passed by at most what they admit in that time.
 */
export class UsageCache {
  private readonly entries = new Map<string, { at: number; usage: TenantUsage }>();

  constructor(
    private readonly maxAgeMs: number,
    private readonly clock: () => number,
  ) {}

  /**
   * Admits `add` (one more episode at reset, or a step's bytes) if `fits` says the usage
   * with it stays within the limits, counting it; otherwise throws what `refuse` makes of
   * the fresh usage. `read` is the database query.
   */
  async admit(tenant: string, add: TenantUsage, fits: (usage: TenantUsage) => boolean, read: () => Promise<TenantUsage>, refuse: (usage: TenantUsage) => Error): Promise<void> {
    const now = this.clock();
    let entry = this.entries.get(tenant);
    if (!entry || now - entry.at >= this.maxAgeMs || !fits(entry.usage)) {
      entry = { at: now, usage: await read() };
      this.entries.set(tenant, entry);
      if (!fits(entry.usage)) throw refuse(entry.usage);
    }
    entry.usage = { openEpisodes: entry.usage.openEpisodes + add.openEpisodes, storedBytes: entry.usage.storedBytes + add.storedBytes };
  }
}
