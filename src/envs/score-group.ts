import type { Score } from "../protocol/index.js";
import { addEpisodeMetrics, combineSeatScores, completionRewardInputs, episodeRewardInputs, seatRewardInputs, type CompletionItem, type EpisodeSnapshot } from "./engine.js";
import { scoreRubricGroup } from "./rubric.js";
import type { AnyEnvironment } from "./types.js";

/**
 * Scores a group of episodes together, so the rubric's group rewards see every rollout
 * of the group (GRPO's group: rollouts of the same task). Scores come back in order.
 * Each episode's own rewards are the same as `scoreEpisode` gives it.
 */
export async function scoreGroup(env: AnyEnvironment, snapshots: readonly EpisodeSnapshot[]): Promise<Score[]> {
  const inputs = await Promise.all(snapshots.map((s) => episodeRewardInputs(env, s)));
  if (env.seats) {
    // A seated group is scored seat by seat: a group reward compares p1 with the other p1s, never with a p2.
    const names = env.seats.seats.map((s) => s.name);
    const bySeat = await Promise.all(names.map((seat) => scoreRubricGroup(env.rubric, inputs.map((base, i) => seatRewardInputs(base, (snapshots[i] as EpisodeSnapshot).messages, seat)))));
    return snapshots.map((snapshot, i) => combineSeatScores(env, snapshot, names, bySeat.map((scores) => scores[i] as Score)));
  }
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
