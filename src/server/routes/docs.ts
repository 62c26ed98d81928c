import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../context.js";
import { OPENAPI_INFO } from "../openapi/document.js";
import { withIntegerBounds } from "../openapi/integer-bounds.js";

/**
 * `/openapi.json` (generated from the route schemas); `/docs`, the interactive reference that
 * reads it, is a console page (src/server/console/routes.ts).
 * A server without API keys serves the document with `security: []`: it then requires no
 * key, and a document that said otherwise would mislead clients and fuzzers alike.
 */
export function registerDocsRoutes(app: OpenAPIHono<AppEnv>, opts: { keysRequired: boolean } = { keysRequired: true }): void {
  // Built on first request (every route is registered by then) and kept: it never changes.
  let document: ReturnType<typeof app.getOpenAPI31Document> | undefined;
  app.get("/openapi.json", (c) => c.json((document ??= withIntegerBounds(app.getOpenAPI31Document(opts.keysRequired ? OPENAPI_INFO : { ...OPENAPI_INFO, security: [] })))));
}
