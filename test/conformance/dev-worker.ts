import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import type { ChildServer } from "../support/child-server.js";
import { startDevWorker } from "../support/dev-worker.js";
import { describeHttpConformance } from "./http-conformance.js";
import { describeSeatsConformance } from "./seats-conformance.js";
import { describeLongHorizonConformance } from "./long-horizon-conformance.js";

/**
 * The HTTP and long-horizon conformance suites against the Worker as users run it locally:
 * `npm run dev:worker` applies ./drizzle to a fresh local D1 (in a temporary directory)
 * and serves the Worker in workerd. The key arrives as a Worker var, as a secret would in
 * production; `vars` adds more (e.g. the episode store), so each configuration of the
 * Worker is one call from its own test file.
 */
export function describeDevWorkerConformance(options: { name: string; tmpPrefix: string; vars?: Record<string, string> }): void {
  const apiKey = "sk-conformance-worker";
  let server: ChildServer | undefined;
  let baseUrl = "";
  let dir = "";

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), options.tmpPrefix));
    const vars = Object.entries({ EDGEGYM_API_KEYS: apiKey, ...options.vars }).flatMap(([name, value]) => ["--var", `${name}:${value}`]);
    ({ server, baseUrl } = await startDevWorker({ persistTo: dir, args: vars }));
  }, 300_000);

  afterAll(async () => {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  describeHttpConformance({ name: options.name, baseUrl: () => baseUrl, apiKey, runtime: "worker" });

  describeSeatsConformance({ name: options.name, baseUrl: () => baseUrl, apiKey, runtime: "worker" });
  describeLongHorizonConformance({ name: options.name, baseUrl: () => baseUrl, apiKey, runtime: "worker" });
}
