import { EngineError } from "../../envs/index.js";
import type { SandboxProvider } from "../../envs/sandbox/types.js";
import { boxOwner, tenantTag } from "./box-names.js";
import { SANDBOX_LABELS } from "./labels.js";

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

/** What a reset asks for: `count` new boxes (a fork makes several at once), or a claim of a warm box that exists already. */
export interface AdmissionRequest {
  count?: number;
  claim?: boolean;
}

/**
 * Admission before a box is created, cheapest check first: the process's creation rate (a
 * token bucket: a batch of resets at once, then the rate), then the boxes of the database
 * (episodes' and warm ones: every container counts against the host) and the tenant's
 * episodes' boxes, counted from the labels and names on the daemon, so every server
 * process on the host sees the same count and a crashed process's boxes still count until
 * the sweep removes them. A claim of a warm box creates nothing, so only the tenant's cap
 * applies to it. Past any of them a reset is 429 with Retry-After; nothing waits.
 *
 * The counts are read, then the box is created: two resets racing for the last slot can
 * both pass, so a cap may be exceeded by the resets in flight at that instant, never more.
 */
export function sandboxAdmission(options: SandboxAdmissionOptions): (tenant: string | undefined, request?: AdmissionRequest) => Promise<void> {
  const now = options.now ?? Date.now;
  const capacity = options.createsPerMinute;
  let tokens = capacity;
  let refilledAt = now();
  return async (tenant, request = {}) => {
    const count = request.claim ? 0 : Math.max(1, request.count ?? 1);
    const t = now();
    tokens = Math.min(capacity, tokens + ((t - refilledAt) / 60_000) * capacity);
    refilledAt = t;
    if (count > capacity) {
      refuse(`this server creates at most ${capacity} sandboxes a minute (EDGEGYM_SANDBOX_CREATES_PER_MINUTE), fewer than the ${count} asked for at once`, { quota: "sandbox_creates_per_minute", limit: capacity }, 60);
    }
    if (tokens < count) {
      refuse(`this server creates at most ${capacity} sandboxes a minute (EDGEGYM_SANDBOX_CREATES_PER_MINUTE); retry shortly`, { quota: "sandbox_creates_per_minute", limit: capacity }, Math.ceil(((count - tokens) * 60) / capacity));
    }
    const boxes = await options.provider.list({ [SANDBOX_LABELS.db]: options.dbLabel });
    const owners = boxes.map((box) => boxOwner(box, options.dbLabel));
    if (count > 0 && boxes.length + count > options.maxLive) {
      refuse(`this server holds ${boxes.length} live sandboxes, its limit (EDGEGYM_SANDBOX_MAX_LIVE) is ${options.maxLive}; close or score finished episodes, or retry`, { quota: "sandboxes", limit: options.maxLive, in_use: boxes.length }, 5);
    }
    if (tenant !== undefined && options.maxPerTenant !== null) {
      const tag = await tenantTag(tenant);
      const mine = owners.filter((o) => o.kind === "episode" && (o.tenant === tenant || o.tenantTag === tag)).length;
      if (mine + Math.max(1, count) > options.maxPerTenant) {
        refuse(`over this API key's quota sandboxes (${mine} live, limit ${options.maxPerTenant}); close or score finished episodes first`, { quota: "sandboxes", limit: options.maxPerTenant, in_use: mine }, 5);
      }
    }
    tokens -= count;
  };
}
