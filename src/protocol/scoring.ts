import { z } from "zod";
import { ChatMessage } from "./messages.js";
import { Isolation } from "./envs.js";
import { Score } from "./episodes.js";

const Conversation = z
  .union([z.string(), z.array(ChatMessage)])
  .meta({ description: "Plain text, or chat messages." });

export const ScoreItem = z
  .object({
    prompt: Conversation,
    completion: Conversation,
    answer: z.string().optional(),
    info: z.record(z.string(), z.unknown()).optional(),
    group: z.string().optional().meta({ description: "Items with the same group id form one GRPO group (rollouts of the same task)." }),
  })
  .strict()
  .meta({ id: "ScoreItem", example: { prompt: "Reverse: abc", completion: "<answer>cba</answer>", answer: "cba", group: "task-0" } });
export type ScoreItem = z.infer<typeof ScoreItem>;

export const ScoreCompletionsRequest = z
  .object({
    items: z.array(ScoreItem).min(1).max(1024),
    args: z.record(z.string(), z.unknown()).optional().meta({ description: "Environment arguments, as at reset." }),
    scale_advantages: z.boolean().default(false).meta({ description: "Divide each advantage by its group's reward standard deviation (GRPO's original scaling)." }),
  })
  .strict()
  .meta({ id: "ScoreCompletionsRequest" });
export type ScoreCompletionsRequest = z.infer<typeof ScoreCompletionsRequest>;

export const ScoredItem = z
  .object({
    index: z.number().int(),
    group: z.string().nullable(),
    score: Score,
    advantage: z.number().nullable().meta({ description: "Reward minus its group's mean (scaled when asked); null for an item without a group." }),
  })
  .strict()
  .meta({ id: "ScoredItem" });

export const GroupStats = z
  .object({ group: z.string(), size: z.number().int(), mean: z.number(), std: z.number() })
  .strict()
  .meta({ id: "GroupStats" });

export const ScoreCompletionsResponse = z
  .object({ env_id: z.string(), results: z.array(ScoredItem), groups: z.array(GroupStats) })
  .strict()
  .meta({ id: "ScoreCompletionsResponse" });
export type ScoreCompletionsResponse = z.infer<typeof ScoreCompletionsResponse>;

export const Health = z
  .object({
    status: z.literal("ok"),
    version: z.string(),
    runtime: z.string(),
    isolation: z.record(z.string(), Isolation).optional().meta({ description: "Per environment that runs client-supplied code (e.g. python): the sandbox in force on this server." }),
  })
  .strict()
  .meta({ id: "Health" });
export type Health = z.infer<typeof Health>;
