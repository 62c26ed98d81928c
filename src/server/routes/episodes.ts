import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { CloseResponse, Episode, EpisodeQuery, ForkList, ForkListQuery, ForkRequest, ForkResponse, ResetRequest, ResetResponse, ScoreResponse, StepRequest, StepResponse } from "../../protocol/index.js";
import type { AppEnv } from "../context.js";
import type { EpisodeService } from "../episodes/episode-service.js";
import { EnvParams, EpisodeParams } from "./params.js";
import { errorResponses, json } from "./responses.js";
import { parseSync, requiredJsonBody } from "./sync-validate.js";

const IdempotencyHeaders = z.object({
  "idempotency-key": z
    .string()
    .min(1)
    .max(200)
    .optional()
    .meta({ description: "Repeating a reset with the same key (and body) returns the same episode.", example: "run-7-task-3-gen-0" }),
});

const reset = createRoute({
  operationId: "resetEpisode",
  method: "post",
  path: "/v1/envs/{env_id}/episodes",
  tags: ["episodes"],
  summary: "Start an episode (reset)",
  description: "Picks a task (dataset row by `index`, or by `seed`), runs the environment's setup and returns the opening messages and tools.",
  // Every field has a default, and the server has always taken a reset with no body at all.
  request: { params: EnvParams, headers: IdempotencyHeaders, body: { required: false, content: json(ResetRequest) } },
  responses: {
    201: { description: "The new episode (or, with a repeated Idempotency-Key, the one it made before).", content: json(ResetResponse) },
    ...errorResponses("env_not_found", "env_unavailable", "invalid_env_args", "task_out_of_range", "idempotency_key_reused", "rate_limited", "malformed_json", "payload_too_large", "sandbox_build_failed", "sandbox_start_failed", "unknown_seat", "unknown_policy", "no_client_seat", "seats_unsupported"),
  },
});

const step = createRoute({
  operationId: "stepEpisode",
  method: "post",
  path: "/v1/episodes/{episode_id}/step",
  tags: ["episodes"],
  summary: "Send one assistant message",
  description:
    "Applies one assistant message at `turn`. Tool calls run on the server. A retry of a step already applied returns the stored reply byte for byte; a different message at a past turn is 409 `turn_conflict`.",
  request: { params: EpisodeParams, body: { required: true, content: json(StepRequest) } },
  responses: {
    200: { description: "The environment's reply.", content: json(StepResponse) },
    ...errorResponses("episode_not_found", "turn_conflict", "episode_done", "episode_closed", "episode_expired", "env_version_mismatch", "rate_limited", "malformed_json", "payload_too_large", "not_your_turn", "seat_not_client", "seat_required", "unknown_seat", "seats_unsupported"),
  },
});

const getEpisode = createRoute({
  operationId: "getEpisode",
  method: "get",
  path: "/v1/episodes/{episode_id}",
  tags: ["episodes"],
  summary: "Read an episode: transcript, status, score, sampled tokens",
  description:
    "Returns the transcript from `from_turn` on (default: all of it), at most `limit` turns, with each turn's stored sampled tokens. Reading a page costs what the page holds, not what the episode holds.",
  request: { params: EpisodeParams, query: EpisodeQuery },
  responses: { 200: { description: "The episode.", content: json(Episode) }, ...errorResponses("episode_not_found", "episode_expired", "invalid_request", "seat_required", "seat_not_client", "unknown_seat", "seats_unsupported") },
});

const ForkHeaders = z.object({
  "idempotency-key": z
    .string()
    .min(1)
    .max(200)
    .optional()
    .meta({ description: "Repeating a fork with the same key (and body) returns the same episodes.", example: "run-7-node-12" }),
});

const forkEpisode = createRoute({
  operationId: "forkEpisode",
  method: "post",
  path: "/v1/episodes/{episode_id}/fork",
  tags: ["episodes"],
  summary: "Start n episodes from the state after a turn (fork)",
  description:
    "Each new episode shares the parent's transcript up to `turn` (stored once, not copied), has the parent's seed, and is stepped on its own: the same messages give the same transcript as the parent had. The parent is not changed; it may be active, done, closed or scored, but not expired. A sandboxed episode forks at its current turn only: each fork gets a container started from a snapshot of the parent's (an earlier turn is `fork_unavailable`, reason `resources_history`).",
  request: { params: EpisodeParams, headers: ForkHeaders, body: { required: false, content: json(ForkRequest) } },
  responses: {
    201: { description: "The new episodes (or, with a repeated Idempotency-Key, the ones made before).", content: json(ForkResponse) },
    ...errorResponses("episode_not_found", "episode_expired", "turn_conflict", "episode_done", "fork_unavailable", "env_not_found", "env_unavailable", "idempotency_key_reused", "rate_limited", "payload_too_large", "malformed_json", "sandbox_lost", "sandbox_start_failed"),
  },
});

