import type { AssistantMessage, ChatMessage, EvalRollout, Score } from "../protocol/index.js";
import { scoreEpisode, scoreRubric, seatToPlay, seatView, startEpisode, stepEpisode, type EpisodeSnapshot } from "../envs/index.js";
import type { RescoreContext, ReplayOutcome } from "./rescore.js";
import { CLIENT_SEAT_PLAYER, rolloutSeats, type RolloutSeat } from "./seats.js";

/**
 * Rescoring a seated rollout (docs/multi-agent.md). The row records who played each
 * seat and each model seat's conversation (`seats`), but not the order the seats moved
 * in: the environment says that. The replay starts the episode with the row's seats and
 * seed (so the environment's policies move as they did), then at each turn steps the
 * seat the environment says is to play with that seat's next stored message. It matched
 * when every model seat's conversation comes out as stored and every stored message was
 * used; then every seat is scored from the replayed state, as the server scores it.
 * Otherwise each model seat's conversation is scored with no state (null) and the
 * environment's seats keep the score they had.
 */

const canonical = (messages: readonly ChatMessage[]): string => JSON.stringify(messages);

const conversationOf = (seat: RolloutSeat): ChatMessage[] => [...(seat.prompt ?? []), ...(seat.completion ?? [])];

async function replaySeated(ctx: RescoreContext, row: EvalRollout, seats: Record<string, RolloutSeat>): Promise<{ outcome: ReplayOutcome; snapshot?: EpisodeSnapshot }> {
  if (!ctx.replay) return { outcome: "off" };
  const assignment = Object.fromEntries(Object.entries(seats).map(([seat, s]) => [seat, s.player]));
  const moves = new Map<string, AssistantMessage[]>();
  for (const [seat, s] of Object.entries(seats)) {
    if (s.player === CLIENT_SEAT_PLAYER) moves.set(seat, conversationOf(s).filter((m): m is AssistantMessage => m.role === "assistant"));
  }
  try {
    let snapshot = await startEpisode(ctx.env, { split: ctx.split, index: row.example_id, seed: row.seed, args: ctx.envArgs, seats: assignment });
    const used = new Map<string, number>();
    // Bounded by the stored conversations: one step per stored message of a model seat.
    while (!snapshot.done) {
      const seat = seatToPlay(ctx.env, snapshot.state);
      if (seat === null) break;
      const at = used.get(seat) ?? 0;
      const message = moves.get(seat)?.[at];
      if (!message) return { outcome: "diverged" };
      used.set(seat, at + 1);
      snapshot = (await stepEpisode(ctx.env, snapshot, message, { seat })).snapshot;
    }
    for (const [seat, list] of moves) {
      if ((used.get(seat) ?? 0) !== list.length) return { outcome: "diverged" };
      if (canonical(seatView(snapshot.messages, seat)) !== canonical(conversationOf(seats[seat] as RolloutSeat))) return { outcome: "diverged" };
    }
    return { outcome: "matched", snapshot };
  } catch {
    return { outcome: "failed" };
  }
}

/** Each model seat scored from its stored conversation alone (state null); the environment's seats as they were. */
async function statelessSeatScores(ctx: RescoreContext, row: EvalRollout, seats: Record<string, RolloutSeat>): Promise<Score> {
  const args = ctx.env.argsSchema.safeParse(ctx.envArgs);
  const out: NonNullable<Score["seats"]> = {};
  for (const [seat, s] of Object.entries(seats)) {
    if (s.player !== CLIENT_SEAT_PLAYER || !s.prompt) {
      out[seat] = { reward: s.reward, components: s.components, metrics: s.metrics };
      continue;
    }
    const prompt = s.prompt;
    const completion = s.completion ?? [];
    const task = { prompt, answer: row.answer ?? null, info: row.info ?? {} };
    const score = await scoreRubric(ctx.env.rubric, { prompt, completion, answer: task.answer, info: task.info, state: null, parser: ctx.env.parser, task, args: args.success ? args.data : ctx.envArgs, seat });
    out[seat] = { reward: score.reward, components: score.components, metrics: { ...score.metrics, moves: completion.filter((m) => m.role === "assistant").length } };
  }
  const primary = Object.keys(seats).find((seat) => seats[seat]?.player === CLIENT_SEAT_PLAYER) ?? Object.keys(seats)[0] ?? "";
  const top = out[primary] ?? { reward: 0, components: [], metrics: {} };
  return { reward: top.reward, components: top.components, metrics: { ...top.metrics, turns: row.metrics.turns ?? 0 }, seats: out };
}

/**
 * A seated rollout's new score and how its replay went; null when the row holds no
 * record of its seats (written before edgegym recorded them, or a failed rollout).
 */
export async function rescoreSeated(ctx: RescoreContext, row: EvalRollout): Promise<{ score: Score; outcome: ReplayOutcome; seats: Record<string, RolloutSeat> } | null> {
  const seats = rolloutSeats(row);
  if (!seats) return null;
  const { outcome, snapshot } = await replaySeated(ctx, row, seats);
  const score = snapshot ? await scoreEpisode(ctx.env, snapshot) : await statelessSeatScores(ctx, row, seats);
  const updated: Record<string, RolloutSeat> = {};
  for (const [seat, s] of Object.entries(seats)) {
    const now = score.seats?.[seat];
    updated[seat] = now ? { ...s, reward: now.reward, components: now.components, metrics: now.metrics } : s;
  }
  return { score, outcome, seats: updated };
}
