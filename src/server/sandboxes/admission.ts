import { EngineError } from "../../envs/index.js";
import type { SandboxProvider } from "../../envs/sandbox/types.js";
import { SANDBOX_LABELS } from "./janitor.js";

export interface SandboxAdmissionOptions {
  provider: SandboxProvider;
  dbLabel: string;
  /** Live boxes of this database at once (EDGEGYM_SANDBOX_MAX_LIVE). */
  maxLive: number;
  /** Live boxes of one tenant (the `sandboxes` quota); null: no per-tenant cap. */
  maxPerTenant: number | null;
  /** Boxes this process may create per minute, and at once (EDGEGYM_SANDBOX_CREATES_PER_MINUTE). */
  createsPerMinute: number;
  now?: () => number;
}

function refuse(message: string, details: Record<string, unknown>, retryAfterSeconds: number): never {
  throw new EngineError("rate_limited", message, { ...details, retry_after_seconds: retryAfterSeconds });
}

/**
 * Admission before a box is created, cheapest check first: the process's creation rate (a
 * token bucket: a batch of resets at once, then the rate), then the live boxes of the
 * database and of the tenant, counted from the labels on the daemon, so every server
 * process on the host sees the same count and a crashed process's boxes still count until
 * the sweep removes them. Past any of them a reset is 429 with Retry-After; nothing waits.
 *
 * The counts are read, then the box is created: two resets racing for the last slot can
 * both pass, so a cap may be exceeded by the resets in flight at that instant, never more.
 */
export function sandboxAdmission(options: SandboxAdmissionOptions): (tenant: string | undefined) => Promise<void> {
  const now = options.now ?? Date.now;
  const capacity = options.createsPerMinute;
  let tokens = capacity;
  let refilledAt = now();
  return async (tenant) => {
    const t = now();
    tokens = Math.min(capacity, tokens + ((t - refilledAt) / 60_000) * capacity);
    refilledAt = t;
    if (tokens < 1) {
      refuse(`this server creates at most ${capacity} sandboxes a minute (EDGEGYM_SANDBOX_CREATES_PER_MINUTE); retry shortly`, { quota: "sandbox_creates_per_minute", limit: capacity }, Math.ceil(((1 - tokens) * 60) / capacity));
    }
    const owned = { [SANDBOX_LABELS.db]: options.dbLabel, [SANDBOX_LABELS.role]: "episode" };
    const live = await options.provider.list(owned);
    if (live.length >= options.maxLive) {
      refuse(`this server holds ${live.length} live sandboxes, its limit (EDGEGYM_SANDBOX_MAX_LIVE); close or score finished episodes, or retry`, { quota: "sandboxes", limit: options.maxLive, in_use: live.length }, 5);
    }
    if (tenant !== undefined && options.maxPerTenant !== null) {
      const mine = live.filter((box) => box.labels[SANDBOX_LABELS.tenant] === tenant).length;
      if (mine >= options.maxPerTenant) {
        refuse(`over this API key's quota sandboxes (${mine} live, limit ${options.maxPerTenant}); close or score finished episodes first`, { quota: "sandboxes", limit: options.maxPerTenant, in_use: mine }, 5);
      }
    }
    tokens -= 1;
  };
}
