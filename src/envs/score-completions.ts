import type { ScoreCompletionsRequest, ScoreCompletionsResponse } from "../protocol/index.js";
import { groupAdvantages } from "./advantages.js";
import { parseArgs, scoreCompletion } from "./engine.js";
import { scoreCompletionGroup } from "./score-group.js";
import { startInTurns } from "./turns.js";
import { EngineError } from "./engine.js";
import type { AnyEnvironment, Score } from "./types.js";

/**
 * Scores a trainer's completions without episodes. Items sharing a `group` are one GRPO
 * group: scored together (the rubric's group rewards see the whole group), each with its
 * advantage (reward minus the group mean, over the group's std when `scale_advantages`).
 * Groups and lone items start in turns, so up to 1,024 items never hold the event loop at once.
 */
export async function scoreCompletions(env: AnyEnvironment, body: ScoreCompletionsRequest): Promise<ScoreCompletionsResponse> {
  parseArgs(env, body.args);
  checkItemSeats(env, body.items);
  const groups = new Map<string, number[]>();
  body.items.forEach((item, i) => {
    if (item.group !== undefined) groups.set(item.group, [...(groups.get(item.group) ?? []), i]);
  });
  const item = (i: number): ScoreCompletionsRequest["items"][number] => body.items[i] as ScoreCompletionsRequest["items"][number];
  const scores = new Array<Score>(body.items.length);
  const units: number[][] = [...groups.values(), ...body.items.flatMap((it, i) => (it.group === undefined ? [[i]] : []))];
  await startInTurns(units, async (members) => {
    const first = members[0] as number;
    if (item(first).group === undefined) scores[first] = await scoreCompletion(env, item(first), body.args);
    else {
      const scored = await scoreCompletionGroup(env, members.map(item), body.args);
      members.forEach((i, k) => (scores[i] = scored[k] as Score));
    }
  });
  const advantage = new Array<number | null>(scores.length).fill(null);
  const stats = [...groups].map(([group, members]) => {
    const { mean, std, advantages } = groupAdvantages(members.map((i) => (scores[i] as Score).reward), { scale: body.scale_advantages });
    members.forEach((i, k) => (advantage[i] = advantages[k] as number));
    return { group, size: members.length, mean, std };
  });
  return {
    env_id: env.id,
    results: scores.map((score, index) => ({ index, group: body.items[index]?.group ?? null, score, advantage: advantage[index] ?? null })),
    groups: stats,
  };
}

/**
 * A seated environment scores one seat's conversation at a time: each item names its seat
 * (a one-player environment's may not), and a group's items share one, so an advantage
 * never compares one seat's reward with another's.
 */
function checkItemSeats(env: AnyEnvironment, items: ScoreCompletionsRequest["items"]): void {
  const names = env.seats?.seats.map((s) => s.name);
  const groupSeat = new Map<string, string | undefined>();
  items.forEach((item, i) => {
    if (!names) {
      if (item.seat !== undefined) throw new EngineError("seats_unsupported", `items[${i}] names seat "${item.seat}", but ${env.id} has one player and no seats`);
      return;
    }
    if (item.seat === undefined) throw new EngineError("seat_required", `items[${i}]: ${env.id} scores one seat's conversation at a time; name it ("seat": one of ${names.join(", ")})`, { seats: names });
    if (!names.includes(item.seat)) throw new EngineError("unknown_seat", `items[${i}]: ${env.id} has no seat "${item.seat}"; its seats: ${names.join(", ")}`, { seats: names });
    if (item.group === undefined) return;
    const seen = groupSeat.get(item.group);
    if (groupSeat.has(item.group) && seen !== item.seat) {
      throw new EngineError("invalid_request", `group "${item.group}" mixes seats ${seen} and ${item.seat}: advantages are per seat, so give each seat's rollouts their own group`);
    }
    groupSeat.set(item.group, item.seat);
  });
}
