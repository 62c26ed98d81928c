import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import { ScoreCompletionsRequest, ScoreCompletionsResponse } from "../../protocol/index.js";
import { groupAdvantages, parseArgs, scoreCompletion, scoreCompletionGroup, type Score } from "../../envs/index.js";
import { startInTurns } from "../../envs/turns.js";
import type { AppEnv } from "../context.js";
import type { EpisodeService } from "../episode-service.js";
import { errorResponses, json } from "./responses.js";

const EnvParams = z.object({ env_id: z.string().meta({ example: "reverse-text" }) });

const scoreCompletions = createRoute({
  method: "post",
  path: "/v1/envs/{env_id}/score",
  tags: ["scoring"],
  summary: "Score completions without episodes",
  description:
    "Stateless rubric scoring for a trainer that already has its completions. Items sharing a `group` are one GRPO group: they are scored together (the rubric's group rewards see the whole group) and each gets its advantage (reward minus the group mean, divided by the group's std when `scale_advantages`).",
  request: { params: EnvParams, body: { required: true, content: json(ScoreCompletionsRequest) } },
  responses: {
    200: { description: "Per-item scores and advantages, and per-group statistics.", content: json(ScoreCompletionsResponse) },
    ...errorResponses("env_not_found", "env_unavailable", "invalid_env_args", "malformed_json", "payload_too_large"),
  },
});

export function registerScoreCompletionsRoute(app: OpenAPIHono<AppEnv>, service: EpisodeService): void {
  app.openapi(scoreCompletions, async (c) => {
    const env = service.env(c.req.valid("param").env_id);
    const body = c.req.valid("json");
    parseArgs(env, body.args);
    const groups = new Map<string, number[]>();
    body.items.forEach((item, i) => {
      if (item.group !== undefined) groups.set(item.group, [...(groups.get(item.group) ?? []), i]);
    });
    // Items of one group are scored together so the rubric's group rewards see them all.
    // Groups and lone items start in turns: up to 1,024 items never hold the event loop at once.
    const scores = new Array<Score>(body.items.length);
    const units: number[][] = [...groups.values(), ...body.items.flatMap((item, i) => (item.group === undefined ? [[i]] : []))];
    await startInTurns(units, async (members) => {
      const first = body.items[members[0] as number] as (typeof body.items)[number];
      if (first.group === undefined) scores[members[0] as number] = await scoreCompletion(env, first, body.args);
      else {
        const scored = await scoreCompletionGroup(env, members.map((i) => body.items[i] as (typeof body.items)[number]), body.args);
        members.forEach((i, k) => (scores[i] = scored[k] as Score));
      }
    });
    const advantage = new Array<number | null>(scores.length).fill(null);
    const stats = [...groups].map(([group, members]) => {
      const { mean, std, advantages } = groupAdvantages(members.map((i) => (scores[i] as (typeof scores)[number]).reward), { scale: body.scale_advantages });
      members.forEach((i, k) => (advantage[i] = advantages[k] as number));
      return { group, size: members.length, mean, std };
    });
    return c.json(
      {
        env_id: env.id,
        results: scores.map((score, index) => ({ index, group: body.items[index]?.group ?? null, score, advantage: advantage[index] ?? null })),
        groups: stats,
      },
      200,
    );
  });
}
