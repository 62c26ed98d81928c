import type { Context, Hono } from "hono";
import { streamSSE } from "hono/streaming";
import type { z } from "zod";
import { OrsCreate, OrsCreateSessionBody, OrsGetTask, OrsGetTaskRange, OrsScoreGroup, OrsSplitQuery, OrsToolCall } from "../../protocol/ors.js";
import { EngineError } from "../../envs/index.js";
import type { AppEnv, ServerConfig } from "../context.js";
import type { EpisodeService } from "../episodes/episode-service.js";
import { ApiError } from "../errors.js";
import { validationDetail } from "../openenv/errors.js";
import { allTasks, checkSplit, orsSplits, taskAt, taskCount, taskRange } from "./ors-tasks.js";
import { OrsSessions } from "./ors-sessions.js";
import { newSessionId } from "./session-id.js";

/** Routes at the server root, as ORS lays them out (the client's base URL is a bare origin). */
export const ORS_ROOT_PATHS = ["/list_environments", "/version", "/ping", "/create_session", "/delete_session", "/create", "/delete"] as const;
/** Routes of one environment: at `/{env}/…`, and at `/…` for the environment an `X-Deployment` header names. */
export const ORS_ENV_ROUTES = ["splits", "tools", "task_tools", "prompt", "messages", "tasks", "num_tasks", "task", "task_range", "call", "score_group"] as const;

/** Every path pattern of the wire, for the middleware (auth, limits, error shape) the caller applies. */
export function orsPaths(): string[] {
  return [...ORS_ROOT_PATHS, ...ORS_ENV_ROUTES.flatMap((r) => [`/${r}`, `/:env_name/${r}`])];
}

/** A streamed answer is sent in pieces of this many characters, as the reference server does: a client reads SSE line by line, and aiohttp's line reader has a 64 KiB limit. */
const CHUNK_CHARS = 4096;
/** While a call runs, a comment line this often keeps the stream alive: the client gives up on a stream silent for 30 s. */
const PING_MS = 10_000;

