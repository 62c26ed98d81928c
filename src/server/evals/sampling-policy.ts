import { z } from "zod";
import type { EvalRequest } from "../../protocol/index.js";
import { ApiError } from "../errors.js";

/** Operator caps on what a server-run evaluation job may ask of the model endpoint (which the operator pays for). */
export interface SamplingLimits {
  /** Largest `max_tokens` (and `max_completion_tokens`) a job may ask for; also sent when a job names none. */
  maxTokens: number;
}

export const DEFAULT_SAMPLING_LIMITS: SamplingLimits = { maxTokens: 4096 };

const STOP_TEXT = z.string().max(256);

/**
 * The `sampling_args` keys a server-run job may send, each with its bounds: what vf-eval
 * and TRL users set (OpenAI fields, plus vLLM's `top_k`, `min_p`, `repetition_penalty`,
 * `chat_template_kwargs`). Anything else is refused by name, so a client can neither
 * multiply the operator's cost (`n`, `best_of`), change the reply's shape (`stream`,
 * `response_format`) nor send unbounded payloads (`logit_bias` is capped).
 */
function allowedKeys(limits: SamplingLimits): Record<string, z.ZodType> {
  return {
    temperature: z.number().min(0).max(2),
    top_p: z.number().gt(0).max(1),
    top_k: z.number().int().min(-1).max(100_000),
    min_p: z.number().min(0).max(1),
    max_tokens: z.number().int().min(1).max(limits.maxTokens, `at most ${limits.maxTokens} on this server`),
    max_completion_tokens: z.number().int().min(1).max(limits.maxTokens, `at most ${limits.maxTokens} on this server`),
    stop: z.union([STOP_TEXT, z.array(STOP_TEXT).max(8)]),
    seed: z.number().int().min(-(2 ** 53 - 1)).max(2 ** 53 - 1),
    presence_penalty: z.number().min(-2).max(2),
    frequency_penalty: z.number().min(-2).max(2),
    repetition_penalty: z.number().gt(0).max(2),
    logprobs: z.boolean(),
    top_logprobs: z.number().int().min(0).max(20),
    logit_bias: z
      .record(z.string().regex(/^\d{1,9}$/, "keys are token ids"), z.number().min(-100).max(100))
      .refine((o) => Object.keys(o).length <= 300, "at most 300 token ids"),
    reasoning_effort: z.enum(["minimal", "low", "medium", "high"]),
    chat_template_kwargs: z
      .record(z.string().max(64), z.union([z.boolean(), z.number(), z.string().max(256)]))
      .refine((o) => Object.keys(o).length <= 16, "at most 16 keys"),
    n: z.literal(1, "each rollout is one completion on this server: use rollouts_per_example for more"),
  };
}

/** Keys refused with a reason, rather than only "not allowed". */
const REFUSED: Record<string, string> = {
  stream: "the server reads whole replies; streaming is not offered",
  best_of: "it multiplies the completions generated per request; use rollouts_per_example",
  model: "name the model in the request's `model` field",
  messages: "the environment supplies the messages",
  tools: "the environment supplies the tools",
};

/**
 * The chat-completion fields a server-run job sends, checked against the allowlist and
 * the operator's caps before anything is stored: an unknown key or a value past a cap is
 * a 400 `invalid_request` that names the limit. A job that names no token limit gets
 * `max_tokens` = the cap. (`edgegym eval` without `--server` does not apply this: there
 * the user's own key pays, and vLLM options beyond this list stay usable.)
 */
export function checkServerSampling(request: EvalRequest, limits: SamplingLimits): EvalRequest {
  const allowed = allowedKeys(limits);
  const args = request.sampling_args ?? {};
  for (const [key, value] of Object.entries(args)) {
    const schema = allowed[key];
    if (!schema) {
      const why = REFUSED[key] ?? `allowed keys: ${Object.keys(allowed).join(", ")}`;
      throw new ApiError("invalid_request", `sampling_args.${key} is not accepted on this server: ${why}`, { field: `sampling_args.${key}` });
    }
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      throw new ApiError("invalid_request", `sampling_args.${key}: ${parsed.error.issues.map((i) => i.message).join("; ")}`, { field: `sampling_args.${key}` });
    }
  }
  if (request.max_tokens !== undefined && request.max_tokens > limits.maxTokens) {
    throw new ApiError("invalid_request", `max_tokens ${request.max_tokens} is past this server's limit of ${limits.maxTokens}; ask for at most ${limits.maxTokens}`, {
      field: "max_tokens",
      limit: limits.maxTokens,
    });
  }
  if (request.max_tokens === undefined && args.max_tokens === undefined && args.max_completion_tokens === undefined) {
    return { ...request, max_tokens: limits.maxTokens };
  }
  return request;
}
