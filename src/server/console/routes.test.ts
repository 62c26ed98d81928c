import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inProcessApp } from "../../../test/support/in-process.js";
import { consoleFilesOnDisk } from "../node/console-files.js";
import { safeAssetPath } from "./static-assets.js";

// A console build laid out as `npm run build` writes it, read from disk by the Node reader.
let root: string;
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "edgegym-console-"));
  mkdirSync(join(root, "ui/assets"), { recursive: true });
  mkdirSync(join(root, "docs"), { recursive: true });
  writeFileSync(join(root, "ui/index.html"), "<!doctype html><title>edgegym console</title>");
  writeFileSync(join(root, "ui/assets/index-abc123.js"), "console.log(1)");
  writeFileSync(join(root, "ui/assets/index-abc123.css"), "body{}");
  writeFileSync(join(root, "docs/init.js"), "SwaggerUIBundle({})");
  writeFileSync(join(root, "docs/swagger-ui-bundle.js"), "var SwaggerUIBundle");
  writeFileSync(join(root, "docs/swagger-ui.css"), ".swagger-ui{}");
  writeFileSync(join(root, "secret.txt"), "outside ui/");
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const app = () => inProcessApp({ assets: consoleFilesOnDisk(root) });

describe("/ui", () => {
  it("serves index.html and hashed assets with their types and cache headers", async () => {
    const { app: a, close } = app();
    const index = await a.request("/ui/");
    expect(index.status).toBe(200);
    expect(index.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(index.headers.get("cache-control")).toBe("no-cache");
    expect(index.headers.get("content-security-policy")).toContain("default-src 'self'");
    expect(await index.text()).toContain("edgegym console");
    const js = await a.request("/ui/assets/index-abc123.js");
    expect([js.status, js.headers.get("content-type"), js.headers.get("cache-control")]).toEqual([200, "text/javascript; charset=utf-8", "public, max-age=31536000, immutable"]);
    const css = await a.request("/ui/assets/index-abc123.css");
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8");
    expect(css.headers.get("x-content-type-options")).toBe("nosniff");
    close();
  });

  it("answers index.html for deep links (SPA fallback) but 404 for a missing file", async () => {
    const { app: a, close } = app();
    for (const path of ["/ui/envs/reverse-text", "/ui/episodes/ep_123", "/ui/evals/compare"]) {
      const res = await a.request(path);
      expect([path, res.status, res.headers.get("content-type")]).toEqual([path, 200, "text/html; charset=utf-8"]);
    }
    const missing = await a.request("/ui/assets/index-old999.js");
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe("route_not_found");
    expect((await a.request("/ui")).headers.get("location")).toBe("/ui/");
    expect((await a.request("/")).headers.get("location")).toBe("/ui/");
    close();
  });

  it("never leaves the console folder (traversal, encoded slashes, hidden files)", async () => {
    const { app: a, close } = app();
    const attempts = ["/ui/../secret.txt", "/ui/%2e%2e/secret.txt", "/ui/..%2fsecret.txt", "/ui/assets/..%2f..%2fsecret.txt", "/ui/%2e%2e%2f%2e%2e%2fpackage.json", "/ui/.env", "/ui/a%5c..%5csecret.txt", "/ui/index.html%00.js", "/ui/" + "a/".repeat(20) + "x.js"];
    for (const path of attempts) {
      const res = await a.request(path);
      const body = await res.text();
      expect(body, path).not.toContain("outside ui/");
      expect(res.status === 404 || (res.status === 200 && body.includes("edgegym console")), `${path} -> ${res.status}`).toBe(true);
    }
    expect(safeAssetPath("../x")).toBeNull();
    expect(safeAssetPath("a/../../x")).toBeNull();
    expect(safeAssetPath("a\\..\\x")).toBeNull();
    expect(safeAssetPath(".git/config")).toBeNull();
    expect(safeAssetPath("assets/index-abc.js")).toBe("assets/index-abc.js");
    close();
  });

  it("says how to build it when dist/console is missing", async () => {
    const { app: a, close } = inProcessApp({ assets: consoleFilesOnDisk(join(root, "nowhere")) });
    const res = await a.request("/ui/");
    expect(res.status).toBe(404);
    expect(await res.text()).toContain("npm run build");
    close();
  });

  it("needs no key: the page asks for one, and /v1 still does", async () => {
    const { app: a, close } = inProcessApp({ assets: consoleFilesOnDisk(root), config: { apiKeys: ["alice:sk-a"] } });
    expect((await a.request("/ui/envs")).status).toBe(200);
    expect((await a.request("/docs")).status).toBe(200);
    expect((await a.request("/v1/envs")).status).toBe(401);
    close();
  });
});

describe("/docs", () => {
  it("is a page of this server's own files: no URL elsewhere", async () => {
    const { app: a, close } = app();
    const page = await a.request("/docs");
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("/docs/swagger-ui-bundle.js");
    expect(html).not.toMatch(/https?:\/\//);
    for (const file of ["swagger-ui-bundle.js", "swagger-ui.css", "init.js"]) expect((await a.request(`/docs/${file}`)).status).toBe(200);
    expect((await a.request("/docs/../secret.txt")).status).toBe(404);
    expect((await a.request("/docs/oauth2-redirect.html")).status).toBe(404);
    close();
  });
});
