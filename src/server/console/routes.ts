import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../context.js";
import { ApiError, errorResponse } from "../errors.js";
import { contentTypeFor, safeAssetPath, type StaticAssets } from "./static-assets.js";

/** Vite names these files by content hash, so a browser may keep them for good. */
const IMMUTABLE = "public, max-age=31536000, immutable";
/** index.html and the unhashed files: always asked again, so a new build shows at once. */
const REVALIDATE = "no-cache";

/**
 * Security headers for every console response: the pages load nothing from elsewhere
 * (every asset ships in the package), so the policy says so and the browser enforces it.
 */
const CONSOLE_CSP = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";
/** Swagger UI draws its icons as data: SVGs and sets inline styles; its scripts are all files of ours. */
const DOCS_CSP = "default-src 'self'; img-src 'self' data:; font-src 'self' data:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

function fileResponse(body: Uint8Array, path: string, cache: string, csp: string): Response {
  return new Response(body as BodyInit, {
    headers: {
      "Content-Type": contentTypeFor(path),
      "Cache-Control": cache,
      "X-Content-Type-Options": "nosniff",
      "Content-Security-Policy": csp,
      "Referrer-Policy": "no-referrer",
    },
  });
}

/**
 * `/ui` (the web console, a single-page app built by Vite into `dist/console/ui`) and the
 * offline API reference at `/docs` (Swagger UI's bundle, copied from the installed package
 * into `dist/console/docs` at build time). Static files only: the console talks to
 * the same `/v1` routes as every client, with the same keys.
 *
 * SPA fallback: a path under `/ui/` with no file extension is a page of the app (a deep link
 * such as `/ui/episodes/ep_…`), answered with `index.html`; a missing file with an extension is
 * a 404, so a stale hashed asset fails loudly instead of parsing HTML as script.
 */
export function registerConsoleRoutes(app: OpenAPIHono<AppEnv>, assets: StaticAssets | undefined): void {
  const notBuilt = (c: Context<AppEnv>): Response =>
    errorResponse(c, new ApiError("route_not_found", "the web console is not in this build: run `npm run build` (it builds dist/console)"));

  const serve = async (c: Context<AppEnv>, rel: string, fallback: boolean): Promise<Response> => {
    if (!assets) return notBuilt(c);
    const path = safeAssetPath(rel);
    if (path === null) return errorResponse(c, new ApiError("route_not_found", "no such console file"));
    const body = await assets.read(`ui/${path}`);
    if (body) return fileResponse(body, path, path.startsWith("assets/") ? IMMUTABLE : REVALIDATE, CONSOLE_CSP);
    if (fallback && !/\.[A-Za-z0-9]+$/.test(path)) {
      const index = await assets.read("ui/index.html");
      if (index) return fileResponse(index, "index.html", REVALIDATE, CONSOLE_CSP);
      return notBuilt(c);
    }
    if (path === "index.html") return notBuilt(c);
    return errorResponse(c, new ApiError("route_not_found", `no console file ${path}`));
  };

  app.get("/", (c) => c.redirect("/ui/", 302));
  app.get("/ui", (c) => c.redirect("/ui/", 301));
  app.get("/ui/", (c) => serve(c, "index.html", false));
  app.get("/ui/*", (c) => serve(c, c.req.path.slice("/ui/".length), true));

  // /docs: the reference page; its three files (Swagger UI's bundle and stylesheet, our initializer).
  app.get("/docs", async (c) => {
    if (!assets || !(await assets.read("docs/init.js"))) return notBuilt(c);
    return fileResponse(new TextEncoder().encode(DOCS_PAGE), "docs.html", REVALIDATE, DOCS_CSP);
  });
  app.get("/docs/:file", async (c) => {
    const file = c.req.param("file");
    if (!DOCS_FILES.has(file)) return errorResponse(c, new ApiError("route_not_found", `no docs file ${file}`));
    const body = assets ? await assets.read(`docs/${file}`) : null;
    return body ? fileResponse(body, file, REVALIDATE, DOCS_CSP) : notBuilt(c);
  });
}

/** What /docs/ serves: nothing else of swagger-ui-dist (its OAuth redirect page, source maps) is shipped. */
const DOCS_FILES = new Set(["swagger-ui-bundle.js", "swagger-ui.css", "init.js"]);

/** The reference page: Swagger UI reads /openapi.json. Every URL in it is on this server. */
const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>edgegym API</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;
