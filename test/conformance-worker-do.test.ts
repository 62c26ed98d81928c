import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { describeHttpConformance } from "./conformance/http-conformance.js";
import { describeLongHorizonConformance } from "./conformance/long-horizon-conformance.js";
import { freePort, startChildServer, type ChildServer } from "./support/child-server.js";

// The Worker with episodes in Durable Objects (EDGEGYM_EPISODE_STORE=durable-objects): one
// SQLite-backed object per episode and the index object, in workerd via `npm run dev:worker`,
// with the eval jobs in the local D1. Otherwise as conformance-worker.test.ts: `npm run dev:worker` applies ./drizzle to a fresh
// local D1 and serves the Worker in workerd; the key arrives as a Worker var, as a
// secret would in production.
const apiKey = "sk-conformance-worker";
let server: ChildServer | undefined;
let baseUrl = "";
let dir = "";

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "edgegym-conformance-worker-do-"));
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  server = await startChildServer({
    command: "npm",
    args: ["run", "--silent", "dev:worker", "--", "--port", String(port), "--persist-to", dir, "--var", `EDGEGYM_API_KEYS:${apiKey}`, "--var", "EDGEGYM_EPISODE_STORE:durable-objects"],
    env: { WRANGLER_SEND_METRICS: "false" },
    healthUrl: `${baseUrl}/health`,
    startTimeoutMs: 90_000,
  });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describeHttpConformance({ name: "Worker in workerd, one Durable Object per episode", baseUrl: () => baseUrl, apiKey, runtime: "worker" });
describeLongHorizonConformance({ name: "Worker in workerd, one Durable Object per episode", baseUrl: () => baseUrl, apiKey, runtime: "worker" });
