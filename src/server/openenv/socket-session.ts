import { OpenEnvAnyAction, OpenEnvClientMessage, OpenEnvResetData } from "../../protocol/openenv.js";
import { ApiError, validationError } from "../errors.js";
import { findForbiddenKey, jsonDepth, MAX_JSON_DEPTH } from "../middleware/json-body.js";
import type { FrameProblem, MessageSession, SessionReply } from "../sockets/message-socket.js";
import type { Tenant } from "../tenants/keys.js";
import { wsErrorFrame, wsFrame } from "./errors.js";
import type { OpenEnvEpisodes, SessionSeats } from "./openenv-episodes.js";

/**
 * One OpenEnv WebSocket connection (openenv-core's `/ws`): reset, step, state, close.
 * Unlike OpenEnv's own server, the socket holds no environment, only the id of the
 * episode it is attached to and the turn it last saw. The episode lives in the database,
 * so when the socket drops a new one continues it: `reset` with `{"episode_id": …}`.
 * In a seated episode the socket also remembers which seat it plays (reset's `seat`, or
 * the only client seat): every observation it sends is that seat's view.
 */
export class OpenEnvSocketSession implements MessageSession {
  private episodeId: string | undefined;
  private turn = 0;
  private seats: SessionSeats = {};

  constructor(
    private readonly episodes: OpenEnvEpisodes,
    private readonly viewer: Tenant,
    private readonly envId: string,
    private readonly requestId: string,
  ) {}

  async receive(text: string): Promise<SessionReply> {
    let raw: unknown;
    try {
      if (jsonDepth(text) > MAX_JSON_DEPTH) return this.reply(wsFrame("INVALID_JSON", `message nests more than ${MAX_JSON_DEPTH} levels`, { edgegym_code: "json_too_deep" }));
      raw = JSON.parse(text);
    } catch (err) {
      return this.reply(wsFrame("INVALID_JSON", `Invalid JSON: ${err instanceof Error ? err.message : String(err)}`, { edgegym_code: "malformed_json" }));
    }
    const bad = findForbiddenKey(raw);
    if (bad) return this.reply(wsFrame("VALIDATION_ERROR", `key ${JSON.stringify(bad[bad.length - 1])} is not accepted (at ${bad.join(".")})`, { edgegym_code: "invalid_request" }));
    const type = raw && typeof raw === "object" && "type" in raw ? raw.type : undefined;
    if (type !== "reset" && type !== "step" && type !== "state" && type !== "close") {
      return this.reply(wsFrame("UNKNOWN_TYPE", `Unknown message type: ${typeof type === "string" ? type.slice(0, 100) : JSON.stringify(type ?? "")}`));
    }
    try {
      const message = parse(OpenEnvClientMessage, raw, "message");
      switch (message.type) {
        case "reset": {
          const { result, seats } = await this.episodes.reset(this.viewer, this.envId, parse(OpenEnvResetData, message.data ?? {}, "reset data"));
          this.episodeId = result.observation.episode_id ?? undefined;
          this.turn = result.observation.turn;
          this.seats = seats;
          return this.reply(JSON.stringify({ type: "observation", data: result }));
        }
        case "step": {
          const action = parse(OpenEnvAnyAction, message.data, "action");
          if ("type" in action && action.type === "list_tools") {
            return this.reply(JSON.stringify({ type: "observation", data: await this.episodes.listTools(this.viewer, this.envId, this.episodeId) }));
          }
          if (this.episodeId === undefined) {
            throw new ApiError("invalid_request", 'no episode on this connection yet: send {"type": "reset"} first (with {"episode_id": …} to continue one)');
          }
          const result = await this.episodes.step(this.viewer, this.episodeId, action.turn ?? this.turn, action, undefined, undefined, this.seats);
          this.turn = result.observation.turn;
          return this.reply(JSON.stringify({ type: "observation", data: result }));
        }
        case "state":
          return this.reply(JSON.stringify({ type: "state", data: await this.episodes.state(this.viewer, this.envId, this.episodeId, this.seats.seat) }));
        case "close":
          // The episode stays: closing the socket is not closing the episode (it can be continued until its TTL).
          return { send: [], close: true };
      }
    } catch (err) {
      return this.reply(wsErrorFrame(err, this.requestId));
    }
  }

  refuse(problem: FrameProblem): string {
    switch (problem.kind) {
      case "too_large":
        return wsFrame("VALIDATION_ERROR", `message of ${problem.bytes} bytes exceeds the limit of ${problem.limit}`, { edgegym_code: "payload_too_large" });
      case "binary":
        return wsFrame("INVALID_JSON", "binary frames are not accepted; send JSON text", { edgegym_code: "malformed_json" });
      case "busy":
        return wsFrame("CAPACITY_REACHED", `${problem.queued} messages are still waiting for replies; wait for them before sending more`, { edgegym_code: "rate_limited" });
      case "backlog":
        return wsFrame("CAPACITY_REACHED", `${problem.buffered} bytes of replies are still unread; read them before sending more`, { edgegym_code: "rate_limited" });
    }
  }

  private reply(text: string): SessionReply {
    return { send: [text] };
  }
}

function parse<T>(schema: { safeParse(value: unknown): { success: true; data: T } | { success: false; error: import("zod").ZodError } }, value: unknown, where: string): T {
  const result = schema.safeParse(value);
  if (!result.success) throw validationError(result.error, where);
  return result.data;
}
