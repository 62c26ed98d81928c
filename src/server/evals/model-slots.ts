/**
 * The server-wide budget of concurrent model requests. A job reserves as many slots as
 * it may have requests in flight (its max_concurrent, capped by its rollout count) for as
 * long as it runs; a job that does not fit is refused with 429 rather than queued behind
 * the others, so a client knows to come back (Retry-After) or ask for less.
 */
export class ModelSlots {
  private used = 0;

  constructor(readonly capacity: number) {}

  get inUse(): number {
    return this.used;
  }

  tryReserve(n: number): boolean {
    if (this.used + n > this.capacity) return false;
    this.used += n;
    return true;
  }

  release(n: number): void {
    this.used = Math.max(0, this.used - n);
  }
}
