import type { AssistantMessage, ChatMessage, Episode, StepResponse } from "../../protocol/index.js";
import type { OpenEnvAction, OpenEnvCallTool, OpenEnvMcpTool, OpenEnvResetData, OpenEnvResult, OpenEnvState } from "../../protocol/openenv.js";
import type { EpisodeService } from "../episodes/episode-service.js";
import { ApiError } from "../errors.js";
import type { Tenant } from "../tenants/keys.js";
import { clientSeats, episodeHead, plannedSeats, seatReward, seatUnseen, sessionSeat } from "../wire-seats.js";

/**
 * Who a session plays in a seated episode. `seat`: the one seat it is bound to (reset's
 * `seat`, or the only seat a client plays), whose view alone it is shown. Without it the
 * session plays every client seat (self-play on one connection): each step names its seat
 * and each observation is the view of the seat it names. `onlyClient` is the stepping seat
 * of a step that names none.
 */
export interface SessionSeats {
  seat?: string | undefined;
  onlyClient?: string | undefined;
}

/** A reset's answer and the seats the session now plays. */
export interface OpenEnvReset {
  result: OpenEnvResult;
  seats: SessionSeats;
}

/** The seat fields of an observation (absent for a one-player episode). */
function seatObservation(seats: Record<string, string> | undefined, seat: string | undefined, toPlay: string | null | undefined): { seats?: Record<string, string>; seat?: string; to_play?: string | null } {
  if (seats === undefined && toPlay === undefined) return {};
  return { ...(seats === undefined ? {} : { seats }), ...(seat === undefined ? {} : { seat }), to_play: toPlay ?? null };
}

/** What a session knows of an episode's seats from its head: whom it is bound to, and the seat a step without one is for. */
function sessionSeatsOf(head: Pick<Episode, "seats" | "env_id">, named: string | undefined): SessionSeats {
  const clients = clientSeats(head);
  return { seat: sessionSeat(head, named), onlyClient: clients.length === 1 ? clients[0] : undefined };
}

/**
 * OpenEnv's reset / step / state over edgegym's durable episodes. Both the HTTP routes and
 * the WebSocket session call this, so the two transports answer alike. Every call goes
 * through EpisodeService: an OpenEnv step is a native step (same turn check, same stored
 * reply on a retry), and the reward is the stored rubric score, computed once when the
 * episode ends.
 */
export class OpenEnvEpisodes {
  constructor(private readonly service: EpisodeService) {}

  /**
   * A new episode, or with `episode_id` (alone, or with `seat`) the existing one, to continue
   * after a reconnect. A seated episode's session plays the seat `seat` names (checked before
   * anything starts), else the only seat a client plays, else every client seat.
   */
  async reset(viewer: Tenant, envId: string, data: OpenEnvResetData): Promise<OpenEnvReset> {
    const { episode_id: resumeId, seat: named, ...fresh } = data;
    if (resumeId !== undefined) {
      const extra = Object.keys(fresh);
      if (extra.length > 0) {
        throw new ApiError("invalid_request", `reset with episode_id continues that episode; send it alone, or with seat (also got ${extra.join(", ")})`, {
          issues: extra.map((key) => ({ path: [key], message: "not accepted beside episode_id" })),
        });
      }
      return this.resume(viewer, envId, resumeId, named);
    }
    const env = this.service.env(envId);
    // Who plays what is known before the episode exists: a seat the session cannot play is refused with nothing started.
    const planned = plannedSeats(env, fresh.seats);
    const seats = sessionSeatsOf({ ...(planned === undefined ? {} : { seats: planned }), env_id: envId }, named);
    const { response } = await this.service.reset(viewer, envId, fresh, undefined);
    // The reply opens the seat to play; a session bound to another seat is shown its own opening instead.
    const viewSeat = seats.seat ?? response.to_play ?? undefined;
    const messages = seats.seat !== undefined && response.to_play !== seats.seat ? (await this.service.get(viewer, response.episode_id, { seat: seats.seat })).messages : response.messages;
    return {
      result: {
        observation: {
          episode_id: response.episode_id,
          env_id: response.env_id,
          turn: response.turn,
          messages,
          tools: response.tools,
          max_turns: response.max_turns,
          split: response.split,
          index: response.index,
          seed: response.seed,
          stop_reason: null,
          truncated: false,
          resumed: false,
          ...seatObservation(planned, viewSeat, response.to_play),
          score: null,
          expires_at: response.expires_at,
        },
        reward: null,
        done: response.done,
      },
      seats,
    };
  }

