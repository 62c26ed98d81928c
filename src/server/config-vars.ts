import type { ServerConfig } from "./context.js";
import type { EnvVersionCheck } from "../envs/env-versions.js";
import { judgeCatalogFrom, type JudgesConfig, type JudgeVars } from "../envs/judges-config.js";
import { quotasFromSettings, type QuotasFileSection, type QuotaVars } from "./tenants/quota-config.js";

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
  /** strict (default), version or off: how episodes are held to the environment they started on (docs/versions.md). */
  EDGEGYM_ENV_VERSION_CHECK?: string | undefined;
  /** Requests one /v1/ws socket may have running at once (default 256). */
  EDGEGYM_WS_MAX_IN_FLIGHT?: string | undefined;
  /** /v1/ws sockets one process or isolate holds at once (default 4096). */
  EDGEGYM_WS_MAX_SOCKETS?: string | undefined;
  /** The `math-dataset` environment's data: a URL (a path too on Node), or its settings as JSON; unset: not served. */
  EDGEGYM_MATH_DATASET?: string | undefined;
}

const ENV_VERSION_CHECKS = ["strict", "version", "off"] as const;

/** `undefined` when unset or empty; an error naming the variable for anything but strict, version or off. */
export function envVersionCheckVar(raw: string | undefined): EnvVersionCheck | undefined {
  if (raw === undefined || raw === "") return undefined;
  if (!(ENV_VERSION_CHECKS as readonly string[]).includes(raw)) throw new Error(`EDGEGYM_ENV_VERSION_CHECK must be strict, version or off, got "${raw}"`);
  return raw as EnvVersionCheck;
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

/**
 * The settings both runtimes share, as the Node config file spells them. A Worker has no
 * file; on Node these fill in what the variables leave unset.
 */
export interface SharedFileSettings {
  api_keys?: string[] | undefined;
  admin_api_keys?: string[] | undefined;
  body_limit_bytes?: number | undefined;
  default_ttl_seconds?: number | undefined;
  max_ttl_seconds?: number | undefined;
  eval_retention_days?: number | undefined;
  eval_max_tokens?: number | undefined;
  judges?: JudgesConfig | undefined;
  default_judge?: string | undefined;
  quotas?: QuotasFileSection | undefined;
  env_version_check?: EnvVersionCheck | undefined;
}

/**
 * Only the settings that are set: the rest keep createApp's defaults. Variables win over
 * `file`; keys from both are accepted. The one reader of these settings for both runtimes.
 */
export function serverConfigFromVars(vars: ConfigVars, file: SharedFileSettings = {}): Partial<ServerConfig> {
  const out: Partial<ServerConfig> = { apiKeys: [...new Set([...parseApiKeys(vars.EDGEGYM_API_KEYS), ...(file.api_keys ?? [])])] };
  const body = positiveIntVar("EDGEGYM_BODY_LIMIT_BYTES", vars.EDGEGYM_BODY_LIMIT_BYTES) ?? file.body_limit_bytes;
  const ttl = positiveIntVar("EDGEGYM_TTL_SECONDS", vars.EDGEGYM_TTL_SECONDS) ?? file.default_ttl_seconds;
  const maxTtl = positiveIntVar("EDGEGYM_MAX_TTL_SECONDS", vars.EDGEGYM_MAX_TTL_SECONDS) ?? file.max_ttl_seconds;
  if (body !== undefined) out.bodyLimitBytes = body;
  if (ttl !== undefined) out.defaultTtlSeconds = ttl;
  if (maxTtl !== undefined) out.maxTtlSeconds = maxTtl;
  const retention = positiveIntVar("EDGEGYM_EVAL_RETENTION_DAYS", vars.EDGEGYM_EVAL_RETENTION_DAYS) ?? file.eval_retention_days;
  if (retention !== undefined) out.evalRetentionDays = retention;
  const evalMaxTokens = positiveIntVar("EDGEGYM_EVAL_MAX_TOKENS", vars.EDGEGYM_EVAL_MAX_TOKENS) ?? file.eval_max_tokens;
  if (evalMaxTokens !== undefined) out.evalMaxTokens = evalMaxTokens;
  const versionCheck = envVersionCheckVar(vars.EDGEGYM_ENV_VERSION_CHECK) ?? file.env_version_check;
  if (versionCheck !== undefined) out.envVersionCheck = versionCheck;
  const wsInFlight = positiveIntVar("EDGEGYM_WS_MAX_IN_FLIGHT", vars.EDGEGYM_WS_MAX_IN_FLIGHT);
  if (wsInFlight !== undefined) out.socketMaxInFlight = wsInFlight;
  const wsSockets = positiveIntVar("EDGEGYM_WS_MAX_SOCKETS", vars.EDGEGYM_WS_MAX_SOCKETS);
  if (wsSockets !== undefined) out.socketMaxOpen = wsSockets;
  // A judge's api_key_env names another var or secret of the same set.
  const judges = judgeCatalogFrom(vars as ConfigVars & Record<string, unknown>, { judges: file.judges, default_judge: file.default_judge });
  if (judges.judges.length) out.judges = judges;
  // Tenancy (src/server/tenants): admin keys from both sources, quotas variable-first.
  const adminKeys = [...new Set([...parseApiKeys(vars.EDGEGYM_ADMIN_API_KEYS), ...(file.admin_api_keys ?? [])])];
  if (adminKeys.length) out.adminApiKeys = adminKeys;
  const quotas = quotasFromSettings(vars, file.quotas);
  if (quotas) out.quotas = quotas;
  return out;
}
