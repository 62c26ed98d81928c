import { contentText, type AssistantMessage, type ChatMessage, type Episode, type StepResponse } from "../../protocol/index.js";
import {
  orsToolSpec,
  respondTool,
  type OrsCreate,
  type OrsListTools,
  type OrsMessage,
  type OrsRunToolOutput,
  type OrsScoreGroup,
  type OrsScoreGroupOutput,
  type OrsTextBlock,
  type OrsToolCall,
  type OrsToolSpec,
} from "../../protocol/ors.js";
import type { EpisodeService } from "../episodes/episode-service.js";
import { ApiError } from "../errors.js";
import type { Tenant } from "../tenants/keys.js";
import { scoreCandidates, scoresGroups } from "./ors-score-group.js";
import { checkSplit, taskAt } from "./ors-tasks.js";
import { SessionQueue } from "./session-queue.js";
import { fresh, issuedTo } from "./session-id.js";
import { clientSeats, episodeHead, plannedSeats, seatToReadThrough } from "../wire-seats.js";

/** Turn 0 alone: the opening messages and the head. */
const OPENING = { from_turn: 0, limit: 1 } as const;

/**
 * An ORS session is one agent's conversation, so it plays one seat of a seated episode: the
 * only one a client plays (the others are the environment's policies). An episode in which
 * clients play several seats cannot be played here: the wire has no way to say which seat a
 * call is for, nor to show a seat what another did between its calls.
 */
function oneClientSeat(seats: Record<string, string>, envId: string): string {
  const clients = clientSeats({ seats });
  if (clients.length === 1) return clients[0] as string;
  throw new ApiError(
    "client_seats_unsupported",
    `an ORS session plays one seat, and clients would play ${clients.join(" and ")} of this ${envId} episode: give every other seat to one of the environment's policies in task_spec.seats (GET /v1/envs/${envId} lists them), or play self-play over /v1 or OpenEnv`,
    { seats, client_seats: clients },
  );
}

/** A prepared tool call: the task id to announce first, then the step (or an answer that needs none). */
type PreparedCall = { taskId: string; run: () => Promise<OrsRunToolOutput> };

/** What a call's stream gives the call while it runs. */
export interface CallStream {
  /** Sends a task id (the client's resume token) before the step it names starts; a later one replaces it. */
  announce(taskId: string): Promise<void>;
  /** Whether the client has gone away: a call that has not started then never starts. */
  gone(): boolean;
}

/** A tool call checked before its stream opens (an unknown session is an HTTP error); `run` takes its turn and answers, or `undefined` when it never started. */
export interface OrsCall {
  run(stream: CallStream): Promise<OrsRunToolOutput | undefined>;
}

/** A group scoring checked before its stream opens; `run` scores. */
export interface OrsGroupScoring {
  run(): Promise<OrsScoreGroupOutput>;
}

/** How often a call moves on to the next turn when calls in other processes keep taking its turn first. */
const MAX_TURN_MOVES = 32;

/** The reply tool's name: `respond`, unless the environment has a tool of that name. */
export function respondName(tools: readonly { function: { name: string } }[]): string {
  const taken = new Set(tools.map((t) => t.function.name));
  for (const name of ["respond", "respond_message", "edgegym_respond"]) if (!taken.has(name)) return name;
  // Three names taken by one environment's tools: refuse rather than guess a fourth.
  throw new ApiError("env_unavailable", "this environment's tools take every name the ORS reply tool may have (respond, respond_message, edgegym_respond)");
}

/** A task id names the turn its call was applied at: re-sending it replays that step (stored), never applies another. */
const TASK_ID = /^turn-(\d{1,9})$/;

const text = (t: string): OrsTextBlock => ({ type: "text", text: t });

/** /create with an id /create_session did not give this tenant (or gave it over an hour ago): one answer for every such id, so none can be told from another. */
const notIssued = () => new ApiError("invalid_request", "X-Session-ID must be a session id that POST /create_session gave the same API key within the last hour (ep_ and 32 hex digits)");
const sessionExists = () => new ApiError("invalid_request", "Session already exists");

