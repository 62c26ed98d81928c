import { OpenAPIHono } from "@hono/zod-openapi";
import { ModelCalls } from "./model-endpoint/model-calls.js";
import { registerModelEndpointRoutes } from "./routes/model-endpoint.js";
import { describeEnv } from "../envs/index.js";
import { DEFAULT_CONFIG, type AppDeps, type AppEnv, type ServerConfig } from "./context.js";
import { sqliteStores, type EpisodeStorage } from "./db/stores.js";
import { EvalService } from "./evals/eval-service.js";
import { EpisodeService } from "./episodes/episode-service.js";
import { allowedMethodsLookup } from "./routes/allowed-methods.js";
import { ApiError, errorResponse, handleError, validationError } from "./errors.js";
import { bearerAuth } from "./middleware/auth.js";
import { hostCheck } from "./middleware/origin-check.js";
import { StreamSlots } from "./tenants/stream-slots.js";
import { limitBody } from "./middleware/body-limit.js";
import { jsonBody } from "./middleware/json-body.js";
import { requestId } from "./middleware/request-id.js";
import { registerProtocolComponents } from "./openapi/components.js";
import { registerDocsRoutes } from "./routes/docs.js";
import { registerConsoleRoutes } from "./console/routes.js";
import { registerEnvRoutes } from "./routes/envs.js";
import { registerEpisodeRoutes } from "./routes/episodes.js";
import { registerEpisodeRescoreRoute } from "./routes/episode-rescore.js";
import { EpisodeRescorer } from "./episodes/episode-rescore.js";
import { registerEvalRoutes } from "./routes/evals.js";
import { registerMcpRoutes } from "./mcp/routes.js";
import { registerHealthRoutes } from "./routes/health.js";
import { registerScoreCompletionsRoute } from "./routes/score-completions.js";
import { registerSessionSocketRoute } from "./routes/session-socket.js";
import { openEnvErrorShape } from "./openenv/errors.js";
import { OPENENV_PREFIX, registerOpenEnvRoutes } from "./openenv/routes.js";
import { orsErrorShape } from "./ors/errors.js";
import { orsPaths, registerOrsRoutes } from "./ors/routes.js";

export interface EdgegymApp {
  app: OpenAPIHono<AppEnv>;
  store: EpisodeStorage;
  config: ServerConfig;
  /** Evaluation jobs: the runtime entry calls `evals.start()` to resume interrupted jobs and `evals.stop()` on shutdown. */
  evals: EvalService;
}

/**
 * Builds the whole HTTP app from injected dependencies. Both runtime entries call this;
 * tests call it in-process and drive it with `app.request(...)`.
 *
 * @example
 * const { app } = createApp({ db, registry: new EnvRegistry("node", builtinEnvs) });
 * await app.request("/v1/envs");
 */
export function createApp(deps: AppDeps): EdgegymApp {
  registerProtocolComponents();
  const config: ServerConfig = { ...DEFAULT_CONFIG, ...deps.config };
  const clock = deps.clock ?? Date.now;
  const stores = deps.stores ?? (deps.db ? sqliteStores(deps.db) : undefined);
  if (!stores) throw new Error("createApp needs a database (deps.db) or stores (deps.stores)");
  const store = stores.episodes;
  // Environments get the operator's judges (URLs, keys) from here, never from a client's args.
  const registry = deps.registry.withServices({ judges: config.judges });
  const service = new EpisodeService(store, registry, config, clock, deps.agents);
  const evals = new EvalService(stores.evals, registry, config, clock, deps.evalModel);

  const app = new OpenAPIHono<AppEnv>({
    // Request validation failures become our error body, not zod's raw output.
    defaultHook: (result, c) => {
      if (!result.success) return errorResponse(c, validationError(result.error, `request ${result.target}`));
      return undefined;
    },
  });
  app.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    description: "Needed on /v1 routes when the server has API keys (EDGEGYM_API_KEYS).",
  });

  app.use("*", requestId());
  // A keyless server refuses Host names it does not know, before anything else reads the request (DNS rebinding).
  const keyless = config.apiKeys.length === 0 && config.adminApiKeys.length === 0;
  app.use("*", hostCheck({ keyless, boundHost: config.boundHost, allowedHosts: config.allowedHosts }));
  app.use("/v1/*", bearerAuth({ keys: config.apiKeys, adminKeys: config.adminApiKeys }));
  app.use("/v1/*", limitBody(config.bodyLimitBytes));
  app.use("/v1/*", jsonBody());
  // The OpenEnv wire (docs/openenv.md): the same keys and limits, errors in OpenEnv's shape.
  app.use(`${OPENENV_PREFIX}/*`, openEnvErrorShape());
  app.use(`${OPENENV_PREFIX}/*`, bearerAuth({ keys: config.apiKeys, adminKeys: config.adminApiKeys }));
  app.use(`${OPENENV_PREFIX}/*`, limitBody(config.bodyLimitBytes));
  app.use(`${OPENENV_PREFIX}/*`, jsonBody());
  app.use("/mcp/*", bearerAuth({ keys: config.apiKeys, adminKeys: config.adminApiKeys }));
  app.use("/mcp/*", limitBody(config.bodyLimitBytes));
  // The Open Reward Standard wire (docs/ors.md), at the root as ORS lays it out: the same keys
  // (as a Bearer token or the X-API-Key its client sends) and limits, errors in its shape.
  const orsMiddleware = [orsErrorShape(), bearerAuth({ keys: config.apiKeys, adminKeys: config.adminApiKeys, keyHeader: "X-API-Key" }), limitBody(config.bodyLimitBytes), jsonBody()];
  for (const path of orsPaths()) app.use(path, ...orsMiddleware);

  registerHealthRoutes(app, config, registry.runtime, () => registry.list().filter((e) => e.isolation));
  registerEnvRoutes(app, service, () => Promise.all(registry.list().map(describeEnv)));
  registerEpisodeRoutes(app, service);
  registerModelEndpointRoutes(app, new ModelCalls(store, config, clock, deps.upstreamPost), config.modelRequestMaxBytes);
  // Both socket wires share one per-tenant count (the `sockets` quota) and the runtime's view of socket output.
  const sockets = { flow: deps.socketFlow, tenantSlots: new StreamSlots(config.quotas.maxSockets) };
  registerSessionSocketRoute(app, service, config, deps.upgradeWebSocket, sockets);
  registerEpisodeRescoreRoute(app, new EpisodeRescorer(store, service, config, clock));
  registerScoreCompletionsRoute(app, service);
  registerEvalRoutes(app, evals);
  registerOpenEnvRoutes(app, service, config, deps.upgradeWebSocket, sockets);
  registerMcpRoutes(app, service, config);
  registerOrsRoutes(app, service, config, () => registry.list().map((e) => e.id));
  registerDocsRoutes(app, { keysRequired: config.apiKeys.length > 0 || config.adminApiKeys.length > 0 });
  registerConsoleRoutes(app, deps.assets);

  const allowedMethods = allowedMethodsLookup(app.routes);
  app.notFound((c) => {
    const allow = allowedMethods(new URL(c.req.url).pathname);
    if (allow.length > 0) {
      return errorResponse(c, new ApiError("method_not_allowed", `${c.req.method} is not allowed here; allowed: ${allow.join(", ")}`, { allow }, { Allow: allow.join(", ") }));
    }
    return errorResponse(c, new ApiError("route_not_found", `no route ${c.req.method} ${new URL(c.req.url).pathname}; see /docs`));
  });
  app.onError(handleError);
  return { app, store, config, evals };
}