  /**
   * The whole transcript and where the episode stands: what a client needs to rebuild its
   * model's context. A seated episode's transcript is one seat's: the session's, or, for a
   * session that plays every client seat, the seat to play (the first client seat once done).
   */
  private async resume(viewer: Tenant, envId: string, id: string, named: string | undefined): Promise<OpenEnvReset> {
    const head = sameEnv(await episodeHead(this.service, viewer, id), envId);
    const seats = sessionSeatsOf(head, named);
    const viewSeat = head.seats === undefined ? undefined : (seats.seat ?? head.to_play ?? clientSeats(head)[0]);
    const episode = await this.service.get(viewer, id, viewSeat === undefined ? {} : { seat: viewSeat });
    const score = episode.done ? (episode.score ?? (await this.service.score(viewer, id)).score) : null;
    return {
      result: {
        observation: {
          episode_id: episode.episode_id,
          env_id: episode.env_id,
          turn: episode.turn,
          messages: episode.messages,
          tools: episode.tools,
          max_turns: episode.max_turns,
          split: episode.split,
          index: episode.index,
          seed: episode.seed,
          stop_reason: episode.stop_reason,
          truncated: episode.truncated,
          resumed: true,
          ...seatObservation(episode.seats, viewSeat, episode.to_play),
          score,
          expires_at: episode.expires_at,
        },
        reward: seatReward(score, viewSeat),
        done: episode.done,
      },
      seats,
    };
  }

  /**
   * One native step at `turn`; when it ends the episode, the rubric runs and its total is
   * the reward. A `call_tool` action is an assistant message with that one tool call (id
   * `call_<turn>`), and its answer carries the tool's output as `result`, as openenv-core's
   * CallToolObservation does. With `envId` (the HTTP route's path, which names the
   * episode anew on every request) an episode of another environment is refused before
   * anything is applied, and the seats are read from the episode; a socket is bound to its
   * environment and its seats at reset and passes `seats`.
   *
   * A seated step is for the action's `seat`, else the session's. A session bound to a seat
   * is shown that seat's view only: when the seat to play next is another client's, the
   * native reply (that seat's view) is replaced by what this seat has been shown since its move.
   */
  async step(viewer: Tenant, id: string, turn: number, action: OpenEnvAction | OpenEnvCallTool, signal?: AbortSignal, envId?: string, sessionSeats: SessionSeats = {}): Promise<OpenEnvResult> {
    const seats = envId === undefined ? sessionSeats : sessionSeatsOf(sameEnv(await episodeHead(this.service, viewer, id), envId), undefined);
    // Over HTTP nothing is bound: a step naming its seat is that seat's, as on /v1.
    const bound = envId === undefined ? seats.seat : undefined;
    if (bound !== undefined && action.seat !== undefined && action.seat !== bound) {
      throw new ApiError("seat_mismatch", `this session plays seat "${bound}", not "${action.seat}": open another session (reset with seat="${action.seat}") to play it`, { seat: bound });
    }
    const seat = action.seat ?? bound;
    let message: AssistantMessage;
    let callId: string | undefined;
    if ("type" in action) {
      callId = `call_${turn}`;
      message = { role: "assistant", content: null, tool_calls: [{ id: callId, type: "function", function: { name: action.tool_name, arguments: JSON.stringify(action.arguments ?? {}) } }] };
    } else {
      const { turn: _turn, metadata: _metadata, role: _role, seat: _seat, ...fields } = action;
      message = { role: "assistant", ...fields };
    }
    const body = await this.service.step(viewer, id, { turn, message, ...(seat === undefined ? {} : { seat }) }, signal);
    const reply = JSON.parse(body) as StepResponse;
    let messages: ChatMessage[] = reply.messages;
    let viewSeat: string | undefined;
    if (reply.to_play !== undefined) {
      viewSeat = bound ?? reply.to_play ?? seat ?? seats.onlyClient;
      if (bound !== undefined && reply.to_play !== null && reply.to_play !== bound) messages = await seatUnseen(this.service, viewer, id, bound, reply.turn);
    }
    // Scoring is stored, so a retried final step answers with the same reward.
    const score = reply.done ? (await this.service.score(viewer, id)).score : null;
    const toolReply = callId === undefined ? undefined : messages.find((m) => m.role === "tool" && m.tool_call_id === callId);
    return {
      observation: {
        episode_id: reply.episode_id,
        turn: reply.turn,
        messages,
        ...("type" in action ? { tool_name: action.tool_name, result: toolReply?.content ?? null, error: null } : {}),
        stop_reason: reply.stop_reason,
        truncated: reply.truncated,
        resumed: false,
        ...seatObservation(undefined, viewSeat, reply.to_play),
        score,
        ...(reply.template_change ? { template_change: reply.template_change } : {}),
        expires_at: reply.expires_at,
      },
      reward: seatReward(score, viewSeat),
      done: reply.done,
    };
  }

