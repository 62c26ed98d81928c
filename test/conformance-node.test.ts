import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll } from "vitest";
import { describeHttpConformance } from "./conformance/http-conformance.js";
import { describeSeatsConformance } from "./conformance/seats-conformance.js";
import { describeLongHorizonConformance } from "./conformance/long-horizon-conformance.js";
import { freePort, startChildServer, type ChildServer } from "./support/child-server.js";

// The Node build as users run it: `node bin/edgegym.js serve` over a SQLite file, with a key.
const apiKey = "sk-conformance-node";
let server: ChildServer | undefined;
let baseUrl = "";
let dir = "";

beforeAll(async () => {
  if (!existsSync("dist/server/node/cli.js")) throw new Error("dist/ is missing: run `npm run build` first (npm test does)");
  dir = mkdtempSync(join(tmpdir(), "edgegym-conformance-node-"));
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  server = await startChildServer({
    command: process.execPath,
    args: ["bin/edgegym.js", "serve", "--port", String(port), "--db", join(dir, "edgegym.db")],
    env: { EDGEGYM_API_KEYS: apiKey },
    healthUrl: `${baseUrl}/health`,
  });
});

afterAll(async () => {
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describeHttpConformance({ name: "Node server (node bin/edgegym.js serve)", baseUrl: () => baseUrl, apiKey, runtime: "node" });

describeSeatsConformance({ name: "Node server (node bin/edgegym.js serve)", baseUrl: () => baseUrl, apiKey, runtime: "node" });
describeLongHorizonConformance({ name: "Node server (node bin/edgegym.js serve)", baseUrl: () => baseUrl, apiKey, runtime: "node" });
