import { Scalar } from "@scalar/hono-api-reference";
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../context.js";
import { OPENAPI_INFO } from "../openapi/document.js";

/** `/openapi.json` (generated from the route schemas) and `/docs`, an interactive reference. */
export function registerDocsRoutes(app: OpenAPIHono<AppEnv>): void {
  app.doc31("/openapi.json", OPENAPI_INFO);
  app.get("/docs", Scalar({ url: "/openapi.json", pageTitle: "edgegym API" }));
}
