import type { ChatMessage, Episode, Score } from "../protocol/index.js";
import { CLIENT_PLAYER, resolveSeats, SeatError, type AnyEnvironment } from "../envs/index.js";
import type { EpisodeService } from "./episodes/episode-service.js";
import { ApiError } from "./errors.js";
import type { Tenant } from "./tenants/keys.js";

/*
 * Seats on the wires that are not edgegym's own (OpenEnv, ORS, MCP; docs/multi-agent.md).
 * Each of them talks to one agent at a time, so a session there plays one seat, chosen when
 * it starts, and everything it is shown is that seat's view: the native reply of a step is
 * what the seat *to play* sees next, which on these wires may be another seat (a second
 * client in self-play), so a session bound to a seat reads its own view back instead.
 */

/** A query that reads the head and no turn. */
const HEAD_ONLY = { from_turn: Number.MAX_SAFE_INTEGER } as const;

/**
 * The first client seat of the episode a `seat_required` refusal of GET was about (its details
 * list them), so the read can be made again through a seat; undefined for any other error.
 */
export function seatToReadThrough(err: unknown): string | undefined {
  // A client's seat: the environment's own seats' views wait for the end of the game.
  const details = err instanceof ApiError && err.code === "seat_required" ? (err.details as { seats?: unknown; client_seats?: unknown } | undefined) : undefined;
  const seats = details?.client_seats ?? details?.seats;
  return Array.isArray(seats) && typeof seats[0] === "string" ? seats[0] : undefined;
}

/**
 * The episode's head without any messages, seated or not. A seated episode still running
 * cannot be read whole (its log holds what one seat must not see of another), so it is
 * read through one of its seats: the head fields (`seats`, `to_play`, turn, status) are
 * the same whichever seat reads them.
 */
export async function episodeHead(service: EpisodeService, viewer: Tenant, id: string): Promise<Episode> {
  try {
    return await service.get(viewer, id, HEAD_ONLY);
  } catch (err) {
    const seat = seatToReadThrough(err);
    if (seat === undefined) throw err;
    const { seat: _seat, ...head } = await service.get(viewer, id, { ...HEAD_ONLY, seat });
    return head;
  }
}

/** The seats a client plays in the episode, in the order they were assigned (empty for a one-player episode). */
export function clientSeats(episode: Pick<Episode, "seats">): string[] {
  return Object.entries(episode.seats ?? {})
    .filter(([, player]) => player === CLIENT_PLAYER)
    .map(([seat]) => seat);
}

/**
 * The seat a session plays: the one it names, else the only seat a client plays; undefined
 * when the episode has one player, or when clients play several seats and none was named
 * (a session that plays them all, where the wire allows one). A named seat must be one a
 * client plays in this episode.
 */
export function sessionSeat(episode: Pick<Episode, "seats" | "env_id">, named: string | undefined): string | undefined {
  if (episode.seats === undefined) {
    if (named !== undefined) throw new ApiError("seats_unsupported", `${episode.env_id} has one player and no seats; leave "seat" out`);
    return undefined;
  }
  const clients = clientSeats(episode);
  if (named === undefined) return clients.length === 1 ? clients[0] : undefined;
  const all = Object.keys(episode.seats);
  if (!all.includes(named)) throw new ApiError("unknown_seat", `${episode.env_id} has no seat "${named}"; its seats: ${all.join(", ")}`, { seats: all });
  if (!clients.includes(named)) {
    throw new ApiError("seat_not_client", `seat "${named}" of this episode is played by the environment's "${episode.seats[named]}"; clients play ${clients.join(", ")}`, {
      seat: named,
      player: episode.seats[named],
      client_seats: clients,
    });
  }
  return named;
}

/**
 * Who will play each seat of a reset of `env` asking for `seats`: the environment's
 * defaults with the request's choices over them, checked as the reset checks them (the
 * same codes). Undefined for a one-player environment. For a wire that must refuse an
 * assignment, or a seat, before it starts an episode.
 */
export function plannedSeats(env: AnyEnvironment, seats: Record<string, string> | undefined): Record<string, string> | undefined {
  try {
    return resolveSeats(env, seats);
  } catch (err) {
    if (err instanceof SeatError) throw new ApiError(err.code, err.message, err.details);
    throw err;
  }
}

/**
 * What `seat` has been shown since its last message, reading its view from turn `fromTurn`
 * on (a turn at or before that message). A bound session's step reply when the seat to play
 * next is another client's: the native reply would be that seat's view.
 */
export async function seatUnseen(service: EpisodeService, viewer: Tenant, id: string, seat: string, fromTurn: number): Promise<ChatMessage[]> {
  const view = (await service.get(viewer, id, { from_turn: fromTurn, seat })).messages;
  let last = -1;
  for (let i = view.length - 1; i >= 0; i--) {
    if (view[i]?.role === "assistant") {
      last = i;
      break;
    }
  }
  return view.slice(last + 1);
}

/** A seat's own reward (a seated score's `seats[seat]`); the score's total without a seat. */
export function seatReward(score: Score | null | undefined, seat: string | undefined): number | null {
  if (!score) return null;
  if (seat === undefined) return score.reward;
  return score.seats?.[seat]?.reward ?? score.reward;
}
