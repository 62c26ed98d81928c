import type { ChatMessage, EnvInfo, EvalRollout, Score } from "../protocol/index.js";

/**
 * Evaluating a seated environment (docs/multi-agent.md): who plays each seat of the run,
 * what a rollout records per seat, and the per-seat figures of a run. The model plays
 * every seat given to `client` (self-play when that is more than one, each seat's
 * conversation kept apart); the environment's policies play the rest.
 */

/** The player that is the model under evaluation (the protocol's name for a seat the caller plays). */
export const CLIENT_SEAT_PLAYER = "client";

/**
 * `--seats` values as reset's `seats`: each `SEAT=PLAYER`, several per flag separated by
 * commas, the flag repeatable (`--seats o=minimax`, `--seats x=client,o=random`).
 */
export function parseSeatsFlag(values: readonly string[] | undefined): Record<string, string> | undefined {
  if (!values?.length) return undefined;
  const out: Record<string, string> = {};
  for (const part of values.flatMap((v) => v.split(","))) {
    const item = part.trim();
    if (!item) continue;
    const eq = item.indexOf("=");
    const seat = eq < 0 ? "" : item.slice(0, eq).trim();
    const player = eq < 0 ? "" : item.slice(eq + 1).trim();
    if (!seat || !player) throw new Error(`--seats takes SEAT=PLAYER (PLAYER: client, the model, or a policy of the environment's), e.g. --seats o=minimax; got "${item}"`);
    if (out[seat] !== undefined && out[seat] !== player) throw new Error(`--seats gives seat "${seat}" twice (${out[seat]} and ${player})`);
    out[seat] = player;
  }
  return Object.keys(out).length ? out : undefined;
}

/**
 * Who plays each seat of the run's episodes: the environment's defaults with the
 * requested players over them, checked the way a reset checks them, so a bad `--seats`
 * stops the run before its first rollout instead of failing every one. Undefined for a
 * one-player environment (which refuses `--seats`).
 */
export function resolveRunSeats(info: EnvInfo, requested: Record<string, string> | undefined): Record<string, string> | undefined {
  if (!info.seats?.length) {
    if (requested) throw new Error(`${info.id} has one player and no seats; --seats is for environments with seats (tic-tac-toe-2p, kuhn-poker…)`);
    return undefined;
  }
  const names = info.seats.map((s) => s.name);
  const assignment: Record<string, string> = Object.fromEntries(info.seats.map((s) => [s.name, s.default]));
  for (const [seat, player] of Object.entries(requested ?? {})) {
    const spec = info.seats.find((s) => s.name === seat);
    if (!spec) throw new Error(`${info.id} has no seat "${seat}"; its seats: ${names.join(", ")}`);
    if (!spec.players.includes(player)) throw new Error(`seat "${seat}" of ${info.id} cannot be played by "${player}"; its players: ${spec.players.join(", ")}`);
    assignment[seat] = player;
  }
  if (!Object.values(assignment).includes(CLIENT_SEAT_PLAYER)) {
    throw new Error(`every seat of ${info.id} would be played by the environment (${formatAssignment(assignment)}); give the model at least one seat, e.g. --seats ${names[0] ?? "SEAT"}=client`);
  }
  return assignment;
}

/** The seats the model plays, in the environment's order. */
export function clientSeatsOf(assignment: Readonly<Record<string, string>>): string[] {
  return Object.entries(assignment).filter(([, player]) => player === CLIENT_SEAT_PLAYER).map(([seat]) => seat);
}

/** `x=client o=minimax`: an assignment in one line. */
export function formatAssignment(assignment: Readonly<Record<string, string>>): string {
  return Object.entries(assignment).map(([seat, player]) => `${seat}=${player}`).join(" ");
}

/** One seat of a seated rollout, as a results.jsonl row keeps it under `seats`. */
export interface RolloutSeat {
  /** `client` (the model) or the environment's policy that played it. */
  player: string;
  reward: number;
  components: EvalRollout["components"];
  /** The seat's own figures: its moves, and a game's win / draw / loss. */
  metrics: Record<string, number>;
  /** A seat the model played: its conversation (what it was shown, then from its first message on). */
  prompt?: ChatMessage[];
  completion?: ChatMessage[];
}

/** A seat's conversation split where the model first spoke: the prompt before, the completion from there. */
export function splitConversation(view: readonly ChatMessage[]): { prompt: ChatMessage[]; completion: ChatMessage[] } {
  const first = view.findIndex((m) => m.role === "assistant");
  const at = first < 0 ? view.length : first;
  return { prompt: view.slice(0, at), completion: view.slice(at) };
}

