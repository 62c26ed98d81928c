import { readFileSync } from "node:fs";
import { z } from "zod";
import { parseApiKeys, positiveIntVar as positiveInt } from "../config-vars.js";
import type { ServerConfig } from "../context.js";
import { judgeCatalogFrom, JudgesConfig } from "../../envs/judges-config.js";
import { QuotasFileSection, quotasFromSettings } from "../tenants/quota-config.js";

/** A config file (`EDGEGYM_CONFIG=path.json` or `--config`): every field optional. */
const ConfigFile = z
  .object({
    api_keys: z.array(z.string().min(1)).optional(),
    admin_api_keys: z.array(z.string().min(1)).optional(),
    quotas: QuotasFileSection.optional(),
    body_limit_bytes: z.number().int().positive().optional(),
    default_ttl_seconds: z.number().int().positive().optional(),
    max_ttl_seconds: z.number().int().positive().optional(),
    eval_base_url: z.url().optional(),
    eval_api_key: z.string().min(1).optional(),
    eval_model: z.string().min(1).optional(),
    eval_max_concurrent_requests: z.number().int().positive().optional(),
    eval_retention_days: z.number().int().positive().optional(),
    eval_max_tokens: z.number().int().positive().optional(),
    judges: JudgesConfig.optional(),
    default_judge: z.string().min(1).optional(),
    eval_max_rollouts: z.number().int().positive().optional(),
    python_allow_weak_sandbox: z.boolean().optional(),
  })
  .strict();

/**
 * Server settings from the environment, then the config file; the environment wins.
 * API keys from both are accepted.
 */
export function loadServerConfig(env: NodeJS.ProcessEnv, configPath?: string): Partial<ServerConfig> {
  const path = configPath ?? env.EDGEGYM_CONFIG;
  let file: z.infer<typeof ConfigFile> = {};
  if (path) {
    const parsed = ConfigFile.safeParse(JSON.parse(readFileSync(path, "utf8")));
    if (!parsed.success) throw new Error(`config file ${path}: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
    file = parsed.data;
  }
  const envKeys = parseApiKeys(env.EDGEGYM_API_KEYS);
  const out: Partial<ServerConfig> = { apiKeys: [...new Set([...envKeys, ...(file.api_keys ?? [])])] };
  const body = positiveInt("EDGEGYM_BODY_LIMIT_BYTES", env.EDGEGYM_BODY_LIMIT_BYTES) ?? file.body_limit_bytes;
  const ttl = positiveInt("EDGEGYM_TTL_SECONDS", env.EDGEGYM_TTL_SECONDS) ?? file.default_ttl_seconds;
  const maxTtl = positiveInt("EDGEGYM_MAX_TTL_SECONDS", env.EDGEGYM_MAX_TTL_SECONDS) ?? file.max_ttl_seconds;
  if (body !== undefined) out.bodyLimitBytes = body;
  if (ttl !== undefined) out.defaultTtlSeconds = ttl;
  if (maxTtl !== undefined) out.maxTtlSeconds = maxTtl;
  const evalBaseUrl = env.EDGEGYM_EVAL_BASE_URL || file.eval_base_url;
  const evalApiKey = env.EDGEGYM_EVAL_API_KEY || file.eval_api_key;
  const evalModel = env.EDGEGYM_EVAL_MODEL || file.eval_model;
  const evalSlots = positiveInt("EDGEGYM_EVAL_MAX_CONCURRENT_REQUESTS", env.EDGEGYM_EVAL_MAX_CONCURRENT_REQUESTS) ?? file.eval_max_concurrent_requests;
  if (evalBaseUrl) out.evalBaseUrl = evalBaseUrl;
  if (evalApiKey) out.evalApiKey = evalApiKey;
  if (evalModel) out.evalModel = evalModel;
  if (evalSlots !== undefined) out.evalMaxConcurrentRequests = evalSlots;
  const lease = positiveInt("EDGEGYM_EVAL_LEASE_SECONDS", env.EDGEGYM_EVAL_LEASE_SECONDS);
  if (lease !== undefined) out.evalLeaseMs = lease * 1000;
  const retention = positiveInt("EDGEGYM_EVAL_RETENTION_DAYS", env.EDGEGYM_EVAL_RETENTION_DAYS) ?? file.eval_retention_days;
  if (retention !== undefined) out.evalRetentionDays = retention;
  const evalMaxTokens = positiveInt("EDGEGYM_EVAL_MAX_TOKENS", env.EDGEGYM_EVAL_MAX_TOKENS) ?? file.eval_max_tokens;
  if (evalMaxTokens !== undefined) out.evalMaxTokens = evalMaxTokens;
  const judges = judgeCatalogFrom(env, { judges: file.judges, default_judge: file.default_judge });
  if (judges.judges.length) out.judges = judges;
  // Tenancy (src/server/tenants): admin keys from both sources, quotas variable-first.
  const adminKeys = [...new Set([...parseApiKeys(env.EDGEGYM_ADMIN_API_KEYS), ...(file.admin_api_keys ?? [])])];
  if (adminKeys.length) out.adminApiKeys = adminKeys;
  const quotas = quotasFromSettings(env, file.quotas);
  if (quotas) out.quotas = quotas;
  const maxRollouts = positiveInt("EDGEGYM_EVAL_MAX_ROLLOUTS", env.EDGEGYM_EVAL_MAX_ROLLOUTS) ?? file.eval_max_rollouts;
  if (maxRollouts !== undefined) out.evalMaxRollouts = maxRollouts;
  const weak = env.EDGEGYM_PYTHON_ALLOW_WEAK_SANDBOX;
  if (weak !== undefined && weak !== "" && !["1", "true", "0", "false"].includes(weak)) throw new Error(`EDGEGYM_PYTHON_ALLOW_WEAK_SANDBOX must be 1, true, 0 or false, got "${weak}"`);
  const allowWeak = weak === "1" || weak === "true" ? true : weak === "0" || weak === "false" ? false : file.python_allow_weak_sandbox;
  if (allowWeak !== undefined) out.pythonAllowWeakSandbox = allowWeak;
  return out;
}
