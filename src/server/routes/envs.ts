import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { EnvInfo, EnvList, ExamplePage, ExampleQuery } from "../../protocol/index.js";
import { describeEnv, listExamples as examplesOf } from "../../envs/index.js";
import type { AppEnv } from "../context.js";
import type { EpisodeService } from "../episodes/episode-service.js";
import { ApiError } from "../errors.js";
import { EnvParams } from "./params.js";
import { errorResponses, json } from "./responses.js";


const listEnvs = createRoute({
  operationId: "listEnvs",
  method: "get",
  path: "/v1/envs",
  tags: ["environments"],
  summary: "List environments",
  responses: { 200: { description: "Every environment this server runs.", content: json(EnvList) }, ...errorResponses() },
});

const getEnv = createRoute({
  operationId: "getEnv",
  method: "get",
  path: "/v1/envs/{env_id}",
  tags: ["environments"],
  summary: "Describe an environment",
  request: { params: EnvParams },
  responses: { 200: { description: "The environment.", content: json(EnvInfo) }, ...errorResponses("env_not_found", "env_unavailable") },
});

const listExamples = createRoute({
  operationId: "listExamples",
  method: "get",
  path: "/v1/envs/{env_id}/examples",
  tags: ["environments"],
  summary: "Page through an environment's tasks",
  description: "Rows of a split with the prompt as the model sees it. For a procedural split the index is the task's seed, from 0 to 2^32 − 1.",
  request: { params: EnvParams, query: ExampleQuery },
  responses: { 200: { description: "A page of tasks.", content: json(ExamplePage) }, ...errorResponses("env_not_found", "env_unavailable") },
});

export function registerEnvRoutes(app: OpenAPIHono<AppEnv>, service: EpisodeService, list: () => Promise<EnvInfo[]>): void {
  app.openapi(listEnvs, async (c) => c.json({ envs: await list() }, 200));

  app.openapi(getEnv, async (c) => c.json(await describeEnv(service.env(c.req.valid("param").env_id)), 200));

  app.openapi(listExamples, async (c) => {
    const env = service.env(c.req.valid("param").env_id);
    const { split, offset, limit } = c.req.valid("query");
    try {
      const { examples, total } = await examplesOf(env, split, offset, limit);
      return c.json({ examples, offset, limit, total }, 200);
    } catch (err) {
      if (err instanceof RangeError) throw new ApiError("task_out_of_range", err.message);
      throw err;
    }
  });
}