/**
 * ORS sessions over edgegym's durable episodes: the session id is the episode id, each
 * tool call is one native step (same turn check, same stored reply on a retry), and the
 * reward is the stored rubric score, computed once when the episode ends. Nothing of a
 * session is held in memory between requests (only the order of its calls in flight,
 * session-queue.ts), so any process serves any call of any session.
 */
export class OrsSessions {
  /** Calls on one session, one at a time in this process (session-queue.ts). */
  private readonly queue = new SessionQueue();

  constructor(private readonly service: EpisodeService) {}

  /**
   * The episode's head with turn 0's messages only: where it stands, its tools and its
   * prompt. A seated episode's are its client seat's (its opening, never another seat's).
   */
  private async head(viewer: Tenant, sid: string, envId: string | undefined): Promise<Episode> {
    let episode: Episode;
    try {
      episode = await this.service.get(viewer, sid, OPENING);
    } catch (err) {
      // A seated episode still running is read through a seat; which one is known once its head is.
      const seat = seatToReadThrough(err);
      if (seat === undefined) throw err;
      episode = await this.service.get(viewer, sid, { ...OPENING, seat });
    }
    if (envId !== undefined && episode.env_id !== envId) {
      throw new ApiError("invalid_request", `session "${sid}" is an episode of environment "${episode.env_id}", not "${envId}"`);
    }
    if (episode.seats === undefined) return episode;
    const seat = oneClientSeat(episode.seats, episode.env_id);
    return episode.seat === seat ? episode : this.service.get(viewer, sid, { ...OPENING, seat });
  }

  /**
   * POST /create: the episode whose id is the session id. A retry of the same create (the
   * client retries on 502/503/504 and dropped connections) finds the episode it made. Only
   * an id /create_session gave this tenant becomes an episode id (session-id.ts); any other
   * (made up, malformed, another tenant's) is refused alike, before anything is read.
   */
  async create(viewer: Tenant, sid: string, envId: string, body: OrsCreate): Promise<{ sid: string }> {
    if (!(await issuedTo(viewer, sid))) throw notIssued();
    if (body.toolset_name != null) throw new ApiError("invalid_request", `unknown toolset ${JSON.stringify(body.toolset_name)}: edgegym serves each environment's own tools, and no toolsets`);
    const env = this.service.env(envId);
    const spec = body.task_spec ?? taskAt(env, checkSplit(env, body.split ?? ""), body.index ?? -1);
    // A task_spec from a client is checked like split and index (it names a task; it never carries one).
    taskAt(env, checkSplit(env, spec.split), spec.index);
    // Who plays what is checked before anything starts: one seat, and only one, for the session.
    const seats = plannedSeats(env, spec.seats);
    if (seats !== undefined) oneClientSeat(seats, env.id);
    const reset = {
      split: spec.split,
      index: spec.index,
      ...(spec.seed === undefined ? {} : { seed: spec.seed }),
      ...(spec.args === undefined ? {} : { args: spec.args }),
      ...(spec.seats === undefined ? {} : { seats: spec.seats }),
    };
    let existing: Episode | undefined;
    try {
      existing = await episodeHead(this.service, viewer, sid);
    } catch (err) {
      if (!(err instanceof ApiError) || (err.code !== "episode_not_found" && err.code !== "episode_expired")) throw err;
      if (err.code === "episode_expired") throw new ApiError("invalid_request", "Session already exists (and has expired); open a new one with /create_session");
    }
    if (existing) {
      const sameSeats = JSON.stringify(Object.entries(existing.seats ?? {}).sort()) === JSON.stringify(Object.entries(seats ?? {}).sort());
      if (existing.env_id === env.id && existing.split === spec.split && existing.index === spec.index && sameSeats) return { sid };
      throw sessionExists();
    }
    if (!fresh(sid)) throw notIssued();
    try {
      // The key makes a racing twin of this create (a retry sent while the first still ran) find the same episode.
      await this.service.reset(viewer, env.id, reset, `ors:${sid}`, sid);
    } catch (err) {
      // The id is another episode's: this tenant's own (a racing create of another task), or, 1 time in 2^32, another tenant's whose id passes this tenant's check too; that one is answered as any id not issued.
      if (!(err instanceof ApiError && err.code === "invalid_request" && err.message.includes("already taken"))) throw err;
      const own = await episodeHead(this.service, viewer, sid).catch(() => undefined);
      throw own ? sessionExists() : notIssued();
    }
    return { sid };
  }

