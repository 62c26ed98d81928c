import { createRoute, z, type OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { limitBody } from "../middleware/body-limit.js";
import { jsonDepth, MAX_JSON_DEPTH } from "../middleware/json-body.js";
import type { AppEnv } from "../context.js";
import { presentedKey } from "../model-endpoint/episode-key.js";
import type { EndpointAnswer, ModelCalls } from "../model-endpoint/model-calls.js";
import { WIRES } from "../model-endpoint/wires.js";
import type { WireAdapter } from "../model-endpoint/wire.js";

/** Where a harness episode's endpoint lives: outside /v1, whose tenant keys it does not take (the episode's own key opens it). */
export const MODEL_PREFIX = "/model";

/** The base URLs of an episode's endpoint under a server origin (OpenAI clients append `/chat/completions`, Anthropic clients `/v1/messages`). */
export function modelEndpointUrls(origin: string, episodeId: string): { openai: string; anthropic: string } {
  const base = `${origin.replace(/\/+$/, "")}${MODEL_PREFIX}/${encodeURIComponent(episodeId)}`;
  return { openai: `${base}/v1`, anthropic: base };
}

const Params = z.object({ episode_id: z.string().min(1).max(64).openapi({ description: "The harness episode.", example: "ep_01JH7Q2Z8X4N5R6S7T8V9W0XYZ" }) });
const Body = z.record(z.string(), z.unknown()).openapi("ModelRequest", { description: "The request as the wire defines it (OpenAI Chat Completions, OpenAI Responses or Anthropic Messages)." });
const ModelError = z
  .record(z.string(), z.unknown())
  .openapi("ModelError", {
    description:
      "An error in the agent's wire's own shape, which its SDK parses: OpenAI's `{\"error\": {\"message\", \"type\", \"code\"}}` on Chat Completions and Responses, Anthropic's `{\"type\": \"error\", \"error\": {\"type\", \"message\"}}` on Messages. An upstream's own error body is passed on as it came.",
  });
const errorContent = { content: { "application/json": { schema: ModelError } } };
const Answer = z.record(z.string(), z.unknown()).openapi("ModelAnswer", { description: "The wire's own answer (or its server-sent events when the request asked for a stream)." });

function route(path: string, operationId: string, summary: string, description: string) {
  return createRoute({
    operationId,
    method: "post",
    path: `${MODEL_PREFIX}/{episode_id}${path}`,
    tags: ["harness"],
    summary,
    description: `${description} Authenticated by the episode's key (\`Authorization: Bearer\` or \`x-api-key\`), not by the server's API keys; open while the episode is active. Errors are in the wire's own shape.`,
    request: { params: Params, body: { required: true, content: { "application/json": { schema: Body } } } },
    responses: {
      200: { description: "The upstream's answer in the wire's format; `text/event-stream` when the request set `stream`.", content: { "application/json": { schema: Answer }, "text/event-stream": { schema: z.string() } } },
      400: { description: "A request the endpoint cannot translate.", ...errorContent },
      401: { description: "No key, or not this episode's key.", ...errorContent },
      410: { description: "The episode is done, closed or expired.", ...errorContent },
      429: { description: "The episode's call or token limit is used (the episode has ended).", ...errorContent },
      502: { description: "The upstream failed; its error passed on.", ...errorContent },
    },
  });
}

const chat = route("/v1/chat/completions", "modelChatCompletions", "OpenAI Chat Completions, proxied and recorded", "Forwards the call to the episode's upstream and stores it as the episode's next turn before answering.");
const responses = route("/v1/responses", "modelResponses", "OpenAI Responses, proxied and recorded", "Translated to the upstream's Chat Completions (function tools; no server-side conversation state: `previous_response_id` is refused).");
const messages = route("/v1/messages", "modelMessages", "Anthropic Messages, proxied and recorded", "Translated to the upstream's Chat Completions, tools included.");

const models = createRoute({
  operationId: "modelList",
  method: "get",
  path: `${MODEL_PREFIX}/{episode_id}/v1/models`,
  tags: ["harness"],
  summary: "The model an episode's endpoint serves",
  description: "One model, named as the episode's agent spec names it (whatever model a call asks for, that one answers). Needs the episode's key.",
  request: { params: Params },
  responses: { 200: { description: "An OpenAI model list.", content: { "application/json": { schema: Answer } } }, 401: { description: "No key, or not this episode's key.", ...errorContent } },
});

function send(c: Context<AppEnv>, answer: EndpointAnswer): Response {
  if (answer.kind === "sse") {
    return new Response(answer.events.join(""), { status: 200, headers: { "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache" } });
  }
  return c.json(answer.body as Record<string, unknown>, answer.status as 200);
}

/** The body as JSON, or the wire's own 400 (not edgegym's error shape: the agent's SDK reads it). */
async function readJson(c: Context<AppEnv>, adapter: WireAdapter): Promise<{ body: unknown } | Response> {
  const text = await c.req.text();
  // The same bound as every other route's body (middleware/json-body.ts), checked before parsing: a deep body would be stored and re-serialised.
  const depth = jsonDepth(text);
  if (depth > MAX_JSON_DEPTH) return c.json(adapter.error(400, `the request body nests ${depth} levels; at most ${MAX_JSON_DEPTH} are accepted`), 400);
  try {
    return { body: JSON.parse(text) as unknown };
  } catch {
    return c.json(adapter.error(400, "the request body is not valid JSON"), 400);
  }
}

export function registerModelEndpointRoutes(app: OpenAPIHono<AppEnv>, calls: ModelCalls, maxBodyBytes: number): void {
  app.use(`${MODEL_PREFIX}/*`, limitBody(maxBodyBytes));
  const handler = (adapter: WireAdapter) => async (c: Context<AppEnv>) => {
    const read = await readJson(c, adapter);
    if (read instanceof Response) return read;
    return send(c, await calls.call(c.req.param("episode_id") ?? "", presentedKey(c.req.raw.headers), adapter, read.body));
  };
  // Bodies are the wires' own, validated by the adapters (a zod schema here would answer in edgegym's error shape).
  app.openAPIRegistry.registerPath(chat);
  app.openAPIRegistry.registerPath(responses);
  app.openAPIRegistry.registerPath(messages);
  app.openAPIRegistry.registerPath(models);
  app.post(`${MODEL_PREFIX}/:episode_id/v1/chat/completions`, handler(WIRES.chat));
  app.post(`${MODEL_PREFIX}/:episode_id/v1/responses`, handler(WIRES.responses));
  app.post(`${MODEL_PREFIX}/:episode_id/v1/messages`, handler(WIRES.messages));
  app.get(`${MODEL_PREFIX}/:episode_id/v1/models`, async (c) => {
    const model = await calls.modelOf(c.req.param("episode_id"), presentedKey(c.req.raw.headers));
    if (model === null) return c.json(WIRES.chat.error(401, "invalid key for this model endpoint"), 401);
    return c.json({ object: "list", data: [{ id: model, object: "model", created: 0, owned_by: "edgegym" }] }, 200);
  });
}
