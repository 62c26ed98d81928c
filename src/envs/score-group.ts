import type { Score } from "../protocol/index.js";
import { addEpisodeMetrics, completionRewardInputs, episodeRewardInputs, type CompletionItem, type EpisodeSnapshot } from "./engine.js";
import { scoreRubricGroup } from "./rubric.js";
import type { AnyEnvironment } from "./types.js";

/**
 * Scores a group of episodes together, so the rubric's group rewards see every rollout
 * of the group (GRPO's group: rollouts of the same task). Scores come back in order.
 * Each episode's own rewards are the same as `scoreEpisode` gives it.
 */
export async function scoreGroup(env: AnyEnvironment, snapshots: readonly EpisodeSnapshot[]): Promise<Score[]> {
  const inputs = await Promise.all(snapshots.map((s) => episodeRewardInputs(env, s)));
  const scores = await scoreRubricGroup(env.rubric, inputs);
  return scores.map((score, i) => addEpisodeMetrics(env, snapshots[i] as EpisodeSnapshot, score));
}

/** `scoreGroup` for completions the caller already has (the stateless scoring route). */
export async function scoreCompletionGroup(env: AnyEnvironment, items: readonly CompletionItem[], args?: Record<string, unknown>): Promise<Score[]> {
  const inputs = items.map((item) => completionRewardInputs(env, item, args));
  const scores = await scoreRubricGroup(env.rubric, inputs);
  scores.forEach((score, i) => (score.metrics.turns = (inputs[i]?.completion ?? []).filter((m) => m.role === "assistant").length));
  return scores;
}