/** The parsed body, checked against an ORS request model; a mismatch is FastAPI's 422. */
async function readBody<T extends z.ZodType>(c: Context<AppEnv>, schema: T): Promise<{ ok: true; data: z.infer<T> } | { ok: false; res: Response }> {
  let raw: unknown = {};
  if ((await c.req.text()).trim() !== "") {
    try {
      raw = await c.req.json();
    } catch (err) {
      throw new ApiError("malformed_json", `request body is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) return { ok: false, res: c.json(validationDetail(parsed.error, "body"), 422) };
  return { ok: true, data: parsed.data };
}

/** `X-Session-ID`, which every session route needs (400 without it, as the reference answers). */
function sessionId(c: Context<AppEnv>): string {
  const sid = c.req.header("x-session-id")?.trim();
  if (!sid) throw new ApiError("invalid_request", "X-Session-ID header is required");
  if (sid.length > 64) throw new ApiError("invalid_request", "X-Session-ID is at most 64 characters");
  return sid;
}

/** The environment a route is for: its path's, else the one `X-Deployment` names (the client's environment name when it gives no variant). */
function envName(c: Context<AppEnv>): string {
  const named = c.req.param("env_name") ?? c.req.header("x-deployment")?.trim();
  if (!named) throw new ApiError("invalid_request", "name the environment: /{env}/… in the path, or an X-Deployment header (the client sends the name given to environments.get)");
  return named;
}

/** Text cut into pieces of at most `size` UTF-16 units, never between the two halves of a surrogate pair. */
export function chunkText(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; ) {
    let end = Math.min(i + size, text.length);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    out.push(text.slice(i, end));
    i = end;
  }
  return out;
}

/** The message an SSE `error` event carries for a failure during the call (the client raises it as the tool's failure). */
function streamError(err: unknown, requestId: string): string {
  if (err instanceof ApiError) return `${err.code}: ${err.message}`;
  if (err instanceof EngineError) return `${err.code}: ${err.message}`;
  console.error(`[${requestId}] ors call:`, err);
  return `internal_error: internal error; request id ${requestId} identifies it in the server log`;
}

/**
 * A task's stream (POST /{env}/call, /{env}/score_group), as the reference server streams
 * one: comment pings from the start (the client gives up on a stream silent for 30 s, and a
 * call may wait for the session's earlier calls), the task id `work` announces before its
 * work starts, then the answer in chunks, or an error event. `work` answers `undefined`
 * when it never started because the client went away.
 */
function taskStream(c: Context<AppEnv>, work: (announce: (taskId: string) => Promise<void>, gone: () => boolean) => Promise<unknown>): Response {
  return streamSSE(c, async (stream) => {
    const ping = setInterval(() => void stream.write(": ping\n\n").catch(() => undefined), PING_MS);
    let result: unknown;
    try {
      result = await work(
        (taskId) => stream.writeSSE({ event: "task_id", data: taskId }),
        () => stream.aborted || c.req.raw.signal.aborted,
      );
    } catch (err) {
      await stream.writeSSE({ event: "error", data: streamError(err, c.get("requestId")) });
      return;
    } finally {
      clearInterval(ping);
    }
    if (result === undefined) return;
    const pieces = chunkText(JSON.stringify(result), CHUNK_CHARS);
    for (let i = 0; i < pieces.length; i++) await stream.writeSSE({ event: i === pieces.length - 1 ? "end" : "chunk", data: pieces[i] ?? "" });
  });
}

/** Group scoring reads and stores nothing of the session, so its task id names nothing to resume: a resume scores again. */
const SCORE_GROUP_TASK_ID = "score_group";

/**
 * Every environment on the Open Reward Standard wire, at the server root: list
 * environments, splits and tasks; open a session (an edgegym episode whose id is the
 * session id); list its tools, read its prompt, call tools (each call one recorded step,
 * the reward on the call that ends the episode); delete it. Auth, body limits and the
 * error shape are applied by the caller on {@link orsPaths}. docs/ors.md has the mapping.
 */
export function registerOrsRoutes(app: Hono<AppEnv>, service: EpisodeService, config: ServerConfig, envIds: () => string[]): void {
  const sessions = new OrsSessions(service);

  app.get("/list_environments", (c) => c.json(envIds(), 200));
  app.get("/version", (c) => c.json({ version: config.version, build_sha: null }, 200));

  app.post("/ping", async (c) => {
    await sessions.ping(c.get("tenant"), sessionId(c));
    return c.json({ status: "ok" }, 200);
  });

  // The session id is minted here, bound to the tenant, and means nothing until /create: it is the id the episode will have (session-id.ts).
  app.post("/create_session", async (c) => {
    const body = await readBody(c, OrsCreateSessionBody);
    if (!body.ok) return body.res;
    if (body.data.env && Object.keys(body.data.env).length > 0) throw new ApiError("invalid_request", "environment variable overrides (env) are not taken: an edgegym environment reads no client-set variables");
    const sid = await newSessionId(c.get("tenant"));
    return streamSSE(c, async (stream) => {
      await stream.writeSSE({ event: "task_id", data: sid });
      await stream.writeSSE({ event: "end", data: "" });
    });
  });

  app.post("/delete_session", (c) => c.json({ sid: sessionId(c) }, 200));

  app.post("/create", async (c) => {
    const sid = sessionId(c);
    const body = await readBody(c, OrsCreate);
    if (!body.ok) return body.res;
    const env = body.data.env_name ?? c.req.header("x-deployment")?.trim();
    if (!env) throw new ApiError("invalid_request", "name the environment: env_name in the body, or an X-Deployment header");
    return c.json(await sessions.create(c.get("tenant"), sid, env, body.data), 200);
  });

  app.post("/delete", async (c) => {
    const sid = sessionId(c);
    await sessions.delete(c.get("tenant"), sid);
    return c.json({ sid }, 200);
  });

  for (const prefix of ["", "/:env_name"]) {
    app.get(`${prefix}/splits`, (c) => c.json(orsSplits(service.env(envName(c))), 200));
    app.get(`${prefix}/tools`, (c) => c.json(sessions.tools(envName(c)), 200));
    app.get(`${prefix}/task_tools`, async (c) => c.json(await sessions.taskTools(c.get("tenant"), sessionId(c), envName(c)), 200));
    app.get(`${prefix}/prompt`, async (c) => c.json(await sessions.prompt(c.get("tenant"), sessionId(c), envName(c)), 200));
    app.get(`${prefix}/messages`, async (c) => c.json(await sessions.messages(c.get("tenant"), sessionId(c), envName(c)), 200));

    app.post(`${prefix}/tasks`, async (c) => {
      const env = service.env(envName(c));
      const body = await readBody(c, OrsSplitQuery);
      if (!body.ok) return body.res;
      return c.json({ tasks: allTasks(env, checkSplit(env, body.data.split)), env_name: env.id }, 200);
    });
    app.post(`${prefix}/num_tasks`, async (c) => {
      const env = service.env(envName(c));
      const body = await readBody(c, OrsSplitQuery);
      if (!body.ok) return body.res;
      return c.json({ num_tasks: taskCount(env, checkSplit(env, body.data.split)) }, 200);
    });
    app.post(`${prefix}/task`, async (c) => {
      const env = service.env(envName(c));
      const body = await readBody(c, OrsGetTask);
      if (!body.ok) return body.res;
      return c.json({ task: taskAt(env, checkSplit(env, body.data.split), body.data.index), env_name: env.id }, 200);
    });
    app.post(`${prefix}/task_range`, async (c) => {
      const env = service.env(envName(c));
      const body = await readBody(c, OrsGetTaskRange);
      if (!body.ok) return body.res;
      return c.json({ tasks: taskRange(env, checkSplit(env, body.data.split), body.data.start, body.data.stop), env_name: env.id }, 200);
    });

    app.post(`${prefix}/call`, async (c) => {
      const sid = sessionId(c);
      const env = envName(c);
      const body = await readBody(c, OrsToolCall);
      if (!body.ok) return body.res;
      const call = await sessions.openCall(c.get("tenant"), sid, env, body.data);
      return taskStream(c, (announce, gone) => call.run({ announce, gone }));
    });

    // An environment that cannot score a transcript alone answers 404 before any stream, which the client reads as "unsupported".
    app.post(`${prefix}/score_group`, async (c) => {
      const sid = sessionId(c);
      const env = envName(c);
      const body = await readBody(c, OrsScoreGroup);
      if (!body.ok) return body.res;
      const scoring = await sessions.scoreGroup(c.get("tenant"), sid, env, body.data);
      return taskStream(c, async (announce) => {
        await announce(SCORE_GROUP_TASK_ID);
        return scoring.run();
      });
    });
  }
}
