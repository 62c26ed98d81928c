/**
 * Open connections per tenant (event streams, WebSockets), counted in this process's
 * memory (a connection lives in one process; per process with `--workers N`, per isolate
 * on Workers).
 */
export class StreamSlots {
  private readonly open = new Map<string, number>();

  constructor(readonly limit: number | null) {}

  inUse(tenant: string): number {
    return this.open.get(tenant) ?? 0;
  }

  /** Takes a slot; false when the tenant is at its limit. Give it back with `release` exactly once. */
  tryAcquire(tenant: string): boolean {
    const n = this.inUse(tenant);
    if (this.limit !== null && n >= this.limit) return false;
    this.open.set(tenant, n + 1);
    return true;
  }

  release(tenant: string): void {
    const n = this.inUse(tenant) - 1;
    if (n > 0) this.open.set(tenant, n);
    else this.open.delete(tenant);
  }
}
