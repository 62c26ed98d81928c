import { z } from "zod";
import { ChatMessage, ToolDefinition } from "./messages.js";

export const Split = z.enum(["train", "eval"]).meta({ description: "Dataset split.", example: "train" });
export type Split = z.infer<typeof Split>;

/** `sha256:` and 64 hex digits: an environment's content hash (src/envs/content-hash.ts). */
export const EnvHash = z
  .string()
  .regex(/^sha256:[0-9a-f]{64}$/)
  .meta({ description: "Content hash of an environment's code and data.", example: "sha256:9f2c4e0b7a1d3c5e6f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6" });

export const RubricComponentInfo = z
  .object({
    name: z.string().meta({ description: "The component's name, as it appears in a score's `components`.", example: "lcs_ratio" }),
    weight: z.number().meta({ description: "Weight in the total reward; 0 marks a metric that is reported but not rewarded.", example: 1 }),
    description: z.string().optional().meta({ description: "What the component measures, when the environment says." }),
    group: z.boolean().meta({ description: "True when the component is computed over a group of rollouts." }),
  })
  .strict()
  .meta({ id: "RubricComponentInfo" });

export const Isolation = z
  .object({
    level: z.string().meta({ description: "Isolation in force for code this environment runs (python: `namespaced` or `process`; see docs/security.md).", example: "namespaced" }),
    detail: z.string().meta({ description: "What that level consists of on this host, or why a stronger one was not available." }),
    served: z.boolean().meta({ description: "False when the server refuses to run this environment at this level (resets answer env_unavailable)." }),
  })
  .strict()
  .meta({ id: "Isolation", description: "How an environment that runs client-supplied code is sandboxed on this server." });
export type Isolation = z.infer<typeof Isolation>;

export const SeatInfo = z
  .object({
    name: z.string().meta({ description: "The seat's name: reset's `seats` keys, a step's `seat`, GET's `?seat=`.", example: "x" }),
    description: z.string().meta({ description: "Who sits there." }),
    players: z.array(z.string()).meta({ description: '`"client"` and/or the environment\'s policies that may play it.', example: ["client", "minimax", "random"] }),
    default: z.string().meta({ description: "Who plays it when a reset names no one.", example: "client" }),
    trainable: z.boolean().meta({ description: "False for a seat nobody trains (a simulated user): trainers skip its trajectory." }),
  })
  .strict()
  .meta({ id: "SeatInfo" });
export type SeatInfo = z.infer<typeof SeatInfo>;

export const EnvInfo = z
  .object({
    id: z.string().meta({ description: "The environment's id, used in every /v1/envs/{env_id} path.", example: "reverse-text" }),
    version: z.string().meta({ description: "The version the environment declares (free-form; the content hash is what episodes are held to).", example: "1.0.0" }),
    hash: EnvHash.optional().meta({
      description:
        "Content hash of the environment's code and data as this server runs it (docs/versions.md). Episodes record it at reset; a step on an episode whose environment changed incompatibly is 409 `env_version_mismatch`. Always sent by this server; optional so clients read older ones.",
    }),
    description: z.string().meta({ description: "What the environment asks of the model, in a sentence or two." }),
    kind: z.enum(["single_turn", "multi_turn", "tool"]).meta({ description: "Interaction protocol." }),
    args_schema: z.record(z.string(), z.unknown()).meta({ description: "JSON Schema of the `args` a reset accepts." }),
    tools: z.array(ToolDefinition).meta({ description: "Every tool the environment may offer (empty when it has none); a reset's `tools` are the ones its episode offers." }),
    max_turns: z.number().int().meta({ description: "Assistant messages after which the episode stops.", example: 1 }),
    max_tool_calls_per_message: z
      .number()
      .int()
      .meta({ description: "Tool calls the server runs per assistant message; each call past it is answered with an error tool message and not run.", example: 16 }),
    splits: z
      .object({
        train: z.number().int().nullable().meta({ description: "Rows in the split; null for a procedural (infinite, seed-addressed) split." }),
        eval: z.number().int().nullable().meta({ description: "Rows in the split; null for a procedural (infinite, seed-addressed) split." }),
      })
      .strict()
      .meta({ description: "Size of each split, in tasks." }),
    rubric: z.array(RubricComponentInfo).meta({ description: "The reward functions a score is made of, with their weights." }),
    system_prompt: z.string().nullable().meta({ description: "The system message every episode opens with; null when there is none." }),
    answer_format: z.string().nullable().meta({ description: "How the environment expects the final answer to be written.", example: "<answer>…</answer>" }),
    isolation: Isolation.optional().meta({ description: "Present for environments that run client-supplied code (python): the sandbox in force." }),
    seats: z.array(SeatInfo).optional().meta({ description: "A multi-player environment's seats, in order (docs/multi-agent.md); absent for a one-player environment." }),
    policies: z
      .record(z.string(), z.string())
      .optional()
      .meta({ description: "A multi-player environment's own players, by name, with what each does: a seat's `players` other than `client`.", example: { minimax: "Perfect play." } }),
  })
  .strict()
  .meta({ id: "EnvInfo", description: "An environment the server runs." });
export type EnvInfo = z.infer<typeof EnvInfo>;

export const EnvList = z.object({ envs: z.array(EnvInfo).meta({ description: "Every environment this server runs, sorted by id." }) }).strict().meta({ id: "EnvList" });
export type EnvList = z.infer<typeof EnvList>;

export const Example = z
  .object({
    index: z.number().int().meta({ description: "Row index in its split; pass it as `index` to reset on this task." }),
    split: Split,
    prompt: z.array(ChatMessage).meta({ description: "The task's opening messages as the model sees them (system prompt included)." }),
    answer: z.string().nullable().meta({ description: "The reference answer the rubric compares with; null when the task has none." }),
    info: z.record(z.string(), z.unknown()).meta({ description: "Task data beside the prompt and answer (environment-specific, free-form)." }),
  })
  .strict()
  .meta({ id: "Example" });
export type Example = z.infer<typeof Example>;

/**
 * The largest task index any split accepts. A procedural split has no end, so without a
 * cap a client could ask for rows past 2^53, where `index + 1 === index` and a listing
 * loop never ends. 2^32 − 1 is the range of `seed` too, so every seed-addressed task
 * stays addressable by index.
 */
export const MAX_TASK_INDEX = 2 ** 32 - 1;

/** A task's row index: for a procedural split, its seed. */
export const TaskIndex = z.number().int().min(0).max(MAX_TASK_INDEX);

export const ExampleQuery = z
  .object({
    split: Split.default("train"),
    offset: z.coerce
      .number()
      .int()
      .min(0)
      .max(MAX_TASK_INDEX)
      .default(0)
      .meta({ description: `First row to return. Past a finite split's size it is a 422 \`task_out_of_range\`; a procedural split ends at index ${MAX_TASK_INDEX} (2^32 − 1).`, example: 0 }),
    limit: z.coerce.number().int().min(1).max(500).default(20).meta({ description: "Most rows to return (1–500, default 20).", example: 20 }),
  })
  .strict();

export const ExamplePage = z
  .object({
    examples: z.array(Example).meta({ description: "The rows of this page, in index order." }),
    offset: z.number().int().meta({ description: "Index of the first row of this page (the request's `offset`)." }),
    limit: z.number().int().meta({ description: "Most rows this page could hold (the request's `limit`)." }),
    total: z.number().int().nullable().meta({ description: "Rows in the split; null for a procedural split (index = seed)." }),
  })
  .strict()
  .meta({ id: "ExamplePage" });
export type ExamplePage = z.infer<typeof ExamplePage>;
