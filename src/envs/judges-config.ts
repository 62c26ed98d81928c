import { z } from "zod";
import type { JudgeCatalog, OperatorJudge } from "./judges.js";

const JudgeName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, "a judge name is 1-64 letters, digits, `_`, `.` or `-`");

/**
 * One named judge in the config file (`judges`) or in `EDGEGYM_JUDGES` (the same JSON,
 * for a Worker). The key is named, not written: `api_key_env` is the variable (or Worker
 * secret) that holds it, so the file can be shared without the secret.
 */
export const JudgeConfigEntry = z
  .object({
    base_url: z.url(),
    model: z.string().min(1).optional(),
    models: z.array(z.string().min(1)).min(1).optional(),
    api_key_env: z.string().min(1).optional(),
  })
  .strict()
  .refine((j) => (j.model === undefined) !== (j.models === undefined), "give either `model` or `models` (the first is the default)");
export type JudgeConfigEntry = z.infer<typeof JudgeConfigEntry>;

export const JudgesConfig = z.record(JudgeName, JudgeConfigEntry);
export type JudgesConfig = z.infer<typeof JudgesConfig>;

/** The variables that configure judges; `process.env` on Node, vars and secrets on a Worker. */
export interface JudgeVars {
  /** The `default` judge's OpenAI-compatible base URL (…/v1). */
  EDGEGYM_JUDGE_BASE_URL?: string | undefined;
  /** Its model, or comma-separated models a client may choose from (the first is the default). */
  EDGEGYM_JUDGE_MODEL?: string | undefined;
  /** The key sent to it, and only to it. */
  EDGEGYM_JUDGE_API_KEY?: string | undefined;
  /** JSON object of named judges, as `judges` in the config file. */
  EDGEGYM_JUDGES?: string | undefined;
  /** Which judge a client that names none gets. */
  EDGEGYM_DEFAULT_JUDGE?: string | undefined;
}

const trimmed = (v: string | undefined): string | undefined => (v === undefined || v.trim() === "" ? undefined : v.trim());

/**
 * The operator's judges: `judges` from the config file and `EDGEGYM_JUDGES`, plus a judge
 * named `default` from `EDGEGYM_JUDGE_BASE_URL` / `EDGEGYM_JUDGE_MODEL` /
 * `EDGEGYM_JUDGE_API_KEY` (the variables win over a file judge of the same name). The
 * default judge: `EDGEGYM_DEFAULT_JUDGE`, else `default_judge` from the file, else the one
 * named `default`, else the only judge. Errors name the setting to fix.
 */
export function judgeCatalogFrom(vars: JudgeVars & Record<string, unknown>, file: { judges?: JudgesConfig | undefined; default_judge?: string | undefined } = {}): JudgeCatalog {
  const entries: [string, JudgeConfigEntry][] = Object.entries(file.judges ?? {});
  const json = trimmed(vars.EDGEGYM_JUDGES);
  if (json !== undefined) {
    let raw: unknown;
    try {
      raw = JSON.parse(json);
    } catch {
      throw new Error("EDGEGYM_JUDGES must be a JSON object of judges, e.g. {\"gpt\":{\"base_url\":\"https://api.openai.com/v1\",\"model\":\"gpt-4.1-mini\",\"api_key_env\":\"OPENAI_API_KEY\"}}");
    }
    const parsed = JudgesConfig.safeParse(raw);
    if (!parsed.success) throw new Error(`EDGEGYM_JUDGES: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
    entries.push(...Object.entries(parsed.data));
  }
  const judges = new Map<string, OperatorJudge>();
  for (const [name, entry] of entries) {
    let apiKey: string | undefined;
    if (entry.api_key_env !== undefined) {
      const value = vars[entry.api_key_env];
      apiKey = typeof value === "string" ? trimmed(value) : undefined;
      if (apiKey === undefined) throw new Error(`judge "${name}": api_key_env names ${entry.api_key_env}, which is not set`);
    }
    judges.set(name, { name, baseURL: entry.base_url, models: entry.models ?? [entry.model as string], apiKey });
  }
  const baseURL = trimmed(vars.EDGEGYM_JUDGE_BASE_URL);
  const models = (vars.EDGEGYM_JUDGE_MODEL ?? "").split(",").map((m) => m.trim()).filter(Boolean);
  if (baseURL !== undefined || models.length) {
    if (baseURL === undefined || !models.length) throw new Error("set both EDGEGYM_JUDGE_BASE_URL and EDGEGYM_JUDGE_MODEL for the default judge, or neither");
    if (!z.url().safeParse(baseURL).success) throw new Error(`EDGEGYM_JUDGE_BASE_URL must be a URL, got "${baseURL}"`);
    judges.set("default", { name: "default", baseURL, models, apiKey: trimmed(vars.EDGEGYM_JUDGE_API_KEY) });
  }
  const explicit = trimmed(vars.EDGEGYM_DEFAULT_JUDGE) ?? file.default_judge;
  if (explicit !== undefined && !judges.has(explicit)) {
    throw new Error(`the default judge "${explicit}" (EDGEGYM_DEFAULT_JUDGE / default_judge) is not among the configured judges: ${[...judges.keys()].join(", ") || "none"}`);
  }
  const defaultJudge = explicit ?? (judges.has("default") ? "default" : judges.size === 1 ? [...judges.keys()][0]! : null);
  return { judges: [...judges.values()], defaultJudge };
}