  /** POST /delete: an episode still running is closed (its quota slot freed); a finished one keeps its transcript and score as they are. */
  async delete(viewer: Tenant, sid: string): Promise<void> {
    let episode: Episode;
    try {
      episode = await episodeHead(this.service, viewer, sid);
    } catch (err) {
      // The reference server answers a delete of an unknown session with its id too.
      if (err instanceof ApiError && (err.code === "episode_not_found" || err.code === "episode_expired")) return;
      throw err;
    }
    if (episode.status === "active") await this.service.close(viewer, sid);
  }

  /** POST /ping: the session is still there (404 unknown, 410 expired). */
  async ping(viewer: Tenant, sid: string): Promise<void> {
    await this.head(viewer, sid, undefined);
  }

  /** GET /{env}/tools: the environment's tools and the reply tool. */
  tools(envId: string): OrsListTools {
    const env = this.service.env(envId);
    const defs = env.toolDefinitions();
    return listTools([...defs.map(orsToolSpec), respondTool(respondName(defs))], scoresGroups(env));
  }

  /** GET /{env}/task_tools: the session's own tools (an environment may give each task its own) and the reply tool. */
  async taskTools(viewer: Tenant, sid: string, envId: string | undefined): Promise<OrsListTools> {
    const episode = await this.head(viewer, sid, envId);
    return listTools([...episode.tools.map(orsToolSpec), respondTool(respondName(episode.tools))], scoresGroups(this.service.env(episode.env_id)));
  }

  /** GET /{env}/prompt: the opening messages' text, one block each (system prompt first). */
  async prompt(viewer: Tenant, sid: string, envId: string | undefined): Promise<OrsTextBlock[]> {
    const episode = await this.head(viewer, sid, envId);
    return openingMessages(episode).map((m) => text(contentText(m.content)));
  }

  /** GET /{env}/messages: the opening messages, role-tagged. */
  async messages(viewer: Tenant, sid: string, envId: string | undefined): Promise<OrsMessage[]> {
    const episode = await this.head(viewer, sid, envId);
    return openingMessages(episode).map((m) => ({ role: m.role === "tool" ? "user" : m.role, blocks: [text(contentText(m.content))] }));
  }

  /**
   * POST /{env}/call. Checked before the stream opens; then it waits for the calls on the
   * same session that came first in this process (the client may send several at once), so
   * each takes the turn after the one before it: the reference server runs them side by side
   * on its live session object, and a durable turn is taken once, so here they queue. A call
   * that another process beat to its turn was not applied: it takes the next turn and
   * announces that turn's task id. A resume (`task_id`) never moves.
   */
  async openCall(viewer: Tenant, sid: string, envId: string | undefined, call: OrsToolCall): Promise<OrsCall> {
    const checked = await this.prepareCall(viewer, sid, envId, call);
    return {
      run: async (stream) => {
        const slot = await this.queue.enter(sid);
        try {
          // Calls ahead of this one moved the episode on: its turn is read again.
          let prepared = slot.waited ? undefined : checked;
          for (let moves = 0; ; moves++) {
            // A client gone before the step starts never reads its answer: the step is not taken (a re-send without a task id is a call of its own).
            if (stream.gone()) return undefined;
            prepared ??= await this.prepareCall(viewer, sid, envId, call);
            await stream.announce(prepared.taskId);
            try {
              return await prepared.run();
            } catch (err) {
              if (call.task_id != null || moves >= MAX_TURN_MOVES || !(err instanceof ApiError && err.code === "turn_conflict")) throw err;
              prepared = undefined;
            }
          }
        } finally {
          slot.leave();
        }
      },
    };
  }

  /**
   * POST /{env}/score_group: the candidates scored against the session's task
   * (ors-score-group.ts). Checked before the stream opens: an unknown session, or an
   * environment that cannot score a transcript alone, is a 404 as the reference answers.
   */
  async scoreGroup(viewer: Tenant, sid: string, envId: string | undefined, body: OrsScoreGroup): Promise<OrsGroupScoring> {
    const head = await this.head(viewer, sid, envId);
    const env = this.service.env(head.env_id);
    if (!scoresGroups(env)) throw new ApiError("route_not_found", `Environment ${JSON.stringify(env.id)} does not implement score_group: its episodes own a sandbox, which a candidate's transcript does not carry`);
    return { run: () => scoreCandidates(env, head, body.candidates) };
  }

