import type { ChatMessage, StepRequest } from "../../protocol/index.js";
import { CLIENT_PLAYER, seatAssignment, seatToPlay, seatView, unseenBy, type AnyEnvironment } from "../../envs/index.js";
import { ApiError } from "../errors.js";

/**
 * What the HTTP surface shows of a seated episode (src/envs/seats.ts): the log holds
 * every seat's messages, each named for its seat; a reply and a seat's view show one
 * seat's part only, without the names. A one-player episode passes through unchanged.
 */

/** Same JSON text, same request (key order as sent). */
const canonical = (value: unknown): string => JSON.stringify(value);

/**
 * A reply's `messages` and `to_play`: what the seat to play has been shown since its
 * last message, or, when the game is over (`doneSeat`), what that seat was shown last.
 */
export function seatedReply(env: AnyEnvironment, state: unknown, log: readonly ChatMessage[], doneSeat: string | null): { messages: ChatMessage[]; to_play?: string | null } {
  if (!env.seats) return { messages: [...log] };
  // Done is done: a stop condition (max_turns) may end the game with a seat still to move in its state.
  if (doneSeat !== null) return { messages: unseenBy(log, doneSeat), to_play: null };
  const toPlay = seatToPlay(env, state);
  return { messages: toPlay === null ? [] : unseenBy(log, toPlay), to_play: toPlay };
}

/** The episode's `seats` and `to_play` fields (absent for a one-player episode). */
export function seatFields(env: AnyEnvironment, state: unknown, done: boolean): { seats?: Record<string, string>; to_play?: string | null } {
  if (!env.seats || state == null) return {};
  return { seats: seatAssignment(env, state), to_play: done ? null : seatToPlay(env, state) };
}

/**
 * A retry's message against the stored one. A seated episode stores its message named
 * for its seat: the retry matches when its text is the same and it names the same seat
 * (or none, the default seat being the stored one).
 */
export function sameStepMessage(env: AnyEnvironment | undefined, stored: unknown, req: StepRequest): boolean {
  if (!env?.seats) return canonical(stored) === canonical(req.message);
  if (stored === null || typeof stored !== "object") return false;
  const { name, ...storedRest } = stored as { name?: string };
  const { name: _ignored, ...sent } = req.message;
  return (req.seat === undefined || req.seat === name) && canonical(storedRest) === canonical(sent);
}

/**
 * How GET /v1/episodes/{id} filters the log. With `seat`, that seat's conversation. Without
 * it, a seated episode's whole log only once it is done: while it runs the log holds what
 * one seat must not see of another (a poker hand, a simulated user's instructions).
 */
export function seatedView(env: AnyEnvironment | undefined, row: { status: string; state: unknown }, seat: string | undefined): { seat?: string; filter(messages: ChatMessage[]): ChatMessage[] } {
  const all = { filter: (messages: ChatMessage[]) => messages };
  if (!env?.seats) {
    if (seat !== undefined) throw new ApiError("seats_unsupported", `${env?.id ?? "this environment"} has one player and no seats; get the episode without "seat"`);
    return all;
  }
  const names = env.seats.seats.map((s) => s.name);
  if (seat === undefined) {
    if (row.status === "active") {
      const clients = row.state == null ? names : names.filter((n) => seatAssignment(env, row.state)[n] === CLIENT_PLAYER);
      throw new ApiError("seat_required", `this episode has seats (${names.join(", ")}) and is still running: get one seat's view with ?seat=, or the whole log once it is done`, { seats: names, client_seats: clients });
    }
    return all;
  }
  if (!names.includes(seat)) throw new ApiError("unknown_seat", `${env.id} has no seat "${seat}"; its seats: ${names.join(", ")}`, { seats: names });
  // The environment's own seat holds what the client must not see while the game runs (the policy's poker card).
  const player = row.state == null ? CLIENT_PLAYER : seatAssignment(env, row.state)[seat];
  if (row.status === "active" && player !== CLIENT_PLAYER) {
    throw new ApiError("seat_not_client", `seat "${seat}" is played by the environment's "${player}"; its view is shown once the episode is done`, { seat, player });
  }
  return { seat, filter: (messages) => seatView(messages, seat) };
}