const listEpisodeForks = createRoute({
  operationId: "listEpisodeForks",
  method: "get",
  path: "/v1/episodes/{episode_id}/forks",
  tags: ["episodes"],
  summary: "List the episodes forked from an episode",
  description:
    "Its direct children (each fork's `parent.episode_id` is this episode), oldest first, `limit` at a time: pass `next_cursor` back as `cursor` for the next page. Works while the episode's tombstone is kept after it expired, since forks outlive their parent.",
  request: { params: EpisodeParams, query: ForkListQuery },
  responses: { 200: { description: "A page of forks.", content: json(ForkList) }, ...errorResponses("episode_not_found", "invalid_request") },
});

const closeEpisode = createRoute({
  operationId: "closeEpisode",
  method: "delete",
  path: "/v1/episodes/{episode_id}",
  tags: ["episodes"],
  summary: "Close an episode (idempotent)",
  request: { params: EpisodeParams },
  responses: { 200: { description: "The episode's status after closing.", content: json(CloseResponse) }, ...errorResponses("episode_not_found") },
});

const scoreEpisode = createRoute({
  operationId: "scoreEpisode",
  method: "post",
  path: "/v1/episodes/{episode_id}/score",
  tags: ["episodes"],
  summary: "Score an episode with its rubric",
  description:
    "Runs the rubric once and stores the result; scoring again returns the same score. Scoring an active episode ends it. An unscored episode whose environment changed incompatibly is 409 `env_version_mismatch` (…/rescore with `rubric: current` scores it with the new rubric).",
  request: { params: EpisodeParams },
  responses: { 200: { description: "The score.", content: json(ScoreResponse) }, ...errorResponses("episode_not_found", "episode_expired", "env_version_mismatch") },
});

export function registerEpisodeRoutes(app: OpenAPIHono<AppEnv>, service: EpisodeService): void {
  app.openapi(reset, async (c) => {
    const { response, replayed } = await service.reset(c.get("tenant"), c.req.valid("param").env_id, c.req.valid("json"), c.req.valid("header")["idempotency-key"], undefined, new URL(c.req.url).origin);
    if (replayed) c.header("Idempotent-Replayed", "true");
    return c.json(response, 201);
  });

  // Documented from `step` like every route, validated by hand with zod's sync parse (sync-validate.ts says why).
  app.openAPIRegistry.registerPath(step);
  app.post("/v1/episodes/:episode_id/step", async (c) => {
    const { episode_id } = parseSync(EpisodeParams, c.req.param(), "param");
    const request = parseSync(StepRequest, await requiredJsonBody(c), "json");
    const body = await service.step(c.get("tenant"), episode_id, request, c.req.raw.signal);
    // The stored text itself, so a retried step gets exactly the bytes of the first reply.
    return c.body(body, 200, { "Content-Type": "application/json" });
  });

  app.openapi(getEpisode, async (c) => c.json(await service.get(c.get("tenant"), c.req.valid("param").episode_id, c.req.valid("query")), 200));

  app.openapi(forkEpisode, async (c) => {
    const { response, replayed } = await service.fork(c.get("tenant"), c.req.valid("param").episode_id, c.req.valid("json") ?? {}, c.req.valid("header")["idempotency-key"]);
    if (replayed) c.header("Idempotent-Replayed", "true");
    return c.json(response, 201);
  });

  app.openapi(listEpisodeForks, async (c) => c.json(await service.forks(c.get("tenant"), c.req.valid("param").episode_id, c.req.valid("query")), 200));

  app.openapi(closeEpisode, async (c) => c.json(await service.close(c.get("tenant"), c.req.valid("param").episode_id), 200));

  app.openapi(scoreEpisode, async (c) => c.json(await service.score(c.get("tenant"), c.req.valid("param").episode_id), 200));
}
