import { z } from "zod";
import { EpisodeId, EpisodeQuery, ResetRequest, StepRequest } from "./episodes.js";

/*
 * The native protocol over one WebSocket (`GET /v1/ws`, docs/websocket.md): each frame a
 * client sends is one request of the HTTP protocol, tagged with an id the client picks; the
 * server answers each with one frame carrying that id. Requests on one socket run
 * concurrently, so replies may come in any order. The bodies are the HTTP bodies, byte for
 * byte where the HTTP route returns stored text (a step).
 */

/** The client's tag for a request, echoed in its reply: a string of 1–128 characters or a whole number. */
export const SocketRequestId = z.union([z.string().min(1).max(128), z.number().int().min(0).max(Number.MAX_SAFE_INTEGER)]);
export type SocketRequestId = z.infer<typeof SocketRequestId>;

const IdempotencyKey = z.string().min(1).max(200);

export const SocketRequest = z.discriminatedUnion("op", [
  z.strictObject({ id: SocketRequestId, op: z.literal("reset"), env_id: z.string().min(1).max(128), body: ResetRequest.optional(), idempotency_key: IdempotencyKey.optional() }),
  z.strictObject({ id: SocketRequestId, op: z.literal("step"), episode_id: EpisodeId, body: StepRequest }),
  z.strictObject({ id: SocketRequestId, op: z.literal("score"), episode_id: EpisodeId }),
  z.strictObject({ id: SocketRequestId, op: z.literal("close"), episode_id: EpisodeId }),
  z.strictObject({ id: SocketRequestId, op: z.literal("get"), episode_id: EpisodeId, query: EpisodeQuery.optional() }),
]);
export type SocketRequest = z.infer<typeof SocketRequest>;

/** The operations a frame may name, as the HTTP route each one is. */
export const SOCKET_OPS = {
  reset: "POST /v1/envs/{env_id}/episodes",
  step: "POST /v1/episodes/{episode_id}/step",
  score: "POST /v1/episodes/{episode_id}/score",
  close: "DELETE /v1/episodes/{episode_id}",
  get: "GET /v1/episodes/{episode_id}",
} as const;
