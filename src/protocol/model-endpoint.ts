import { z } from "zod";

/**
 * Harness episodes: an agent program runs in the episode's sandbox and calls the model
 * through a per-episode endpoint of the server, which records every call as a turn.
 */

/** Most bytes of an agent command (a shell command line, not a script upload). */
export const MAX_AGENT_COMMAND_BYTES = 16_384;
/** Longest an agent may run; the episode's TTL still applies on top. */
export const MAX_AGENT_SECONDS = 86_400;

const UpstreamName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, "an upstream name is 1-64 letters, digits, `_`, `.` or `-`")
  .meta({ description: "An upstream the operator named in EDGEGYM_MODEL_UPSTREAMS.", example: "vllm" });

export const AgentLimits = z
  .object({
    max_calls: z.number().int().min(1).max(100_000).optional().meta({ description: "Model calls the agent may make (default: the server's); the next one ends the episode with `call_limit`.", example: 50 }),
    max_tokens: z
      .number()
      .int()
      .min(1)
      .max(1e9)
      .optional()
      .meta({ description: "Prompt plus completion tokens over all calls, as the upstream counts them (default: the server's); past it the episode ends with `token_limit`.", example: 2_000_000 }),
  })
  .strict()
  .meta({ id: "AgentLimits", description: "Limits of one harness episode below the server's (EDGEGYM_AGENT_MAX_CALLS, EDGEGYM_AGENT_MAX_TOKENS)." });
export type AgentLimits = z.infer<typeof AgentLimits>;

export const AgentSpec = z
  .object({
    command: z
      .string()
      .min(1)
      .max(MAX_AGENT_COMMAND_BYTES)
      .meta({ description: "Shell command (`sh -c`) run in the episode's container; it reads the model endpoint from OPENAI_BASE_URL / ANTHROPIC_BASE_URL and the task from EDGEGYM_INSTRUCTION.", example: 'mini -y --exit-immediately -m openai/qwen -l 0 -t "$EDGEGYM_INSTRUCTION"' }),
    upstream: UpstreamName,
    model: z.string().min(1).max(256).meta({ description: "The model name sent upstream, whatever the agent asks for.", example: "Qwen/Qwen3-0.6B" }),
    timeout_seconds: z.number().int().min(1).max(MAX_AGENT_SECONDS).meta({ description: "Wall-clock limit of the agent; past it its processes are killed and the episode ends with `agent_timeout`.", example: 600 }),
    limits: AgentLimits.optional(),
  })
  .strict()
  .meta({
    id: "AgentSpec",
    description: "Run an agent harness in the episode's sandbox (reset of a sandboxed environment only). The episode is active while it runs and done when it exits; each model call it makes is a turn.",
  });
export type AgentSpec = z.infer<typeof AgentSpec>;

export const ModelEndpoint = z
  .object({
    openai_base_url: z.url().meta({ description: "OpenAI base URL of this episode (Chat Completions and Responses under it), as a client of the server reaches it.", example: "http://127.0.0.1:8787/v1/model/ep_01J/v1" }),
    anthropic_base_url: z.url().meta({ description: "Anthropic base URL of this episode (`/v1/messages` under it).", example: "http://127.0.0.1:8787/v1/model/ep_01J" }),
    api_key: z.string().meta({ description: "The episode's key (Bearer or x-api-key): it opens this episode's endpoint only, while the episode is active. Returned once, never stored in clear." }),
  })
  .strict()
  .meta({ id: "ModelEndpoint" });
export type ModelEndpoint = z.infer<typeof ModelEndpoint>;

export const ModelWire = z.enum(["chat", "responses", "messages"]).meta({ description: "The API the agent called: OpenAI Chat Completions, OpenAI Responses or Anthropic Messages." });
export type ModelWire = z.infer<typeof ModelWire>;

export const ModelCall = z
  .object({
    wire: ModelWire,
    upstream: z.string(),
    model: z.string().meta({ description: "The model name sent upstream." }),
    stream: z.boolean().meta({ description: "Whether the agent asked for a stream (the reply below is assembled)." }),
    request: z.record(z.string(), z.unknown()).meta({ description: "The agent's request body, as it sent it." }),
    response: z.record(z.string(), z.unknown()).nullable().meta({ description: "What the agent was answered (one JSON body; assembled when streamed); null when the upstream gave no JSON." }),
    status: z.number().int().meta({ description: "HTTP status the agent got.", example: 200 }),
    error: z.string().nullable().meta({ description: "Why the call failed (upstream error, timeout), or null." }),
    usage: z
      .object({ prompt_tokens: z.number().int().min(0), completion_tokens: z.number().int().min(0) })
      .strict()
      .nullable(),
    latency_ms: z.number().min(0).meta({ description: "Time from the agent's request to the upstream's answer." }),
  })
  .strict()
  .meta({ id: "ModelCall", description: "One model call of a harness episode, as it went through the episode's endpoint." });
export type ModelCall = z.infer<typeof ModelCall>;

export const AgentRun = z
  .object({
    upstream: z.string(),
    model: z.string(),
    status: z.enum(["running", "exited", "timed_out", "stopped", "lost"]).meta({ description: "`stopped`: ended by a limit (calls, tokens) or by a close; `lost`: its container went away." }),
    exit_code: z.number().int().nullable(),
    output_tail: z.string().meta({ description: "The last bytes of the agent's stdout and stderr (up to 16 KiB)." }),
    seconds: z.number().min(0).nullable().meta({ description: "How long it ran (null while it runs)." }),
    calls: z.number().int().min(0),
    tokens: z.number().int().min(0),
    started_at: z.iso.datetime(),
  })
  .strict()
  .meta({ id: "AgentRun", description: "The agent harness of a harness episode." });
export type AgentRun = z.infer<typeof AgentRun>;

/** Stop reasons a harness episode ends with. */
export const AGENT_STOP_REASONS = ["agent_exit", "agent_timeout", "call_limit", "token_limit", "sandbox_lost"] as const;
