import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { ScoreCompletionsRequest, ScoreCompletionsResponse } from "../../protocol/index.js";
import { scoreCompletions as scoreAll } from "../../envs/index.js";
import type { AppEnv } from "../context.js";
import type { EpisodeService } from "../episodes/episode-service.js";
import { EnvParams } from "./params.js";
import { errorResponses, json } from "./responses.js";


const scoreCompletions = createRoute({
  operationId: "scoreCompletions",
  method: "post",
  path: "/v1/envs/{env_id}/score",
  tags: ["scoring"],
  summary: "Score completions without episodes",
  description:
    "Stateless rubric scoring for a trainer that already has its completions. Items sharing a `group` are one GRPO group: they are scored together (the rubric's group rewards see the whole group) and each gets its advantage (reward minus the group mean, divided by the group's std when `scale_advantages`).",
  request: { params: EnvParams, body: { required: true, content: json(ScoreCompletionsRequest) } },
  responses: {
    200: { description: "Per-item scores and advantages, and per-group statistics.", content: json(ScoreCompletionsResponse) },
    ...errorResponses("env_not_found", "env_unavailable", "invalid_env_args", "malformed_json", "payload_too_large", "invalid_request", "seat_required", "unknown_seat", "seats_unsupported"),
  },
});

export function registerScoreCompletionsRoute(app: OpenAPIHono<AppEnv>, service: EpisodeService): void {
  app.openapi(scoreCompletions, async (c) => {
    const env = service.env(c.req.valid("param").env_id);
    return c.json(await scoreAll(env, c.req.valid("json")), 200);
  });
}
