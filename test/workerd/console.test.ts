import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import worker from "../../src/server/worker/index.js";

// The console through the Worker's static-assets binding (wrangler.jsonc `assets`, dist/console,
// built by `npm run build` before this suite runs): same headers and checks as on Node.
const get = async (path: string) => {
  const ctx = createExecutionContext();
  const res = await worker.fetch(new Request(`http://edgegym.test${path}`), env, ctx);
  await waitOnExecutionContext(ctx);
  return { status: res.status, type: res.headers.get("content-type"), cache: res.headers.get("cache-control"), text: await res.text() };
};

describe("the console on the Worker", () => {
  it("serves /ui, its deep links and /docs from the ASSETS binding", async () => {
    expect(env.ASSETS, "wrangler.jsonc binds ASSETS").toBeDefined();
    const index = await get("/ui/");
    expect([index.status, index.type, index.cache]).toEqual([200, "text/html; charset=utf-8", "no-cache"]);
    const script = /src="\/ui\/(assets\/[^"]+\.js)"/.exec(index.text)?.[1];
    expect(script).toBeDefined();
    const js = await get(`/ui/${script}`);
    expect([js.status, js.type, js.cache]).toEqual([200, "text/javascript; charset=utf-8", "public, max-age=31536000, immutable"]);
    const deep = await get("/ui/episodes/ep_x");
    expect([deep.status, deep.text]).toEqual([200, index.text]);
    const docs = await get("/docs");
    expect(docs.status).toBe(200);
    expect(docs.text).not.toMatch(/https?:\/\//);
    expect((await get("/docs/swagger-ui-bundle.js")).status).toBe(200);
    expect((await get("/ui/%2e%2e/%2e%2e/wrangler.jsonc")).status).toBe(404);
    expect((await get("/ui/assets/missing-0000.js")).status).toBe(404);
  });
});
