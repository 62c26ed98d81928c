import type { AssistantMessage, ChatMessage } from "../protocol/index.js";
import { AssistantMessage as AssistantMessageSchema } from "../protocol/index.js";
import { createRng } from "./rng.js";
import { CLIENT_PLAYER, seatView, type EnvSeats, type SeatAssignment } from "./seats.js";
import { executeToolCalls } from "./tools.js";
import type { AnyEnvironment, TaskRow } from "./types.js";

/**
 * How the engine plays a seated environment (src/envs/seats.ts): who sits where, what
 * each message is addressed to, and the environment's own players' moves between two
 * client steps. The engine calls in here only for an environment with `seats`.
 */

/** Most moves the environment's policies may make between two client steps: a game whose policies never hand the turn back is a bug, not a hang. */
export const MAX_POLICY_MOVES_PER_STEP = 256;

/** The rng stream of a policy's k-th move of a turn (the client's own message uses stream 0 of its turn). */
const POLICY_STREAM = 0x5ea7;

/** A failure of the request, not the environment's: the engine rethrows it as an EngineError with this code. */
export class SeatError extends Error {
  constructor(
    readonly code: "unknown_seat" | "unknown_policy" | "seats_unsupported" | "no_client_seat" | "seat_required" | "seat_not_client" | "not_your_turn",
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = "SeatError";
  }
}

function seatsOf(env: AnyEnvironment): EnvSeats<unknown, unknown> {
  if (!env.seats) throw new Error(`${env.id} has no seats`);
  return env.seats as EnvSeats<unknown, unknown>;
}

/**
 * The episode's assignment: the environment's defaults with the request's choices over
 * them. Refuses a seat or a player the environment does not have, a seat a player may not
 * take, `seats` on a one-player environment, and an episode no client plays.
 */
export function resolveSeats(env: AnyEnvironment, requested: Record<string, string> | undefined): SeatAssignment | undefined {
  if (!env.seats) {
    if (requested !== undefined) throw new SeatError("seats_unsupported", `${env.id} has one player and no seats; reset without "seats"`);
    return undefined;
  }
  const seats = seatsOf(env);
  const names = seats.seats.map((s) => s.name);
  const assignment: SeatAssignment = Object.fromEntries(seats.seats.map((s) => [s.name, s.default]));
  for (const [seat, player] of Object.entries(requested ?? {})) {
    const spec = seats.seats.find((s) => s.name === seat);
    if (!spec) throw new SeatError("unknown_seat", `${env.id} has no seat "${seat}"; its seats: ${names.join(", ")}`, { seats: names });
    if (!spec.players.includes(player)) {
      const exists = player === CLIENT_PLAYER || Object.hasOwn(seats.policies, player);
      throw new SeatError(
        "unknown_policy",
        exists ? `seat "${seat}" of ${env.id} cannot be played by "${player}"; its players: ${spec.players.join(", ")}` : `${env.id} has no policy "${player}"; seat "${seat}" may be played by: ${spec.players.join(", ")}`,
        { seat, players: spec.players },
      );
    }
    assignment[seat] = player;
  }
  if (!Object.values(assignment).includes(CLIENT_PLAYER)) {
    throw new SeatError("no_client_seat", `every seat of this ${env.id} episode would be played by the environment; give at least one seat to "client"`, { seats: assignment });
  }
  return assignment;
}

/** Messages the environment returned, each kept in its seat's conversation: an unnamed one goes to every seat. */
export function addressed(env: AnyEnvironment, messages: readonly ChatMessage[]): ChatMessage[] {
  const seats = seatsOf(env).seats;
  const out: ChatMessage[] = [];
  for (const m of messages) {
    if (m.name === undefined) {
      for (const seat of seats) out.push({ ...m, name: seat.name });
    } else if (seats.some((s) => s.name === m.name)) out.push(m);
    else throw new Error(`${env.id} addressed a message to "${m.name}", which is not one of its seats`);
  }
  return out;
}

/** A seated episode's opening log: each seat's system prompt, then the task's prompt (shown to every seat unless named). */
export function seatedOpening(env: AnyEnvironment, row: TaskRow): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const seat of seatsOf(env).seats) if (seat.systemPrompt) out.push({ role: "system", content: seat.systemPrompt, name: seat.name });
  const prompt: ChatMessage[] = typeof row.prompt === "string" ? (row.prompt === "" ? [] : [{ role: "user", content: row.prompt }]) : row.prompt;
  out.push(...addressed(env, prompt));
  return out;
}

/** The seat to move in `state`, or null when the game is over. */
export function seatToPlay(env: AnyEnvironment, state: unknown): string | null {
  return seatsOf(env).toPlay(state);
}

/** Who plays each seat of the episode in `state`. */
export function seatAssignment(env: AnyEnvironment, state: unknown): SeatAssignment {
  return seatsOf(env).assignment(state);
}

/** The seats a client plays, in the environment's order. */
export function clientSeats(env: AnyEnvironment, state: unknown): string[] {
  const assignment = seatAssignment(env, state);
  return seatsOf(env).seats.map((s) => s.name).filter((name) => assignment[name] === CLIENT_PLAYER);
}

/**
 * The seat a client step is for: the one it names, or, when it names none, the only
 * seat a client plays. Refuses an unknown seat, one the environment plays, and one whose
 * turn it is not (409 with `to_play`, so the client knows whom to wait for).
 */
