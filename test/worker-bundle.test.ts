import { rmSync } from "node:fs";
import { dirname } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildWorkerBundle, FREE_PLAN_GZIP_LIMIT_BYTES, nodeOnlyInputs, nodeOnlySpecifiers, type WorkerBundle } from "../scripts/worker-bundle.js";

// The Worker is built the way `wrangler deploy` builds it (--dry-run --outdir), then read.
let bundle: WorkerBundle;
beforeAll(async () => {
  bundle = await buildWorkerBundle();
}, 60_000);
afterAll(() => {
  if (bundle) rmSync(dirname(bundle.file), { recursive: true, force: true });
});

describe("the Worker bundle", () => {
  it("contains no Node module: no node:* import, no better-sqlite3, none of the Node entry", () => {
    expect(bundle.externalImports.filter((p) => !p.startsWith("cloudflare:"))).toEqual([]);
    expect(nodeOnlySpecifiers(bundle.code)).toEqual([]);
    expect(nodeOnlyInputs(bundle.inputs)).toEqual([]);
    expect(bundle.code).not.toContain("better-sqlite3");
  });

  it("holds the Worker's own code: the D1 driver, the app and the built-in environments", () => {
    const paths = bundle.inputs.map((i) => i.path);
    expect(paths).toContain("src/server/worker/index.ts");
    expect(paths).toContain("src/server/db/d1.ts");
    expect(paths).toContain("src/server/app.ts");
    expect(paths.some((p) => p.includes("drizzle-orm/d1/"))).toBe(true);
    expect(paths.some((p) => p.startsWith("src/envs/builtin/reverse-text/"))).toBe(true);
  });

  it("stays within the free plan's size limit", () => {
    expect(bundle.gzipBytes).toBeGreaterThan(0);
    expect(bundle.gzipBytes).toBeLessThan(FREE_PLAN_GZIP_LIMIT_BYTES);
  });
});

describe("the Node-module scan", () => {
  it("finds the specifiers a Node-only module leaves in bundled code", () => {
    const code = [
      'import { readFileSync } from "node:fs";',
      'import Database from "better-sqlite3";',
      'export * from "node:path";',
      'const os = require("os");',
      'const w = await import("node:worker_threads");',
      'const text = "nodes: fine"; import { z } from "zod";',
    ].join("\n");
    expect(nodeOnlySpecifiers(code)).toEqual(["better-sqlite3", "node:fs", "node:path", "node:worker_threads", "os"]);
    expect(nodeOnlyInputs([{ path: "node_modules/better-sqlite3/lib/index.js" }, { path: "src/server/node/serve.ts" }, { path: "src/server/app.ts" }])).toEqual([
      "node_modules/better-sqlite3/lib/index.js",
      "src/server/node/serve.ts",
    ]);
  });
});
