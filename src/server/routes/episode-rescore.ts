import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { RescoreRequest, RescoreResponse } from "../../protocol/index.js";
import type { AppEnv } from "../context.js";
import type { EpisodeRescorer } from "../episodes/episode-rescore.js";
import { EpisodeParams } from "./params.js";
import { errorResponses, json } from "./responses.js";

const rescore = createRoute({
  operationId: "rescoreEpisode",
  method: "post",
  path: "/v1/episodes/{episode_id}/rescore",
  tags: ["episodes"],
  summary: "Score an episode again, with its own rubric or the current one",
  description:
    "Runs a rubric over the stored transcript and final state: no tool, environment reply or model runs. `rubric: episode` (default) uses the version the episode was started on and answers 409 `env_version_mismatch` when this server no longer runs it; `rubric: current` uses the version it runs now. The stored score is replaced only with `save: true`. See docs/versions.md.",
  request: { params: EpisodeParams, body: { required: false, content: json(RescoreRequest) } },
  responses: {
    200: { description: "The new score beside the stored one.", content: json(RescoreResponse) },
    ...errorResponses("episode_not_found", "episode_expired", "env_version_mismatch", "turn_conflict", "env_not_found", "env_unavailable", "malformed_json", "payload_too_large"),
  },
});

export function registerEpisodeRescoreRoute(app: OpenAPIHono<AppEnv>, rescorer: EpisodeRescorer): void {
  app.openapi(rescore, async (c) => {
    // With no body at all the validator is skipped: the defaults are filled in here.
    const body = RescoreRequest.parse(c.req.valid("json") ?? {});
    return c.json(await rescorer.rescore(c.get("tenant"), c.req.valid("param").episode_id, body), 200);
  });
}
