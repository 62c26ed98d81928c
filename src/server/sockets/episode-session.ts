import { SocketRequest, type SocketRequestId } from "../../protocol/session-socket.js";
import { EngineError } from "../../envs/index.js";
import type { EpisodeService } from "../episodes/episode-service.js";
import { ApiError, validationError } from "../errors.js";
import { findForbiddenKey, jsonDepth, MAX_JSON_DEPTH } from "../middleware/json-body.js";
import type { Tenant } from "../tenants/keys.js";
import type { FrameProblem, MessageSession, SessionReply } from "./message-socket.js";

/**
 * edgegym's own protocol over one WebSocket (`GET /v1/ws`): every frame is one request
 * (reset, step, score, close, get) tagged with the client's id, answered by one frame with
 * the same id, the HTTP status and the HTTP body (or the HTTP error body's `error`). The
 * socket holds nothing but the caller's identity: each request names its episode, every
 * step carries its turn, and each goes through the same service (and so the same store,
 * conditional writes and durability) as the HTTP routes. A socket that drops loses
 * nothing; the client sends the same requests on a new one.
 */
export class EpisodeSocketSession implements MessageSession {
  /** Aborted when the socket goes, as an HTTP request's signal is: a step's running tools are stopped and nothing is stored. */
  private readonly gone = new AbortController();
  private frames = 0;

  constructor(
    private readonly service: EpisodeService,
    private readonly viewer: Tenant,
    private readonly requestId: string,
  ) {}

  async receive(text: string): Promise<SessionReply> {
    // Each frame gets its own id in the server's log, under the socket's.
    const requestId = `${this.requestId}.${++this.frames}`;
    let id: SocketRequestId | null = null;
    try {
      const raw = parseFrame(text);
      id = requestIdOf(raw);
      const bad = findForbiddenKey(raw);
      if (bad) throw new ApiError("invalid_request", `key ${JSON.stringify(bad[bad.length - 1])} is not accepted (at ${bad.join(".")})`);
      const parsed = SocketRequest.safeParse(raw);
      if (!parsed.success) throw validationError(parsed.error, "frame");
      return { send: [await this.run(parsed.data, requestId)] };
    } catch (err) {
      // The socket is gone and its step stopped on purpose (nothing stored): nobody is left to answer.
      if (this.gone.signal.aborted) return { send: [] };
      return { send: [errorFrame(id, err, requestId)] };
    }
  }

  refuse(problem: FrameProblem, text?: string): string {
    const requestId = `${this.requestId}.${++this.frames}`;
    switch (problem.kind) {
      case "too_large":
        return errorFrame(null, new ApiError("payload_too_large", `frame of ${problem.bytes} bytes exceeds the limit of ${problem.limit}`), requestId);
      case "binary":
        return errorFrame(null, new ApiError("malformed_json", "binary frames are not accepted; send JSON text"), requestId);
      case "busy":
      case "backlog": {
        // The frame is within the size limit, so reading its id costs no more than the frame is allowed to.
        let id: SocketRequestId | null = null;
        try {
          if (text !== undefined) id = requestIdOf(parseFrame(text));
        } catch {
          // No readable id: the reply says which limit, the client's timeout covers the rest.
        }
        const err =
          problem.kind === "busy"
            ? new ApiError("rate_limited", `${problem.queued} requests on this socket are still running, its limit; wait for replies, or open another socket`, { in_flight: problem.queued, limit: problem.limit }, { "Retry-After": "0" })
            : new ApiError("rate_limited", `${problem.buffered} bytes of replies on this socket are still unread, over its limit of ${problem.limit}; read them before sending more`, { buffered_bytes: problem.buffered, limit: problem.limit }, { "Retry-After": "1" });
        return errorFrame(id, err, requestId);
      }
    }
  }

  ended(): void {
    this.gone.abort();
  }

  private async run(req: SocketRequest, requestId: string): Promise<string> {
    const tag = JSON.stringify(req.id);
    switch (req.op) {
      case "reset": {
        const { response, replayed } = await this.service.reset(this.viewer, req.env_id, req.body ?? {}, req.idempotency_key);
        return `{"id":${tag},"status":201,"replayed":${replayed},"body":${JSON.stringify(response)}}`;
      }
      case "step":
        // The stored reply text itself, as the HTTP route sends it: a retried step gets the same bytes.
        return `{"id":${tag},"status":200,"body":${await this.service.step(this.viewer, req.episode_id, req.body, this.gone.signal)}}`;
      case "score":
        return `{"id":${tag},"status":200,"body":${JSON.stringify(await this.service.score(this.viewer, req.episode_id))}}`;
      case "close":
        return `{"id":${tag},"status":200,"body":${JSON.stringify(await this.service.close(this.viewer, req.episode_id))}}`;
      case "get":
        return `{"id":${tag},"status":200,"body":${JSON.stringify(await this.service.get(this.viewer, req.episode_id, req.query ?? {}))}}`;
      default:
        // Unreachable: the schema admits only the operations above.
        throw new ApiError("invalid_request", `unknown op in request ${requestId}`);
    }
  }
}

/** Parses a frame's text with the HTTP body's rules: bounded nesting (prototype keys are refused by the caller, after it has read the id). */
function parseFrame(text: string): unknown {
  if (jsonDepth(text) > MAX_JSON_DEPTH) throw new ApiError("json_too_deep", `frame nests more than ${MAX_JSON_DEPTH} levels`);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new ApiError("malformed_json", `frame is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  return raw;
}

/** The frame's id when it is a valid one, so even a frame that fails validation is answered under its id. */
function requestIdOf(raw: unknown): SocketRequestId | null {
  if (!raw || typeof raw !== "object" || !("id" in raw)) return null;
  const id = raw.id;
  if (typeof id === "string" && id.length >= 1 && id.length <= 128) return id;
  if (typeof id === "number" && Number.isSafeInteger(id) && id >= 0) return id;
  return null;
}

/** `{"id", "status", "error": {code, message, request_id, details?}, "retry_after"?}`: the HTTP error body, tagged. */
function errorFrame(id: SocketRequestId | null, err: unknown, requestId: string): string {
  let api: ApiError;
  if (err instanceof ApiError) api = err;
  else if (err instanceof EngineError) api = new ApiError(err.code, err.message, err.details);
  else {
    console.error(`[${requestId}] /v1/ws:`, err);
    api = new ApiError("internal_error", "internal error; the request id identifies it in the server log");
  }
  const retryAfter = api.headers?.["Retry-After"];
  return JSON.stringify({
    id,
    status: api.status,
    error: { code: api.code, message: api.message, request_id: requestId, ...(api.details === undefined ? {} : { details: api.details }) },
    ...(retryAfter === undefined ? {} : { retry_after: Number(retryAfter) }),
  });
}
