import { ApiError } from "../errors.js";

/**
 * Per-tenant quotas. Each is a number, or null for off. The defaults are meant to be
 * out of reach of a normal trainer and in reach of an abuser (docs/security-tenants.md
 * says why each number):
 *
 * - `maxOpenEpisodes`: active, unexpired episodes of a tenant. Counted in the database
 *   (global across processes and isolates). 10,000: a GRPO batch of 256 prompts × 16
 *   generations is 4,096 at once.
 * - `resetsPerSecond` / `resetBurst`: a token bucket on resets, in process memory (per
 *   process with `--workers N`, per isolate on Workers). 250/s sustained, 5,000 at once:
 *   a trainer resets a batch, then waits seconds to minutes for generation and backward
 *   passes; one client looping resets managed 734/s.
 * - `maxConcurrentEvals`: queued + running eval jobs of a tenant, counted in the
 *   database. 8: the server-wide model-request budget (64) is shared by all jobs anyway.
 * - `maxStoredBytes`: the `stored_bytes` of a tenant's unexpired episodes (what their rows
 *   hold: metadata, args, transcript, replies), counted in the database at reset. 2 GiB.
 * - `maxEpisodeBytes`: one episode's `stored_bytes`, enforced inside the step's
 *   conditional UPDATE. 8 MiB: ~2M characters of transcript, stored twice (messages and
 *   replies), is past any context window served today.
 * - `maxMetadataBytes`: a reset's `metadata` (a client's tag: run id, sample id). 64 KiB.
 * - `maxEventStreams`: open `GET /v1/evals/{id}/events` streams, in process memory. 16:
 *   one per concurrent eval job and a few viewers; 500 streams slowed every request.
 * - `maxSockets`: open WebSockets of `/v1/ws` and `/openenv/{env}/ws` together, in process
 *   memory. 1,024: one `/v1/ws` socket carries a whole GRPO batch, an OpenEnv client
 *   opens one per environment instance, and a quarter of the server's 4,096 leaves room
 *   for three more tenants as big (one key holding all 4,096 locked every other key out).
 * - `maxSandboxes`: live containers of sandboxed episodes (`--env harbor:DIR`), counted
 *   from their labels on the Docker daemon (global across processes on one host). 32: half
 *   of a server's 64, so one key cannot take every box.
 */
export interface TenantQuotas {
  maxOpenEpisodes: number | null;
  resetsPerSecond: number | null;
  resetBurst: number;
  maxConcurrentEvals: number | null;
  maxStoredBytes: number | null;
  maxEpisodeBytes: number | null;
  maxMetadataBytes: number | null;
  maxEventStreams: number | null;
  maxSockets: number | null;
  maxSandboxes: number | null;
}

export const DEFAULT_QUOTAS: TenantQuotas = {
  maxOpenEpisodes: 10_000,
  resetsPerSecond: 250,
  resetBurst: 5_000,
  maxConcurrentEvals: 8,
  maxStoredBytes: 2 * 1024 ** 3,
  maxEpisodeBytes: 8 * 1024 ** 2,
  maxMetadataBytes: 64 * 1024,
  maxEventStreams: 16,
  maxSockets: 1024,
  maxSandboxes: 32,
};

/** The quota names clients see in `error.details.quota`. */
export type QuotaName = "open_episodes" | "resets_per_second" | "concurrent_evals" | "stored_bytes" | "episode_bytes" | "metadata_bytes" | "event_streams" | "sockets" | "sandboxes";

/**
 * A tenant over one of its quotas: 429 `rate_limited` with Retry-After and
 * `details: {quota, limit, in_use}`. The same code as the server-wide eval budget, so a
 * client that backs off on 429 (the Python client does) needs nothing new; `quota` says
 * which limit it met.
 */
export function quotaExceeded(quota: QuotaName, limit: number, inUse: number, retryAfterSeconds: number, fix: string): ApiError {
  return new ApiError("rate_limited", `over this API key's quota ${quota} (${inUse} in use, limit ${limit}); ${fix}`, { quota, limit, in_use: inUse }, { "Retry-After": String(Math.max(1, Math.ceil(retryAfterSeconds))) });
}

/** UTF-8 length of a string without allocating (TextEncoder would copy a 1 MB metadata to measure it). */
export function utf8Length(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // A surrogate pair is 4 bytes for 2 code units; other code units ≥ 0x800 are 3, ≥ 0x80 are 2.
    if (c >= 0xd800 && c <= 0xdfff) n += 1;
    else if (c >= 0x800) n += 2;
    else if (c >= 0x80) n += 1;
  }
  return n;
}
