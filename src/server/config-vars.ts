import type { ServerConfig } from "./context.js";
import { judgeCatalogFrom, type JudgesConfig, type JudgeVars } from "../envs/judges-config.js";
import { quotasFromSettings, type QuotasFileSection, type QuotaVars } from "./tenants/quota-config.js";
import { APP_SETTINGS, settingValue } from "./settings.js";
import { parseUpstreamsVar, upstreamCatalog, type UpstreamsConfig } from "./model-endpoint/upstreams.js";

export { parseApiKeys } from "./settings.js";

/**
 * The settings both runtimes read from plain string variables: `process.env` on Node,
 * vars and secrets on a Worker. Which variables exist, and how each is parsed, is the
 * table in settings.ts.
 */
export type ConfigVars = JudgeVars & QuotaVars & { readonly [name: `EDGEGYM_${string}`]: string | undefined };

/** The config file's settings that this reader applies (the file's full schema: node/config.ts, from the same table). */
export type SharedFileSettings = Readonly<Record<string, unknown>> & {
  judges?: JudgesConfig | undefined;
  default_judge?: string | undefined;
  quotas?: QuotasFileSection | undefined;
  model_upstreams?: UpstreamsConfig | undefined;
};

/**
 * Only the settings that are set: the rest keep createApp's defaults. Variables win over
 * `file` (API keys from both are accepted). `runtime` "node" adds the settings only
 * `edgegym serve` reads. The one reader of the table's settings for both runtimes.
 */
export function serverConfigFromVars(vars: object, file: SharedFileSettings = {}, runtime: "worker" | "node" = "worker"): Partial<ServerConfig> {
  const values = vars as Readonly<Record<string, unknown>>;
  const out: Partial<ServerConfig> = { apiKeys: [] };
  for (const row of APP_SETTINGS) {
    if (row.runtimes === "node" && runtime !== "node") continue;
    const value = settingValue(row, values, file);
    if (value !== undefined) row.apply?.(out, value);
  }
  // A judge's api_key_env names another var or secret of the same set.
  const judges = judgeCatalogFrom(values as JudgeVars & Record<string, unknown>, { judges: file.judges, default_judge: file.default_judge });
  if (judges.judges.length) out.judges = judges;
  if (runtime === "node") {
    // File upstreams first, the variable's win by name; each key read from the variable it names.
    const raw = typeof values.EDGEGYM_MODEL_UPSTREAMS === "string" && values.EDGEGYM_MODEL_UPSTREAMS.trim() !== "" ? parseUpstreamsVar(values.EDGEGYM_MODEL_UPSTREAMS) : {};
    const merged = { ...(file.model_upstreams ?? {}), ...raw };
    if (Object.keys(merged).length) out.modelUpstreams = upstreamCatalog(merged, values);
  }
  const quotas = quotasFromSettings(values as QuotaVars, file.quotas);
  if (quotas) out.quotas = quotas;
  return out;
}
