import { z } from "zod";

const UpstreamName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, "an upstream name is 1-64 letters, digits, `_`, `.` or `-`");

/**
 * One model upstream of harness episodes, as the operator names it in
 * `EDGEGYM_MODEL_UPSTREAMS` (or `model_upstreams` in the config file). Like a judge, its key
 * is named, not written: `api_key_env` is the server variable that holds it, so neither a
 * client nor a container ever sees it.
 */
export const UpstreamConfigEntry = z
  .object({
    base_url: z.url().refine((u) => /^https?:\/\//.test(u), "base_url must be http(s)"),
    api_key_env: z.string().min(1).optional(),
    vllm: z.boolean().optional(),
  })
  .strict();
export type UpstreamConfigEntry = z.infer<typeof UpstreamConfigEntry>;

export const UpstreamsConfig = z.record(UpstreamName, UpstreamConfigEntry);
export type UpstreamsConfig = z.infer<typeof UpstreamsConfig>;

export interface ModelUpstream {
  name: string;
  /** OpenAI-compatible base URL ending before `/chat/completions` (…/v1). */
  baseUrl: string;
  /** Sent to this upstream only. */
  apiKey: string | null;
  /** Can return token ids (`return_token_ids`) and logprobs: a vLLM server. */
  vllm: boolean;
}

export type UpstreamCatalog = ReadonlyMap<string, ModelUpstream>;

export const EMPTY_UPSTREAMS: UpstreamCatalog = new Map();

const EXAMPLE = '{"vllm":{"base_url":"http://127.0.0.1:8000/v1","vllm":true}}';

/** Parses the variable's JSON (errors name the setting and show an example). */
export function parseUpstreamsVar(raw: string): UpstreamsConfig {
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new Error(`EDGEGYM_MODEL_UPSTREAMS must be a JSON object of upstreams, e.g. ${EXAMPLE}`);
  }
  const parsed = UpstreamsConfig.safeParse(json);
  if (!parsed.success) throw new Error(`EDGEGYM_MODEL_UPSTREAMS: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  return parsed.data;
}

/** The catalog: each key read from the variable it names (a named variable that is unset is an error, not a keyless upstream). */
export function upstreamCatalog(config: UpstreamsConfig, vars: Readonly<Record<string, unknown>>): UpstreamCatalog {
  const out = new Map<string, ModelUpstream>();
  for (const [name, entry] of Object.entries(config)) {
    let apiKey: string | null = null;
    if (entry.api_key_env !== undefined) {
      const value = vars[entry.api_key_env];
      if (typeof value !== "string" || value.trim() === "") throw new Error(`model upstream "${name}" names api_key_env ${entry.api_key_env}, which is not set`);
      apiKey = value.trim();
    }
    out.set(name, { name, baseUrl: entry.base_url.replace(/\/+$/, ""), apiKey, vllm: entry.vllm ?? false });
  }
  return out;
}