/** A scored seated episode's seats as a row records them: every seat's score, and the conversations of the model's seats. */
export function rolloutSeatsFrom(score: Score, assignment: Readonly<Record<string, string>>, conversations: ReadonlyMap<string, readonly ChatMessage[]>): Record<string, RolloutSeat> {
  const out: Record<string, RolloutSeat> = {};
  for (const [seat, s] of Object.entries(score.seats ?? {})) {
    const view = conversations.get(seat);
    out[seat] = { player: assignment[seat] ?? "unknown", reward: s.reward, components: s.components, metrics: s.metrics, ...(view ? splitConversation(view) : {}) };
  }
  return out;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** A row's `seats`, when it is a seated rollout that was scored (null for a one-player or a failed one). */
export function rolloutSeats(row: EvalRollout): Record<string, RolloutSeat> | null {
  const seats = (row as { seats?: unknown }).seats;
  if (!isObject(seats)) return null;
  const out: Record<string, RolloutSeat> = {};
  for (const [name, raw] of Object.entries(seats)) {
    if (!isObject(raw) || typeof raw.reward !== "number") continue;
    out[name] = raw as unknown as RolloutSeat;
  }
  return Object.keys(out).length ? out : null;
}

/** One seat's figures over a run: its rewards, each component's and metric's mean, and a game's wins, draws and losses. */
export interface SeatSummary {
  player: string;
  /** Scored rollouts this covers (failed ones have no per-seat score). */
  rollouts: number;
  reward: { mean: number; std: number; min: number; max: number };
  components: { name: string; weight: number; mean: number }[];
  metrics: Record<string, number>;
  /** Counts, where the environment reports `win`, `draw` and `loss` for the seat (two-player games). */
  wins?: number;
  draws?: number;
  losses?: number;
}

/**
 * Per-seat figures of a run, built row by row as the run's summary is (a resumed run
 * adds the rows it already has). Seats are kept in the order they first appear.
 */
export class SeatSummaryBuilder {
  private readonly seats = new Map<string, { player: string; rewards: number[]; components: Map<string, { weight: number; sum: number; n: number }>; metrics: Map<string, { sum: number; n: number }>; outcomes: { win: number; draw: number; loss: number } | null }>();

  add(row: EvalRollout): void {
    if (row.error) return;
    for (const [name, seat] of Object.entries(rolloutSeats(row) ?? {})) {
      let acc = this.seats.get(name);
      if (!acc) {
        acc = { player: seat.player, rewards: [], components: new Map(), metrics: new Map(), outcomes: null };
        this.seats.set(name, acc);
      }
      // A resumed run that mixed players (it cannot: the run's seats are checked) would say so.
      if (acc.player !== seat.player && !acc.player.includes(seat.player)) acc.player = `${acc.player}/${seat.player}`;
      acc.rewards.push(seat.reward);
      for (const c of seat.components ?? []) {
        const m = acc.components.get(c.name) ?? { weight: c.weight, sum: 0, n: 0 };
        m.sum += c.score;
        m.n++;
        acc.components.set(c.name, m);
      }
      for (const [k, v] of Object.entries(seat.metrics ?? {})) {
        const m = acc.metrics.get(k) ?? { sum: 0, n: 0 };
        m.sum += v;
        m.n++;
        acc.metrics.set(k, m);
      }
      const { win, draw, loss } = seat.metrics ?? {};
      if (win !== undefined || draw !== undefined || loss !== undefined) {
        acc.outcomes ??= { win: 0, draw: 0, loss: 0 };
        acc.outcomes.win += win ?? 0;
        acc.outcomes.draw += draw ?? 0;
        acc.outcomes.loss += loss ?? 0;
      }
    }
  }

  /** Null when no row had seats (a one-player run). */
  build(): Record<string, SeatSummary> | null {
    if (!this.seats.size) return null;
    const out: Record<string, SeatSummary> = {};
    for (const [name, acc] of this.seats) {
      const n = acc.rewards.length;
      const mean = acc.rewards.reduce((a, r) => a + r, 0) / n;
      const std = Math.sqrt(acc.rewards.reduce((a, r) => a + (r - mean) ** 2, 0) / n);
      out[name] = {
        player: acc.player,
        rollouts: n,
        reward: { mean, std, min: acc.rewards.reduce((a, r) => Math.min(a, r), Infinity), max: acc.rewards.reduce((a, r) => Math.max(a, r), -Infinity) },
        components: [...acc.components].map(([c, m]) => ({ name: c, weight: m.weight, mean: m.sum / m.n })),
        metrics: Object.fromEntries([...acc.metrics].map(([k, m]) => [k, m.sum / m.n])),
        ...(acc.outcomes ? { wins: acc.outcomes.win, draws: acc.outcomes.draw, losses: acc.outcomes.loss } : {}),
      };
    }
    return out;
  }
}
