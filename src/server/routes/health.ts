import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import { Health } from "../../protocol/index.js";
import { isolationInfo, type AnyEnvironment } from "../../envs/index.js";
import type { AppEnv, ServerConfig } from "../context.js";

const health = createRoute({
  operationId: "getHealth",
  method: "get",
  path: "/health",
  tags: ["meta"],
  summary: "Liveness check (no auth)",
  // Open on every server: the document must not say it needs the key the /v1 routes need.
  security: [],
  responses: { 200: { description: "The server is up.", content: { "application/json": { schema: Health } } } },
});

/** `sandboxed`: the environments that run client-supplied code, whose isolation /health reports. */
export function registerHealthRoutes(app: OpenAPIHono<AppEnv>, config: ServerConfig, runtime: string, sandboxed: () => AnyEnvironment[] = () => []): void {
  app.openapi(health, (c) => {
    const envs = sandboxed();
    const isolation = envs.length > 0 ? Object.fromEntries(envs.map((e) => [e.id, isolationInfo(e)])) : undefined;
    return c.json({ status: "ok" as const, version: config.version, runtime, ...(isolation ? { isolation } : {}) }, 200);
  });
}
