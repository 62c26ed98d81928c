import { z } from "zod";
import { DEFAULT_QUOTAS, type TenantQuotas } from "./quotas.js";

/** The variables that set quotas, on Node (`process.env`) and on a Worker (vars): a positive integer, or `off`. */
export interface QuotaVars {
  EDGEGYM_ADMIN_API_KEYS?: string | undefined;
  EDGEGYM_QUOTA_OPEN_EPISODES?: string | undefined;
  EDGEGYM_QUOTA_RESETS_PER_SECOND?: string | undefined;
  EDGEGYM_QUOTA_RESET_BURST?: string | undefined;
  EDGEGYM_QUOTA_CONCURRENT_EVALS?: string | undefined;
  EDGEGYM_QUOTA_STORED_BYTES?: string | undefined;
  EDGEGYM_QUOTA_EPISODE_BYTES?: string | undefined;
  EDGEGYM_QUOTA_METADATA_BYTES?: string | undefined;
  EDGEGYM_QUOTA_EVENT_STREAMS?: string | undefined;
  EDGEGYM_QUOTA_SOCKETS?: string | undefined;
  EDGEGYM_QUOTA_SANDBOXES?: string | undefined;
}

/** Each quota: its variable and its key in the config file's `quotas` object. */
const FIELDS = {
  maxOpenEpisodes: ["EDGEGYM_QUOTA_OPEN_EPISODES", "open_episodes"],
  resetsPerSecond: ["EDGEGYM_QUOTA_RESETS_PER_SECOND", "resets_per_second"],
  resetBurst: ["EDGEGYM_QUOTA_RESET_BURST", "reset_burst"],
  maxConcurrentEvals: ["EDGEGYM_QUOTA_CONCURRENT_EVALS", "concurrent_evals"],
  maxStoredBytes: ["EDGEGYM_QUOTA_STORED_BYTES", "stored_bytes"],
  maxEpisodeBytes: ["EDGEGYM_QUOTA_EPISODE_BYTES", "episode_bytes"],
  maxMetadataBytes: ["EDGEGYM_QUOTA_METADATA_BYTES", "metadata_bytes"],
  maxEventStreams: ["EDGEGYM_QUOTA_EVENT_STREAMS", "event_streams"],
  maxSockets: ["EDGEGYM_QUOTA_SOCKETS", "sockets"],
  maxSandboxes: ["EDGEGYM_QUOTA_SANDBOXES", "sandboxes"],
} as const satisfies Record<keyof TenantQuotas, readonly [keyof QuotaVars, string]>;

/** Each quota's variable and file key, for the settings table (src/server/settings.ts). */
export const QUOTA_SETTINGS: readonly (readonly [string, string])[] = Object.values(FIELDS);

const limit = z.union([z.number().int().positive(), z.literal("off")]);

/** The config file's `quotas` object: `{"open_episodes": 500, "event_streams": "off", …}`. */
export const QuotasFileSection = z
  .object(Object.fromEntries(Object.values(FIELDS).map(([, key]) => [key, limit.optional()])) as Record<(typeof FIELDS)[keyof typeof FIELDS][1], z.ZodOptional<typeof limit>>)
  .strict();
export type QuotasFileSection = z.infer<typeof QuotasFileSection>;

function quotaVar(name: string, raw: string | undefined): number | "off" | undefined {
  if (raw === undefined || raw.trim() === "") return undefined;
  if (raw.trim().toLowerCase() === "off") return "off";
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer or "off", got "${raw}"`);
  return n;
}

/**
 * The quotas from variables, then the file section; a variable wins. Undefined when
 * neither sets any (the defaults apply). `off` turns one quota off; the reset burst
 * cannot be off (it is the bucket's size; turn `resets_per_second` off instead).
 */
export function quotasFromSettings(vars: QuotaVars, file: QuotasFileSection = {}): TenantQuotas | undefined {
  const out: TenantQuotas = { ...DEFAULT_QUOTAS };
  let any = false;
  for (const [field, [name, key]] of Object.entries(FIELDS) as [keyof TenantQuotas, (typeof FIELDS)[keyof TenantQuotas]][]) {
    const value = quotaVar(name, vars[name]) ?? file[key];
    if (value === undefined) continue;
    any = true;
    if (field === "resetBurst") {
      if (value === "off") throw new Error(`${name} / quotas.${key} cannot be "off": it is the reset bucket's size (turn resets_per_second off instead)`);
      out.resetBurst = value;
    } else {
      out[field] = value === "off" ? null : value;
    }
  }
  return any ? out : undefined;
}
