/**
 * Resets per second per tenant: a token bucket in this process's memory. With
 * `--workers N` each process has its own buckets, and on Workers each isolate, so the
 * limit there is per process/isolate, not global (the open-episodes quota, counted in the
 * database, is the global bound). One entry per tenant seen; tenants are the configured
 * keys, so the map stays as small as the key list.
 *
 * @example
 * const rate = new ResetRate({ perSecond: 250, burst: 5000 }, Date.now);
 * const wait = rate.take("alice"); // 0, or seconds until a token is back
 */
export class ResetRate {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly limit: { perSecond: number; burst: number },
    private readonly clock: () => number,
  ) {}

  /** Takes a token: 0 when there was one, else the seconds until there is (nothing taken). */
  take(tenant: string): number {
    const now = this.clock();
    const bucket = this.buckets.get(tenant) ?? { tokens: this.limit.burst, at: now };
    bucket.tokens = Math.min(this.limit.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.limit.perSecond);
    bucket.at = now;
    this.buckets.set(tenant, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return (1 - bucket.tokens) / this.limit.perSecond;
  }
}
