import { z } from "zod";
import type { AssistantMessage, ChatMessage } from "../protocol/index.js";
import type { Rng } from "./rng.js";
import type { TaskRow } from "./types.js";

/**
 * Seats: an episode with several players (self-play, a game against the environment's
 * own policy, an agent talking with a simulated user). Each seat has its own
 * conversation. The engine stores one log of the whole episode in which every message
 * names (`name`) the seat whose conversation it belongs to: a seat's actions are its
 * assistant messages, what the environment shows it are user (or tool) messages named
 * for it. A seat's view is the log filtered to its name; nothing addressed to another
 * seat ever reaches it, which is how hidden information (a poker hand) stays hidden.
 */

/** Who plays a seat when the client does (over the API), rather than a policy of the environment's. */
export const CLIENT_PLAYER = "client";

/** Seat and policy names: short, lower-case, safe in a URL query and a metric name. */
export const SEAT_NAME_PATTERN = /^[a-z][a-z0-9_-]{0,31}$/;

/** The seats of one episode and who plays each: `{"x": "client", "o": "minimax"}`. */
export const SeatAssignment = z.record(z.string().regex(SEAT_NAME_PATTERN), z.string().regex(SEAT_NAME_PATTERN));
export type SeatAssignment = z.infer<typeof SeatAssignment>;

export interface SeatSpec {
  name: string;
  description: string;
  /** The system prompt this seat's conversation opens with. Default: none. */
  systemPrompt?: string | null;
  /** Who may play it: `"client"` and/or names of the environment's policies. */
  players: string[];
  /** Who plays it when a reset names no one (one of `players`). */
  default: string;
  /** False for a seat nobody trains (a simulated user): trainers skip its trajectory. Default true. */
  trainable?: boolean;
}

export interface PolicyContext<Args> {
  args: Args;
  /** Seeded by (episode seed, turn, move): the same episode replays the same way. */
  rng: Rng;
  /** The seat this policy plays. */
  seat: string;
  /** The episode turn the move is made in (0: at reset, before any client step). */
  turn: number;
  /** This seat's own conversation so far (what it was shown and what it sent), without names. */
  view: readonly ChatMessage[];
  task: TaskRow;
  signal?: AbortSignal | undefined;
}

/** A player the environment supplies for a seat (minimax, a scripted or an LLM-simulated user). */
export interface SeatPolicy<State, Args> {
  description: string;
  /** The seat's next message. A throw ends the episode with `env_error`, as a throwing `respond` does. */
  act(state: State, ctx: PolicyContext<Args>): AssistantMessage | Promise<AssistantMessage>;
}

/**
 * What a seated environment declares beside the usual `Environment` fields. `setup`
 * receives the episode's assignment (`SetupContext.seats`) and must keep it in the state,
 * where `assignment` reads it back: it is recorded with the episode, so a rescore or a
 * replay is exact. `respond` receives the seat that sent the message (`ctx.seat`); its
 * messages name their seat (`name`), and a message without a name is shown to every seat.
 */
export interface EnvSeats<State, Args = unknown> {
  seats: SeatSpec[];
  /** The environment's players, by name (a seat's `players` other than "client" name these). */
  policies: Record<string, SeatPolicy<State, Args>>;
  /** The seat that moves next; null when the game is over (the episode then ends). */
  toPlay(state: State): string | null;
  /** Who plays each seat of this episode, as `setup` recorded it. */
  assignment(state: State): SeatAssignment;
}

/** A user message shown to one seat only. */
export function toSeat(seat: string, content: string): ChatMessage {
  return { role: "user", content, name: seat };
}

/** Every message of `log` that belongs to `seat`, without the name (the seat's own conversation, ready to train on). */
export function seatView(log: readonly ChatMessage[], seat: string): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const m of log) {
    if (m.name !== seat) continue;
    const { name: _name, ...rest } = m;
    out.push(rest as ChatMessage);
  }
  return out;
}
