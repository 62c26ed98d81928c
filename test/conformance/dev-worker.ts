import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { freePort, startChildServer, type ChildServer } from "../support/child-server.js";
import { describeHttpConformance } from "./http-conformance.js";
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
    // Two of these files start `wrangler dev` at the same moment (vitest runs files in
    // parallel), and wrangler picks its internal sockets' ports by probing for a free one
    // before binding it: now and then both probe the same port and one exits with
    // "Address already in use". That start is tried again on fresh ports.
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      baseUrl = `http://127.0.0.1:${port}`;
      try {
        server = await startChildServer({
          command: "npm",
          args: ["run", "--silent", "dev:worker", "--", "--port", String(port), "--persist-to", dir, ...vars],
          env: { WRANGLER_SEND_METRICS: "false" },
          healthUrl: `${baseUrl}/health`,
          startTimeoutMs: 90_000,
        });
        return;
      } catch (err) {
        if (attempt >= 3 || !/Address already in use/.test(String(err))) throw err;
      }
    }
  }, 300_000);

  afterAll(async () => {
    await server?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  describeHttpConformance({ name: options.name, baseUrl: () => baseUrl, apiKey, runtime: "worker" });
  describeLongHorizonConformance({ name: options.name, baseUrl: () => baseUrl, apiKey, runtime: "worker" });
}