  /**
   * A call's turn and task id, read from the episode now. Without `task_id` the call is the
   * episode's next turn; with one it is that turn again, which answers the stored reply when
   * it was applied and applies it once when it was not.
   */
  private async prepareCall(viewer: Tenant, sid: string, envId: string | undefined, call: OrsToolCall): Promise<PreparedCall> {
    const episode = await this.head(viewer, sid, envId);
    let turn = episode.turn;
    if (call.task_id != null) {
      const match = TASK_ID.exec(call.task_id);
      turn = match ? Number(match[1]) : Number.NaN;
      if (!(turn <= episode.turn)) throw new ApiError("invalid_request", `unknown task_id ${JSON.stringify(call.task_id)}: this session has no call at that turn`);
    }
    const taskId = `turn-${turn}`;
    // Refusals take no step; a resume with their task id is checked again and refused alike.
    const refuse = (error: string, reason: "not_found" | "input_validation" | "episode_finished"): PreparedCall => ({ taskId, run: () => Promise.resolve({ ok: false, error, reason }) });
    if (call.task_id == null && episode.done) return refuse(`The episode is finished (${episode.stop_reason ?? "done"}); no more tool calls are taken`, "episode_finished");
    const reply = respondName(episode.tools);
    let message: AssistantMessage;
    if (call.name === reply) {
      const content = call.input.content;
      if (typeof content !== "string" || Object.keys(call.input).length !== 1) return refuse(`Tool input validation error: ${reply} takes one argument, content (a string)`, "input_validation");
      message = { role: "assistant", content };
    } else if (episode.tools.some((t) => t.function.name === call.name)) {
      // The call id is the turn's, so a resume sends the very message stored and reads its reply.
      message = { role: "assistant", content: null, tool_calls: [{ id: `call_${turn}`, type: "function", function: { name: call.name, arguments: JSON.stringify(call.input) } }] };
    } else {
      return refuse(`${JSON.stringify(call.name)} is not a valid tool; the tools are ${[...episode.tools.map((t) => t.function.name), reply].join(", ")}`, "not_found");
    }
    return { taskId, run: () => this.step(viewer, sid, turn, message, episode.seat) };
  }

  /**
   * One native step; when it ends the episode the rubric runs (once: a retry reads the stored
   * score) and its total is the reward. A seated episode's step is its one client seat's, and
   * the reply is that seat's view (the others are policies, whose moves it was shown).
   */
  private async step(viewer: Tenant, sid: string, turn: number, message: AssistantMessage, seat: string | undefined): Promise<OrsRunToolOutput> {
    let body: string;
    try {
      // No abort signal: a call whose client went away still completes, and its stored reply is what a resume with the task id reads.
      body = await this.service.step(viewer, sid, { turn, message });
    } catch (err) {
      if (err instanceof ApiError && (err.code === "episode_done" || err.code === "episode_closed")) return { ok: false, error: err.message, reason: "episode_finished" };
      throw err;
    }
    const reply = JSON.parse(body) as StepResponse;
    const score = reply.done ? (await this.service.score(viewer, sid)).score : null;
    return {
      ok: true,
      output: {
        blocks: reply.messages.filter((m) => m.role !== "assistant").map((m) => text(contentText(m.content))),
        metadata: {
          episode_id: reply.episode_id,
          turn: reply.turn,
          messages: reply.messages,
          stop_reason: reply.stop_reason,
          truncated: reply.truncated,
          ...(seat === undefined ? {} : { seat, to_play: reply.to_play ?? null }),
          score,
        },
        reward: score?.reward ?? null,
        finished: reply.done,
      },
    };
  }
}

function listTools(tools: OrsToolSpec[], supportsScoreGroup: boolean): OrsListTools {
  return { tools, terminal_tool: null, supports_score_group: supportsScoreGroup, message_block_types: ["text"] };
}

/** What the episode opened with: `head` reads turn 0 alone, so its messages are exactly those. */
function openingMessages(episode: Episode): ChatMessage[] {
  return episode.messages;
}
