import type { ParseArgsConfig } from "node:util";
import { builtinEnvs, EnvRegistry, judgeCatalogFrom } from "../../envs/index.js";
import { loadEnvModules } from "../../envs/load-env-modules.node.js";

/*
 * What `edgegym eval` and `edgegym generate` read alike: the model endpoint flags, the
 * scope flags, numbers and JSON objects given on the command line, and the registry of
 * environments (built-ins plus --env-module, judges from the operator's environment).
 */

type Options = NonNullable<ParseArgsConfig["options"]>;

/** Flags both commands take, with the same short names (eval's usage documents them). */
export const SHARED_OPTIONS = {
  model: { type: "string", short: "m" },
  "base-url": { type: "string", short: "b" },
  "api-key-var": { type: "string", short: "k" },
  "max-tokens": { type: "string", short: "t" },
  temperature: { type: "string", short: "T" },
  "sampling-args": { type: "string", short: "S" },
  "num-examples": { type: "string", short: "n" },
  "max-concurrent": { type: "string", short: "c" },
  "env-args": { type: "string", short: "a" },
  split: { type: "string" },
  seed: { type: "string" },
  server: { type: "string" },
  output: { type: "string", short: "o" },
  "env-module": { type: "string", multiple: true },
  format: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const satisfies Options;

/** A number flag, or undefined when absent; `check` narrows what is accepted (default: finite). */
export function numberFlag(name: string, raw: string | undefined, check: (n: number) => boolean = Number.isFinite): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value)) throw new Error(`${name} must be a number, got "${raw}"`);
  if (!check(value)) throw new Error(`${name}: ${raw} is out of range`);
  return value;
}

/** A JSON-object flag (--env-args, --sampling-args), or undefined when absent. */
export function jsonObjectFlag(name: string, raw: string | undefined): Record<string, unknown> | undefined {
  if (raw === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    throw new Error(`${name} is not valid JSON: ${(err as Error).message}`, { cause: err });
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error(`${name} must be a JSON object`);
  return value as Record<string, unknown>;
}

/** The OpenAI-compatible endpoint of -b / -k: flag, then $EDGEGYM_EVAL_BASE_URL, $OPENAI_BASE_URL, OpenAI. */
export function modelEndpoint(values: { "base-url"?: string; "api-key-var"?: string }, env: NodeJS.ProcessEnv): { baseUrl: string; keyVar: string; apiKey: string | undefined } {
  const keyVar = values["api-key-var"] ?? "OPENAI_API_KEY";
  const baseUrl = values["base-url"] ?? env.EDGEGYM_EVAL_BASE_URL ?? env.OPENAI_BASE_URL ?? "https://api.openai.com/v1";
  return { baseUrl, keyVar, apiKey: env[keyVar] };
}

/** Built-in environments plus those of --env-module. The CLI user is the operator here: judges come from their own environment (EDGEGYM_JUDGE_*, EDGEGYM_JUDGES). */
export async function cliRegistry(envModules: string[] | undefined, env: NodeJS.ProcessEnv): Promise<EnvRegistry> {
  return new EnvRegistry("node", [...builtinEnvs, ...(await loadEnvModules(envModules ?? []))]).withServices({ judges: judgeCatalogFrom(env) });
}
