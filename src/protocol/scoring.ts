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
    answer: z.string().optional().meta({ description: "The reference answer the rubric compares the completion with." }),
    info: z.record(z.string(), z.unknown()).optional().meta({ description: "Task data the rubric may read (as a dataset row's `info`)." }),
    group: z.string().optional().meta({ description: "Items with the same group id form one GRPO group (rollouts of the same task)." }),
    seat: z.string().min(1).max(32).optional().meta({
      description: "A multi-player environment's: the seat whose conversation `prompt` and `completion` are (its rubric scores per seat). A group's items must share one seat: advantages compare a seat with the same seat of other rollouts.",
      example: "x",
    }),
  })
  .strict()
  .meta({ id: "ScoreItem", example: { prompt: "Reverse: abc", completion: "<answer>cba</answer>", answer: "cba", group: "task-0" } });
export type ScoreItem = z.infer<typeof ScoreItem>;

export const ScoreCompletionsRequest = z
  .object({
    items: z.array(ScoreItem).min(1).max(1024).meta({ description: "The completions to score (1–1024)." }),
    args: z.record(z.string(), z.unknown()).optional().meta({ description: "Environment arguments, as at reset." }),
    scale_advantages: z.boolean().default(false).meta({ description: "Divide each advantage by its group's reward standard deviation (GRPO's original scaling)." }),
  })
  .strict()
  .meta({ id: "ScoreCompletionsRequest" });
export type ScoreCompletionsRequest = z.infer<typeof ScoreCompletionsRequest>;

export const ScoredItem = z
  .object({
    index: z.number().int().meta({ description: "Position of the item in the request's `items`.", example: 0 }),
    group: z.string().nullable().meta({ description: "The item's group id; null when it had none." }),
    score: Score,
    advantage: z.number().nullable().meta({ description: "Reward minus its group's mean (scaled when asked); null for an item without a group." }),
  })
  .strict()
  .meta({ id: "ScoredItem" });

export const GroupStats = z
  .object({
    group: z.string().meta({ description: "The group id." }),
    size: z.number().int().meta({ description: "Items in the group.", example: 8 }),
    mean: z.number().meta({ description: "Mean reward of the group's items." }),
    std: z.number().meta({ description: "Population standard deviation of the group's rewards." }),
  })
  .strict()
  .meta({ id: "GroupStats" });

export const ScoreCompletionsResponse = z
  .object({
    env_id: z.string().meta({ description: "The environment whose rubric scored the items.", example: "reverse-text" }),
    results: z.array(ScoredItem).meta({ description: "One result per item, in request order." }),
    groups: z.array(GroupStats).meta({ description: "One entry per group id, in order of first appearance." }),
  })
  .strict()
  .meta({ id: "ScoreCompletionsResponse" });
export type ScoreCompletionsResponse = z.infer<typeof ScoreCompletionsResponse>;

export const Health = z
  .object({
    status: z.literal("ok").meta({ description: "Always `ok` when the server answers." }),
    version: z.string().meta({ description: "The edgegym package version the server runs.", example: "0.1.0" }),
    runtime: z.string().meta({ description: "Where the server runs: `node` or `worker` (Cloudflare Workers).", example: "node" }),
    isolation: z.record(z.string(), Isolation).optional().meta({ description: "Per environment that runs client-supplied code (e.g. python): the sandbox in force on this server." }),
  })
  .strict()
  .meta({ id: "Health" });
export type Health = z.infer<typeof Health>;
