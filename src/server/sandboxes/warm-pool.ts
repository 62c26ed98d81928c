import type { SandboxProvider, SandboxRecord, SandboxSpec } from "../../envs/sandbox/types.js";
import { boxOwner, claimedBoxName, warmBoxName } from "./box-names.js";
import { SANDBOX_LABELS } from "./labels.js";

export interface WarmPoolOptions {
  provider: SandboxProvider;
  dbLabel: string;
  /** Unclaimed boxes to keep per pool (EDGEGYM_SANDBOX_WARM); 0 turns the pool off. */
  perPool: number;
  /** Boxes of the database at once (EDGEGYM_SANDBOX_MAX_LIVE): a refill never takes the last slots. */
  maxLive: number;
  log?: (message: string) => void;
}

interface Pool {
  spec: SandboxSpec;
  /** Names of unclaimed boxes this process started, oldest first: claimed without asking the daemon for a list. */
  ready: string[];
  filling: Promise<void> | null;
  /** A claim came while a refill ran: run it once more. */
  again: boolean;
}

/** Claims tried per reset before it creates a box of its own (each miss is a box another process took first). */
const CLAIM_TRIES = 8;

/** The spec a pool is keyed by: everything that makes two boxes interchangeable (not the labels, which name an owner). */
async function poolKey(spec: SandboxSpec): Promise<string> {
  const identity = JSON.stringify([spec.image, spec.limits, spec.network, spec.workdir ?? null, Object.entries(spec.env ?? {}).sort()]);
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(identity)));
  return Array.from(digest.subarray(0, 8), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * Started containers waiting for resets (`EDGEGYM_SANDBOX_WARM` per pool, a pool being one
 * spec: a task's image, limits, network and settings). A reset claims one by renaming it
 * (the provider's claim is a test-and-set, so two resets never share a box, even across
 * server processes), and the pool starts a replacement in the background. Warm boxes count toward
 * `EDGEGYM_SANDBOX_MAX_LIVE`; a refill stops short of it. `drain` removes this process's
 * unclaimed boxes at shutdown; after a crash the sweep removes them (janitor.ts).
 */
export class WarmPool {
  private readonly pools = new Map<string, Pool>();
  private closed = false;

  constructor(private readonly options: WarmPoolOptions) {}

  get enabled(): boolean {
    return this.options.perPool > 0;
  }

  /** Keys of the pools this process keeps (the sweep spares their unclaimed boxes). */
  keys(): ReadonlySet<string> {
    return new Set(this.pools.keys());
  }

  /** Starts keeping a pool for `spec` (labels ignored) and fills it in the background. */
  async prime(spec: SandboxSpec): Promise<string> {
    const key = await poolKey(spec);
    this.pool(key, spec);
    this.refill(key);
    return key;
  }

  /**
   * A started box made from `spec`, now named for `episodeId`, or null when the pool has
   * none (the caller creates one). Either way the pool is topped up in the background.
   */
  async claim(spec: SandboxSpec, episodeId: string, tenant: string | undefined): Promise<SandboxRecord | null> {
    if (!this.enabled || this.closed) return null;
    const key = await poolKey(spec);
    const pool = this.pool(key, spec);
    const newName = await claimedBoxName(this.options.dbLabel, episodeId, tenant);
    try {
      for (let tries = 0; tries < CLAIM_TRIES; tries++) {
        // This process's own boxes first (no list call); then any process's, from the daemon.
        const name = pool.ready.shift() ?? (await this.listUnclaimed(key))[0];
        if (name === undefined) return null;
        // A box that cannot be claimed (stopped, broken) is passed over: the sweep removes it.
        const id = await this.options.provider.claim(name, newName).catch((err: unknown) => {
          this.options.log?.(`warm pool ${key}: claim of ${name} failed: ${err instanceof Error ? err.message : String(err)}`);
          return null;
        });
        if (id !== null) return { provider: this.options.provider.name, id, image: spec.image, imageDigest: "" };
      }
      return null;
    } finally {
      this.refill(key);
    }
  }

  /** Removes the unclaimed boxes this process started (a box claimed meanwhile has another name, and stays). */
  async drain(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...this.pools.values()].map((p) => p.filling));
    const names = [...this.pools.values()].flatMap((p) => p.ready.splice(0));
    await Promise.allSettled(names.map((name) => this.options.provider.destroy(name)));
  }

  private pool(key: string, spec: SandboxSpec): Pool {
    let pool = this.pools.get(key);
    if (!pool) {
      pool = { spec: { ...spec, labels: { [SANDBOX_LABELS.db]: this.options.dbLabel, [SANDBOX_LABELS.role]: "warm", [SANDBOX_LABELS.pool]: key } }, ready: [], filling: null, again: false };
      this.pools.set(key, pool);
    }
    return pool;
  }

  /** Unclaimed running boxes of the pool on the daemon, oldest first. */
  private async listUnclaimed(key: string): Promise<string[]> {
    const boxes = await this.options.provider.list({ [SANDBOX_LABELS.db]: this.options.dbLabel, [SANDBOX_LABELS.role]: "warm", [SANDBOX_LABELS.pool]: key });
    return boxes
      .filter((box) => box.running && box.name !== undefined && boxOwner(box, this.options.dbLabel).kind === "warm")
      .sort((a, b) => a.createdAtMs - b.createdAtMs)
      .map((box) => box.name as string);
  }

  /** Tops the pool up to `perPool` unclaimed boxes, one at a time, never past `maxLive` boxes of the database. Never throws. */
  private refill(key: string): void {
    const pool = this.pools.get(key);
    if (!pool || !this.enabled || this.closed) return;
    if (pool.filling) {
      pool.again = true;
      return;
    }
    pool.filling = (async () => {
      do {
        pool.again = false;
        const unclaimed = await this.listUnclaimed(key);
        // Forget names another process claimed; keep the order of our own.
        pool.ready = pool.ready.filter((name) => unclaimed.includes(name));
        let missing = this.options.perPool - unclaimed.length;
        while (missing > 0 && !this.closed) {
          const all = await this.options.provider.list({ [SANDBOX_LABELS.db]: this.options.dbLabel });
          if (all.length >= this.options.maxLive) break;
          const name = warmBoxName(this.options.dbLabel);
          await this.options.provider.create(pool.spec, { name });
          if (this.closed) {
            await this.options.provider.destroy(name);
            break;
          }
          pool.ready.push(name);
          missing--;
        }
      } while (pool.again && !this.closed);
    })()
      .catch((err: unknown) => this.options.log?.(`warm pool ${key}: refill failed: ${err instanceof Error ? err.message : String(err)}`))
      .finally(() => {
        pool.filling = null;
      });
  }
}