export function stepSeat(env: AnyEnvironment, state: unknown, requested: string | undefined): string {
  if (!env.seats) {
    if (requested !== undefined) throw new SeatError("seats_unsupported", `${env.id} has one player and no seats; step without "seat"`);
    return "";
  }
  const seats = seatsOf(env);
  const clients = clientSeats(env, state);
  const seat = requested ?? (clients.length === 1 ? clients[0] : undefined);
  if (seat === undefined) throw new SeatError("seat_required", `clients play ${clients.join(" and ")} in this episode: name the seat this step is for ("seat")`, { client_seats: clients });
  if (!seats.seats.some((s) => s.name === seat)) throw new SeatError("unknown_seat", `${env.id} has no seat "${seat}"; its seats: ${seats.seats.map((s) => s.name).join(", ")}`, { seats: seats.seats.map((s) => s.name) });
  const player = seats.assignment(state)[seat];
  if (player !== CLIENT_PLAYER) throw new SeatError("seat_not_client", `seat "${seat}" of this episode is played by the environment's "${player}"; clients play ${clients.join(", ")}`, { seat, player, client_seats: clients });
  const toPlay = seats.toPlay(state);
  if (toPlay !== seat) throw new SeatError("not_your_turn", toPlay === null ? `the game is over; nobody is to play` : `it is "${toPlay}"'s turn, not "${seat}"'s`, { to_play: toPlay, seat });
  return seat;
}

export interface SeatMove {
  state: unknown;
  /** What the move added to the log: tool results, then the environment's reply (the policy's own message first, for a policy's move). */
  added: ChatMessage[];
  done: boolean;
  stopReason: string | null;
  toolErrors: number;
}

export interface MoveContext {
  args: unknown;
  seed: number;
  turn: number;
  row: TaskRow;
  signal?: AbortSignal | undefined;
}

/** Runs one seat's message: its tool calls, then the environment's reply, every message kept in its seat's conversation. */
export async function applySeatMove(env: AnyEnvironment, state: unknown, seat: string, message: AssistantMessage, log: readonly ChatMessage[], ctx: MoveContext, stream: number[] = []): Promise<SeatMove> {
  const added: ChatMessage[] = [];
  let toolErrors = 0;
  let current = state;
  if (message.tool_calls?.length && env.tools.length) {
    const tools = await executeToolCalls(env.tools, message.tool_calls, current, { maxCalls: env.maxToolCallsPerMessage, signal: ctx.signal });
    current = tools.state;
    toolErrors = tools.errors;
    added.push(...tools.messages.map((m) => ({ ...m, name: seat })));
  }
  const result = await env.respond(current, message, {
    args: ctx.args,
    rng: createRng(ctx.seed, ctx.turn, ...stream),
    turn: ctx.turn,
    messages: log,
    task: ctx.row,
    toolResults: [...added],
    signal: ctx.signal,
    seat,
  });
  current = env.stateSchema.parse(result.state);
  added.push(...addressed(env, result.messages ?? []));
  const over = result.done === true || seatToPlay(env, current) === null;
  return { state: current, added, done: over, stopReason: over ? (result.stopReason ?? "game_over") : null, toolErrors };
}

/**
 * The environment's players move until a client's seat is to play or the game is over.
 * `log` is the whole log so far (each policy sees its own seat's part); the moves are
 * appended to it and returned.
 */
export async function playPolicies(env: AnyEnvironment, state: unknown, log: ChatMessage[], ctx: MoveContext): Promise<SeatMove> {
  const seats = seatsOf(env);
  const added: ChatMessage[] = [];
  let current = state;
  for (let move = 0; ; move++) {
    const seat = seats.toPlay(current);
    if (seat === null) return { state: current, added, done: true, stopReason: "game_over", toolErrors: 0 };
    const player = seats.assignment(current)[seat];
    if (player === CLIENT_PLAYER) return { state: current, added, done: false, stopReason: null, toolErrors: 0 };
    if (move >= MAX_POLICY_MOVES_PER_STEP) throw new Error(`${env.id}'s policies made ${MAX_POLICY_MOVES_PER_STEP} moves without handing the turn to a client`);
    const policy = player === undefined ? undefined : seats.policies[player];
    if (!policy) throw new Error(`${env.id}: seat "${seat}" is assigned "${player}", which is neither "client" nor one of its policies`);
    const raw = await policy.act(current, { args: ctx.args, rng: createRng(ctx.seed, ctx.turn, POLICY_STREAM, move), seat, turn: ctx.turn, view: seatView(log, seat), task: ctx.row, signal: ctx.signal });
    const message: AssistantMessage = { ...AssistantMessageSchema.parse(raw), name: seat };
    log.push(message);
    added.push(message);
    const moved = await applySeatMove(env, current, seat, message, log, ctx, [POLICY_STREAM, move, 1]);
    log.push(...moved.added);
    added.push(...moved.added);
    current = moved.state;
    if (moved.done) return { state: current, added, done: true, stopReason: moved.stopReason, toolErrors: 0 };
  }
}

/**
 * What `seat` has been shown since its last message (all of its conversation before its
 * first): the messages a reply hands the seat that moves next.
 */
export function unseenBy(log: readonly ChatMessage[], seat: string): ChatMessage[] {
  let start = 0;
  for (let i = log.length - 1; i >= 0; i--) {
    const m = log[i] as ChatMessage;
    if (m.name === seat && m.role === "assistant") {
      start = i + 1;
      break;
    }
  }
  return seatView(log.slice(start), seat);
}

/** How many messages of `seat`'s view come before its first own message: the seat's prompt. */
export function seatPromptLength(view: readonly ChatMessage[]): number {
  const first = view.findIndex((m) => m.role === "assistant");
  return first === -1 ? view.length : first;
}
