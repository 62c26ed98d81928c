import type { Context, Hono } from "hono";
import type { UpgradeWebSocket } from "hono/ws";
import { z } from "zod";
import { OpenEnvAnyAction, OpenEnvObservation, OpenEnvResetData, OpenEnvState, OpenEnvStepBody } from "../../protocol/openenv.js";
import type { AppEnv, ServerConfig } from "../context.js";
import type { EpisodeService } from "../episodes/episode-service.js";
import { ApiError } from "../errors.js";
import { socketOriginCheck } from "../middleware/origin-check.js";
import { messageSocket, type MessageSocketOptions } from "../sockets/message-socket.js";
import { validationDetail } from "./errors.js";
import { OpenEnvEpisodes } from "./openenv-episodes.js";
import { OpenEnvSocketSession } from "./socket-session.js";

/** Where every environment's OpenEnv base URL lives: `/openenv/{env_id}`. */
export const OPENENV_PREFIX = "/openenv";

/** Frames one socket may have waiting for replies: a client of openenv-core sends one and waits. */
const MAX_QUEUED_FRAMES = 8;
/** A socket silent this long is closed; nothing is lost, since the episode is stored (its own TTL is separate). */
const SOCKET_IDLE_MS = 15 * 60 * 1000;

/** The parsed body (cached by the jsonBody middleware); a body that is not JSON is 400 `malformed_json`. */
async function readJson(c: Context<AppEnv>): Promise<unknown> {
  try {
    return await c.req.json();
  } catch (err) {
    throw new ApiError("malformed_json", `request body is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** A JSON Schema whose root is the object itself (pydantic's shape), not a `$ref` to a named definition. */
function rootSchema(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as Record<string, unknown> & { $ref?: string; $defs?: Record<string, unknown> };
  const name = json.$ref?.startsWith("#/$defs/") ? json.$ref.slice("#/$defs/".length) : undefined;
  if (!name || !json.$defs?.[name]) return json;
  const { [name]: root, ...others } = json.$defs;
  const { $ref: _ref, $defs: _defs, ...rest } = json;
  return { ...rest, ...(root as Record<string, unknown>), ...(Object.keys(others).length ? { $defs: others } : {}) };
}

let schemas: { action: unknown; observation: unknown; state: unknown } | undefined;

/** GET /schema: JSON Schemas of the action, observation and state (openenv-core's SchemaResponse). */
function schemaResponse(): { action: unknown; observation: unknown; state: unknown } {
  schemas ??= {
    action: rootSchema(OpenEnvAnyAction, "input"),
    observation: rootSchema(OpenEnvObservation, "output"),
    state: rootSchema(OpenEnvState, "output"),
  };
  return schemas;
}

/**
 * Every environment on the OpenEnv wire at `/openenv/{env_id}`: POST /reset, POST /step,
 * GET /state, GET /schema, GET /metadata, GET /health, and the WebSocket session at /ws
 * (when the runtime gives `upgrade`). Auth, body limits and the error shape are applied by
 * the caller on `/openenv/*`. docs/openenv.md says how each field maps.
 */
export function registerOpenEnvRoutes(app: Hono<AppEnv>, service: EpisodeService, config: ServerConfig, upgrade: UpgradeWebSocket | undefined, sockets: MessageSocketOptions = {}): void {
  const episodes = new OpenEnvEpisodes(service);
  const base = `${OPENENV_PREFIX}/:env_id`;

  app.post(`${base}/reset`, async (c) => {
    const envId = c.req.param("env_id");
    service.env(envId);
    // OpenEnv's reset body is optional (`Body(default_factory=ResetRequest)`).
    // Read as text (cached by the jsonBody middleware): asking for `raw.body` would take @hono/node-server off its fast path.
    const raw: unknown = (await c.req.text()).trim() === "" ? {} : await readJson(c);
    const parsed = OpenEnvResetData.safeParse(raw ?? {});
    if (!parsed.success) return c.json(validationDetail(parsed.error, "body"), 422);
    return c.json((await episodes.reset(c.get("tenant"), envId, parsed.data)).result, 200);
  });

  app.post(`${base}/step`, async (c) => {
    const envId = c.req.param("env_id");
    service.env(envId);
    const parsed = OpenEnvStepBody.safeParse(await readJson(c));
    if (!parsed.success) return c.json(validationDetail(parsed.error, "body"), 422);
    const { action, episode_id } = parsed.data;
    if ("type" in action && action.type === "list_tools") return c.json(await episodes.listTools(c.get("tenant"), envId, episode_id), 200);
    if (action.turn === undefined) {
      // Over HTTP nothing remembers the turn, and without it a retried step could be applied twice.
      return c.json({ detail: [{ type: "missing", loc: ["body", "action", "turn"], msg: "Field required over HTTP: the observation's `turn` (it makes a retried step safe)" }] }, 422);
    }
    // The path names the environment: an episode of another is refused before any move is applied.
    return c.json(await episodes.step(c.get("tenant"), episode_id, action.turn, action, c.req.raw.signal, envId), 200);
  });

  app.get(`${base}/state`, async (c) => {
    const envId = c.req.param("env_id");
    service.env(envId);
    const id = c.req.query("episode_id");
    if (id === undefined || id.length === 0 || id.length > 64) {
      return c.json({ detail: [{ type: "missing", loc: ["query", "episode_id"], msg: "Field required over HTTP: the episode whose state to return (1 to 64 characters)" }] }, 422);
    }
    return c.json(await episodes.state(c.get("tenant"), envId, id), 200);
  });

  app.get(`${base}/schema`, (c) => {
    service.env(c.req.param("env_id"));
    return c.json(schemaResponse(), 200);
  });

  app.get(`${base}/metadata`, (c) => {
    const env = service.env(c.req.param("env_id"));
    return c.json({ name: env.id, description: env.description, version: env.version, readme_content: null, author: null, documentation_url: null }, 200);
  });

  app.get(`${base}/health`, (c) => {
    service.env(c.req.param("env_id"));
    return c.json({ status: "healthy" }, 200);
  });

  app.get(
    `${base}/ws`,
    async (c, next) => {
      // Unknown environment or a runtime without sockets: a plain HTTP error before any upgrade.
      service.env(c.req.param("env_id"));
      if (!upgrade) throw new ApiError("service_unavailable", "this server was built without WebSocket support; use the HTTP routes");
      return next();
    },
    socketOriginCheck(config.allowedOrigins),
    upgrade
      ? messageSocket(
          upgrade,
          (c) => new OpenEnvSocketSession(episodes, c.get("tenant"), c.req.param("env_id") ?? "", c.get("requestId")),
          {
            maxMessageBytes: config.bodyLimitBytes,
            maxQueued: MAX_QUEUED_FRAMES,
            maxOpen: config.openEnvSocketMaxOpen,
            idleMs: SOCKET_IDLE_MS,
            maxBufferedBytes: config.socketMaxBufferedBytes,
            drainTimeoutMs: config.socketDrainTimeoutMs,
          },
          sockets,
        )
      : (c) => c.body(null, 500),
  );
}