  /** openenv-core's `list_tools`: the episode's tools (the environment's before any reset) in MCP's shape; no turn is taken. */
  async listTools(viewer: Tenant, envId: string, id: string | undefined): Promise<OpenEnvResult> {
    const episode = id === undefined ? undefined : sameEnv(await episodeHead(this.service, viewer, id), envId);
    const definitions = episode?.tools ?? this.service.env(envId).toolDefinitions();
    const tools: OpenEnvMcpTool[] = definitions.map((t) => ({ name: t.function.name, description: t.function.description ?? "", input_schema: (t.function.parameters ?? {}) as Record<string, unknown> }));
    return {
      observation: { episode_id: episode?.episode_id ?? null, turn: episode?.turn ?? 0, tools },
      reward: episode?.score?.reward ?? null,
      done: episode?.done ?? false,
    };
  }

  /** OpenEnv's State for an episode; before any reset (a fresh socket) only the environment is known. */
  async state(viewer: Tenant, envId: string, id: string | undefined, seat?: string): Promise<OpenEnvState> {
    if (id === undefined) return { episode_id: null, step_count: 0, env_id: envId };
    // No turn is read: the head is what State reports, not the transcript.
    const episode = sameEnv(await episodeHead(this.service, viewer, id), envId);
    return {
      episode_id: episode.episode_id,
      step_count: episode.turn,
      env_id: episode.env_id,
      status: episode.status,
      turn: episode.turn,
      max_turns: episode.max_turns,
      done: episode.done,
      stop_reason: episode.stop_reason,
      truncated: episode.truncated,
      score: episode.score,
      ...(episode.seats === undefined ? {} : { seats: episode.seats, ...(seat === undefined ? {} : { seat }), to_play: episode.to_play ?? null }),
      expires_at: episode.expires_at,
    };
  }
}

/**
 * The episode, when it is one of `envId`: every route under `/openenv/{env_id}` acts on
 * that environment's episodes only, so an id of another's is refused (400, naming the
 * right base URL) rather than stepped or read there.
 */
function sameEnv(episode: Episode, envId: string): Episode {
  if (episode.env_id !== envId) {
    throw new ApiError("invalid_request", `episode "${episode.episode_id}" belongs to environment "${episode.env_id}"; reconnect to /openenv/${episode.env_id}`, {
      issues: [{ path: ["episode_id"], message: `episode of ${episode.env_id}` }],
    });
  }
  return episode;
}
