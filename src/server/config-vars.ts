import type { ServerConfig } from "./context.js";
import { judgeCatalogFrom, type JudgeVars } from "../envs/judges-config.js";
import { quotasFromSettings, type QuotaVars } from "./tenants/quota-config.js";

/**
 * The settings both runtimes read from plain string variables: `process.env` on Node,
 * vars and secrets on a Worker. Values are strings there, so they are parsed here once.
 */
export interface ConfigVars extends JudgeVars, QuotaVars {
  /** Comma-separated bearer keys, each `name:key` or a bare key; empty or unset leaves /v1 open. */
  EDGEGYM_API_KEYS?: string | undefined;
  EDGEGYM_TTL_SECONDS?: string | undefined;
  EDGEGYM_MAX_TTL_SECONDS?: string | undefined;
  EDGEGYM_BODY_LIMIT_BYTES?: string | undefined;
  /** Days an ended evaluation job is kept before the reaper deletes it; unset keeps them forever. */
  EDGEGYM_EVAL_RETENTION_DAYS?: string | undefined;
  /** Largest max_tokens a server-run eval job may ask for (default 4096). */
  EDGEGYM_EVAL_MAX_TOKENS?: string | undefined;
}

/** `undefined` for an unset or empty variable; an error that names the variable for anything but a positive integer. */
export function positiveIntVar(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined || raw === "") return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return n;
}

/** "sk-a, sk-b" → ["sk-a", "sk-b"], dropping blanks and repeats. */
export function parseApiKeys(raw: string | undefined): string[] {
  return [...new Set((raw ?? "").split(",").map((k) => k.trim()).filter(Boolean))];
}

/** Only the settings that are set: the rest keep createApp's defaults. */
export function serverConfigFromVars(vars: ConfigVars): Partial<ServerConfig> {
  const out: Partial<ServerConfig> = { apiKeys: parseApiKeys(vars.EDGEGYM_API_KEYS) };
  const body = positiveIntVar("EDGEGYM_BODY_LIMIT_BYTES", vars.EDGEGYM_BODY_LIMIT_BYTES);
  const ttl = positiveIntVar("EDGEGYM_TTL_SECONDS", vars.EDGEGYM_TTL_SECONDS);
  const maxTtl = positiveIntVar("EDGEGYM_MAX_TTL_SECONDS", vars.EDGEGYM_MAX_TTL_SECONDS);
  if (body !== undefined) out.bodyLimitBytes = body;
  if (ttl !== undefined) out.defaultTtlSeconds = ttl;
  if (maxTtl !== undefined) out.maxTtlSeconds = maxTtl;
  const retention = positiveIntVar("EDGEGYM_EVAL_RETENTION_DAYS", vars.EDGEGYM_EVAL_RETENTION_DAYS);
  if (retention !== undefined) out.evalRetentionDays = retention;
  const evalMaxTokens = positiveIntVar("EDGEGYM_EVAL_MAX_TOKENS", vars.EDGEGYM_EVAL_MAX_TOKENS);
  if (evalMaxTokens !== undefined) out.evalMaxTokens = evalMaxTokens;
  // A judge's api_key_env names another var or secret of the same set.
  const judges = judgeCatalogFrom(vars as ConfigVars & Record<string, unknown>);
  if (judges.judges.length) out.judges = judges;
  // Tenancy (src/server/tenants): admin keys and per-tenant quotas.
  const adminKeys = parseApiKeys(vars.EDGEGYM_ADMIN_API_KEYS);
  if (adminKeys.length) out.adminApiKeys = adminKeys;
  const quotas = quotasFromSettings(vars);
  if (quotas) out.quotas = quotas;
  return out;
}
