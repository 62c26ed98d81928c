import { readFileSync } from "node:fs";
import { z } from "zod";
import { positiveIntVar as positiveInt, serverConfigFromVars } from "../config-vars.js";
import type { ServerConfig } from "../context.js";
import { JudgesConfig } from "../../envs/judges-config.js";
import { MathDatasetConfig, mathDatasetConfigFromVar } from "../../envs/builtin/math-dataset/index.js";
import { QuotasFileSection } from "../tenants/quota-config.js";

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
    env_version_check: z.enum(["strict", "version", "off"]).optional(),
    /** The `math-dataset` environment's data (src/envs/builtin/math-dataset); read by loadMathDatasetConfig. */
    math_dataset: MathDatasetConfig.optional(),
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
  // The settings the Worker reads too, from one reader; then those only Node has.
  const out = serverConfigFromVars(env, file);
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
  const maxRollouts = positiveInt("EDGEGYM_EVAL_MAX_ROLLOUTS", env.EDGEGYM_EVAL_MAX_ROLLOUTS) ?? file.eval_max_rollouts;
  if (maxRollouts !== undefined) out.evalMaxRollouts = maxRollouts;
  const weak = env.EDGEGYM_PYTHON_ALLOW_WEAK_SANDBOX;
  if (weak !== undefined && weak !== "" && !["1", "true", "0", "false"].includes(weak)) throw new Error(`EDGEGYM_PYTHON_ALLOW_WEAK_SANDBOX must be 1, true, 0 or false, got "${weak}"`);
  const allowWeak = weak === "1" || weak === "true" ? true : weak === "0" || weak === "false" ? false : file.python_allow_weak_sandbox;
  if (allowWeak !== undefined) out.pythonAllowWeakSandbox = allowWeak;
  return out;
}

/**
 * The `math-dataset` environment's settings: `EDGEGYM_MATH_DATASET` (JSON, or just a
 * source path or URL), else the config file's `math_dataset`; undefined when neither is
 * set (the environment is then not served).
 */
export function loadMathDatasetConfig(env: NodeJS.ProcessEnv, configPath?: string): MathDatasetConfig | undefined {
  const fromVar = mathDatasetConfigFromVar(env.EDGEGYM_MATH_DATASET);
  if (fromVar) return fromVar;
  const path = configPath ?? env.EDGEGYM_CONFIG;
  if (!path) return undefined;
  const parsed = ConfigFile.safeParse(JSON.parse(readFileSync(path, "utf8")));
  return parsed.success ? parsed.data.math_dataset : undefined;
}
